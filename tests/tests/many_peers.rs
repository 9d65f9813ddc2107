//! One socket with many peers (issue 15): the patterns now look only at the peers that woke
//! the socket, so these check that nothing of libzmq's semantics was lost on the way: every
//! active peer gets its turn, peers that come and go lose nothing, and an XPUB still sees every
//! subscription and cancel.

use std::collections::{HashMap, HashSet};

use ferromq::{Context, Error, RecvFlags, SendFlags, Socket, SocketType};
use proptest::prelude::*;

const PEERS: usize = 100;

fn endpoint(tag: &str) -> String {
    format!("inproc://many-peers-{tag}-{}", std::process::id())
}

fn socket(ctx: &Context, kind: SocketType) -> Socket {
    let mut s = ctx.socket(kind).unwrap();
    s.set_sndhwm(0).unwrap();
    s.set_rcvhwm(0).unwrap();
    s.set_rcvtimeo(5_000).unwrap();
    s.set_linger(0).unwrap();
    s
}

/// The sender index a message body starts with (`<index>:<seq>`).
fn sender(body: &[u8]) -> usize {
    let text = std::str::from_utf8(body).unwrap();
    text.split(':').next().unwrap().parse().unwrap()
}

/// Each of `PEERS` senders queues `per_peer` messages; the first half of everything received
/// must hold each sender's share within 10% (strict rotation gives exactly the share).
fn assert_fair_shares(received: &[usize], per_peer: usize) {
    let half = PEERS * per_peer / 2;
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &s in &received[..half] {
        *counts.entry(s).or_default() += 1;
    }
    let share = per_peer / 2;
    assert_eq!(counts.len(), PEERS, "every active peer got turns");
    for (peer, n) in counts {
        assert!(
            n.abs_diff(share) * 10 <= share,
            "peer {peer}: {n} of the first {half}, share {share}"
        );
    }
}

#[test]
fn pull_gives_each_of_100_active_peers_its_share() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, SocketType::Pull);
    pull.bind(&endpoint("pull")).unwrap();
    let per_peer = 200;
    let mut pushes: Vec<Socket> = (0..PEERS)
        .map(|_| {
            let mut p = socket(&ctx, SocketType::Push);
            p.connect(&endpoint("pull")).unwrap();
            p
        })
        .collect();
    for seq in 0..per_peer {
        for (i, p) in pushes.iter_mut().enumerate() {
            p.send(format!("{i}:{seq}").into_bytes(), SendFlags::empty())
                .unwrap();
        }
    }
    let received: Vec<usize> = (0..PEERS * per_peer)
        .map(|_| sender(&pull.recv(RecvFlags::empty()).unwrap().data))
        .collect();
    assert_fair_shares(&received, per_peer);
}

#[test]
fn router_gives_each_of_100_active_peers_its_share() {
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.bind(&endpoint("router")).unwrap();
    let per_peer = 100;
    let mut dealers: Vec<Socket> = (0..PEERS)
        .map(|i| {
            let mut d = socket(&ctx, SocketType::Dealer);
            d.set_routing_id(format!("d{i}").as_bytes()).unwrap();
            d.connect(&endpoint("router")).unwrap();
            d
        })
        .collect();
    for seq in 0..per_peer {
        for (i, d) in dealers.iter_mut().enumerate() {
            d.send(format!("{i}:{seq}").into_bytes(), SendFlags::empty())
                .unwrap();
        }
    }
    let mut received = Vec::new();
    for _ in 0..PEERS * per_peer {
        let parts = router.recv_multipart(RecvFlags::empty()).unwrap();
        let from = sender(&parts[1]);
        assert_eq!(
            parts[0],
            format!("d{from}").as_bytes(),
            "routing id matches"
        );
        received.push(from);
    }
    assert_fair_shares(&received, per_peer);
}

