//! `AsyncSocket` as a `futures::Stream` of messages and a `futures::Sink` of them (issue 17),
//! driven with `StreamExt::next`, `SinkExt::send` and `forward`.

use std::time::Duration;

use bytes::Bytes;
use ferromq::{AsyncSocket, Context, Multipart, SocketType};
use futures::{SinkExt, StreamExt};

const LIMIT: Duration = Duration::from_secs(20);

fn socket(ctx: &Context, kind: SocketType) -> AsyncSocket {
    AsyncSocket::new(ctx.socket(kind).expect("socket")).expect("async")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sink_send_and_stream_next_over_tcp() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, SocketType::Pull);
    pull.get_mut().bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = pull.get_ref().last_endpoint().expect("endpoint");
    let mut push = socket(&ctx, SocketType::Push);
    push.get_mut().connect(&endpoint).expect("connect");
    let sender = tokio::spawn(async move {
        for i in 0..500u32 {
            let m = Multipart::from(vec![Bytes::from(i.to_le_bytes().to_vec()), "tail".into()]);
            // The inherent `send` (one part) shadows the trait method; name the trait.
            SinkExt::send(&mut push, m).await.expect("sink send");
        }
        push
    });
    tokio::time::timeout(LIMIT, async {
        for i in 0..500u32 {
            let m = pull.next().await.expect("open").expect("recv");
            assert_eq!(
                m,
                vec![Bytes::from(i.to_le_bytes().to_vec()), Bytes::from("tail")]
            );
            assert!(m.metadata().is_some(), "a tcp peer's handshake metadata");
        }
    })
    .await
    .expect("in time");
    sender.await.expect("sender");
}

/// `StreamExt::forward` relays one socket's stream into another's sink; ETERM ends the
/// stream, so the relay finishes when the context shuts down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_relays_until_the_context_shuts_down() {
    let ctx = Context::new();
    let base = format!("inproc://async-forward-{}", std::process::id());
    let mut front = socket(&ctx, SocketType::Pull);
    front.get_mut().bind(&format!("{base}-in")).expect("bind");
    let mut back = socket(&ctx, SocketType::Push);
    back.get_mut().bind(&format!("{base}-out")).expect("bind");
    let mut source = socket(&ctx, SocketType::Push);
    source
        .get_mut()
        .connect(&format!("{base}-in"))
        .expect("connect");
    let mut drain = socket(&ctx, SocketType::Pull);
    drain
        .get_mut()
        .connect(&format!("{base}-out"))
        .expect("connect");
    let relay = tokio::spawn(async move {
        // A Stream of Result<Multipart> forwards into a Sink<Multipart, Error = Error>.
        front.forward(&mut back).await
    });
    tokio::time::timeout(LIMIT, async {
        let mut out = futures::stream::iter(0..100u32)
            .map(|i| Ok(Multipart::from([Bytes::from(i.to_le_bytes().to_vec())])));
        source.send_all(&mut out).await.expect("send_all");
        for i in 0..100u32 {
            let m = drain.next().await.expect("open").expect("recv");
            assert_eq!(m[0][..], i.to_le_bytes());
        }
        ctx.shutdown();
        relay.await.expect("relay").expect("forward ends cleanly");
    })
    .await
    .expect("in time");
}

/// The socket split into its `Sink` and `Stream` halves, each driven by its own task: both
/// park on the one fd tokio keeps a single read waker for, so each half must wake the other.
/// An echo peer bounces 2,000 messages back through HWMs of 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_halves_in_separate_tasks_both_progress() {
    const COUNT: u32 = 2000;
    let ctx = Context::new();
    let endpoint = format!("inproc://async-split-{}", std::process::id());
    let mut echo_sock = ctx.socket(SocketType::Pair).expect("pair");
    echo_sock.set_sndhwm(2).expect("hwm");
    echo_sock.set_rcvhwm(2).expect("hwm");
    let mut echo = AsyncSocket::new(echo_sock).expect("async");
    echo.get_mut().bind(&endpoint).expect("bind");
    let mut sock = ctx.socket(SocketType::Pair).expect("pair");
    sock.set_sndhwm(2).expect("hwm");
    sock.set_rcvhwm(2).expect("hwm");
    let mut client = AsyncSocket::new(sock).expect("async");
    client.get_mut().connect(&endpoint).expect("connect");
    let echoer = tokio::spawn(async move {
        for _ in 0..COUNT {
            let m = echo.recv_multipart().await.expect("echo recv");
            echo.send_multipart(m, ferromq::SendFlags::empty())
                .await
                .expect("echo send");
        }
    });
    let (mut sink, mut stream) = client.split();
    let sender = tokio::spawn(async move {
        for i in 0..COUNT {
            sink.send(Multipart::from([Bytes::from(i.to_le_bytes().to_vec())]))
                .await
                .expect("sink send");
        }
    });
    let receiver = tokio::spawn(async move {
        for i in 0..COUNT {
            let m = stream.next().await.expect("open").expect("recv");
            assert_eq!(m[0][..], i.to_le_bytes());
        }
    });
    tokio::time::timeout(LIMIT, async {
        sender.await.expect("sender");
        receiver.await.expect("receiver");
        echoer.await.expect("echoer");
    })
    .await
    .expect("both halves progressed");
}
