//! Subscription lookups: 10,000 random 20-byte topics, messages of topic + 64-byte body,
//! 1,000,000 lookups per iteration, hits (each message starts with a subscribed topic) and
//! misses (random messages). One iteration is 10^6 lookups, so its time in ms reads as ns per
//! lookup.
//!
//! Reference: libzmq's trie was measured at about 95 ns per lookup on a desktop CPU by the
//! zlink project with this workload; that figure is from another machine, so compare the
//! shape rather than the digits.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferromq_pattern::{MultiTrie, SubscriptionTrie};

const TOPICS: usize = 10_000;
const TOPIC_LEN: usize = 20;
const BODY_LEN: usize = 64;
const LOOKUPS: usize = 1_000_000;
/// Distinct messages cycled through; each topic appears once, in random order.
const MESSAGES: usize = TOPICS;

/// xorshift64*: deterministic workload without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

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
        order.swap(i, rng.next() as usize % (i + 1));
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

fn sub_lookups(c: &mut Criterion) {
    let w = workload();
    let trie = subscriptions(&w.topics);
    let mut group = c.benchmark_group("trie/sub");
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    for (name, messages, expected) in [("hit", &w.hits, LOOKUPS), ("miss", &w.misses, 0)] {
        group.bench_function(format!("{TOPICS}-topics/{name}"), |b| {
            b.iter(|| {
                let mut matched = 0;
                for message in messages.iter().cycle().take(LOOKUPS) {
                    matched += usize::from(trie.matches(black_box(message)));
                }
                assert_eq!(matched, expected);
                matched
            });
        });
    }
    group.finish();
}

fn pub_lookups(c: &mut Criterion) {
    let w = workload();
    let mut trie = MultiTrie::new();
    for (i, topic) in w.topics.iter().enumerate() {
        // 100 subscribers sharing the topics, as a publisher with many SUB peers has.
        trie.add(topic, (i % 100) as u32);
    }
    let mut group = c.benchmark_group("trie/pub");
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    for (name, messages, expected) in [("hit", &w.hits, LOOKUPS), ("miss", &w.misses, 0)] {
        group.bench_function(format!("{TOPICS}-topics/{name}"), |b| {
            b.iter(|| {
                let mut visited = 0;
                for message in messages.iter().cycle().take(LOOKUPS) {
                    trie.for_each_match(black_box(message), |peer| {
                        black_box(peer);
                        visited += 1;
                    });
                }
                assert_eq!(visited, expected);
                visited
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = sub_lookups, pub_lookups
}
criterion_main!(benches);