/// A ROUTER on a thread of its own answers 100 DEALERs over tcp and over ipc, in rounds: each
/// request gets its own answer, in order, and nothing else. Answers (and the requests after
/// them) are written by the sending thread wherever the connection's I/O thread sleeps
/// (`Engine::send_through`), and every fifth round's are 96 KiB, past what a Unix socket's
/// buffer takes at once from several peers, so some writes end part way and the I/O thread
/// finishes them.
#[test]
fn router_answers_each_of_100_tcp_and_ipc_peers_in_order() {
    const ROUNDS: usize = 20;
    let body = |i: usize, round: usize| {
        let mut b = format!("{i}:{round}:").into_bytes();
        if round % 5 == 4 {
            b.resize(96 * 1024, (i + round) as u8);
        }
        b
    };
    let ipc = std::env::temp_dir().join(format!("ferromq-many-answers-{}.ipc", std::process::id()));
    for ep in [
        "tcp://127.0.0.1:*".to_owned(),
        format!("ipc://{}", ipc.display()),
    ] {
        let ctx = Context::new();
        let mut router = socket(&ctx, SocketType::Router);
        router.bind(&ep).unwrap();
        let ep = router.last_endpoint().unwrap();
        let server = std::thread::spawn(move || -> Result<(), Error> {
            for _ in 0..PEERS * ROUNDS {
                let parts = router.recv_multipart(RecvFlags::empty())?;
                let mut answer = b"re ".to_vec();
                answer.extend_from_slice(&parts[1]);
                router.send_multipart([parts[0].clone(), answer.into()], SendFlags::empty())?;
            }
            Ok(())
        });
        let mut dealers: Vec<Socket> = (0..PEERS)
            .map(|_| {
                let mut d = socket(&ctx, SocketType::Dealer);
                d.connect(&ep).unwrap();
                d
            })
            .collect();
        for round in 0..ROUNDS {
            for (i, d) in dealers.iter_mut().enumerate() {
                d.send(body(i, round), SendFlags::empty()).unwrap();
            }
            for (i, d) in dealers.iter_mut().enumerate() {
                let answer = d
                    .recv(RecvFlags::empty())
                    .unwrap_or_else(|e| panic!("{ep}: peer {i} round {round}: {e}"));
                let mut expected = b"re ".to_vec();
                expected.extend_from_slice(&body(i, round));
                assert!(
                    answer.data == expected[..],
                    "{ep}: peer {i} round {round}: wrong answer"
                );
            }
        }
        server.join().unwrap().unwrap();
        for d in &mut dealers {
            assert!(matches!(d.recv(RecvFlags::DONTWAIT), Err(Error::Again)));
        }
    }
}

#[test]
fn xpub_sees_every_subscription_and_cancel_from_100_peers() {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, SocketType::XPub);
    xpub.bind("tcp://127.0.0.1:*").unwrap();
    let ep = xpub.last_endpoint().unwrap();
    let mut subs: Vec<Socket> = (0..PEERS)
        .map(|i| {
            let mut s = socket(&ctx, SocketType::Sub);
            s.set_subscribe(format!("t{i}").as_bytes()).unwrap();
            s.set_subscribe(b"common").unwrap();
            s.connect(&ep).unwrap();
            s
        })
        .collect();
    let mut notices = |n: usize| -> HashSet<Vec<u8>> {
        let got: Vec<Vec<u8>> = (0..n)
            .map(|_| xpub.recv(RecvFlags::empty()).unwrap().data.to_vec())
            .collect();
        let set: HashSet<Vec<u8>> = got.iter().cloned().collect();
        assert_eq!(set.len(), n, "no notice twice");
        assert_eq!(xpub.recv(RecvFlags::DONTWAIT), Err(Error::Again));
        set
    };
    let notice = |on: bool, topic: &str| {
        let mut v = vec![u8::from(on)];
        v.extend_from_slice(topic.as_bytes());
        v
    };
    // Each peer's own topic, and the shared one once (not verbose).
    let mut want: HashSet<Vec<u8>> = (0..PEERS).map(|i| notice(true, &format!("t{i}"))).collect();
    want.insert(notice(true, "common"));
    // Subscriptions of peers still connecting come in as their handshakes finish (each
    // receive waits up to RCVTIMEO).
    assert_eq!(notices(PEERS + 1), want);
    // The first half cancel their own topic.
    for (i, s) in subs.iter_mut().enumerate().take(PEERS / 2) {
        s.set_unsubscribe(format!("t{i}").as_bytes()).unwrap();
    }
    let want: HashSet<Vec<u8>> = (0..PEERS / 2)
        .map(|i| notice(false, &format!("t{i}")))
        .collect();
    assert_eq!(notices(PEERS / 2), want);
    // The second half leave: their own topics go, "common" stays (the first half hold it).
    subs.truncate(PEERS / 2);
    let want: HashSet<Vec<u8>> = (PEERS / 2..PEERS)
        .map(|i| notice(false, &format!("t{i}")))
        .collect();
    assert_eq!(notices(PEERS / 2), want);
    subs.clear();
    assert_eq!(notices(1), HashSet::from([notice(false, "common")]));
}

