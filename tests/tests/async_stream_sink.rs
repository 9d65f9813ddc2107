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
