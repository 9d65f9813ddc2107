//! The order in which one listener's connections reach their socket: the order they were
//! accepted, as in libzmq.
//!
//! A bound socket's load balancer (REQ, DEALER, PUSH) deals messages to its peers in the
//! order their pipes were attached, and its fair queue reads them in that order, so the
//! attach order is visible: libzmq's test_spec_req binds a REQ, connects five REPs and
//! expects its requests in connect order. libzmq attaches an accepted connection when its
//! handshake ends, on one I/O thread that handles readiness events in the order the kernel
//! reported them, so peers that connect together attach in accept order. Here handshakes are
//! tokio tasks, and even on the current-thread runtime (src/runtime.rs), which runs them in
//! the order they are woken, nothing keeps their order: a task polled finds its next step's
//! bytes already there while another still waits for its wake-up. Under load, with the
//! runtime alone, 1 of 120 runs of listener.rs's 20-round test had a peer attach out of
//! turn; with the multi-thread runtime before it, whose LIFO slot runs the task woken last
//! first, test_spec_req's shape went out of order in 7-17 of 120 runs (libzmq 0 of 120).
//!
//! So each accepted connection takes a ticket in accept order, and one whose handshake is done
//! attaches only once every earlier one has attached or ended. That wait is bounded: a peer
//! that stalls its handshake (hostile, or far away) must not hold the others up until
//! HANDSHAKE_IVL. After [`wait_bound`] the waiting connection attaches anyway, and the
//! earlier ones it passed attach whenever they finish, out of order, as they would in
//! libzmq.
//!
//! ```text
//!   accept -> ticket n ─ handshake ─> turn(n): every ticket < n done? ─ yes ─> Attach; done(n)
//!                                         └ no: wait, at most wait_bound, then pass them
//! ```

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, Waker};
use std::time::Duration;

/// How many tickets that ended may wait behind an earlier one still in its handshake before
/// the earlier one is passed: bounds the queue when nobody waits (a stalled handshake with
/// no HANDSHAKE_IVL, and a stream of failing connections behind it).
const MAX_BEHIND: usize = 1024;

/// The shortest and longest waits for earlier connections (see [`wait_bound`]).
const MIN_WAIT: Duration = Duration::from_millis(20);
const MAX_WAIT: Duration = Duration::from_millis(100);

/// How long a connection whose handshake took `own` waits for earlier ones: as long again as
/// its own handshake took, so that the bound grows with the peer's distance and with the
/// load on the management thread, at least [`MIN_WAIT`] (a few scheduling delays on a busy
/// machine: peers that connected together finish within a few turns of the management
/// thread of each other) and at most [`MAX_WAIT`], all a stalled peer can delay the others.
pub(crate) fn wait_bound(own: Duration) -> Duration {
    own.clamp(MIN_WAIT, MAX_WAIT)
}

/// One listener's connections between accept and attach.
#[derive(Debug, Default)]
pub(crate) struct AttachOrder {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The first ticket not yet done or passed; `slots[0]` is its slot.
    head: u64,
    /// The next ticket to give out.
    next: u64,
    /// Tickets `head..next`.
    slots: VecDeque<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    done: bool,
    /// The connection waiting for its turn.
    waiter: Option<Waker>,
}

impl State {
    /// Drops the leading slots that are done; wakes the connection whose turn it now is.
    fn advance(&mut self) {
        while self.slots.front().is_some_and(|s| s.done) {
            self.slots.pop_front();
            self.head += 1;
        }
        if let Some(waiter) = self.slots.front_mut().and_then(|s| s.waiter.take()) {
            waiter.wake();
        }
    }

    /// Passes every ticket before `ticket`: they attach when they finish, out of order.
    fn pass_to(&mut self, ticket: u64) {
        while self.head < ticket && self.slots.pop_front().is_some() {
            self.head += 1;
        }
        self.advance();
    }
}

impl AttachOrder {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing under the lock can panic halfway through a change.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A newly accepted connection's place.
    pub(crate) fn ticket(self: &Arc<Self>) -> Ticket {
        let mut s = self.state();
        let n = s.next;
        s.next += 1;
        s.slots.push_back(Slot::default());
        Ticket {
            order: Arc::clone(self),
            n,
        }
    }
}

/// A connection's place in its listener's attach order, given up when dropped (attached, or
/// ended before).
#[derive(Debug)]
pub(crate) struct Ticket {
    order: Arc<AttachOrder>,
    n: u64,
}

