//! The async API on tokio's multi-thread runtime: every future is `Send`, so sockets move
//! into `tokio::spawn` tasks (issue 17). The assertions fail to compile if that regresses.

use std::future::Future;
use std::time::Duration;

use ferromq::{AsyncSocket, Context, SocketType};

const LIMIT: Duration = Duration::from_secs(30);

fn is_send<T: Send>(_: &T) {}
fn is_send_static<F: Future + Send + 'static>(_: &F) {}

/// Never run: only compiled, to keep every future of the API `Send`.
#[allow(dead_code, clippy::let_underscore_future)]
fn every_future_is_send(mut s: AsyncSocket) {
    is_send(&s);
    is_send(&s.recv());
    is_send(&s.recv_multipart());
    is_send(&s.send("x", false));
    is_send(&s.send_slice(b"x", false));
    is_send(&s.send_multipart(["a", "b"]));
    let owned = async move {
        let m = s.recv().await?;
        s.send(m, false).await
    };
    is_send_static(&owned);
}

/// 1,000 REQ/REP round trips with each socket moved into its own spawned task.
async fn round_trips(ctx: &Context, endpoint: &str) {
    let mut rep = AsyncSocket::new(ctx.socket(SocketType::Rep).expect("rep")).expect("async");
    rep.get_mut().bind(endpoint).expect("bind");
    let endpoint = rep.get_ref().last_endpoint().expect("endpoint");
    let mut req = AsyncSocket::new(ctx.socket(SocketType::Req).expect("req")).expect("async");
    req.get_mut().connect(&endpoint).expect("connect");
    let server = tokio::spawn(async move {
        for _ in 0..1000 {
            let m = rep.recv().await.expect("request");
            rep.send(m, false).await.expect("reply");
        }
    });
    let client = tokio::spawn(async move {
        for i in 0..1000u32 {
            req.send(i.to_le_bytes().to_vec(), false)
                .await
                .expect("request");
            let m = req.recv().await.expect("reply");
            assert_eq!(m.as_slice(), i.to_le_bytes());
        }
    });
    tokio::time::timeout(LIMIT, async {
        client.await.expect("client");
        server.await.expect("server");
    })
    .await
    .expect("in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_req_rep_over_tcp() {
    let ctx = Context::new();
    round_trips(&ctx, "tcp://127.0.0.1:*").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_req_rep_over_inproc() {
    let ctx = Context::new();
    let endpoint = format!("inproc://async-send-{}", std::process::id());
    round_trips(&ctx, &endpoint).await;
}
