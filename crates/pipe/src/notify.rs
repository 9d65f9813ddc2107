//! How a pipe end asks the runtime to wake the other end's thread.

/// Wakes the thread that owns one end of a pipe (the runtime implements it with an eventfd
/// toward a socket or a `mio::Waker` toward an I/O thread).
///
/// The pipe calls it only on transitions the other side is waiting for: the reader found the
/// pipe empty and a flush published more, the writer was refused and the reader freed space,
/// or the other end closed. An implementation must make the woken thread observe what the
/// waking thread did before `notify` (every syscall-based wake-up does).
pub trait Notify: Send + Sync {
    /// Wakes the end's owner; may be called from any thread.
    fn notify(&self);
}
