//! The set of live handles (`void *` contexts and sockets) this library gave out.
//!
//! libzmq recognises its objects by a tag word at their start, which still means reading
//! through whatever pointer the caller passes. For the calls that end an object's life or are
//! rare (`zmq_ctx_term`, `zmq_close`, `zmq_bind`, `zmq_setsockopt`, ...) ferromq first asks
//! this registry whether the address is one it handed out and has not freed, so a NULL,
//! foreign, or already-closed pointer is refused without being dereferenced at all; a double
//! `zmq_close` is `ENOTSOCK`, never a double free. The per-message calls (`zmq_send`,
//! `zmq_recv`, `zmq_poll`) check only the tag, as libzmq does, to stay off this lock.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A set of addresses, one per kind of handle.
#[derive(Debug, Default)]
pub struct Registry {
    live: OnceLock<Mutex<HashSet<usize>>>,
}

impl Registry {
    /// An empty registry, usable in a `static`.
    pub const fn new() -> Self {
        Self {
            live: OnceLock::new(),
        }
    }

    fn set(&self) -> MutexGuard<'_, HashSet<usize>> {
        let m = self.live.get_or_init(|| Mutex::new(HashSet::new()));
        // A panic while the lock was held cannot leave the set half-updated (insert/remove are
        // single operations), so a poisoned lock is still a consistent set.
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a new handle.
    pub fn insert<T>(&self, ptr: *const T) {
        self.set().insert(ptr as usize);
    }

    /// Whether `ptr` is a live handle.
    pub fn contains<T>(&self, ptr: *const T) -> bool {
        !ptr.is_null() && self.set().contains(&(ptr as usize))
    }

    /// Forgets a handle; `false` if it was not live (so the caller must not free it).
    pub fn remove<T>(&self, ptr: *const T) -> bool {
        !ptr.is_null() && self.set().remove(&(ptr as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_contains_remove_once() {
        let r = Registry::new();
        let x = 5u32;
        let p: *const u32 = &x;
        assert!(!r.contains(p));
        r.insert(p);
        assert!(r.contains(p));
        assert!(r.remove(p));
        assert!(!r.remove(p), "a second removal is refused");
        assert!(!r.contains(core::ptr::null::<u32>()));
    }
}
