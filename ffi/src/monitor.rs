//! `zmq_socket_monitor`: the runtime's monitor ([`ferromq::Socket::monitor`]) publishes the
//! socket's events on an inproc PAIR in libzmq's two-frame format (u16 event + u32 value in
//! native byte order, then the endpoint), which a C program reads with a PAIR of its own
//! exactly as it would from libzmq. A NULL endpoint stops the monitor.

use core::ffi::{c_char, c_int, c_void};

use crate::boundary::guard;
use crate::socket::{c_str, errno_of, registered_socket};

/// Starts (or, with `addr` NULL, stops) publishing `events` (a `ZMQ_EVENT_*` mask) on the
/// inproc endpoint `addr` (`EPROTONOSUPPORT` for another transport).
///
/// # Safety
/// `s` is anything (checked); `addr` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor(
    s: *mut c_void,
    addr: *const c_char,
    events: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: registry-checked before reading.
        let handle = unsafe { registered_socket(s) }?;
        if addr.is_null() {
            handle.socket.stop_monitor();
            return Ok(0);
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let addr = unsafe { c_str(addr) }?;
        // The event numbers are 16 bits wide; libzmq masks the int the same way.
        let mask = u16::try_from(events & 0xFFFF).unwrap_or(u16::MAX);
        handle.socket.monitor(addr, mask).map_err(errno_of)?;
        Ok(0)
    })
}
