//! Shared by the `c_*` tests: build the ferromq cdylib, find libzmq's real `zmq.h`, compile and
//! run small C programs. Included with `#[path]` so each test binary carries its own copy.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

/// The workspace root (the parent of the `ferromq-tests` package).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `<target>/<profile>`, the directory this test binary's `deps/` lives in. Wherever cargo
/// put this test (CARGO_TARGET_DIR or the default `target/`), the cdylib is built beside it.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binaries live in <target>/<profile>/deps")
        .to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// Builds `ferromq-ffi` (once per test process) with the same profile and target directory as
/// this test and returns the directory holding `libzmq.so` and `libzmq.a`.
pub fn ffi_lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let profile_dir = profile_dir();
        let target_dir = profile_dir.parent().expect("<target>/<profile>");
        let mut cmd = Command::new(cargo());
        cmd.current_dir(workspace_root())
            .args([
                "build",
                "--quiet",
                "-p",
                "ferromq-ffi",
                "--lib",
                "--target-dir",
            ])
            .arg(target_dir);
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(other) => {
                cmd.args(["--profile", other]);
            }
            None => panic!("unexpected target layout: {}", profile_dir.display()),
        }
        let out = cmd.output().expect("run cargo build -p ferromq-ffi");
        assert!(
            out.status.success(),
            "cargo build -p ferromq-ffi failed:\n{}",
            text(&out)
        );
        let so = profile_dir.join("libzmq.so");
        assert!(so.exists(), "{} missing after the build", so.display());
        profile_dir
    })
}

/// The directory holding libzmq 4.3's own `zmq.h`, from the `zeromq-src` crate that the `zmq`
/// dev-dependency builds: located through `cargo metadata`, else by scanning the registry.
pub fn libzmq_include_dir() -> PathBuf {
    let out = Command::new(cargo())
        .current_dir(workspace_root())
        .args(["metadata", "--format-version", "1", "--offline"])
        .output()
        .expect("run cargo metadata");
    let json = String::from_utf8_lossy(&out.stdout);
    let from_metadata = json
        .split("\"manifest_path\":\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|path| path.contains("zeromq-src-"))
        .map(|manifest| Path::new(manifest).with_file_name("vendor").join("include"));
    if let Some(dir) = from_metadata.filter(|d| d.join("zmq.h").exists()) {
        return dir;
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME or CARGO_HOME")).join(".cargo")
        });
    let registry = cargo_home.join("registry").join("src");
    for index in std::fs::read_dir(&registry).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(index.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = krate.file_name();
            if name.to_string_lossy().starts_with("zeromq-src-") {
                let dir = krate.path().join("vendor").join("include");
                if dir.join("zmq.h").exists() {
                    return dir;
                }
            }
        }
    }
    panic!("libzmq's zmq.h not found (zeromq-src is a dependency of the zmq crate)");
}

/// A fresh directory for this test's build products. Directories that earlier test processes
/// left (named after a pid that is no longer running) are removed first, so runs do not pile up
/// in the temp dir; a directory is kept while its process lives, since static `OnceLock`s hold
/// programs built in it for the whole process.
pub fn scratch_dir(name: &str) -> PathBuf {
    sweep_stale_scratch();
    let dir = std::env::temp_dir().join(format!("ferromq-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Removes `ferromq-*-<pid>` directories of test processes that have exited.
fn sweep_stale_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = name.strip_prefix("ferromq-") else {
            continue;
        };
        let Some(pid) = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `tests/c/<name>`.
pub fn c_source(name: &str) -> PathBuf {
    workspace_root().join("tests").join("c").join(name)
}

/// Compiles one C file with `cc` (or `$CC`); `extra` goes after the source (libraries).
pub fn compile(source: &Path, include: &Path, output: &Path, extra: &[&str]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(include)
        .arg(source)
        .arg("-o")
        .arg(output)
        .args(extra)
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        text(&out)
    );
}

/// Links against the ferromq cdylib through a `libzmq.so.5` symlink (the soname the cdylib
/// declares) with an rpath, so the program loads ferromq, never a system libzmq.
pub fn compile_against_ferromq(source: &Path, scratch: &Path, output: &Path) {
    let lib = scratch.join("lib");
    std::fs::create_dir_all(&lib).expect("create lib dir");
    let so = ffi_lib_dir().join("libzmq.so");
    for name in ["libzmq.so", "libzmq.so.5"] {
        let link = lib.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&so, &link).expect("symlink the cdylib");
    }
    let include = workspace_root().join("ffi").join("include");
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    let libdir = format!("-L{}", lib.display());
    compile(source, &include, output, &[&libdir, "-lzmq", &rpath]);
}

/// A command for a compiled program, with TMPDIR set to the program's own directory: libzmq
/// 4.3.4 makes `ipc://*` paths under TMPDIR, or in the working directory when it is unset,
/// which left socket files in tests/.
pub fn command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    if let Some(dir) = program.parent() {
        cmd.env("TMPDIR", dir);
    }
    cmd
}

