//! `zmq_atomic_counter_*`: a heap-allocated atomic `int` for C programs without C11 atomics.

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::boundary::{guard, non_null, Errno};

/// The counter behind a handle.
///
/// # Safety
/// `counter` is NULL or a live handle from [`zmq_atomic_counter_new`].
unsafe fn counter<'a>(counter: *mut c_void) -> Result<&'a AtomicI32, Errno> {
    let counter: NonNull<AtomicI32> = non_null(counter)?.cast();
    // SAFETY: a live handle points to the AtomicI32 boxed by zmq_atomic_counter_new.
    Ok(unsafe { counter.as_ref() })
}

/// A new counter holding 0.
#[no_mangle]
pub extern "C" fn zmq_atomic_counter_new() -> *mut c_void {
    guard(|| Ok(Box::into_raw(Box::new(AtomicI32::new(0))).cast()))
}

/// Sets the counter to `value`.
///
/// # Safety
/// `counter` is NULL (ignored, errno `EFAULT`) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_set(counter_: *mut c_void, value: c_int) {
    guard(|| {
        // SAFETY: forwarded caller contract.
        unsafe { counter(counter_) }?.store(value, Ordering::SeqCst);
        Ok(())
    });
}

/// Adds one and returns the value before the increment (libzmq's `add`).
///
/// # Safety
/// `counter` is NULL (-1, `EFAULT`) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_inc(counter_: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| Ok(unsafe { counter(counter_) }?.fetch_add(1, Ordering::SeqCst)))
}

/// Subtracts one; returns 1 if the counter is still non-zero, 0 if it reached zero.
///
/// # Safety
/// `counter` is NULL (-1, `EFAULT`) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_dec(counter_: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let before = unsafe { counter(counter_) }?.fetch_sub(1, Ordering::SeqCst);
        Ok(c_int::from(before.wrapping_sub(1) != 0))
    })
}

/// The current value.
///
/// # Safety
/// `counter` is NULL (-1, `EFAULT`) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_value(counter_: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| Ok(unsafe { counter(counter_) }?.load(Ordering::SeqCst)))
}

/// Frees the counter `*counter_p` and sets `*counter_p` to NULL.
///
/// # Safety
/// `counter_p` is NULL or points to NULL or to a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_destroy(counter_p: *mut *mut c_void) {
    guard(|| {
        let slot = non_null(counter_p)?;
        // SAFETY: the caller's slot is readable and writable.
        let handle = unsafe { slot.as_ptr().replace(core::ptr::null_mut()) };
        if !handle.is_null() {
            // SAFETY: a live handle is a Box<AtomicI32> leaked by zmq_atomic_counter_new.
            drop(unsafe { Box::from_raw(handle.cast::<AtomicI32>()) });
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::{errno, EFAULT};

    #[test]
    fn libzmq_semantics() {
        // SAFETY: the handle is live until destroy.
        unsafe {
            let mut c = zmq_atomic_counter_new();
            assert_eq!(zmq_atomic_counter_value(c), 0);
            assert_eq!(zmq_atomic_counter_inc(c), 0);
            assert_eq!(zmq_atomic_counter_inc(c), 1);
            assert_eq!(zmq_atomic_counter_value(c), 2);
            assert_eq!(zmq_atomic_counter_dec(c), 1);
            assert_eq!(zmq_atomic_counter_dec(c), 0);
            zmq_atomic_counter_set(c, 10);
            assert_eq!(zmq_atomic_counter_value(c), 10);
            zmq_atomic_counter_destroy(&mut c);
            assert!(c.is_null());
            zmq_atomic_counter_destroy(&mut c);
            assert_eq!(zmq_atomic_counter_inc(c), -1);
            assert_eq!(errno(), EFAULT);
        }
    }

    #[test]
    fn concurrent_increments() {
        let c = zmq_atomic_counter_new() as usize;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        // SAFETY: live until destroyed after the joins.
                        unsafe { zmq_atomic_counter_inc(c as *mut c_void) };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut p = c as *mut c_void;
        // SAFETY: live handle, destroyed once.
        unsafe {
            assert_eq!(zmq_atomic_counter_value(p), 4000);
            zmq_atomic_counter_destroy(&mut p);
        }
    }
}
