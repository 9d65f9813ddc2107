//! `zmq_socket`, `zmq_close` and the endpoint calls: the socket handle C callers hold as
//! `void *`.
//!
//! A handle is a box with libzmq's socket tag (`0xbaddecaf`) in its first word. Calls that
//! end or configure a socket (`zmq_close`, `zmq_bind`, `zmq_setsockopt`, ...) first look the
//! address up in the registry of live sockets, so NULL, foreign and closed pointers are
//! `ENOTSOCK` without being read and a double close is harmless. The per-message calls
//! (`zmq_send`, `zmq_recv`, `zmq_poll`) check the tag only, as libzmq does: a NULL or
//! misaligned pointer or a wrong tag is `ENOTSOCK`.

use core::ffi::{c_char, c_int, c_void, CStr};
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ferromq::{Socket, SocketType};

use crate::boundary::{guard, Errno};
use crate::ctx::{context, CtxShared};
use crate::errno::{EBUSY, EINVAL, EMTHREAD, ENOTSOCK};
use crate::registry::Registry;

/// libzmq's socket tag.
const SOCKET_TAG: u32 = 0xbadd_ecaf;
const DEAD_TAG: u32 = 0xdead_50c7;

static SOCKETS: Registry = Registry::new();

/// The object behind a socket `void *`.
#[derive(Debug)]
#[repr(C)]
pub struct SocketHandle {
    tag: u32,
    pub socket: Socket,
    ctx: Arc<CtxShared>,
    /// Calls blocked (or about to block) inside this socket now: a send or receive that had to
    /// wait, a poll. `zmq_close` refuses (EBUSY) while it is not zero, so a thread blocked in
    /// `zmq_recv` is never left inside a freed socket (issue 14); libzmq aborts on an
    /// assertion there instead. A send or receive that completes at once is not counted (see
    /// [`socket_in_use`]).
    in_use: AtomicUsize,
}

impl Drop for SocketHandle {
    fn drop(&mut self) {
        self.tag = DEAD_TAG;
        self.ctx.socket_closed();
    }
}

/// The socket behind `s`, by its tag (the per-message path).
///
/// # Safety
/// `s` is NULL, misaligned, or points to at least a readable `u32`; when it is a live socket
/// handle, no other reference to it is used during `'a` (one thread per socket, as libzmq).
pub unsafe fn socket<'a>(s: *mut c_void) -> Result<&'a mut SocketHandle, Errno> {
    let ptr = s.cast::<SocketHandle>();
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(Errno(ENOTSOCK));
    }
    // SAFETY: non-NULL and aligned; readable per the contract. `tag` is the first field of a
    // repr(C) struct and any bit pattern is a valid u32.
    if unsafe { ptr.cast::<u32>().read() } != SOCKET_TAG {
        return Err(Errno(ENOTSOCK));
    }
    // SAFETY: the tag says this is a live handle from zmq_socket; exclusive per the contract.
    Ok(unsafe { &mut *ptr })
}

/// A socket held by a call that may block; `zmq_close` refuses to free it meanwhile.
///
/// It keeps the handle's address rather than a reference so that `zmq_close` on another
/// thread can read the counter without aliasing an exclusive borrow of the whole handle.
#[derive(Debug)]
pub struct InUse<'a> {
    handle: NonNull<SocketHandle>,
    _life: core::marker::PhantomData<&'a mut SocketHandle>,
}

impl Deref for InUse<'_> {
    type Target = SocketHandle;
    fn deref(&self) -> &SocketHandle {
        // SAFETY: live while `in_use` counts this guard (zmq_close refuses to free it).
        unsafe { self.handle.as_ref() }
    }
}

impl DerefMut for InUse<'_> {
    fn deref_mut(&mut self) -> &mut SocketHandle {
        // SAFETY: as for `deref`; exclusive per the one-thread-per-socket contract.
        unsafe { self.handle.as_mut() }
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        // SAFETY: live until this decrement lets zmq_close free it; the counter is reached
        // through the raw pointer, not through a reference to the whole handle.
        let in_use = unsafe { &(*self.handle.as_ptr()).in_use };
        in_use.fetch_sub(1, Ordering::Release);
    }
}

