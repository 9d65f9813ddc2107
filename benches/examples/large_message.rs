//! One large message end to end over tcp, ferromq against libzmq in the same run: the time
//! from send to the complete receive, and the process's peak RSS (VmHWM). Issue 14 found
//! ferromq's receive quadratic in the message size (the read buffer grew 16 MiB at a time,
//! copying what it held each step); this shows the size/time curve and the ratio to libzmq.
//!
//! `cargo run --release -p ferromq-benches --example large_message -- --sizes 64,256,1024`
//! (sizes in MiB; default 64,256). Each library and size runs in a child process of its own
//! so that VmHWM is that run's peak. Not part of any test run.

use std::process::Command;
use std::time::Instant;

use ferromq_benches::backend::{Backend, BenchResult, Kind};
use ferromq_benches::ferromq::Ferromq;
use ferromq_benches::libzmq::Libzmq;

const MIB: usize = 1024 * 1024;

/// Sends one `mib` MiB message from a PAIR to a PAIR over tcp; returns the seconds from the
/// start of the send to the end of the receive.
fn one_message<B: Backend>(mib: usize) -> BenchResult<f64> {
    let lib = B::new()?;
    let mut rx = lib.socket(Kind::Pair, 0)?;
    let endpoint = B::bind(&mut rx, "tcp://127.0.0.1:*")?;
    let mut tx = lib.socket(Kind::Pair, 0)?;
    B::connect(&mut tx, &endpoint)?;
    // Connected and warm before the clock starts.
    B::send(&mut tx, b"warm-up", false)?;
    B::recv(&mut rx)?;
    let data = vec![0x5a_u8; mib * MIB];
    let start = Instant::now();
    let sender = std::thread::spawn(move || {
        B::send(&mut tx, &data, false)?;
        drop(data);
        Ok::<_, ferromq_benches::backend::BenchError>(tx)
    });
    let (n, _) = B::recv(&mut rx)?;
    let secs = start.elapsed().as_secs_f64();
    let _tx = sender
        .join()
        .map_err(|_| ferromq_benches::backend::BenchError("sender panicked".into()))??;
    assert_eq!(n, mib * MIB);
    Ok(secs)
}

fn child(lib: &str, mib: usize) {
    let secs = match lib {
        "ferromq" => one_message::<Ferromq>(mib),
        _ => one_message::<Libzmq>(mib),
    };
    match secs {
        Ok(secs) => println!(
            "{secs:.3} {}",
            ferromq_benches::proc_status_kib("VmHWM") / 1024
        ),
        Err(e) => {
            eprintln!("{lib} {mib} MiB: {e}");
            std::process::exit(1);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, lib, mib] = &args[..] {
        if flag == "--child" {
            child(lib, mib.parse().unwrap_or(64));
            return;
        }
    }
    let sizes: Vec<usize> = match args.iter().position(|a| a == "--sizes") {
        Some(i) => args
            .get(i + 1)
            .map(|s| s.split(',').filter_map(|v| v.parse().ok()).collect())
            .unwrap_or_default(),
        None => vec![64, 256],
    };
    let exe = std::env::current_exe().expect("own executable");
    println!(
        "| size | ferromq s | ferromq peak RSS MiB | libzmq s | libzmq peak RSS MiB | time ratio |"
    );
    println!("|---|---|---|---|---|---|");
    for mib in sizes {
        let run = |lib: &str| -> Option<(f64, u64)> {
            let out = Command::new(&exe)
                .args(["--child", lib, &mib.to_string()])
                .output()
                .ok()?;
            let text = String::from_utf8_lossy(&out.stdout);
            let mut it = text.split_whitespace();
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        };
        match (run("ferromq"), run("libzmq")) {
            (Some((f, frss)), Some((l, lrss))) => println!(
                "| {mib} MiB | {f:.3} | {frss} | {l:.3} | {lrss} | {:.2} |",
                f / l
            ),
            other => println!("| {mib} MiB | failed: {other:?} |"),
        }
    }
}
