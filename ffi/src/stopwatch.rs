//! `zmq_stopwatch_*` and `zmq_sleep`: the timing helpers libzmq's perf tools use.

use core::ffi::{c_int, c_ulong, c_void};
use std::time::{Duration, Instant};

use crate::boundary::{guard, non_null};

fn micros_since(start: Instant) -> c_ulong {
    c_ulong::try_from(start.elapsed().as_micros()).unwrap_or(c_ulong::MAX)
}

/// Starts a stopwatch; the handle is released by [`zmq_stopwatch_stop`].
#[no_mangle]
pub extern "C" fn zmq_stopwatch_start() -> *mut c_void {
    guard(|| Ok(Box::into_raw(Box::new(Instant::now())).cast()))
}

/// Microseconds since the stopwatch started; it keeps running.
///
/// # Safety
/// `watch` is NULL (0, `EFAULT`) or a live stopwatch handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_intermediate(watch: *mut c_void) -> c_ulong {
    guard(|| {
        let watch = non_null(watch)?.cast::<Instant>();
        // SAFETY: a live handle points to the Instant boxed by zmq_stopwatch_start.
        Ok(micros_since(unsafe { *watch.as_ptr() }))
    })
}

/// Microseconds since the stopwatch started; releases the stopwatch.
///
/// # Safety
/// `watch` is NULL (0, `EFAULT`) or a live stopwatch handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_stop(watch: *mut c_void) -> c_ulong {
    guard(|| {
        let watch = non_null(watch)?.cast::<Instant>();
        // SAFETY: a live handle is a Box<Instant> leaked by zmq_stopwatch_start, freed once here.
        let start = unsafe { Box::from_raw(watch.as_ptr()) };
        Ok(micros_since(*start))
    })
}

/// Sleeps for `seconds` (nothing for zero or negative values).
#[no_mangle]
pub extern "C" fn zmq_sleep(seconds: c_int) {
    guard(|| {
        std::thread::sleep(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)));
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_elapsed_time() {
        let w = zmq_stopwatch_start();
        std::thread::sleep(Duration::from_millis(5));
        // SAFETY: w is live until stop.
        unsafe {
            let mid = zmq_stopwatch_intermediate(w);
            assert!(mid >= 5_000, "{mid}");
            let end = zmq_stopwatch_stop(w);
            assert!(end >= mid);
            assert_eq!(zmq_stopwatch_stop(core::ptr::null_mut()), 0);
        }
        zmq_sleep(0);
        zmq_sleep(-3);
    }
}
