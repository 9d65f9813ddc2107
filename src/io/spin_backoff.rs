//! When a thread that is about to sleep may wait awake instead, and how it stops trying
//! where waiting awake does not pay.
//!
//! Both waits awake (an engine's for the rest of a large frame, a socket's for a reply) end
//! either answered, the cheap case, or run out after their whole length, spent. A run of
//! them that run out (a peer that shares this CPU and cannot move while this thread spins,
//! an answer that takes longer than the spin) would cost that length every time, so one that
//! runs out makes the next 1, 2, 4 ... 64 chances pass, and one that is answered starts over.

use std::time::Instant;

/// Chances to wait awake, fewer of them after waits that ran out.
#[derive(Debug, Default)]
pub(crate) struct SpinBackoff {
    /// Chances to let pass before the next wait awake.
    skip: u8,
    /// What `skip` is set to after the next wait that runs out.
    next: u8,
}

impl SpinBackoff {
    /// Whether this chance may wait awake; a chance let pass is used up.
    pub(crate) fn chance(&mut self) -> bool {
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    /// What the wait awake that [`SpinBackoff::chance`] allowed came to.
    pub(crate) fn outcome(&mut self, answered: bool) {
        if answered {
            self.next = 0;
        } else {
            self.next = (self.next * 2).clamp(1, 64);
            self.skip = self.next;
        }
    }

    /// Whether the next chance will be let pass (tests tell a skipped chance this way, not
    /// by the clock: a descheduled thread makes one look as long as a wait).
    #[cfg(test)]
    pub(crate) fn skips_next(&self) -> bool {
        self.skip > 0
    }
}

/// Spins until `changed` says so (true) or `until` passes (false): the loop of every wait
/// awake (a stream's readiness, a signaler's count). It never yields: see
/// `Stream::ready_within`.
pub(crate) fn spin_until(until: Instant, changed: impl Fn() -> bool) -> bool {
    loop {
        for _ in 0..8 {
            std::hint::spin_loop();
        }
        if changed() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
    }
}

/// How many CPUs the calling thread may run on (`taskset -c N` makes it one, inherited by
/// every thread the process makes later); `None` when that cannot be told.
pub(crate) fn cpus_allowed() -> Option<usize> {
    rustix::thread::sched_getaffinity(None)
        .ok()
        .map(|set| set.count() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_let_more_chances_pass_and_an_answer_starts_over() {
        let mut b = SpinBackoff::default();
        let mut taken = Vec::new();
        for _ in 0..12 {
            let t = b.chance();
            if t {
                b.outcome(false);
            }
            taken.push(t);
        }
        // polled, skip 1, polled, skip 2, polled, skip 4, polled
        let want = [
            true, false, true, false, false, true, false, false, false, false, true, false,
        ];
        assert_eq!(taken, want);
        while !b.chance() {}
        b.outcome(true);
        assert!(b.chance() && !b.skips_next());
    }

    #[test]
    fn skips_stop_growing_at_64() {
        let mut b = SpinBackoff::default();
        for _ in 0..10 {
            while !b.chance() {}
            b.outcome(false);
        }
        let mut passed = 0;
        while !b.chance() {
            passed += 1;
        }
        assert_eq!(passed, 64);
    }

    #[test]
    fn this_thread_may_run_somewhere() {
        assert!(cpus_allowed().is_some_and(|n| n >= 1));
    }
}
