//! Declares the `loom` cfg so that `--cfg loom` model-checking builds lint cleanly.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
