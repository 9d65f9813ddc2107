//! The async API on tokio's multi-thread runtime: every future is `Send`, so sockets move
//! into `tokio::spawn` tasks (issue 17). The assertions fail to compile if that regresses.

use std::future::Future;
use std::time::Duration;

use ferromq::{AsyncSocket, Context, SendFlags, SocketType};

const LIMIT: Duration = Duration::from_secs(30);

fn is_send<T: Send>(_: &T) {}
fn is_send_static<F: Future + Send + 'static>(_: &F) {}

/// Never run: only compiled, to keep every future of the API `Send`.
#[allow(dead_code, clippy::let_underscore_future)]
fn every_future_is_send(mut s: AsyncSocket) {
    is_send(&s);
    is_send(&s.recv());
    is_send(&s.recv_multipart());
    is_send(&s.send("x", SendFlags::empty()));
    is_send(&s.send_slice(b"x", SendFlags::empty()));
    is_send(&s.send_multipart(["a", "b"], SendFlags::empty()));
    let owned = async move {
        let m = s.recv().await?;
        s.send(m, SendFlags::empty()).await?;
        Ok::<(), ferromq::Error>(())
    };
    is_send_static(&owned);
    is_send_static(&Context::new().term_async());
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
            rep.send(m, SendFlags::empty()).await.expect("reply");
        }
    });
    let client = tokio::spawn(async move {
        for i in 0..1000u32 {
            req.send(i.to_le_bytes().to_vec(), SendFlags::empty())
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

/// A non-blocking async send that the socket refuses hands the message back, one part or
/// a whole multipart message, as the blocking API does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_nonblocking_sends_hand_the_message_back() {
    let ctx = Context::new();
    let mut push = AsyncSocket::new(ctx.socket(SocketType::Push).expect("push")).expect("async");
    // No peer: nothing can take a message.
    let refused = push
        .send("one", SendFlags::DONTWAIT)
        .await
        .expect_err("refused");
    assert_eq!(refused.error(), ferromq::Error::Again);
    assert_eq!(refused.into_message().as_slice(), b"one");
    let refused = push
        .send_multipart(["a", "b", "c"], SendFlags::DONTWAIT)
        .await
        .expect_err("refused");
    assert_eq!(refused.error(), ferromq::Error::Again);
    let back: Vec<&[u8]> = refused.message().iter().map(|f| &f[..]).collect();
    assert_eq!(back, [b"a".as_slice(), b"b", b"c"]);
    // The message handed back goes out once a peer arrives.
    let endpoint = format!("inproc://async-handback-{}", std::process::id());
    let mut pull = AsyncSocket::new(ctx.socket(SocketType::Pull).expect("pull")).expect("async");
    pull.get_mut().bind(&endpoint).expect("bind");
    push.get_mut().connect(&endpoint).expect("connect");
    push.send_multipart(refused.into_message(), SendFlags::empty())
        .await
        .expect("resend");
    let got = pull.recv_multipart().await.expect("recv");
    assert_eq!(got.len(), 3);
}
