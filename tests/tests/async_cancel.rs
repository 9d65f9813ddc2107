//! Cancel safety of the async API (issue 17): futures dropped by a timeout while messages
//! flow lose no message and no part of one, and a multipart send is queued whole or not at
//! all. Cancels alternate between a zero timeout (one poll, then dropped) and 1 ms (dropped
//! while parked on the fd).

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use ferromq::{AsyncSocket, Context, Multipart, SendFlags, SocketType};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(60);
const CANCELS: usize = 1000;

fn patience(i: usize) -> Duration {
    if i.is_multiple_of(2) {
        Duration::ZERO
    } else {
        Duration::from_millis(1)
    }
}

fn message(seq: u32) -> Multipart {
    Multipart::from(vec![
        Bytes::copy_from_slice(&seq.to_le_bytes()),
        Bytes::from_static(b"middle"),
        Bytes::from(vec![7u8; (seq % 64) as usize]),
    ])
}

fn seq_of(m: &Multipart) -> u32 {
    assert_eq!(m.len(), 3, "a whole message: {m:?}");
    let seq = u32::from_le_bytes(m[0][..].try_into().expect("4-byte seq"));
    assert_eq!(m[1], Bytes::from_static(b"middle"));
    assert_eq!(m[2].len(), (seq % 64) as usize);
    seq
}

fn socket(ctx: &Context, kind: SocketType) -> AsyncSocket {
    AsyncSocket::new(ctx.socket(kind).expect("socket")).expect("async")
}

/// Receives `count` messages while cancelling at least `CANCELS` receives, checking the
/// sequence numbers arrive exactly once and in order.
async fn recv_with_cancels(pull: &mut AsyncSocket, count: u32) -> usize {
    let mut cancels = 0;
    let mut next = 0u32;
    let mut i = 0;
    while next < count || cancels < CANCELS {
        i += 1;
        match timeout(patience(i), pull.recv_multipart()).await {
            Err(_) => cancels += 1,
            Ok(m) => {
                let m = m.expect("recv");
                assert_eq!(seq_of(&m), next, "each message exactly once, in order");
                next += 1;
            }
        }
    }
    assert_eq!(next, count);
    cancels
}

