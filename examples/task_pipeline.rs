//! zguide "Divide and conquer": a ventilator PUSHes 100 tasks to 4 workers, which PUSH their
//! results to a sink that PULLs them all and reports the elapsed time.
//!
//! Workers run until the context shuts down (their receive returns `ETERM`).
//! Run: `cargo run --example task_pipeline`.

use std::time::{Duration, Instant};

use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};

const TASKS: u32 = 100;
const WORKERS: usize = 4;

fn worker(ctx: &Context, tasks: &str, results: &str) -> ferromq::Result<u32> {
    let mut receiver = ctx.socket(SocketType::Pull)?;
    receiver.connect(tasks)?;
    let mut sender = ctx.socket(SocketType::Push)?;
    sender.connect(results)?;
    let mut done = 0;
    loop {
        let task = match receiver.recv(RecvFlags::empty()) {
            Ok(task) => task,
            Err(Error::Term) => return Ok(done),
            Err(e) => return Err(e),
        };
        let ms: u64 = String::from_utf8_lossy(&task.data).parse().unwrap_or(0);
        std::thread::sleep(Duration::from_millis(ms));
        sender.send("", SendFlags::empty())?;
        done += 1;
    }
}

fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let mut ventilator = ctx.socket(SocketType::Push)?;
    ventilator.bind("tcp://127.0.0.1:*")?;
    let tasks = ventilator.last_endpoint()?;
    let mut sink = ctx.socket(SocketType::Pull)?;
    sink.bind("tcp://127.0.0.1:*")?;
    let results = sink.last_endpoint()?;

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (ctx, tasks, results) = (ctx.clone(), tasks.clone(), results.clone());
            std::thread::spawn(move || worker(&ctx, &tasks, &results))
        })
        .collect();
    // Let every worker connect before the first task, or the first would take them all.
    std::thread::sleep(Duration::from_millis(100));

    let started = Instant::now();
    let mut expected_ms = 0;
    for _ in 0..TASKS {
        let workload = fastrand::u64(1..10);
        expected_ms += workload;
        ventilator.send(workload.to_string(), SendFlags::empty())?;
    }
    println!("ventilator: {TASKS} tasks, {expected_ms} ms of work in total");
    for _ in 0..TASKS {
        sink.recv(RecvFlags::empty())?;
    }
    println!(
        "sink: all results in {} ms with {WORKERS} workers",
        started.elapsed().as_millis()
    );
    ctx.shutdown();
    for (n, w) in workers.into_iter().enumerate() {
        println!("worker {n}: {} tasks", w.join().expect("worker thread")?);
    }
    Ok(())
}
