//! libzmq 4.3.4's own test programs (zeromq-src's vendor/tests, built by
//! tests/libzmq_suite/run.sh) against ferromq's C ABI: every one that is not skipped must pass,
//! except those tests/libzmq_suite/known_failures.txt lists, which must still fail (so a fix is
//! noticed and the list stays true). The table of both libraries: `tests/libzmq_suite/run.sh`.

#[path = "../c/harness.rs"]
mod harness;

use std::process::Command;

#[test]
fn libzmq_own_tests_pass_on_ferromq() {
    let lib = harness::ffi_lib_dir();
    let work = harness::scratch_dir("libzmq-suite");
    let script = harness::workspace_root()
        .join("tests")
        .join("libzmq_suite")
        .join("run.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg("--check")
        .arg("--ffi")
        .arg(lib)
        .arg("--work")
        .arg(&work)
        .output()
        .expect("run tests/libzmq_suite/run.sh");
    assert!(out.status.success(), "{}", harness::text(&out));
}
