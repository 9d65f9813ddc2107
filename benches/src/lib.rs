//! Shared pieces of the ferromq benchmarks: one [`backend::Backend`] interface over ferromq,
//! libzmq and zmq.rs, the comparison-matrix measurements written once for both ([`matrix`]), and the
//! report writers ([`report`]).

#![allow(missing_debug_implementations)]

pub mod backend;
pub mod ferromq;
pub mod ferromq_async;
pub mod libzmq;
pub mod libzmq_trie;
pub mod matrix;
pub mod plot;
pub mod report;
pub mod zeromq;

/// xorshift64*: a deterministic workload without a dependency, the same for every library.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` pseudo-random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// How long any receive may wait before a run is declared failed, so a broken run never hangs.
pub const RECV_TIMEOUT_MS: i32 = 10_000;

/// A `kB` field of /proc/self/status (`VmRSS`, `VmHWM`, ...) in KiB; 0 where it cannot be read.
pub fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// `f`, or `None` once it has waited for the harness's receive timeout. The timer is armed only
/// once `f` has had to wait: a timeout around every call reads the clock per message, which
/// neither blocking library pays.
pub async fn bounded<F: std::future::Future>(f: F) -> Option<F::Output> {
    use std::task::Poll;
    let limit = std::time::Duration::from_millis(RECV_TIMEOUT_MS as u64);
    let mut f = std::pin::pin!(f);
    let first = std::future::poll_fn(|cx| Poll::Ready(f.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(out) => Some(out),
        Poll::Pending => tokio::time::timeout(limit, f).await.ok(),
    }
}
