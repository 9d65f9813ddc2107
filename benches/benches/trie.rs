//! Subscription lookups, ferromq's tries against libzmq's own, on one workload in one run:
//! 10,000 random 20-byte topics, messages of topic + 64-byte body, 1,000,000 lookups per
//! iteration, hits (each message starts with a subscribed topic) and misses (random
//! messages). One iteration is 10^6 lookups, so its time in ms reads as ns per lookup.
//!
//! Rows come in pairs, `trie/<side>/<hit|miss>/ferromq` and `.../libzmq`, measured in the same
//! criterion group: `sub` is the SUB side (ferromq's `SubscriptionTrie::matches` against
//! libzmq's `trie_t::check`, what xsub matches with), `pub` the PUB side (ferromq's
//! `MultiTrie::for_each_match` against libzmq's `generic_mtrie_t::match`, what xpub finds
//! subscribers with). Every iteration asserts the match count, the same for both libraries
//! (all of the hits, none of the misses), so both answer the same question.
//!
//! libzmq's code is the bundled libzmq 4.3.4 that zmq-sys builds: trie_t's methods are
//! linked from zmq-sys's libzmq.a, and generic_mtrie_t (a template) is instantiated from
//! libzmq's unmodified generic_mtrie_impl.hpp in benches/shim/libzmq_trie.cpp, compiled by
//! benches/build.rs; see `ferromq_benches::libzmq_trie`.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ferromq_benches::libzmq_trie::{LibzmqMultiTrie, LibzmqTrie};
use ferromq_benches::Rng;
use ferromq_trie::{MultiTrie, SubscriptionTrie};

const TOPICS: usize = 10_000;
const TOPIC_LEN: usize = 20;
const BODY_LEN: usize = 64;
const LOOKUPS: usize = 1_000_000;
/// Distinct messages cycled through; each topic appears once, in random order.
const MESSAGES: usize = TOPICS;
/// Subscribers sharing the topics on the PUB side, as a publisher with many SUB peers has.
const PEERS: usize = 100;

struct Workload {
    topics: Vec<Vec<u8>>,
    hits: Vec<Vec<u8>>,
    misses: Vec<Vec<u8>>,
}

fn workload() -> Workload {
    let mut rng = Rng(0x7121_E5EE_D000_0001);
    let topics: Vec<Vec<u8>> = (0..TOPICS).map(|_| rng.bytes(TOPIC_LEN)).collect();
    let mut order: Vec<usize> = (0..MESSAGES).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.next_u64() as usize % (i + 1));
    }
    let hits = order
        .iter()
        .map(|&i| {
            let mut message = topics[i].clone();
            message.extend(rng.bytes(BODY_LEN));
            message
        })
        .collect();
    let sub = subscriptions(&topics);
    let misses = (0..MESSAGES)
        .map(|_| loop {
            let message = rng.bytes(TOPIC_LEN + BODY_LEN);
            if !sub.matches(&message) {
                break message;
            }
        })
        .collect();
    Workload {
        topics,
        hits,
        misses,
    }
}

fn subscriptions(topics: &[Vec<u8>]) -> SubscriptionTrie {
    let mut trie = SubscriptionTrie::new();
    for topic in topics {
        trie.add(topic);
    }
    trie
}

/// Times both libraries over the hit and the miss messages, each pair in one group. Each
/// lookup returns how many matches it saw; the totals must be every message for hits and none
/// for misses.
fn compare(
    c: &mut Criterion,
    side: &str,
    w: &Workload,
    ferromq: impl Fn(&[u8]) -> usize,
    libzmq: impl Fn(&[u8]) -> usize,
) {
    for (case, messages, expected) in [("hit", &w.hits, LOOKUPS), ("miss", &w.misses, 0)] {
        let mut group = c.benchmark_group(format!("trie/{side}/{case}"));
        group.throughput(Throughput::Elements(LOOKUPS as u64));
        // Generic, not `dyn`: each library's lookup is inlined into its own loop.
        bench(&mut group, "ferromq", messages, expected, &ferromq);
        bench(&mut group, "libzmq", messages, expected, &libzmq);
        group.finish();
    }
}

fn bench(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    messages: &[Vec<u8>],
    expected: usize,
    lookup: &impl Fn(&[u8]) -> usize,
) {
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut matched = 0;
            for message in messages.iter().cycle().take(LOOKUPS) {
                matched += lookup(black_box(message));
            }
            assert_eq!(matched, expected, "{name}: wrong match count");
            matched
        });
    });
}

fn sub_lookups(c: &mut Criterion) {
    let w = workload();
    let ours = subscriptions(&w.topics);
    let mut theirs = LibzmqTrie::new();
    for topic in &w.topics {
        theirs.add(topic);
    }
    compare(
        c,
        "sub",
        &w,
        |message| usize::from(ours.matches(message)),
        |message| usize::from(theirs.matches(message)),
    );
}

fn pub_lookups(c: &mut Criterion) {
    let w = workload();
    let mut ours = MultiTrie::new();
    let mut theirs = LibzmqMultiTrie::new();
    for (i, topic) in w.topics.iter().enumerate() {
        ours.add(topic, (i % PEERS) as u32);
        theirs.add(topic, i % PEERS);
    }
    compare(
        c,
        "pub",
        &w,
        |message| {
            let mut visited = 0;
            ours.for_each_match(message, |peer| {
                black_box(peer);
                visited += 1;
            });
            visited
        },
        |message| {
            let mut visited = 0;
            theirs.for_each_match(message, |peer| {
                black_box(peer);
                visited += 1;
            });
            visited
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = sub_lookups, pub_lookups
}
criterion_main!(benches);
