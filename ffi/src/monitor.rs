//! `zmq_socket_monitor`: the ferromq runtime does not report socket events yet, so starting a
//! monitor fails with `ENOTSUP` rather than publishing a monitor that never speaks. Stopping
//! (a NULL endpoint) succeeds, as there is nothing to stop; an endpoint that is not `inproc://`
//! is `EPROTONOSUPPORT`, as in libzmq.

use core::ffi::{c_char, c_int, c_void};

use crate::boundary::{guard, Errno};
use crate::errno::{ENOTSUP, EPROTONOSUPPORT};
use crate::socket::{c_str, registered_socket};

/// Would publish `events` on `addr` (an inproc PAIR endpoint) in libzmq's two-frame format.
///
/// # Safety
/// `s` is anything (checked); `addr` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor(
    s: *mut c_void,
    addr: *const c_char,
    events: c_int,
) -> c_int {
    let _ = events;
    guard(|| {
        // SAFETY: registry-checked before reading.
        unsafe { registered_socket(s) }?;
        if addr.is_null() {
            return Ok(0);
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let addr = unsafe { c_str(addr) }?;
        if !addr.starts_with("inproc://") {
            return Err(Errno(EPROTONOSUPPORT));
        }
        Err(Errno(ENOTSUP))
    })
}
