//! Wake-up targets that can be re-pointed.
//!
//! A pipe fixes its two `Notify` objects when it is created, but the engine end of a
//! connecting socket's pipe outlives connections: it moves between the reconnect task and
//! whichever I/O thread runs the current connection (and an inproc pipe's binder end waits for
//! a socket that may not exist yet). [`WakeSlot`] is the indirection: the pipe holds it, and
//! whoever owns the end now installs itself.

use std::sync::{Arc, Mutex, PoisonError};

use ferromq_pipe::Notify;

/// A `Notify` that forwards to whatever target is installed (or drops the wake-up).
#[derive(Default)]
pub(crate) struct WakeSlot {
    target: Mutex<Option<Arc<dyn Notify>>>,
}

impl std::fmt::Debug for WakeSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WakeSlot")
    }
}

impl WakeSlot {
    pub(crate) fn new() -> Arc<WakeSlot> {
        Arc::new(WakeSlot::default())
    }

    /// Installs a new target and wakes it once, so that it looks at the pipes it took over.
    pub(crate) fn install(&self, target: Arc<dyn Notify>) {
        if let Ok(mut slot) = self.target.lock() {
            *slot = Some(Arc::clone(&target));
        }
        target.notify();
    }

    /// Removes the target: wake-ups are dropped until the next `install`.
    pub(crate) fn clear(&self) {
        if let Ok(mut slot) = self.target.lock() {
            *slot = None;
        }
    }
}

impl Notify for WakeSlot {
    /// Calls the target under the lock rather than cloning it out: a clone and its drop are
    /// two atomic updates of the target's reference count, a line of its own that is cold
    /// when a socket sends to one of many peers in turn (a ROUTER's tcp peers, issue 15).
    /// No target takes this lock again (they note a token or an id and write an eventfd), and
    /// `install`/`clear` wait at most for that.
    fn notify(&self) {
        let slot = self.target.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = slot.as_ref() {
            t.notify();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Count(AtomicUsize);
    impl Notify for Count {
        fn notify(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn forwards_only_while_installed() {
        let slot = WakeSlot::new();
        slot.notify();
        let c = Arc::new(Count(AtomicUsize::new(0)));
        slot.install(c.clone());
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        slot.notify();
        assert_eq!(c.0.load(Ordering::SeqCst), 2);
        slot.clear();
        slot.notify();
        assert_eq!(c.0.load(Ordering::SeqCst), 2);
    }
}
