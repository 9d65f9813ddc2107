//! Shutting down from async code (issue 17): `Context::term_async` waits for sockets to close
//! and linger without blocking the executor's thread, and dropping contexts and sockets
//! inside a runtime returns at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferromq::{AsyncSocket, Context, SendFlags, SocketType};

/// Runs `body` on a current-thread runtime in its own thread, failing (rather than hanging)
/// if it does not finish: a blocked runtime thread would stop everything on it.
fn on_one_thread<F>(body: impl FnOnce() -> F + Send + 'static)
where
    F: std::future::Future<Output = ()>,
{
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(body());
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(20))
        .expect("the runtime thread finished");
}

/// A socket lingering on an undelivered message keeps `term_async` waiting ~LINGER, and a
/// ticker task on the same (only) thread keeps running meanwhile.
#[test]
fn term_async_waits_for_linger_without_blocking_the_thread() {
    const LINGER: i32 = 300;
    on_one_thread(|| async {
        let ticks = Arc::new(AtomicUsize::new(0));
        let t = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(2)).await;
                t.fetch_add(1, Ordering::Relaxed);
            }
        });
        // Nobody listens there: the message waits in the pipe, and the linger with it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let ctx = Context::new();
        let mut push = AsyncSocket::new(ctx.socket(SocketType::Push).expect("push")).expect("a");
        push.get_mut().set_linger(LINGER).expect("linger");
        push.get_mut()
            .connect(&format!("tcp://127.0.0.1:{port}"))
            .expect("connect");
        push.send("undelivered", SendFlags::empty())
            .await
            .expect("queued while connecting");
        drop(push);
        let before = ticks.load(Ordering::Relaxed);
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(10), ctx.term_async())
            .await
            .expect("term in time");
        let waited = started.elapsed();
        let ticked = ticks.load(Ordering::Relaxed) - before;
        ticker.abort();
        assert!(
            waited >= Duration::from_millis(LINGER as u64 / 2),
            "lingered: {waited:?}"
        );
        assert!(
            ticked >= 20,
            "the thread kept running ({ticked} ticks in {waited:?})"
        );
    });
}

/// The last socket is closed by another task on the same thread while `term_async` waits.
#[test]
fn term_async_is_released_by_a_socket_closed_on_the_same_thread() {
    on_one_thread(|| async {
        let ctx = Context::new();
        let mut pull = AsyncSocket::new(ctx.socket(SocketType::Pull).expect("pull")).expect("a");
        pull.get_mut().bind("tcp://127.0.0.1:*").expect("bind");
        let term = tokio::spawn(ctx.clone().term_async());
        let closer = tokio::spawn(async move {
            // Blocked in a receive until the shutdown reaches it, then closed.
            let e = pull.recv().await.expect_err("ETERM");
            assert_eq!(e, ferromq::Error::Term);
        });
        closer.await.expect("closer");
        term.await.expect("term");
        drop(ctx);
    });
}

/// Dropping a context with tcp sockets, I/O threads and a management runtime inside a
/// runtime returns without blocking (and without tokio's drop-a-runtime-in-a-runtime panic).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_context_inside_a_runtime_returns() {
    let ctx = Context::with_io_threads(2);
    let mut rep = AsyncSocket::new(ctx.socket(SocketType::Rep).expect("rep")).expect("async");
    rep.get_mut().bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = rep.get_ref().last_endpoint().expect("endpoint");
    let mut req = AsyncSocket::new(ctx.socket(SocketType::Req).expect("req")).expect("async");
    req.get_mut().connect(&endpoint).expect("connect");
    req.send("x", SendFlags::empty()).await.expect("send");
    assert_eq!(rep.recv().await.expect("recv").as_slice(), b"x");
    let started = Instant::now();
    drop(req);
    drop(rep);
    drop(ctx);
    assert!(started.elapsed() < Duration::from_millis(500));
}