/// Runs a compiled program and returns its output, asserting it exited 0.
pub fn run(program: &Path) -> Output {
    let out = command(program).output().expect("run the C program");
    assert!(
        out.status.success(),
        "{} failed:\n{}",
        program.display(),
        text(&out)
    );
    out
}

/// Asserts that a C test program printed exactly "ok" (its checks all held), showing its
/// output otherwise.
pub fn assert_ok(out: &Output) {
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        text(out)
    );
}

pub fn text(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The static libzmq (4.3.4, from the `zmq` dev-dependency's `zmq-sys` build) in this test's
/// target directory: `<target>/<profile>/build/zmq-sys-*/out/lib/libzmq.a`, newest first.
pub fn libzmq_static() -> PathBuf {
    let build = profile_dir().join("build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&build)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("zmq-sys-"))
        .map(|e| e.path().join("out").join("lib").join("libzmq.a"))
        .filter_map(|p| {
            let modified = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((modified, p))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no zmq-sys libzmq.a under {}", build.display()))
}

/// Builds the same C program against real libzmq: its own `zmq.h` and its static library.
pub fn compile_against_libzmq(source: &Path, output: &Path) {
    compile_against_libzmq_with(source, output, &[]);
}

/// [`compile_against_libzmq`] with extra compiler arguments (`-D...`).
pub fn compile_against_libzmq_with(source: &Path, output: &Path, extra: &[&str]) {
    let lib = libzmq_static();
    let lib = lib.to_string_lossy().into_owned();
    let mut args: Vec<&str> = extra.to_vec();
    args.extend([lib.as_str(), "-lstdc++", "-lpthread", "-lm"]);
    compile(source, &libzmq_include_dir(), output, &args);
}

/// Runs a program with arguments, killing it after `limit`; returns its output, asserting it
/// exited 0 in time.
pub fn run_args(program: &Path, args: &[&str], limit: std::time::Duration) -> Output {
    let child = command(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the C program");
    let out = wait_bounded(child, limit);
    assert!(
        out.status.success(),
        "{} {:?} failed:\n{}",
        program.display(),
        args,
        text(&out)
    );
    out
}

/// Waits for a child for at most `limit`, killing it past that (the output then says so
/// through a non-zero status).
pub fn wait_bounded(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < limit => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                break;
            }
        }
    }
    child
        .wait_with_output()
        .expect("collect the C program's output")
}

/// Builds `tests/c/<name>.c` against ferromq (`libzmq: false`) or against real libzmq with
/// `-DREAL_LIBZMQ`, runs it under `limit` and asserts it printed exactly "ok": the shape of
/// every C test that holds ferromq to libzmq's own behaviour.
pub fn assert_prints_ok(name: &str, libzmq: bool, limit: std::time::Duration) {
    let which = if libzmq { "libzmq" } else { "ferromq" };
    let scratch = scratch_dir(&format!("c-{name}-{which}"));
    let program = scratch.join(name);
    let source = c_source(&format!("{name}.c"));
    if libzmq {
        compile_against_libzmq_with(&source, &program, &["-DREAL_LIBZMQ"]);
    } else {
        compile_against_ferromq(&source, &scratch, &program);
    }
    let out = run_args(&program, &[], limit);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        text(&out)
    );
}

/// Whether Debian's libzmq3-dev (4.3.4, built with libsodium, so with CURVE) is installed: the
/// reference the security tests want, as the `zmq` crate's bundled libzmq has no CURVE.
pub fn system_libzmq() -> bool {
    Path::new("/usr/include/zmq.h").exists()
        && ["/usr/lib/x86_64-linux-gnu/libzmq.so", "/usr/lib/libzmq.so"]
            .iter()
            .any(|p| Path::new(p).exists())
}

/// `tests/c/<source>` built twice under the scratch directory `scratch` as `<stem>-ferromq` and
/// `<stem>-libzmq`: against ferromq, and against the system's libzmq (else the libzmq 4.3.4
/// the `zmq` dev-dependency bundles).
pub fn build_both(scratch: &str, source: &str, stem: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(scratch);
    let source = c_source(source);
    let ours = dir.join(format!("{stem}-ferromq"));
    compile_against_ferromq(&source, &dir, &ours);
    let theirs = dir.join(format!("{stem}-libzmq"));
    if system_libzmq() {
        compile(
            &source,
            Path::new("/usr/include"),
            &theirs,
            &["-lzmq", "-lpthread"],
        );
    } else {
        compile_against_libzmq(&source, &theirs);
    }
    (ours, theirs)
}

/// Builds `source` against ferromq and against Debian's libzmq3-dev and runs both, each of
/// which must print "ok". For checks the bundled libzmq cannot stand in for (`why`: what its
/// build leaves out): without libzmq3-dev only ferromq's half runs.
pub fn assert_ok_beside_system_libzmq(scratch: &str, source: &str, stem: &str, why: &str) {
    let (ours, theirs) = build_both(scratch, source, stem);
    assert_ok(&run_args(&ours, &[], Duration::from_secs(60)));
    if system_libzmq() {
        assert_ok(&run_args(&theirs, &[], Duration::from_secs(60)));
    } else {
        eprintln!("skip: the libzmq half needs libzmq3-dev ({why})");
    }
}
