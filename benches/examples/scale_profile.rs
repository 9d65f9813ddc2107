//! One case of the scale bench (benches/benches/scale.rs) at one N, cut down for a profiler:
//! no timing, a fixed number of messages, so that instruction counts can be compared across N
//! and libraries (issue 15). Run it twice with different message counts under callgrind and
//! subtract: what is left is the cost of the extra messages, without the set-up.
//!
//! ```text
//! cargo build --release -p ferromq-benches --example scale_profile
//! valgrind --tool=callgrind target/release/examples/scale_profile ferromq pub-one 1000 20000
//! strace -f -c target/release/examples/scale_profile ferromq pub-one 1 200000 tcp
//! ```
//!
//! Cases: `pub-one` (a PUB with N SUBs, SUB i subscribed to `t<i>`; messages to `t00000`,
//! drained from SUB 0), `pub-all` (the same SUBs, each also subscribed to `a`; messages to
//! `a`, drained from every SUB: N deliveries per message) and `router-send` (a ROUTER with N
//! DEALERs; messages to peers drawn from a fixed pseudo-random sequence, each DEALER drained
//! of what it got; the sends alone are `send_routed`, which callgrind can count by itself with
//! `--toggle-collect='*send_routed*'`; it also prints the median of the sends' wall time per
//! batch, as the bench measures it). Inproc, or tcp over loopback with a fifth argument
//! `tcp` (there the I/O threads' wake-ups, which `strace -c` counts, are the cost to look at).

use std::time::{Duration, Instant};

use ferromq_benches::backend::{Backend, BenchError, BenchResult, Kind};
use ferromq_benches::ferromq::Ferromq;
use ferromq_benches::libzmq::Libzmq;
use ferromq_benches::Rng;

const BODY: [u8; 16] = *b"0123456789abcdef";

fn topic(i: usize) -> Vec<u8> {
    let mut t = format!("t{i:05}").into_bytes();
    t.resize(BODY.len(), b'.');
    t
}

/// `all`: every SUB also takes `a`, and the messages go to `a` (pub-all), else to `t00000`.
fn pub_cases<B: Backend>(peers: usize, msgs: usize, all: bool, tcp: bool) -> BenchResult<()> {
    let ctx = B::new()?;
    let mut publisher = ctx.socket(Kind::Pub, 0)?;
    let ep = if tcp {
        "tcp://127.0.0.1:*".to_owned()
    } else {
        format!("inproc://profile-{}", std::process::id())
    };
    let ep = B::bind(&mut publisher, &ep)?;
    let mut subs = Vec::with_capacity(peers);
    for i in 0..peers {
        let mut s = ctx.socket(Kind::Sub, 0)?;
        B::subscribe(&mut s, &topic(i)[..6])?;
        if all {
            B::subscribe(&mut s, b"a")?;
        }
        B::connect(&mut s, &ep)?;
        subs.push(s);
    }
    // Every subscription has arrived once SUB i gets a message on its topic.
    for (i, s) in subs.iter_mut().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            B::send(&mut publisher, &topic(i), false)?;
            if B::poll_in(s, 5)? {
                break;
            }
            if Instant::now() > deadline {
                return Err(BenchError(format!("subscription {i} never arrived")));
            }
        }
        while B::poll_in(s, 1)? {
            B::recv(s)?;
        }
    }
    let mut msg = topic(0);
    let receivers = if all {
        msg[0] = b'a';
        &mut subs[..]
    } else {
        &mut subs[..1]
    };
    for chunk in (0..msgs).step_by(1000) {
        let n = 1000.min(msgs - chunk);
        for _ in 0..n {
            B::send(&mut publisher, &msg, false)?;
        }
        for s in receivers.iter_mut() {
            for _ in 0..n {
                B::recv(s)?;
            }
        }
    }
    Ok(())
}

