//! ROUTER routing-id lookup, ferromq against libzmq in one run: a ROUTER bound on inproc with
//! N DEALER peers (N = 1, 10, 100, 1000), each connected with ZMQ_ROUTING_ID `peer-<i>`. One
//! iteration sends 10,000 two-frame messages `[id, 16-byte body]` to peers in a fixed
//! pseudo-random order, the same for both libraries, so the cost of finding the peer for an id
//! shows as it grows with N. One iteration is 10^4 messages, so its time in µs / 10 reads as
//! ns per message.
//!
//! Only the sends are timed. HWM is 0 (unlimited) on both ends, so nothing is dropped or
//! waited for; ROUTER_MANDATORY is on, so an id the ROUTER does not know fails the run instead
//! of being dropped silently. After the timed part every DEALER is drained of exactly the
//! messages sent to it (a blocking receive with a bounded timeout), which proves each message
//! reached the peer its id names. Both libraries run through the same generic code
//! ([`Backend`]): each frame is copied into a fresh message, as `zmq_send` does.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use ferromq_benches::backend::{Backend, BenchResult, Kind};
use ferromq_benches::ferromq::Ferromq;
use ferromq_benches::libzmq::Libzmq;
use ferromq_benches::Rng;

const PEER_COUNTS: [usize; 4] = [1, 10, 100, 1000];
const MESSAGES: usize = 10_000;
const BODY: [u8; 16] = *b"0123456789abcdef";

/// The peer each of the messages goes to, and how many each peer gets.
struct Workload {
    ids: Vec<Vec<u8>>,
    targets: Vec<usize>,
    per_peer: Vec<usize>,
}

fn workload(peers: usize) -> Workload {
    let ids = (0..peers)
        .map(|i| format!("peer-{i}").into_bytes())
        .collect();
    let mut rng = Rng(0x5EED_0000_0000_0001 ^ peers as u64);
    let targets: Vec<usize> = (0..MESSAGES)
        .map(|_| (rng.next_u64() % peers as u64) as usize)
        .collect();
    let mut per_peer = vec![0; peers];
    for &t in &targets {
        per_peer[t] += 1;
    }
    Workload {
        ids,
        targets,
        per_peer,
    }
}

/// A ROUTER with every DEALER of `w` connected and identified.
struct Setup<B: Backend> {
    // Dropped last: the sockets close before their context.
    router: B::Socket,
    dealers: Vec<B::Socket>,
    _ctx: B,
}

fn setup<B: Backend>(w: &Workload) -> BenchResult<Setup<B>> {
    let ctx = B::new()?;
    let mut router = ctx.socket(Kind::Router, 0)?;
    B::set_router_mandatory(&mut router)?;
    let endpoint = B::bind(
        &mut router,
        &format!("inproc://routing-{}-{}", B::NAME, w.ids.len()),
    )?;
    let mut dealers = Vec::with_capacity(w.ids.len());
    for id in &w.ids {
        let mut d = ctx.socket(Kind::Dealer, 0)?;
        B::set_routing_id(&mut d, id)?;
        B::connect(&mut d, &endpoint)?;
        // A ROUTER reads a peer only once it is identified: its hello proves the id is known.
        B::send(&mut d, b"hello", false)?;
        dealers.push(d);
    }
    for _ in 0..w.ids.len() {
        let (_, more) = B::recv(&mut router)?;
        assert!(more, "{}: routing id frame without a body", B::NAME);
        let (_, more) = B::recv(&mut router)?;
        assert!(!more, "{}: hello has one frame", B::NAME);
    }
    Ok(Setup {
        router,
        dealers,
        _ctx: ctx,
    })
}

/// Sends the workload's messages once; the time taken.
fn send_all<B: Backend>(s: &mut Setup<B>, w: &Workload) -> BenchResult<Duration> {
    let start = Instant::now();
    for &t in &w.targets {
        let routed = B::send(&mut s.router, &w.ids[t], true)?;
        assert!(routed, "{}: peer-{t} unreachable", B::NAME);
        B::send(&mut s.router, &BODY, false)?;
    }
    Ok(start.elapsed())
}

/// Receives exactly what was sent to each peer: each gets its own count of 16-byte bodies.
fn drain<B: Backend>(s: &mut Setup<B>, w: &Workload) -> BenchResult<()> {
    for (dealer, &count) in s.dealers.iter_mut().zip(&w.per_peer) {
        for _ in 0..count {
            let (len, more) = B::recv(dealer)?;
            assert_eq!((len, more), (BODY.len(), false), "{}: wrong frame", B::NAME);
        }
    }
    Ok(())
}

fn bench<B: Backend>(group: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    let mut s = match setup::<B>(w) {
        Ok(s) => s,
        Err(e) => panic!("{} set-up with {} peers: {e}", B::NAME, w.ids.len()),
    };
    group.bench_function(BenchmarkId::new(B::NAME, w.ids.len()), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let run = send_all(&mut s, w).and_then(|t| drain(&mut s, w).map(|()| t));
                match run {
                    Ok(t) => total += t,
                    Err(e) => panic!("{} with {} peers: {e}", B::NAME, w.ids.len()),
                }
            }
            total
        });
    });
}

fn routing(c: &mut Criterion) {
    let mut group = c.benchmark_group("routing");
    for peers in PEER_COUNTS {
        let w = workload(peers);
        bench::<Ferromq>(&mut group, &w);
        bench::<Libzmq>(&mut group, &w);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = routing
}
criterion_main!(benches);
