//! The C perf tools (`tests/c/perf`, libzmq's perf interface) build against ferromq and
//! against real libzmq and run a small exchange over tcp (and inproc, in one process) with each
//! (`poll_thr` and `poll_lat`, which libzmq lacks, through `zmq_poll`; `send_thr` through
//! `zmq_send`/`zmq_recv`),
//! printing libzmq's lines.
//! This checks the tools, not the speed: `ffi/perf/compare.sh` measures.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

#[path = "../c/harness.rs"]
mod harness;

const LIMIT: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port()
}

/// Runs `local_<kind>` then `remote_<kind>` against each other; returns the output of the
/// side that prints the figures.
fn run_pair(dir: &Path, kind: &str, size: &str, count: &str) -> String {
    let endpoint = format!("tcp://127.0.0.1:{}", free_port());
    let args = [endpoint.as_str(), size, count];
    let (local, remote) = run_sides(
        (&dir.join(format!("local_{kind}")), &args),
        (&dir.join(format!("remote_{kind}")), &args),
    );
    let figures = if kind == "thr" { local } else { remote };
    String::from_utf8_lossy(&figures.stdout).into_owned()
}

/// Starts the listening side, then the connecting one, each a program and its arguments;
/// both must succeed within `LIMIT`.
fn run_sides(local: (&Path, &[&str]), remote: (&Path, &[&str])) -> (Output, Output) {
    let start = |(program, args): (&Path, &[&str])| {
        Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a side")
    };
    let what = format!("{} {:?}", local.0.display(), local.1);
    let local = start(local);
    std::thread::sleep(Duration::from_millis(100));
    let remote = harness::wait_bounded(start(remote), LIMIT);
    let local = harness::wait_bounded(local, LIMIT);
    assert!(
        local.status.success() && remote.status.success(),
        "{what}:\nlocal: {}\nremote: {}",
        harness::text(&local),
        harness::text(&remote)
    );
    (local, remote)
}

fn check_tools(dir: &Path) {
    let thr = run_pair(dir, "thr", "64", "20000");
    assert!(thr.contains("message size: 64 [B]"), "{thr}");
    assert!(thr.contains("message count: 20000"), "{thr}");
    assert!(thr.contains("[msg/s]") && thr.contains("[Mb/s]"), "{thr}");
    let big = run_pair(dir, "thr", "65536", "200");
    assert!(big.contains("message size: 65536 [B]"), "{big}");
    let lat = run_pair(dir, "lat", "64", "500");
    assert!(lat.contains("roundtrip count: 500"), "{lat}");
    assert!(lat.contains("average latency:"), "{lat}");
    for (kind, size, count, line) in [
        ("thr", "65536", "2000", "message count: 2000"),
        ("lat", "64", "500", "roundtrip count: 500"),
    ] {
        let out = run_one(dir, &format!("inproc_{kind}"), &[size, count]);
        assert!(out.contains(&format!("message size: {size} [B]")), "{out}");
        assert!(out.contains(line), "{out}");
        assert!(
            out.contains("[msg/s]") || out.contains("average latency:"),
            "{out}"
        );
    }
    // The one-process tools (zmq_poll, zmq_send), which take an endpoint first.
    let endpoint = format!("tcp://127.0.0.1:{}", free_port());
    for (tool, endpoint, line) in [
        ("poll_thr", "inproc://perf-poll-thr", "mean throughput:"),
        ("poll_thr", endpoint.as_str(), "mean throughput:"),
        ("poll_lat", "inproc://perf-poll-lat", "average latency:"),
        ("send_thr", "inproc://perf-send-thr", "mean throughput:"),
    ] {
        let out = run_one(dir, tool, &[endpoint, "64", "2000"]);
        assert!(out.contains("message size: 64 [B]"), "{out}");
        assert!(out.contains(line), "{out}");
    }
    // zmq_send streams of 64 KiB, more in flight than a socket's kept buffers hold (their
    // copies take the thread's body pool); send_thr checks each body's last byte.
    let endpoint = format!("tcp://127.0.0.1:{}", free_port());
    for endpoint in ["inproc://perf-send-thr-64k", endpoint.as_str()] {
        let out = run_one(dir, "send_thr", &[endpoint, "65536", "3000"]);
        assert!(out.contains("message count: 3000"), "{out}");
    }
}

/// The peer-scaling program (ffi/perf/scale.sh runs it): every case prints one CSV line with a
/// positive ns/msg; along the way it checks routing, subscriptions and fair queuing itself.
fn check_scale(dir: &Path) {
    for (transport, peers) in [("inproc", "20"), ("tcp", "5")] {
        let out = run_one(dir, "scale", &[transport, peers, "10"]);
        let cases: Vec<&str> = out
            .lines()
            .map(|l| l.split(',').next().unwrap_or(""))
            .collect();
        assert_eq!(
            cases,
            [
                "pull-fan-in",
                "router-fan-in",
                "router-send",
                "pub-none",
                "pub-one",
                "pub-all"
            ],
            "{out}"
        );
        for line in out.lines() {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields[1..3], [transport, peers], "{line}");
            let ns: f64 = fields[3].parse().unwrap_or(-1.0);
            assert!(ns > 0.0, "{line}");
        }
    }
}