#[derive(Debug, Clone)]
enum Op {
    Connect,
    Send { peer: usize, count: usize },
    Disconnect { peer: usize },
    Recv { count: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Connect),
        4 => (0usize..16, 1usize..20).prop_map(|(peer, count)| Op::Send { peer, count }),
        1 => (0usize..16).prop_map(|peer| Op::Disconnect { peer }),
        3 => (1usize..40).prop_map(|count| Op::Recv { count }),
    ]
}

/// Runs `ops` against one PULL, checking what it receives against what was sent: every
/// message from a peer arrives, once, in the order that peer sent it, whether or not the
/// peer is still connected.
fn churn(ops: Vec<Op>, case: usize) -> Result<(), TestCaseError> {
    let ctx = Context::new();
    let name = endpoint(&format!("churn-{case}"));
    let mut pull = socket(&ctx, SocketType::Pull);
    pull.set_rcvtimeo(2_000).unwrap();
    pull.bind(&name).unwrap();
    // (sender index, socket) of connected peers; sent[i] counts what sender i sent.
    let mut live: Vec<(usize, Socket)> = Vec::new();
    let mut sent: Vec<usize> = Vec::new();
    let mut next_seq: Vec<usize> = Vec::new();
    let take = |pull: &mut Socket, flags: RecvFlags| -> Option<(usize, usize)> {
        let msg = pull.recv(flags).ok()?;
        let text = String::from_utf8(msg.data.to_vec()).ok()?;
        let (s, q) = text.split_once(':')?;
        Some((s.parse().ok()?, q.parse().ok()?))
    };
    let check = |from: usize, seq: usize, next_seq: &mut Vec<usize>| {
        prop_assert_eq!(seq, next_seq[from], "sender {} out of order", from);
        next_seq[from] += 1;
        Ok(())
    };
    for op in ops {
        match op {
            Op::Connect => {
                let mut p = socket(&ctx, SocketType::Push);
                p.connect(&name).unwrap();
                live.push((sent.len(), p));
                sent.push(0);
                next_seq.push(0);
            }
            Op::Send { peer, count } if !live.is_empty() => {
                let at = peer % live.len();
                let (i, p) = &mut live[at];
                for _ in 0..count {
                    p.send(format!("{i}:{}", sent[*i]).into_bytes(), SendFlags::empty())
                        .unwrap();
                    sent[*i] += 1;
                }
            }
            Op::Disconnect { peer } if !live.is_empty() => {
                let at = peer % live.len();
                drop(live.swap_remove(at));
            }
            Op::Recv { count } => {
                for _ in 0..count {
                    match take(&mut pull, RecvFlags::DONTWAIT) {
                        Some((from, seq)) => check(from, seq, &mut next_seq)?,
                        None => break,
                    }
                }
            }
            _ => {}
        }
    }
    let total: usize = sent.iter().sum();
    let mut got: usize = next_seq.iter().sum();
    while got < total {
        let Some((from, seq)) = take(&mut pull, RecvFlags::empty()) else {
            return Err(TestCaseError::fail(format!(
                "lost {} of {total} messages",
                total - got
            )));
        };
        check(from, seq, &mut next_seq)?;
        got += 1;
    }
    prop_assert_eq!(next_seq, sent);
    prop_assert_eq!(pull.recv(RecvFlags::DONTWAIT), Err(Error::Again));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn peers_coming_and_going_lose_nothing(ops in proptest::collection::vec(op(), 1..120)) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        churn(ops, case)?;
    }
}
