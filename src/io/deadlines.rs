//! When each engine of an I/O thread asked to run again (heartbeat clocks, linger), kept so
//! that the loop's two questions, "how long may I sleep" and "who is due", cost O(log n) and
//! not a scan of every engine with a clock: with heartbeats on thousands of connections, a
//! scan on every wake-up made each event cost more the more connections there were.
//!
//! A min-heap of (deadline, token) with lazy deletion: replacing or removing a deadline only
//! updates the map, and heap entries that no longer match the map are dropped when they reach
//! the top. The heap is rebuilt from the map when stale entries outnumber live ones.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    /// Each engine's current deadline.
    at: HashMap<usize, Instant>,
    /// Every deadline set, current or stale, earliest on top.
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
}

impl Deadlines {
    pub(crate) fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The engine `token` runs again at `when` (replacing its previous deadline).
    pub(crate) fn set(&mut self, token: usize, when: Instant) {
        if self.at.insert(token, when) != Some(when) {
            self.heap.push(Reverse((when, token)));
            if self.heap.len() > 2 * self.at.len() + 64 {
                self.heap = self.at.iter().map(|(&t, &w)| Reverse((w, t))).collect();
            }
        }
    }

    pub(crate) fn remove(&mut self, token: usize) {
        self.at.remove(&token);
    }

    /// The earliest deadline.
    pub(crate) fn next(&mut self) -> Option<Instant> {
        while let Some(&Reverse((when, token))) = self.heap.peek() {
            if self.at.get(&token) == Some(&when) {
                return Some(when);
            }
            self.heap.pop();
        }
        None
    }

    /// Moves the engines whose deadline has passed into `due` (their deadlines are cleared).
    pub(crate) fn take_due(&mut self, now: Instant, due: &mut Vec<usize>) {
        while let Some(&Reverse((when, token))) = self.heap.peek() {
            if when > now {
                break;
            }
            self.heap.pop();
            if self.at.get(&token) == Some(&when) {
                self.at.remove(&token);
                due.push(token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn earliest_current_deadline_and_due_engines() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut d = Deadlines::default();
        assert_eq!(d.next(), None);
        d.set(1, ms(30));
        d.set(2, ms(10));
        d.set(3, ms(20));
        assert_eq!(d.next(), Some(ms(10)));
        // Replaced and removed deadlines no longer count.
        d.set(2, ms(40));
        d.remove(3);
        assert_eq!(d.next(), Some(ms(30)));
        let mut due = Vec::new();
        d.take_due(ms(35), &mut due);
        assert_eq!(due, [1]);
        assert_eq!(d.next(), Some(ms(40)));
        d.take_due(ms(100), &mut due);
        assert_eq!(due, [1, 2]);
        assert!(d.is_empty());
        assert_eq!(d.next(), None);
    }

    #[test]
    fn stale_entries_do_not_pile_up() {
        let t0 = Instant::now();
        let mut d = Deadlines::default();
        for round in 0..1000u64 {
            for token in 0..10 {
                d.set(token, t0 + Duration::from_millis(round * 10 + token as u64));
            }
        }
        assert!(d.heap.len() <= 2 * 10 + 64 + 1);
        let mut due = Vec::new();
        d.take_due(t0 + Duration::from_secs(100), &mut due);
        due.sort_unstable();
        assert_eq!(due, (0..10).collect::<Vec<_>>());
    }
}
