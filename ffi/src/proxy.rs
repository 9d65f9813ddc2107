//! `zmq_proxy`, `zmq_proxy_steerable`, `zmq_device`: the runtime's [`ferromq::proxy`] on
//! sockets from C handles.
//!
//! The runtime borrows every socket mutably for the proxy's whole run, so one socket cannot be
//! passed as two `&mut`: the same socket as frontend and backend (which libzmq allows) runs
//! [`ferromq::proxy_steerable_loopback`] on it once; any other role given twice (capture or
//! control equal to another) is `EINVAL`.

use core::ffi::{c_int, c_void};

use ferromq::Socket;

use crate::boundary::{guard, Errno};
use crate::errno::{EFAULT, EINVAL};
use crate::socket::{errno_of, registered_socket};

/// The socket behind an optional handle (NULL = absent).
///
/// # Safety
/// As for [`registered_socket`].
unsafe fn optional<'a>(s: *mut c_void) -> Result<Option<&'a mut Socket>, Errno> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded.
    Ok(Some(&mut unsafe { registered_socket(s) }?.socket))
}

fn distinct(handles: &[*mut c_void]) -> Result<(), Errno> {
    for (i, a) in handles.iter().enumerate() {
        if !a.is_null() && handles[i + 1..].contains(a) {
            return Err(Errno(EINVAL));
        }
    }
    Ok(())
}

/// Runs the steerable proxy; `Ok(0)` after TERMINATE, else the error that stopped it.
///
/// # Safety
/// The handles are anything (checked); each live socket is used by this thread only.
unsafe fn run(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> Result<c_int, Errno> {
    if frontend.is_null() || backend.is_null() {
        return Err(Errno(EFAULT));
    }
    if frontend == backend {
        distinct(&[frontend, capture, control])?;
        // SAFETY: each handle is registry-checked and distinct, so the `&mut` do not alias.
        let (socket, capture, control) = unsafe {
            (
                &mut registered_socket(frontend)?.socket,
                optional(capture)?,
                optional(control)?,
            )
        };
        ferromq::proxy_steerable_loopback(socket, capture, control).map_err(errno_of)?;
        return Ok(0);
    }
    distinct(&[frontend, backend, capture, control])?;
    // SAFETY: each handle is registry-checked and distinct, so the `&mut` do not alias.
    let (front, back, capture, control) = unsafe {
        (
            &mut registered_socket(frontend)?.socket,
            &mut registered_socket(backend)?.socket,
            optional(capture)?,
            optional(control)?,
        )
    };
    ferromq::proxy_steerable(front, back, capture, control).map_err(errno_of)?;
    Ok(0)
}

/// Shuttles messages between `frontend` and `backend` (copying each to `capture` when given)
/// until a socket fails; always returns -1, with `ETERM` once the context is shut down.
///
/// # Safety
/// The handles are anything (checked); the sockets are used by this thread only meanwhile.
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
) -> c_int {
    // SAFETY: forwarded.
    guard(|| unsafe { run(frontend, backend, capture, core::ptr::null_mut()) })
}

/// As [`zmq_proxy`], also obeying PAUSE, RESUME, TERMINATE and STATISTICS on `control`;
/// returns 0 after TERMINATE.
///
/// # Safety
/// As for [`zmq_proxy`].
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    // SAFETY: forwarded.
    guard(|| unsafe { run(frontend, backend, capture, control) })
}

/// Legacy: `zmq_proxy (frontend, backend, NULL)`; the device type is ignored, as in libzmq.
///
/// # Safety
/// As for [`zmq_proxy`].
#[no_mangle]
pub unsafe extern "C" fn zmq_device(
    kind: c_int,
    frontend: *mut c_void,
    backend: *mut c_void,
) -> c_int {
    let _ = kind;
    // SAFETY: forwarded.
    guard(|| unsafe {
        run(
            frontend,
            backend,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_must_be_distinct_sockets() {
        let mut a = 0u8;
        let mut b = 0u8;
        let pa: *mut c_void = (&mut a as *mut u8).cast();
        let pb: *mut c_void = (&mut b as *mut u8).cast();
        let null = core::ptr::null_mut();
        assert!(distinct(&[pa, pb, null, null]).is_ok());
        assert_eq!(distinct(&[pa, pb, pa, null]), Err(Errno(EINVAL)));
        // SAFETY: the pointers are refused before any use.
        assert_eq!(unsafe { run(null, pb, null, null) }, Err(Errno(EFAULT)));
    }
}