/// The socket behind `s` (tag-checked as [`socket`]), counted as in use until the returned
/// guard drops: for the calls that wait.
///
/// `zmq_send`/`zmq_recv` and their `zmq_msg_*` forms first try once without waiting and take
/// this guard only when they must wait: the count is two atomic read-modify-writes, which were
/// paid on every message when it was taken up front (issue 18). What it guards against is a close while a call
/// sleeps inside the socket, which a call that never waits does not do; a close racing a call
/// that is still running is misuse in libzmq and here alike, and was never covered (the count
/// was taken after the tag check, with the same window before it).
///
/// # Safety
/// As for [`socket`].
pub unsafe fn socket_in_use<'a>(s: *mut c_void) -> Result<InUse<'a>, Errno> {
    // SAFETY: forwarded.
    let handle = NonNull::from(unsafe { socket(s) }?);
    // SAFETY: tag-checked live handle; the counter is an atomic reached by raw pointer.
    unsafe { &(*handle.as_ptr()).in_use }.fetch_add(1, Ordering::Acquire);
    Ok(InUse {
        handle,
        _life: core::marker::PhantomData,
    })
}

/// The socket behind `s`, checked against the registry before it is read.
///
/// # Safety
/// When `s` is a live socket handle, no other reference to it is used during `'a`.
pub unsafe fn registered_socket<'a>(s: *mut c_void) -> Result<&'a mut SocketHandle, Errno> {
    if !SOCKETS.contains(s.cast::<SocketHandle>()) {
        return Err(Errno(ENOTSOCK));
    }
    // SAFETY: registered handles are live boxes; the rest is the caller's contract.
    unsafe { socket(s) }
}

/// A C string argument as UTF-8 (`EINVAL` for NULL or invalid text, where libzmq would crash
/// or fail to parse).
///
/// # Safety
/// `text` is NULL or NUL-terminated and readable.
pub unsafe fn c_str<'a>(text: *const c_char) -> Result<&'a str, Errno> {
    if text.is_null() {
        return Err(Errno(EINVAL));
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|_| Errno(EINVAL))
}

/// A socket's error as the errno libzmq sets.
pub fn errno_of(e: impl Into<ferromq::Error>) -> Errno {
    Errno(e.into().errno())
}

/// Creates a socket of libzmq type number `kind` (`EINVAL` for an unknown type, or one this
/// build does not implement; `EFAULT` for a bad context; `ETERM` after shutdown; `EMFILE`
/// past `ZMQ_MAX_SOCKETS`).
///
/// # Safety
/// `ctx` is anything; it is read only if it is a live context from this library.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket(ctx: *mut c_void, kind: c_int) -> *mut c_void {
    guard(|| {
        // SAFETY: `context` checks the registry before reading.
        let shared = Arc::clone(unsafe { context(ctx) }?.shared());
        let kind = SocketType::from_raw(kind).ok_or(Errno(EINVAL))?;
        let socket = shared.open_socket(kind)?;
        let handle = Box::into_raw(Box::new(SocketHandle {
            tag: SOCKET_TAG,
            socket,
            ctx: shared,
            in_use: AtomicUsize::new(0),
        }));
        SOCKETS.insert(handle);
        Ok(handle.cast())
    })
}

/// Closes a socket; unsent messages linger per ZMQ_LINGER in the background. `EBUSY` while
/// another thread is inside a send, receive or poll on it (the socket stays open; close it
/// once that call returns).
///
/// # Safety
/// `s` is anything; it is freed only if it is a live socket from this library.
#[no_mangle]
pub unsafe extern "C" fn zmq_close(s: *mut c_void) -> c_int {
    guard(|| {
        let ptr = s.cast::<SocketHandle>();
        // Taken out of the registry first, so a concurrent second close is ENOTSOCK and
        // never reads the handle.
        if !SOCKETS.remove(ptr) {
            return Err(Errno(ENOTSOCK));
        }
        // SAFETY: registered until the removal above, which succeeds once: still a live box.
        // The counter is read through the raw pointer (a blocked call holds the handle).
        if unsafe { &(*ptr).in_use }.load(Ordering::Acquire) != 0 {
            SOCKETS.insert(ptr);
            return Err(Errno(EBUSY));
        }
        // SAFETY: the pointer came from Box::into_raw in zmq_socket, was live until the
        // removal above, and no call holds it.
        drop(unsafe { Box::from_raw(ptr) });
        Ok(0)
    })
}

fn endpoint_call(
    s: *mut c_void,
    endpoint: *const c_char,
    call: impl FnOnce(&mut Socket, &str) -> ferromq::Result<()>,
) -> c_int {
    guard(|| {
        // SAFETY: registry-checked; one thread per socket per the C contract.
        let handle = unsafe { registered_socket(s) }?;
        // SAFETY: the caller passes a NUL-terminated string or NULL.
        let endpoint = unsafe { c_str(endpoint) }?;
        call(&mut handle.socket, endpoint).map_err(errno_of)?;
        Ok(0)
    })
}