impl Ticket {
    /// Waits until every connection accepted before this one has attached or ended, or for
    /// `bound`, after which it passes those still in their handshakes.
    pub(crate) async fn turn(&self, bound: Duration) {
        let mine = poll_fn(|cx| {
            let mut s = self.order.state();
            if self.n <= s.head {
                return Poll::Ready(());
            }
            let i = usize::try_from(self.n - s.head).unwrap_or(usize::MAX);
            match s.slots.get_mut(i) {
                Some(slot) => {
                    slot.waiter = Some(cx.waker().clone());
                    Poll::Pending
                }
                None => Poll::Ready(()),
            }
        });
        if tokio::time::timeout(bound, mine).await.is_err() {
            self.order.state().pass_to(self.n);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.order.state();
        if self.n < s.head {
            return;
        }
        let i = usize::try_from(self.n - s.head).unwrap_or(usize::MAX);
        if let Some(slot) = s.slots.get_mut(i) {
            slot.done = true;
            slot.waiter = None;
        }
        if s.slots.len() > MAX_BEHIND {
            let n = self.n;
            s.pass_to(n);
        } else {
            s.advance();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    /// The bound where a turn must not wait at all: a wrong wait would last all of it, and
    /// a loaded machine may hold a right one up for a while, so the two are told apart by
    /// [`no_wait`] with a wide margin.
    const LONG: Duration = Duration::from_secs(10);

    fn no_wait(d: Duration) -> bool {
        d < LONG / 2
    }

    /// Handshakes that end in reverse accept order still attach in accept order.
    #[test]
    fn later_handshakes_wait_for_earlier_ones() {
        runtime().block_on(async {
            let order = Arc::new(AttachOrder::default());
            let attached = Arc::new(Mutex::new(Vec::new()));
            let mut tasks = Vec::new();
            for i in 0..5u64 {
                let ticket = order.ticket();
                let attached = Arc::clone(&attached);
                tasks.push(tokio::spawn(async move {
                    // The last accepted finishes its handshake first.
                    tokio::time::sleep(Duration::from_millis(5 - i)).await;
                    ticket.turn(wait_bound(Duration::ZERO)).await;
                    attached.lock().unwrap().push(i);
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(*attached.lock().unwrap(), vec![0, 1, 2, 3, 4]);
        });
    }

    /// A connection that ends in its handshake lets the next one attach at once, and a
    /// stalled one holds the next back for the bound only; once passed, it attaches when it
    /// finishes, and the ones after the waiter no longer wait for it.
    #[test]
    fn ended_and_stalled_handshakes_hold_nobody_past_the_bound() {
        runtime().block_on(async {
            let order = Arc::new(AttachOrder::default());
            let failed = order.ticket();
            let stalled = order.ticket();
            let second = order.ticket();
            let third = order.ticket();
            drop(failed);
            let start = std::time::Instant::now();
            second.turn(wait_bound(Duration::ZERO)).await;
            assert!(start.elapsed() >= MIN_WAIT, "waited for the stalled one");
            let waited = Arc::new(AtomicUsize::new(0));
            let w = Arc::clone(&waited);
            let third_task = tokio::spawn(async move {
                third.turn(LONG).await;
                w.store(1, Ordering::SeqCst);
            });
            tokio::task::yield_now().await;
            assert_eq!(
                waited.load(Ordering::SeqCst),
                0,
                "second has not attached yet"
            );
            let released = std::time::Instant::now();
            drop(second);
            third_task.await.unwrap();
            assert!(
                no_wait(released.elapsed()),
                "third waited for second, not for the passed one"
            );
            // The passed one's turn is already over.
            let before = std::time::Instant::now();
            stalled.turn(LONG).await;
            assert!(no_wait(before.elapsed()));
            drop(stalled);
            assert!(order.state().slots.is_empty());
        });
    }

    /// A waiting connection whose socket goes away (its task is dropped) gives up its place.
    #[test]
    fn a_dropped_waiter_lets_the_next_one_go() {
        runtime().block_on(async {
            let order = Arc::new(AttachOrder::default());
            let first = order.ticket();
            let second = order.ticket();
            let third = order.ticket();
            let waiting = tokio::spawn(async move { second.turn(LONG).await });
            tokio::task::yield_now().await;
            waiting.abort();
            let _ = waiting.await;
            drop(first);
            let start = std::time::Instant::now();
            third.turn(LONG).await;
            assert!(no_wait(start.elapsed()));
        });
    }

    #[test]
    fn the_bound_follows_the_handshake_within_limits() {
        assert_eq!(wait_bound(Duration::ZERO), MIN_WAIT);
        assert_eq!(
            wait_bound(Duration::from_millis(50)),
            Duration::from_millis(50)
        );
        assert_eq!(wait_bound(Duration::from_secs(30)), MAX_WAIT);
    }

    /// With nobody waiting, ended tickets behind a stalled one do not pile up without bound.
    #[test]
    fn ended_tickets_behind_a_stalled_one_are_bounded() {
        let order = Arc::new(AttachOrder::default());
        let stalled = order.ticket();
        for _ in 0..3 * MAX_BEHIND {
            drop(order.ticket());
        }
        assert!(order.state().slots.len() <= MAX_BEHIND + 1);
        drop(stalled);
    }
}
