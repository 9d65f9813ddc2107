//! What one message costs through the async API against the blocking one, for counting tools
//! rather than clocks (this project's machine is too noisy for 10% by time): DEALER to DEALER,
//! 64 B, a fixed count, the sender and the receiver each on a thread of its own, as the compare
//! bench's throughput cell runs them.
//!
//! ```text
//! cargo build --release -p ferromq-benches --example async_cost
//! valgrind --tool=callgrind target/release/examples/async_cost async-ct inproc 20000
//! strace -f -c target/release/examples/async_cost async-ct tcp 20000
//! ```
//!
//! Modes: `blocking` (`Socket::send_slice`/`recv`), `async-ct` (each side an `AsyncSocket` on
//! its own current-thread runtime, the bench's `ferromq async ct`), `async-mt` (both sides on
//! one multi-thread runtime with one worker, driven by `block_on` from their threads, the
//! bench's `ferromq async` before session 14), `async-spawn` (both sides `tokio::spawn`ed
//! tasks on one multi-thread runtime with two workers, joined from the main thread, the
//! bench's `ferromq async` since; `async-spawn1` the same on one worker; `async-spawn-free` the
//! two workers with both loops `coop::unconstrained`, so they never yield for the budget and
//! what waits remain are the socket's own). `lat-blocking` and `lat-spawn` (`lat-spawn1` on one
//! worker) are latency's ping-pong instead, `count` round trips, the echo a thread or a spawned
//! task and the timing side the main thread or another task; they print the mean one-way time.
//! Instructions per message are the difference of two counts
//! divided by the difference of their message counts, so set-up and teardown cancel out.

use std::time::Instant;

use ferromq::{AsyncSocket, Context, Error, RecvFlags, SendFlags, Socket, SocketType};
use tokio::runtime::{Builder, Runtime};
use tokio::task::coop;

const SIZE: usize = 64;

fn pair(ctx: &Context, transport: &str) -> Result<(Socket, Socket), Error> {
    let mut rx = ctx.socket(SocketType::Dealer)?;
    let mut tx = ctx.socket(SocketType::Dealer)?;
    for s in [&mut rx, &mut tx] {
        s.set_sndhwm(1000)?;
        s.set_rcvhwm(1000)?;
        s.set_linger(0)?;
    }
    let endpoint = match transport {
        "tcp" => "tcp://127.0.0.1:*".to_owned(),
        _ => format!("inproc://async-cost-{}", std::process::id()),
    };
    rx.bind(&endpoint)?;
    tx.connect(&rx.last_endpoint()?)?;
    Ok((rx, tx))
}