/// Runs a single-process tool (inproc_thr, inproc_lat, poll_thr, poll_lat, send_thr, scale);
/// returns what it printed.
fn run_one(dir: &Path, tool: &str, args: &[&str]) -> String {
    let child = Command::new(dir.join(tool))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the tool");
    let out = harness::wait_bounded(child, LIMIT);
    assert!(out.status.success(), "{tool}: {}", harness::text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn build(dir: &Path, scratch: &Path, ferromq: bool) {
    for tool in [
        "local_thr",
        "remote_thr",
        "local_lat",
        "remote_lat",
        "inproc_thr",
        "inproc_lat",
        "poll_thr",
        "poll_lat",
        "send_thr",
        "scale",
    ] {
        let source = harness::c_source(&format!("perf/{tool}.c"));
        let output = dir.join(tool);
        if ferromq {
            harness::compile_against_ferromq(&source, scratch, &output);
        } else {
            harness::compile_against_libzmq(&source, &output);
        }
    }
}

#[test]
fn perf_tools_against_ferromq() {
    let scratch = harness::scratch_dir("c-perf-ferromq");
    build(&scratch, &scratch, true);
    check_tools(&scratch);
    check_scale(&scratch);
}

#[test]
fn perf_tools_against_libzmq() {
    let scratch = harness::scratch_dir("c-perf-libzmq");
    build(&scratch, &scratch, false);
    check_tools(&scratch);
    check_scale(&scratch);
}

/// The no-ZMQ floor programs (`ffi/perf/raw_tcp.c`, `raw_lat.c`: compare.sh's FLOOR=1) move
/// their bytes over tcp and ipc, ending on their own, and print the lines compare.sh reads.
#[test]
fn floor_programs_over_tcp_and_ipc() {
    let scratch = harness::scratch_dir("c-perf-floor");
    let root = harness::workspace_root();
    let mut built = Vec::new();
    for raw in ["raw_tcp", "raw_lat"] {
        let output = scratch.join(raw);
        let source = root.join(format!("ffi/perf/{raw}.c"));
        harness::compile(&source, &root.join("ffi/perf"), &output, &[]);
        built.push(output);
    }
    let ipc = scratch.join("floor.ipc");
    let tcp = format!("tcp://127.0.0.1:{}", free_port());
    for endpoint in [format!("ipc://{}", ipc.display()), tcp] {
        let thr = ["65536", "300"];
        let (local, _) = run_sides(
            (&built[0], &["recv", &endpoint, thr[0], thr[1]]),
            (&built[0], &["send", &endpoint, thr[0], thr[1]]),
        );
        let out = String::from_utf8_lossy(&local.stdout);
        assert!(out.contains("message count: 300"), "{endpoint}: {out}");
        assert!(out.contains("mean throughput:"), "{endpoint}: {out}");
        let (_, remote) = run_sides(
            (&built[1], &["local", &endpoint, "1000", "200"]),
            (&built[1], &["remote", &endpoint, "1000", "200"]),
        );
        let out = String::from_utf8_lossy(&remote.stdout);
        assert!(out.contains("roundtrip count: 200"), "{endpoint}: {out}");
        assert!(out.contains("average latency:"), "{endpoint}: {out}");
    }
}

/// The CURVE throughput program (ffi/perf/curve.sh runs it), against ferromq and against the
/// system libzmq (Debian's, with libsodium; the bundled one has no CURVE): each pattern's
/// messages all arrive boxed and unboxed, and it prints one CSV line with a positive rate.
#[test]
fn curve_thr_against_ferromq_and_system_libzmq() {
    let scratch = harness::scratch_dir("c-perf-curve");
    let source = harness::c_source("perf/curve_thr.c");
    let ours = scratch.join("curve_thr-ferromq");
    harness::compile_against_ferromq(&source, &scratch, &ours);
    let mut programs = vec![ours];
    if Path::new("/usr/include/zmq.h").exists() {
        let theirs = scratch.join("curve_thr-libzmq");
        harness::compile(
            &source,
            Path::new("/usr/include"),
            &theirs,
            &["-lzmq", "-lpthread"],
        );
        programs.push(theirs);
    }
    for program in &programs {
        for (pattern, size, count) in [("pair", "64", "3000"), ("dealer_router", "65536", "40")] {
            let child = harness::command(program)
                .args([pattern, size, count])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start curve_thr");
            let out = harness::wait_bounded(child, LIMIT);
            let what = format!("{} {pattern} {size}", program.display());
            assert!(out.status.success(), "{what}: {}", harness::text(&out));
            let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 5, "{what}: {line}");
            assert_eq!(fields[..3], [pattern, "tcp", size], "{what}: {line}");
            let rate: f64 = fields[3].parse().unwrap_or(-1.0);
            assert!(rate > 0.0, "{what}: {line}");
        }
    }
}
