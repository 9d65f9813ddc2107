//! errno values, the thread's C `errno`, `zmq_errno` and `zmq_strerror`.
//!
//! The header declares these values itself (with libzmq's `#ifndef` fallbacks for platforms
//! whose `errno.h` lacks them), so the Rust copies are kept out of cbindgen's output.

use core::ffi::{c_char, c_int};

/// libzmq's base for its own error numbers, chosen not to collide with any OS's errno range.
/// cbindgen:ignore
pub const ZMQ_HAUSNUMERO: c_int = 156_384_712;
/// Operation cannot be accomplished in current state.
/// cbindgen:ignore
pub const EFSM: c_int = ZMQ_HAUSNUMERO + 51;
/// The protocol is not compatible with the socket type.
/// cbindgen:ignore
pub const ENOCOMPATPROTO: c_int = ZMQ_HAUSNUMERO + 52;
/// Context was terminated.
/// cbindgen:ignore
pub const ETERM: c_int = ZMQ_HAUSNUMERO + 53;
/// No thread available.
/// cbindgen:ignore
pub const EMTHREAD: c_int = ZMQ_HAUSNUMERO + 54;

/// cbindgen:ignore
pub const EFAULT: c_int = libc::EFAULT;
/// EBUSY (zmq_close while another thread is blocked on the socket)
/// cbindgen:ignore
pub const EBUSY: c_int = libc::EBUSY;
/// cbindgen:ignore
pub const EINVAL: c_int = libc::EINVAL;
/// cbindgen:ignore
pub const ENOMEM: c_int = libc::ENOMEM;
/// cbindgen:ignore
pub const ENOTSUP: c_int = libc::ENOTSUP;
/// cbindgen:ignore
pub const EHOSTUNREACH: c_int = libc::EHOSTUNREACH;
/// cbindgen:ignore
pub const EMFILE: c_int = libc::EMFILE;
/// cbindgen:ignore
pub const ENOTSOCK: c_int = libc::ENOTSOCK;
/// cbindgen:ignore
pub const EPROTONOSUPPORT: c_int = libc::EPROTONOSUPPORT;
/// cbindgen:ignore
pub const EINTR: c_int = libc::EINTR;
/// What a caught panic reports: the library, not the caller, is at fault.
/// cbindgen:ignore
pub const ENOTRECOVERABLE: c_int = libc::ENOTRECOVERABLE;

#[cfg(any(target_os = "linux", target_os = "android", target_os = "emscripten"))]
fn errno_location() -> *mut c_int {
    // SAFETY: libc's accessor for the calling thread's errno; it has no preconditions.
    unsafe { libc::__errno_location() }
}

#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "dragonfly"
))]
fn errno_location() -> *mut c_int {
    // SAFETY: libc's accessor for the calling thread's errno; it has no preconditions.
    unsafe { libc::__error() }
}

#[cfg(any(target_os = "netbsd", target_os = "openbsd"))]
fn errno_location() -> *mut c_int {
    // SAFETY: libc's accessor for the calling thread's errno; it has no preconditions.
    unsafe { libc::__errno() }
}

/// Sets the calling thread's C `errno`, which is what C callers and [`zmq_errno`] read.
pub fn set_errno(code: c_int) {
    // SAFETY: errno_location() points at this thread's errno, valid for the thread's lifetime.
    unsafe { *errno_location() = code }
}

/// The calling thread's C `errno`.
pub fn errno() -> c_int {
    // SAFETY: as in set_errno.
    unsafe { *errno_location() }
}

/// The calling thread's errno as libzmq knows it: the value the last failing call set.
#[no_mangle]
pub extern "C" fn zmq_errno() -> c_int {
    errno()
}

/// libzmq's own text for the errors it defines (it also rewords EHOSTUNREACH), or `None`
/// where the C library's `strerror` is used.
fn zmq_message(errnum: c_int) -> Option<&'static core::ffi::CStr> {
    Some(match errnum {
        EFSM => c"Operation cannot be accomplished in current state",
        ENOCOMPATPROTO => c"The protocol is not compatible with the socket type",
        ETERM => c"Context was terminated",
        EMTHREAD => c"No thread available",
        EHOSTUNREACH => c"Host unreachable",
        _ => return None,
    })
}

/// A human-readable message for `errnum`, as libzmq words it.
#[no_mangle]
pub extern "C" fn zmq_strerror(errnum: c_int) -> *const c_char {
    match zmq_message(errnum) {
        Some(text) => text.as_ptr(),
        // SAFETY: strerror accepts any value and returns a NUL-terminated string owned by the C
        // library (libzmq returns the same pointer, with the same lifetime caveats).
        None => unsafe { libc::strerror(errnum) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    fn text(errnum: c_int) -> String {
        // SAFETY: zmq_strerror always returns a valid NUL-terminated string.
        unsafe { CStr::from_ptr(zmq_strerror(errnum)) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn zmq_errors_have_libzmq_text() {
        assert_eq!(text(ETERM), "Context was terminated");
        assert_eq!(
            text(EFSM),
            "Operation cannot be accomplished in current state"
        );
        assert_eq!(text(EHOSTUNREACH), "Host unreachable");
        assert_eq!(text(EMTHREAD), "No thread available");
    }

    #[test]
    fn system_errors_use_strerror() {
        assert_eq!(text(EINVAL), "Invalid argument");
    }

    #[test]
    fn errno_round_trips() {
        set_errno(ETERM);
        assert_eq!(zmq_errno(), ETERM);
        set_errno(0);
        assert_eq!(zmq_errno(), 0);
    }

    #[test]
    fn values_match_libzmq() {
        assert_eq!(EFSM, 156_384_763);
        assert_eq!(ETERM, 156_384_765);
    }
}