async fn recv_cancelled_while_messages_arrive(endpoint: &str) {
    let ctx = Context::new();
    let mut pull = socket(&ctx, SocketType::Pull);
    pull.get_mut().bind(endpoint).expect("bind");
    let endpoint = pull.get_ref().last_endpoint().expect("endpoint");
    let mut push = socket(&ctx, SocketType::Push);
    push.get_mut().connect(&endpoint).expect("connect");
    const COUNT: u32 = 3000;
    let sender = tokio::spawn(async move {
        for seq in 0..COUNT {
            push.send_multipart(message(seq), SendFlags::empty())
                .await
                .expect("send");
            if seq % 8 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        push
    });
    let cancels = timeout(LIMIT, recv_with_cancels(&mut pull, COUNT))
        .await
        .expect("in time");
    assert!(cancels >= CANCELS);
    sender.await.expect("sender");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_recvs_lose_nothing_over_inproc() {
    let endpoint = format!("inproc://async-cancel-{}", std::process::id());
    recv_cancelled_while_messages_arrive(&endpoint).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_recvs_lose_nothing_over_tcp() {
    recv_cancelled_while_messages_arrive("tcp://127.0.0.1:*").await;
}

/// Sends cancelled while the pipe is full: what the receiver gets is exactly the set of
/// sends that completed, each message whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_multipart_sends_are_all_or_nothing() {
    let ctx = Context::new();
    let endpoint = format!("inproc://async-cancel-send-{}", std::process::id());
    let mut pull_sock = ctx.socket(SocketType::Pull).expect("pull");
    pull_sock.set_rcvhwm(4).expect("hwm");
    let mut pull = AsyncSocket::new(pull_sock).expect("async");
    pull.get_mut().bind(&endpoint).expect("bind");
    let mut push_sock = ctx.socket(SocketType::Push).expect("push");
    push_sock.set_sndhwm(4).expect("hwm");
    let mut push = AsyncSocket::new(push_sock).expect("async");
    push.get_mut().connect(&endpoint).expect("connect");
    const END: u32 = u32::MAX;

    let receiver = tokio::spawn(async move {
        let mut got = Vec::new();
        loop {
            let m = pull.recv_multipart().await.expect("recv");
            if m.len() == 1 && m[0][..] == END.to_le_bytes() {
                return got;
            }
            got.push(seq_of(&m));
            if got.len() % 4 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    });
    let sent = timeout(LIMIT, async {
        let mut sent = Vec::new();
        let mut cancels = 0;
        let mut seq = 0u32;
        while cancels < CANCELS {
            match timeout(
                patience(seq as usize),
                push.send_multipart(message(seq), SendFlags::empty()),
            )
            .await
            {
                Ok(r) => {
                    r.expect("send");
                    sent.push(seq);
                }
                Err(_) => cancels += 1,
            }
            seq += 1;
        }
        push.send_multipart(
            [Bytes::copy_from_slice(&END.to_le_bytes())],
            SendFlags::empty(),
        )
        .await
        .expect("end");
        sent
    })
    .await
    .expect("in time");
    let got = timeout(LIMIT, receiver)
        .await
        .expect("in time")
        .expect("receiver");
    assert!(!sent.is_empty());
    assert_eq!(got, sent, "exactly the completed sends, in order");
}

/// A ROUTER cancelling receives while 100 DEALERs, each in its own task, send requests and
/// cancel their own receives of the replies: every request and every reply exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn router_with_100_dealer_tasks_loses_nothing() {
    const PEERS: u32 = 100;
    const EACH: u32 = 10;
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.get_mut().bind("tcp://127.0.0.1:*").expect("bind");
    let endpoint = router.get_ref().last_endpoint().expect("endpoint");
    let mut dealers = Vec::new();
    for peer in 0..PEERS {
        let mut dealer = socket(&ctx, SocketType::Dealer);
        dealer
            .get_mut()
            .set_routing_id(format!("peer-{peer}").as_bytes())
            .expect("id");
        dealer.get_mut().connect(&endpoint).expect("connect");
        dealers.push(tokio::spawn(async move {
            let mut cancels = 0;
            for seq in 0..EACH {
                dealer
                    .send_multipart(message(seq), SendFlags::empty())
                    .await
                    .expect("request");
                let mut i = 0;
                let reply = loop {
                    i += 1;
                    match timeout(patience(i), dealer.recv_multipart()).await {
                        Ok(r) => break r.expect("reply"),
                        Err(_) => cancels += 1,
                    }
                };
                assert_eq!(seq_of(&reply), seq, "replies exactly once, in order");
            }
            cancels
        }));
    }
    let served = timeout(LIMIT, async {
        let mut seen = BTreeSet::new();
        let mut cancels = 0;
        let mut i = 0;
        while seen.len() < (PEERS * EACH) as usize || cancels < CANCELS {
            i += 1;
            let Ok(m) = timeout(patience(i), router.recv_multipart()).await else {
                cancels += 1;
                continue;
            };
            let mut m = m.expect("request").into_frames();
            let id = m.remove(0);
            let seq = seq_of(&Multipart::from(m.clone()));
            assert!(seen.insert((id.clone(), seq)), "request seen once");
            let mut reply = Multipart::new();
            reply.push(id);
            for f in m {
                reply.push(f);
            }
            router
                .send_multipart(reply, SendFlags::empty())
                .await
                .expect("reply");
        }
        (seen.len(), cancels)
    })
    .await
    .expect("in time");
    assert_eq!(served.0, (PEERS * EACH) as usize);
    assert!(served.1 >= CANCELS);
    for d in dealers {
        timeout(LIMIT, d).await.expect("in time").expect("dealer");
    }
}
