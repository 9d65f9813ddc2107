//! The one way every export crosses the C boundary.
//!
//! libzmq reports failure by returning -1 (or NULL) and setting `errno`. Each export here wraps
//! its body in [`guard`], which turns `Err(Errno)` into that convention and also catches any
//! panic, so a Rust bug surfaces to the C caller as an error code instead of unwinding into C
//! (undefined behaviour) or aborting the host process.

use core::ffi::c_int;
use core::ptr::NonNull;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::errno::{set_errno, EFAULT, ENOTRECOVERABLE};

/// An errno value an export fails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub c_int);

/// What an export returns to C when it fails.
pub trait Failure {
    /// The failure value: -1 for `int`, NULL for pointers, 0 for sizes and durations.
    fn failure() -> Self;
}

impl Failure for c_int {
    fn failure() -> Self {
        -1
    }
}

impl Failure for () {
    fn failure() -> Self {}
}

impl Failure for usize {
    fn failure() -> Self {
        0
    }
}

impl Failure for core::ffi::c_ulong {
    fn failure() -> Self {
        0
    }
}

impl Failure for core::ffi::c_long {
    fn failure() -> Self {
        -1
    }
}

impl<T> Failure for *mut T {
    fn failure() -> Self {
        core::ptr::null_mut()
    }
}

impl<T> Failure for *const T {
    fn failure() -> Self {
        core::ptr::null()
    }
}

/// Runs an export's body: `Ok` passes through, `Err(e)` sets errno to `e` and returns the
/// failure value, a panic sets errno to `ENOTRECOVERABLE` (an internal bug, not the caller's
/// fault) and returns the failure value.
pub fn guard<R: Failure>(body: impl FnOnce() -> Result<R, Errno>) -> R {
    // AssertUnwindSafe: a panicking body leaves no state behind that a later call could observe
    // half-updated; every export re-validates its arguments from scratch.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(Errno(code))) => {
            set_errno(code);
            R::failure()
        }
        Err(_) => {
            set_errno(ENOTRECOVERABLE);
            R::failure()
        }
    }
}

/// A C pointer argument that must not be NULL (libzmq answers NULL with `EFAULT`).
pub fn non_null<T>(ptr: *mut T) -> Result<NonNull<T>, Errno> {
    NonNull::new(ptr).ok_or(Errno(EFAULT))
}

/// Same as [`non_null`] for `const` pointers.
pub fn non_null_const<T>(ptr: *const T) -> Result<NonNull<T>, Errno> {
    non_null(ptr.cast_mut())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::{errno, EINVAL};

    #[test]
    fn ok_passes_through() {
        assert_eq!(guard(|| Ok::<c_int, Errno>(7)), 7);
    }

    #[test]
    fn err_sets_errno_and_returns_failure() {
        let rc: c_int = guard(|| Err(Errno(EINVAL)));
        assert_eq!(rc, -1);
        assert_eq!(errno(), EINVAL);
        let p: *mut u8 = guard(|| Err(Errno(EFAULT)));
        assert!(p.is_null());
        assert_eq!(errno(), EFAULT);
    }

    #[test]
    fn panic_is_caught() {
        let rc: c_int = guard(|| panic!("bug inside an export"));
        assert_eq!(rc, -1);
        assert_eq!(errno(), ENOTRECOVERABLE);
    }

    #[test]
    fn null_is_efault() {
        assert_eq!(non_null(core::ptr::null_mut::<u8>()), Err(Errno(EFAULT)));
        let mut x = 0u8;
        assert!(non_null(&mut x as *mut u8).is_ok());
    }
}