/// `zmq_bind` and `zmq_connect`: as [`endpoint_call`], and `EMTHREAD` for tcp/ipc in a
/// context without I/O threads (after the checks libzmq makes first: ETERM, the endpoint).
fn attach_call(
    s: *mut c_void,
    endpoint: *const c_char,
    call: impl FnOnce(&mut Socket, &str) -> ferromq::Result<()>,
) -> c_int {
    guard(|| {
        // SAFETY: registry-checked; one thread per socket per the C contract.
        let handle = unsafe { registered_socket(s) }?;
        // SAFETY: the caller passes a NUL-terminated string or NULL.
        let endpoint = unsafe { c_str(endpoint) }?;
        let needs_io = ["tcp://", "ipc://"].iter().any(|p| endpoint.starts_with(p));
        if needs_io && !handle.ctx.has_io_threads() && !handle.ctx.is_terminating() {
            return Err(Errno(EMTHREAD));
        }
        call(&mut handle.socket, endpoint).map_err(errno_of)?;
        Ok(0)
    })
}

/// Binds to `tcp://`, `ipc://` or `inproc://` (`EPROTONOSUPPORT` for another transport,
/// `EADDRINUSE`, `EINVAL` for a malformed endpoint).
///
/// # Safety
/// `s` is anything (checked); `endpoint` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zmq_bind(s: *mut c_void, endpoint: *const c_char) -> c_int {
    attach_call(s, endpoint, Socket::bind)
}

/// Connects to an endpoint; tcp and ipc connect (and reconnect) in the background.
///
/// # Safety
/// As for [`zmq_bind`].
#[no_mangle]
pub unsafe extern "C" fn zmq_connect(s: *mut c_void, endpoint: *const c_char) -> c_int {
    attach_call(s, endpoint, Socket::connect)
}

/// Stops listening on a bound endpoint (`ENOENT` if it is not bound; as libzmq, `EINVAL` for a
/// string that is no `transport://address` and `EPROTONOSUPPORT` for an unknown transport).
///
/// # Safety
/// As for [`zmq_bind`].
#[no_mangle]
pub unsafe extern "C" fn zmq_unbind(s: *mut c_void, endpoint: *const c_char) -> c_int {
    endpoint_call(s, endpoint, Socket::unbind)
}

/// Drops a connected endpoint (`ENOENT` if it is not connected; `EINVAL` and `EPROTONOSUPPORT`
/// as for [`zmq_unbind`]).
///
/// # Safety
/// As for [`zmq_bind`].
#[no_mangle]
pub unsafe extern "C" fn zmq_disconnect(s: *mut c_void, endpoint: *const c_char) -> c_int {
    endpoint_call(s, endpoint, Socket::disconnect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::errno::{errno, EFAULT};

    #[test]
    fn create_close_and_bad_handles() {
        let ctx = zmq_ctx_new();
        // SAFETY: ctx and s are live until closed; bad pointers are only checked.
        unsafe {
            assert!(zmq_socket(core::ptr::null_mut(), 0).is_null());
            assert_eq!(errno(), EFAULT);
            assert!(zmq_socket(ctx, 99).is_null());
            assert_eq!(errno(), EINVAL);
            let s = zmq_socket(ctx, 0);
            assert!(!s.is_null());
            assert_eq!(zmq_bind(s, c"inproc://unit-socket".as_ptr()), 0);
            assert_eq!(zmq_bind(s, core::ptr::null()), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_bind(s, c"bogus://x".as_ptr()), -1);
            assert_eq!(errno(), libc::EPROTONOSUPPORT);
            assert_eq!(zmq_unbind(s, c"inproc://other".as_ptr()), -1);
            assert_eq!(errno(), libc::ENOENT);
            assert_eq!(zmq_close(s), 0);
            assert_eq!(zmq_close(s), -1, "double close");
            assert_eq!(errno(), ENOTSOCK);
            assert_eq!(zmq_close(core::ptr::null_mut()), -1);
            assert_eq!(errno(), ENOTSOCK);
            let mut foreign = [0u64; 8];
            assert_eq!(
                zmq_connect(foreign.as_mut_ptr().cast(), c"inproc://x".as_ptr()),
                -1
            );
            assert_eq!(errno(), ENOTSOCK);
            assert!(socket(foreign.as_mut_ptr().cast()).is_err());
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
