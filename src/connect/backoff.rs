//! How long a connecting endpoint waits before it tries again, as libzmq's connecter computes
//! it (stream_connecter_base_t::get_new_reconnect_ivl): RECONNECT_IVL, doubled after each
//! failure up to RECONNECT_IVL_MAX where that is set above it, plus a random jitter below
//! RECONNECT_IVL on every wait, so that many clients that lost one server do not all come
//! back in the same millisecond. The jitter is part of the wait ZMQ_EVENT_CONNECT_RETRIED
//! reports, as in libzmq.

use std::time::Duration;

use crate::option::Options;

#[derive(Debug)]
pub(crate) struct Backoff {
    base: u64,
    max: u64,
    current: u64,
}

impl Backoff {
    pub(crate) fn new(options: &Options) -> Backoff {
        let base = u64::try_from(options.reconnect_ivl.max(0)).unwrap_or(0);
        let max = u64::try_from(options.reconnect_ivl_max.max(0)).unwrap_or(0);
        Backoff {
            base,
            max,
            current: base,
        }
    }

    /// Whether a failed or lost connection is tried again at all: libzmq reconnects only for
    /// RECONNECT_IVL > 0 (session_base_t::reconnect, stream_connecter_base_t's timer); -1 (and
    /// 0) leave the endpoint for good once its connection ends.
    pub(crate) fn reconnects(&self) -> bool {
        self.base > 0
    }

    /// The next wait: the current interval plus a jitter in `[0, RECONNECT_IVL)`.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let jitter = if self.base > 0 {
            fastrand::u64(0..self.base)
        } else {
            0
        };
        let d = self.current.saturating_add(jitter);
        if self.max > self.base {
            self.current = (self.current.saturating_mul(2)).min(self.max);
        }
        Duration::from_millis(d)
    }

    /// After a connection was made: the next failure waits RECONNECT_IVL again (libzmq makes
    /// a new connecter, which starts from it).
    pub(crate) fn reset(&mut self) {
        self.current = self.base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The intervals of `n` waits with the jitter taken off: each wait must lie in
    /// `[interval, interval + ivl)`.
    fn intervals(b: &mut Backoff, ivl: u128, expected: &[u128]) {
        for &want in expected {
            let got = b.next_delay().as_millis();
            assert!(
                (want..want + ivl).contains(&got),
                "{got} ms outside [{want}, {})",
                want + ivl
            );
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_max() {
        let o = Options {
            reconnect_ivl: 100,
            reconnect_ivl_max: 350,
            ..Options::default()
        };
        let mut b = Backoff::new(&o);
        intervals(&mut b, 100, &[100, 200, 350, 350]);
        b.reset();
        intervals(&mut b, 100, &[100]);
        let mut flat = Backoff::new(&Options::default());
        intervals(&mut flat, 100, &[100, 100, 100]);
        assert!(flat.reconnects());
        for ivl in [-1, 0] {
            let o = Options {
                reconnect_ivl: ivl,
                ..Options::default()
            };
            assert!(!Backoff::new(&o).reconnects(), "{ivl}");
        }
    }

    /// The jitter spreads the waits: 200 of them are not all the same.
    #[test]
    fn waits_are_jittered() {
        let mut b = Backoff::new(&Options::default());
        let first = b.next_delay();
        assert!((0..200).any(|_| b.next_delay() != first));
    }
}
