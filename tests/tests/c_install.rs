//! `ffi/install.sh PREFIX` installs a libzmq drop-in that `pkg-config` finds: a C program built
//! with `cc prog.c $(pkg-config --cflags --libs libzmq)` runs on ferromq, both against the
//! shared library (loaded by its soname, libzmq.so.5) and statically against libzmq.a.

#[path = "../c/harness.rs"]
mod harness;

use std::path::Path;
use std::process::Command;

fn pkg_config(pkgconfig_dir: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", pkgconfig_dir)
        .args(args)
        .arg("libzmq")
        .output()
        .expect("pkg-config is installed");
    assert!(
        out.status.success(),
        "pkg-config failed:\n{}",
        harness::text(&out)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn cc(source: &Path, output: &Path, flags: &[String]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Werror"])
        .arg(source)
        .arg("-o")
        .arg(output)
        .args(flags)
        .output()
        .expect("run the C compiler");
    assert!(out.status.success(), "cc failed:\n{}", harness::text(&out));
}

#[test]
fn installed_library_links_with_pkg_config() {
    let lib_dir = harness::ffi_lib_dir();
    let target_dir = lib_dir.parent().expect("<target>/<profile>");
    let profile = match lib_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("unexpected target layout"),
    };
    let scratch = harness::scratch_dir("c-install");
    let prefix = scratch.join("prefix");
    let out = Command::new("sh")
        .arg(harness::workspace_root().join("ffi").join("install.sh"))
        .arg(&prefix)
        .arg(&profile)
        .env("CARGO_TARGET_DIR", target_dir)
        .output()
        .expect("run install.sh");
    assert!(
        out.status.success(),
        "install.sh failed:\n{}",
        harness::text(&out)
    );

    let pc = prefix.join("lib").join("pkgconfig");
    assert_eq!(pkg_config(&pc, &["--modversion"]), ["4.3.5"]);
    let source = harness::c_source("msg.c");

    // Shared: link through the dev symlink, then remove it, so the program can only start if
    // the library's soname (recorded as NEEDED) is libzmq.so.5.
    let dynamic = scratch.join("msg-dynamic");
    cc(&source, &dynamic, &pkg_config(&pc, &["--cflags", "--libs"]));
    std::fs::remove_file(prefix.join("lib").join("libzmq.so")).expect("dev symlink exists");
    let out = Command::new(&dynamic)
        .env("LD_LIBRARY_PATH", prefix.join("lib"))
        .output()
        .expect("run the program");
    assert!(out.status.success(), "{}", harness::text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");

    // Static: libzmq.a plus the private libraries the .pc file lists.
    let archive = prefix.join("lib").join("libzmq.a").display().to_string();
    let flags: Vec<String> = pkg_config(&pc, &["--cflags", "--static", "--libs"])
        .into_iter()
        .map(|f| if f == "-lzmq" { archive.clone() } else { f })
        .collect();
    let fully_static = scratch.join("msg-static");
    cc(&source, &fully_static, &flags);
    let out = Command::new(&fully_static)
        .output()
        .expect("run the program");
    assert!(out.status.success(), "{}", harness::text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}
