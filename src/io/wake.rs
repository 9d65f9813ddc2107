//! Wake-up targets that can be re-pointed.
//!
//! A pipe fixes its two `Notify` objects when it is created, but the engine end of a
//! connecting socket's pipe outlives connections: it moves between the reconnect task and
//! whichever I/O thread runs the current connection (and an inproc pipe's binder end waits for
//! a socket that may not exist yet). [`WakeSlot`] is the indirection: the pipe holds it, and
//! whoever owns the end now installs itself.
//!
//! An I/O thread installs itself with the engine's token ([`WakeSlot::install_token`]), kept in
//! the slot beside its lock, rather than as an object of its own per engine: a ROUTER sending
//! to one of a thousand tcp peers in turn finds that peer's engine asleep on almost every
//! message, and each line the wake-up passes through is then cold. An object per engine was
//! one more cold line, read only to learn which thread and which token (issue 15).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromq_pipe::Notify;

/// Wakes one of many targets told apart by a token: an I/O thread's engines.
pub(crate) trait NotifyToken: Send + Sync {
    fn notify_token(&self, token: usize);

    /// The thread is (about to be) asleep waiting for events: waking it would cost a system
    /// call and a wake-up. Only a hint.
    fn asleep(&self) -> bool {
        false
    }
}

/// An engine that the thread sending to it may run the outbound half of itself (see
/// `Engine::send_through`), rather than waking its I/O thread to do it.
pub(crate) trait SendThrough: Send + Sync {
    /// Writes what the outbound pipe holds, from the calling thread, when the engine is free
    /// and the write answers what it delivered; false when its I/O thread must be woken.
    fn send_through(&self) -> bool;
}

/// What a wake-up goes to.
#[derive(Default)]
enum Target {
    /// Nobody owns the end now: the wake-up is dropped.
    #[default]
    None,
    /// An engine: the thread that runs it (shared by all its engines), its token, and the
    /// engine itself where a sending thread may write for it.
    Token(Arc<dyn NotifyToken>, usize, Option<Arc<dyn SendThrough>>),
    /// Anything else (a socket's peer wake-up, the reconnect task).
    Notify(Arc<dyn Notify>),
}

impl Target {
    fn notify(&self) {
        match self {
            Target::None => {}
            Target::Token(owner, token, _) => owner.notify_token(*token),
            Target::Notify(t) => t.notify(),
        }
    }
}

/// A `Notify` that forwards to whatever target is installed (or drops the wake-up).
///
/// Aligned to a cache line so that the lock and the target it guards, all a wake-up reads of
/// the slot, share one line (an `Arc`'s counts go on the line before, untouched by a
/// wake-up).
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct WakeSlot {
    target: Mutex<Target>,
    /// The engine's `Engine::answering` as of its last run or write: whether a send now may be
    /// an answer worth writing from the sending thread. Only a hint (a run may be delivering
    /// right now), read before the lock, so a one-way stream's sends leave the engine alone;
    /// on the line every wake-up reads anyway, so a ROUTER sending to many peers in turn
    /// meets no colder line than before.
    answering: AtomicBool,
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
        self.replace(Target::Notify(target));
    }

    /// Installs an engine of `owner` as the target (see the module's note) and wakes it once.
    /// With `through`, wake-ups for output try the engine from the sending thread first
    /// ([`WakeSlot::notify_out`]).
    pub(crate) fn install_token(
        &self,
        owner: Arc<dyn NotifyToken>,
        token: usize,
        through: Option<Arc<dyn SendThrough>>,
    ) {
        self.replace(Target::Token(owner, token, through));
    }

    fn replace(&self, target: Target) {
        let mut slot = self.target.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = target;
        // Under the lock, as every wake-up: the target takes no lock of ours.
        slot.notify();
    }

    /// A wake-up for output the socket queued (the outbound pipe's reader): an engine that
    /// can write it from this thread does, and its I/O thread is woken only where it cannot.
    /// Only while that thread sleeps: an awake one takes the engine's token from its list
    /// without a system call, and a ROUTER answering many peers in turn then leaves the
    /// writes to it rather than making one per message itself (tcp `router-send` at 1,000
    /// peers, `benches/benches/scale.rs`, went from 0.21 to 0.5 us a message without this).
    /// The engine is only tried (`try_lock`): its I/O thread, running it, may be waiting for
    /// this slot's lock in `clear`.
    pub(crate) fn notify_out(&self) {
        let answering = self.answering.load(Ordering::Relaxed);
        let slot = self.target.lock().unwrap_or_else(PoisonError::into_inner);
        if answering
            && let Target::Token(owner, _, Some(engine)) = &*slot
            && owner.asleep()
            && engine.send_through()
        {
            return;
        }
        slot.notify();
    }

    /// Updates the hint [`WakeSlot::notify_out`] reads; stores only on a change.
    pub(crate) fn set_answering(&self, answering: bool) {
        if self.answering.load(Ordering::Relaxed) != answering {
            self.answering.store(answering, Ordering::Relaxed);
        }
    }

    /// Removes the target: wake-ups are dropped until the next `install`.
    pub(crate) fn clear(&self) {
        if let Ok(mut slot) = self.target.lock() {
            *slot = Target::None;
        }
        self.set_answering(false);
    }
}

impl Notify for WakeSlot {
    /// The outbound pipe's reader wake-up, the one every send to a sleeping engine pays:
    /// [`WakeSlot::notify_out`]. The slot is the pipe's `Notify` itself, so that wake-up
    /// reads no line but the slot's (a ROUTER sending to one of a thousand tcp peers in turn
    /// finds each cold: a wrapper object per peer made `router-send` at 1,000 peers a fifth
    /// slower). The inbound pipe's writer wake-up, rare, goes through [`RoomWake`].
    fn notify(&self) {
        self.notify_out();
    }
}

/// The inbound pipe's writer wake-up (the socket freed room below RCVHWM): the engine's
/// thread must run it to deliver what it holds, so this never writes from the caller.
#[derive(Debug)]
pub(crate) struct RoomWake(pub Arc<WakeSlot>);

impl Notify for RoomWake {
    /// Calls the target under the lock rather than cloning it out: a clone and its drop are
    /// two atomic updates of the target's reference count, a line of its own that is cold
    /// when a socket sends to one of many peers in turn (a ROUTER's tcp peers, issue 15).
    /// No target takes this lock again (they note a token or an id and write an eventfd), and
    /// `install`/`clear` wait at most for that.
    fn notify(&self) {
        self.0
            .target
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .notify();
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

    struct Tokens(Mutex<Vec<usize>>);
    impl NotifyToken for Tokens {
        fn notify_token(&self, token: usize) {
            self.0.lock().unwrap().push(token);
        }
    }

    #[test]
    fn a_token_target_gets_its_token_and_a_new_install_replaces_it() {
        let slot = WakeSlot::new();
        let thread = Arc::new(Tokens(Mutex::new(Vec::new())));
        slot.install_token(thread.clone(), 7, None);
        slot.notify();
        let c = Arc::new(Count(AtomicUsize::new(0)));
        slot.install(c.clone());
        slot.notify();
        slot.install_token(thread.clone(), 9, None);
        slot.notify();
        slot.clear();
        slot.notify();
        assert_eq!(*thread.0.lock().unwrap(), [7, 7, 9, 9]);
        assert_eq!(c.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_lock_and_the_target_share_one_line() {
        let slot = WakeSlot::new();
        let start = Arc::as_ptr(&slot) as usize;
        assert_eq!(start % 64, 0);
        assert!(std::mem::size_of::<WakeSlot>() <= 64);
    }
}
