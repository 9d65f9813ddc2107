//! What a context termination waits for: a count of open sockets and live sessions, with the
//! three ways to wait for it to reach zero (blocking, async, and blocking but interruptible
//! by a signal, as libzmq's `zmq_ctx_term`, which returns EINTR so that Ctrl-C can stop a
//! program stuck terminating a context whose sockets are still open).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};
use crate::io::signaler::Signaler;
use ferromq_pipe::Notify;

/// Counts what a context termination waits for: open sockets and live sessions.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    state: Mutex<State>,
    /// Wakes async waiters ([`Activity::idle`]).
    idle: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct State {
    active: usize,
    /// Readable exactly while `active` is zero, for blocking waiters; made by the first one
    /// (most contexts are never waited for, and their counts then cost no system call).
    idle_flag: Option<Arc<Signaler>>,
}

/// Holds one count of an [`Activity`] while alive.
#[derive(Debug)]
pub(crate) struct ActivityGuard(Arc<Activity>);

impl Activity {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state is a count and a flag updated together under the lock; a panic elsewhere
        // while holding it leaves both consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn enter(self: &Arc<Self>) -> ActivityGuard {
        let mut state = self.state();
        state.active += 1;
        if state.active == 1
            && let Some(flag) = &state.idle_flag
        {
            flag.drain();
        }
        ActivityGuard(Arc::clone(self))
    }

    fn is_idle(&self) -> bool {
        self.state().active == 0
    }

    /// Resolves once nothing is active, without blocking the thread that awaits it.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a guard dropped after it still wakes us.
            notified.as_mut().enable();
            if self.is_idle() {
                return;
            }
            notified.await;
        }
    }

    /// Blocks until nothing is active; `Error::Interrupted` when a signal handler runs on
    /// this thread meanwhile (nothing is undone: waiting again goes on where this stopped).
    pub(crate) fn wait_idle_interruptible(&self) -> Result<()> {
        loop {
            let flag = {
                let mut state = self.state();
                if state.active == 0 {
                    return Ok(());
                }
                match &state.idle_flag {
                    Some(flag) => Arc::clone(flag),
                    None => {
                        // Made while active, so clear, as it must be.
                        let flag = Arc::new(Signaler::new()?);
                        state.idle_flag = Some(Arc::clone(&flag));
                        flag
                    }
                }
            };
            flag.wait(None)?;
        }
    }

    /// Blocks until nothing is active, whatever signals arrive meanwhile.
    pub(crate) fn wait_idle(&self) {
        loop {
            match self.wait_idle_interruptible() {
                Ok(()) => return,
                Err(Error::Interrupted) => {}
                // No eventfd to be had (EMFILE): look again every millisecond instead.
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
    }
}

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.active = state.active.saturating_sub(1);
        if state.active == 0 {
            if let Some(flag) = &state.idle_flag {
                flag.notify();
            }
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_guards() {
        let a = Arc::new(Activity::default());
        let g = a.enter();
        let a2 = Arc::clone(&a);
        let t = std::thread::spawn(move || a2.wait_idle());
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(!t.is_finished());
        drop(g);
        t.join().unwrap();
    }

    #[test]
    fn the_idle_flag_follows_the_count() {
        let a = Arc::new(Activity::default());
        let g = a.enter();
        let waiter = {
            let a = Arc::clone(&a);
            std::thread::spawn(move || a.wait_idle_interruptible())
        };
        std::thread::sleep(std::time::Duration::from_millis(10));
        drop(g);
        waiter.join().unwrap().unwrap();
        // Busy again: the flag made by the first waiter is clear, so a second one waits.
        let g = a.enter();
        let waiter = {
            let a = Arc::clone(&a);
            std::thread::spawn(move || a.wait_idle_interruptible())
        };
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(!waiter.is_finished());
        drop(g);
        waiter.join().unwrap().unwrap();
    }

    #[tokio::test]
    async fn idle_resolves_when_the_last_guard_goes() {
        let a = Arc::new(Activity::default());
        let g = a.enter();
        let waiter = tokio::spawn({
            let a = Arc::clone(&a);
            async move { a.idle().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(g);
        waiter.await.unwrap();
    }
}
