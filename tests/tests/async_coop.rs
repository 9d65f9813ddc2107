//! tokio's cooperative budget (issue 17): a task that loops on a socket which always has a
//! message (or always has room) must still let the other tasks on its worker run.
//!
//! tokio gives a task a budget of 128 units each time it is polled; its own resources
//! (channels, sockets, timers) spend one unit per operation and return `Pending` once it is
//! spent, so a busy task yields. A future that returns `Ready` without spending it never
//! yields: on a current-thread runtime (or one worker) every other task waits until the loop
//! ends. Each test floods one direction, runs the loop as a task, spawns a second task that
//! records how far the loop had got when it first ran, and asks that it ran early.
//! (ferromq spends one unit every 8 operations of a socket, not every one: see `OPS_PER_UNIT`
//! in src/api/async_socket.rs.)

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use ferromq::{AsyncSocket, Context, Multipart, RecvFlags, SendFlags, Socket, SocketType};
use futures::{SinkExt, StreamExt};

/// Messages the looping task handles, all available (or all with room) before it starts.
const FLOOD: usize = 10_000;
/// How many of them the loop may get through before the other task runs: tokio's budget is
/// 128 units and a socket spends one every 8 operations, so the loop yields after 1,024;
/// far below `FLOOD`, which is what a loop that never yields reaches.
const WITHIN: usize = 2_000;

/// A blocking PUSH and an async PULL (or the other way round, `async_push`) over inproc,
/// with no HWM on either side, so every send is taken at once.
fn flooded_pair(ctx: &Context, name: &str, async_push: bool) -> (AsyncSocket, Socket) {
    let endpoint = format!("inproc://async-coop-{name}-{}", std::process::id());
    let mut pull = ctx.socket(SocketType::Pull).expect("pull");
    let mut push = ctx.socket(SocketType::Push).expect("push");
    for s in [&mut pull, &mut push] {
        s.set_sndhwm(0).expect("sndhwm");
        s.set_rcvhwm(0).expect("rcvhwm");
        s.set_linger(0).expect("linger");
    }
    pull.bind(&endpoint).expect("bind");
    push.connect(&endpoint).expect("connect");
    if async_push {
        (AsyncSocket::new(push).expect("async push"), pull)
    } else {
        for _ in 0..FLOOD {
            push.send_slice(&[7u8; 64], SendFlags::empty())
                .expect("fill");
        }
        (AsyncSocket::new(pull).expect("async pull"), push)
    }
}

/// Runs `work(progress)` as a task on a current-thread runtime, spawns a second task after
/// it, and returns `progress` as that second task first saw it.
fn progress_when_another_task_ran<Fut>(work: impl FnOnce(Arc<AtomicUsize>) -> Fut) -> usize
where
    Fut: Future<Output = ()> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let progress = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let worker = tokio::spawn(work(Arc::clone(&progress)));
        let seen = {
            let progress = Arc::clone(&progress);
            tokio::spawn(async move { progress.load(Ordering::Relaxed) })
        };
        let seen = seen.await.expect("other task");
        worker.await.expect("looping task");
        assert_eq!(progress.load(Ordering::Relaxed), FLOOD, "the loop finished");
        seen
    })
}

fn check(what: &str, seen: usize) {
    assert!(
        seen < WITHIN,
        "{what}: the other task first ran after {seen} of {FLOOD} messages (want < {WITHIN})"
    );
}

#[test]
fn recv_loop_on_a_flooded_socket_yields() {
    let ctx = Context::new();
    let seen = progress_when_another_task_ran(|progress| {
        let (mut pull, push) = flooded_pair(&ctx, "recv", false);
        async move {
            for _ in 0..FLOOD {
                pull.recv().await.expect("recv");
                progress.fetch_add(1, Ordering::Relaxed);
            }
            drop(push);
        }
    });
    check("recv", seen);
}

#[test]
fn recv_multipart_and_stream_loops_yield() {
    let ctx = Context::new();
    let seen = progress_when_another_task_ran(|progress| {
        let (mut pull, push) = flooded_pair(&ctx, "recv-mp", false);
        async move {
            for i in 0..FLOOD {
                let m = if i % 2 == 0 {
                    pull.recv_multipart().await.expect("recv_multipart")
                } else {
                    pull.next().await.expect("open").expect("next")
                };
                assert_eq!(m.len(), 1);
                progress.fetch_add(1, Ordering::Relaxed);
            }
            drop(push);
        }
    });
    check("recv_multipart / Stream::next", seen);
}

#[test]
fn send_loop_to_a_socket_with_room_yields() {
    let ctx = Context::new();
    let seen = progress_when_another_task_ran(|progress| {
        let (mut push, mut pull) = flooded_pair(&ctx, "send", true);
        async move {
            for i in 0..FLOOD {
                match i % 3 {
                    0 => push.send("m", SendFlags::empty()).await.expect("send"),
                    1 => push
                        .send_slice(b"m", SendFlags::empty())
                        .await
                        .expect("send_slice"),
                    _ => push
                        .send_multipart(["m"], SendFlags::empty())
                        .await
                        .expect("send_multipart"),
                }
                progress.fetch_add(1, Ordering::Relaxed);
            }
            for _ in 0..FLOOD {
                pull.recv(RecvFlags::DONTWAIT)
                    .expect("every message queued");
            }
        }
    });
    check("send / send_slice / send_multipart", seen);
}

#[test]
fn sink_loop_to_a_socket_with_room_yields() {
    let ctx = Context::new();
    let seen = progress_when_another_task_ran(|progress| {
        let (mut push, mut pull) = flooded_pair(&ctx, "sink", true);
        async move {
            for _ in 0..FLOOD {
                SinkExt::send(&mut push, Multipart::from(vec![Bytes::from_static(b"m")]))
                    .await
                    .expect("sink send");
                progress.fetch_add(1, Ordering::Relaxed);
            }
            for _ in 0..FLOOD {
                pull.recv(RecvFlags::DONTWAIT)
                    .expect("every message queued");
            }
        }
    });
    check("Sink::send", seen);
}