/// The timed part of `router-send` in the bench, on its own so that callgrind can count it
/// alone (`--toggle-collect='*send_routed*'`).
#[inline(never)]
fn send_routed<B: Backend>(
    router: &mut B::Socket,
    ids: &[Vec<u8>],
    targets: &[usize],
) -> BenchResult<()> {
    for &t in targets {
        if !B::send(router, &ids[t], true)? {
            return Err(BenchError(format!("peer {t} unreachable")));
        }
        B::send(router, &BODY, false)?;
    }
    Ok(())
}

fn router_send<B: Backend>(peers: usize, msgs: usize, tcp: bool) -> BenchResult<()> {
    let ctx = B::new()?;
    let mut router = ctx.socket(Kind::Router, 0)?;
    B::set_router_mandatory(&mut router)?;
    let ep = if tcp {
        "tcp://127.0.0.1:*".to_owned()
    } else {
        format!("inproc://profile-{}", std::process::id())
    };
    let ep = B::bind(&mut router, &ep)?;
    let ids: Vec<Vec<u8>> = (0..peers)
        .map(|i| format!("peer-{i:05}").into_bytes())
        .collect();
    let mut dealers = Vec::with_capacity(peers);
    for id in &ids {
        let mut d = ctx.socket(Kind::Dealer, 0)?;
        B::set_routing_id(&mut d, id)?;
        B::connect(&mut d, &ep)?;
        B::send(&mut d, &BODY, false)?;
        B::recv(&mut router)?;
        B::recv(&mut router)?;
        dealers.push(d);
    }
    let mut rng = Rng(0x5EED_0000_0000_0001 ^ peers as u64);
    let mut per_peer = vec![0usize; peers];
    let mut targets = Vec::with_capacity(1000);
    let mut per_msg = Vec::new();
    for chunk in (0..msgs).step_by(1000) {
        let n = 1000.min(msgs - chunk);
        targets.clear();
        targets.extend((0..n).map(|_| (rng.next_u64() % peers as u64) as usize));
        let start = Instant::now();
        send_routed::<B>(&mut router, &ids, &targets)?;
        per_msg.push(start.elapsed().as_nanos() as f64 / n as f64);
        for &t in &targets {
            per_peer[t] += 1;
        }
        for (d, count) in dealers.iter_mut().zip(per_peer.iter_mut()) {
            for _ in 0..*count {
                B::recv(d)?;
            }
            *count = 0;
        }
    }
    // The bench's figure, without its time budget: the median over batches of the sends'
    // wall time (a quick before/after check of this one case; meaningless under callgrind).
    per_msg.sort_by(f64::total_cmp);
    if let Some(median) = per_msg.get(per_msg.len() / 2) {
        println!("router-send {} N={peers}: {median:.0} ns/msg", B::NAME);
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let peers = arg(3).parse().unwrap_or(1);
    let msgs = arg(4).parse().unwrap_or(10_000);
    let tcp = arg(5) == "tcp";
    let result = match (arg(1), arg(2)) {
        ("ferromq", "pub-one") => pub_cases::<Ferromq>(peers, msgs, false, tcp),
        ("libzmq", "pub-one") => pub_cases::<Libzmq>(peers, msgs, false, tcp),
        ("ferromq", "pub-all") => pub_cases::<Ferromq>(peers, msgs, true, tcp),
        ("libzmq", "pub-all") => pub_cases::<Libzmq>(peers, msgs, true, tcp),
        ("ferromq", "router-send") => router_send::<Ferromq>(peers, msgs, tcp),
        ("libzmq", "router-send") => router_send::<Libzmq>(peers, msgs, tcp),
        _ => Err(BenchError(
            "usage: scale_profile ferromq|libzmq pub-one|pub-all|router-send N MESSAGES [tcp]"
                .into(),
        )),
    };
    if let Err(e) = result {
        eprintln!("scale_profile: {e}");
        std::process::exit(1);
    }
}