/// A current-thread runtime (`workers` 0) or a multi-thread one.
fn runtime(workers: usize) -> Runtime {
    let mut b = if workers == 0 {
        Builder::new_current_thread()
    } else {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    b.enable_all().build().expect("tokio runtime")
}

async fn send_all(s: &mut AsyncSocket, count: usize) -> Result<(), Error> {
    let payload = [7u8; SIZE];
    for _ in 0..count {
        s.send_slice(&payload, SendFlags::empty()).await?;
    }
    Ok(())
}

async fn recv_all(s: &mut AsyncSocket, count: usize) -> Result<(), Error> {
    for _ in 0..count {
        s.recv().await?;
    }
    Ok(())
}

fn run(mode: &str, transport: &str, count: usize) -> Result<(), Error> {
    let ctx = Context::new();
    let (mut rx, mut tx) = pair(&ctx, transport)?;
    let start = Instant::now();
    match mode {
        "blocking" => {
            let sender = std::thread::spawn(move || {
                let payload = [7u8; SIZE];
                for _ in 0..count {
                    tx.send_slice(&payload, SendFlags::empty())?;
                }
                Ok::<Socket, Error>(tx)
            });
            for _ in 0..count {
                rx.recv(RecvFlags::empty())?;
            }
            drop(sender.join().expect("sender")?);
        }
        "async-ct" => {
            let sender = std::thread::spawn(move || {
                let rt = runtime(0);
                rt.block_on(async move {
                    let mut tx = AsyncSocket::new(tx)?;
                    send_all(&mut tx, count).await?;
                    Ok::<Socket, Error>(tx.into_inner())
                })
            });
            let rt = runtime(0);
            rt.block_on(async move {
                let mut rx = AsyncSocket::new(rx)?;
                recv_all(&mut rx, count).await
            })?;
            drop(sender.join().expect("sender")?);
        }
        "async-mt" => {
            let rt = std::sync::Arc::new(runtime(1));
            let handle = rt.handle().clone();
            let sender = std::thread::spawn(move || {
                let mut tx = {
                    let _in = handle.enter();
                    AsyncSocket::new(tx)?
                };
                handle.block_on(send_all(&mut tx, count))?;
                Ok::<Socket, Error>(tx.into_inner())
            });
            let mut rx = {
                let _in = rt.enter();
                AsyncSocket::new(rx)?
            };
            rt.block_on(recv_all(&mut rx, count))?;
            drop(sender.join().expect("sender")?);
        }
        "async-spawn" | "async-spawn1" | "async-spawn-free" => {
            let free = mode == "async-spawn-free";
            let rt = runtime(if mode == "async-spawn1" { 1 } else { 2 });
            let (mut rx, mut tx) = {
                let _in = rt.enter();
                (AsyncSocket::new(rx)?, AsyncSocket::new(tx)?)
            };
            let sender = rt.spawn(async move {
                if free {
                    coop::unconstrained(send_all(&mut tx, count)).await?;
                } else {
                    send_all(&mut tx, count).await?;
                }
                Ok::<Socket, Error>(tx.into_inner())
            });
            let receiver = rt.spawn(async move {
                if free {
                    coop::unconstrained(recv_all(&mut rx, count)).await?;
                } else {
                    recv_all(&mut rx, count).await?;
                }
                Ok::<Socket, Error>(rx.into_inner())
            });
            let (rx, tx) = rt.block_on(async { (receiver.await, sender.await) });
            drop(rx.expect("receiver task")?);
            drop(tx.expect("sender task")?);
        }
        "lat-blocking" => {
            let echo = std::thread::spawn(move || {
                for _ in 0..count {
                    let m = rx.recv(RecvFlags::empty())?;
                    rx.send_slice(m.as_slice(), SendFlags::empty())?;
                }
                Ok::<Socket, Error>(rx)
            });
            let payload = [7u8; SIZE];
            for _ in 0..count {
                tx.send_slice(&payload, SendFlags::empty())?;
                tx.recv(RecvFlags::empty())?;
            }
            drop(echo.join().expect("echo")?);
        }
        "lat-spawn" | "lat-spawn1" => {
            let rt = runtime(if mode == "lat-spawn1" { 1 } else { 2 });
            let (mut rx, mut tx) = {
                let _in = rt.enter();
                (AsyncSocket::new(rx)?, AsyncSocket::new(tx)?)
            };
            let echo = rt.spawn(async move {
                for _ in 0..count {
                    let m = rx.recv().await?;
                    rx.send_slice(m.as_slice(), SendFlags::empty()).await?;
                }
                Ok::<Socket, Error>(rx.into_inner())
            });
            let ping = rt.spawn(async move {
                let payload = [7u8; SIZE];
                for _ in 0..count {
                    tx.send_slice(&payload, SendFlags::empty()).await?;
                    tx.recv().await?;
                }
                Ok::<Socket, Error>(tx.into_inner())
            });
            let (rx, tx) = rt.block_on(async { (echo.await, ping.await) });
            drop(rx.expect("echo task")?);
            drop(tx.expect("ping task")?);
        }
        other => panic!(
            "unknown mode {other}: blocking, async-ct, async-mt, async-spawn(1), \
             async-spawn-free, lat-blocking, lat-spawn(1)"
        ),
    }
    let secs = start.elapsed().as_secs_f64();
    if mode.starts_with("lat-") {
        println!(
            "{mode} {transport} {count} x {SIZE} B: {:.2} us one way",
            secs * 1e6 / count as f64 / 2.0
        );
    } else {
        println!(
            "{mode} {transport} {count} x {SIZE} B: {:.0} msg/s",
            count as f64 / secs
        );
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("blocking", String::as_str);
    let transport = args.get(1).map_or("inproc", String::as_str);
    let count = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(100_000);
    run(mode, transport, count)
}
