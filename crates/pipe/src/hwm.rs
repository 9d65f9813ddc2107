//! A pipe's high-water mark as a value both ends read while the pipe is in use, so that it can
//! change after the pipe exists: libzmq sends new HWMs to a socket's existing pipes when
//! ZMQ_SNDHWM or ZMQ_RCVHWM is set after connect, and adds an inproc binder's HWMs to pipes
//! that a connect made before the bind.

use std::sync::atomic::Ordering;

use crate::shared::FrontCell;

/// A handle on one pipe's HWM, kept by whoever may change it later (the socket that owns one
/// end). A new value applies from the writer's next message: a lower one refuses messages
/// until the reader has brought the pipe below it; nothing already queued is dropped.
///
/// The limit sits on the pipe's front line (`shared::Front`), which the writer reads on every
/// message anyway and which is written here only when an application changes an option.
#[derive(Clone)]
pub struct Hwm(pub(crate) FrontCell);

impl Hwm {
    /// Sets the limit (0 = unlimited).
    pub fn set(&self, hwm: usize) {
        self.0
            .hwm
            .store(u64::try_from(hwm).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The limit now (0 = unlimited).
    pub fn get(&self) -> usize {
        usize::try_from(self.0.hwm.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    /// Whether both ends of the pipe are gone, so the handle steers nothing any more.
    pub fn is_orphan(&self) -> bool {
        std::sync::Arc::strong_count(&self.0) == 1
    }
}

impl std::fmt::Debug for Hwm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Hwm").field(&self.get()).finish()
    }
}
