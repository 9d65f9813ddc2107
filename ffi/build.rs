//! Regenerates `include/zmq.h` with cbindgen and gives the cdylib libzmq's soname.
//!
//! The header is committed; the build rewrites it only when its content changes, so a fresh
//! checkout builds without touching the tree and CI can check freshness with `git diff`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");

    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os == "android" || target_os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzmq.so.5");
    }

    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml is valid");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen can generate zmq.h from ffi/src");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let text = String::from_utf8(raw).expect("cbindgen writes UTF-8");
    let header = compact_defines(&text);

    let path = crate_dir.join("include").join("zmq.h");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(header.as_str()) {
        std::fs::create_dir_all(path.parent().expect("include/ has a parent"))
            .expect("can create ffi/include");
        std::fs::write(&path, header).expect("can write ffi/include/zmq.h");
    }
}

/// cbindgen separates every item by a blank line; runs of `#define`s read better as blocks, with
/// a blank line only before a comment that opens a new group.
fn compact_defines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        let between_defines = line.is_empty()
            && i > 0
            && lines[i - 1].starts_with("#define ")
            && lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("#define "));
        if !between_defines {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
