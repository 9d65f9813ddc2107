//! Run-time version and capability probes.

use core::ffi::{c_char, c_int, CStr};

use crate::boundary::{guard, non_null_const};
use crate::consts::{ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH};

/// Writes the libzmq API version this library implements; NULL pointers are skipped.
///
/// # Safety
/// Each non-NULL pointer must be valid for writing one `int`.
#[no_mangle]
pub unsafe extern "C" fn zmq_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) {
    for (out, value) in [
        (major, ZMQ_VERSION_MAJOR),
        (minor, ZMQ_VERSION_MINOR),
        (patch, ZMQ_VERSION_PATCH),
    ] {
        if !out.is_null() {
            // SAFETY: non-NULL, and the caller guarantees it is writable.
            unsafe { out.write(value) };
        }
    }
}

/// The optional libzmq capabilities this library has, by `zmq_has` name. libzmq also knows
/// "pgm", "tipc", "norm", "gssapi", "vmci", "draft", "ws" and "wss": none is built.
const CAPABILITIES: &[&[u8]] = &[b"ipc", b"curve"];

/// 1 if the named capability is available, else 0 (also for NULL, with errno EFAULT).
///
/// # Safety
/// `capability` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zmq_has(capability: *const c_char) -> c_int {
    guard(|| {
        let name = non_null_const(capability)?;
        // SAFETY: non-NULL and NUL-terminated per the caller's contract.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes();
        Ok(c_int::from(CAPABILITIES.contains(&name)))
    })
    .max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_4_3_5() {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: three valid ints.
        unsafe { zmq_version(&mut a, &mut b, &mut c) };
        assert_eq!((a, b, c), (4, 3, 5));
        // SAFETY: NULL pointers are allowed.
        unsafe { zmq_version(core::ptr::null_mut(), &mut b, core::ptr::null_mut()) };
        assert_eq!(b, 3);
    }

    #[test]
    fn capabilities() {
        // SAFETY: C string literals and NULL.
        unsafe {
            assert_eq!(zmq_has(c"ipc".as_ptr()), 1);
            assert_eq!(zmq_has(c"curve".as_ptr()), 1);
            assert_eq!(zmq_has(c"gssapi".as_ptr()), 0);
            assert_eq!(zmq_has(c"draft".as_ptr()), 0);
            assert_eq!(zmq_has(c"".as_ptr()), 0);
            assert_eq!(zmq_has(core::ptr::null()), 0);
        }
    }
}
