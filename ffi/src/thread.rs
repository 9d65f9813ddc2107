//! `zmq_threadstart` / `zmq_threadclose`: a portable thread for C test programs.

use core::ffi::c_void;
use std::thread::JoinHandle;

use crate::boundary::{guard, non_null, Errno};
use crate::errno::ENOMEM;

fn block_all_signals() {
    // SAFETY: `set` is a local sigset_t initialised by sigfillset before use; a NULL old-set
    // pointer is allowed; pthread_sigmask changes only the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, core::ptr::null_mut());
    }
}

/// The caller's argument, handed to the new thread.
struct Arg(*mut c_void);

// SAFETY: passing the argument to another thread is exactly what the C caller asked for; what
// it points to is the caller's to synchronise, as with pthread_create.
unsafe impl Send for Arg {}

/// Runs `func(arg)` on a new thread; the handle must be passed to [`zmq_threadclose`].
/// NULL `func` is `EFAULT`; a thread the OS refuses is `ENOMEM` (libzmq aborts). As in
/// libzmq, the new thread blocks every signal, so process-directed signals (SIGALRM, SIGINT)
/// keep going to the application's own threads.
///
/// # Safety
/// `func` is NULL or a function safe to call with `arg` on another thread.
#[no_mangle]
pub unsafe extern "C" fn zmq_threadstart(
    func: Option<unsafe extern "C" fn(arg: *mut c_void)>,
    arg: *mut c_void,
) -> *mut c_void {
    guard(|| {
        let func = func.ok_or(Errno(crate::errno::EFAULT))?;
        let arg = Arg(arg);
        let handle = std::thread::Builder::new()
            .spawn(move || {
                let arg = arg;
                block_all_signals();
                // SAFETY: the caller vouched for func(arg) on another thread.
                unsafe { func(arg.0) }
            })
            .map_err(|_| Errno(ENOMEM))?;
        Ok(Box::into_raw(Box::new(handle)).cast())
    })
}

/// Waits for the thread to finish and releases its handle.
///
/// # Safety
/// `thread` is NULL (ignored, `EFAULT`) or a handle from [`zmq_threadstart`], closed once.
#[no_mangle]
pub unsafe extern "C" fn zmq_threadclose(thread: *mut c_void) {
    guard(|| {
        let handle = non_null(thread)?.cast::<JoinHandle<()>>();
        // SAFETY: a live handle is a Box<JoinHandle> leaked by zmq_threadstart, freed once here.
        let handle = unsafe { Box::from_raw(handle.as_ptr()) };
        // A panic cannot cross the C function, so join fails only if the thread was killed.
        handle
            .join()
            .map_err(|_| Errno(crate::errno::ENOTRECOVERABLE))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    unsafe extern "C" fn bump(arg: *mut c_void) {
        // SAFETY: the test passes a live AtomicI32.
        unsafe { &*arg.cast::<AtomicI32>() }.fetch_add(41, Ordering::SeqCst);
    }

    #[test]
    fn runs_and_joins() {
        let value = AtomicI32::new(1);
        // SAFETY: `value` outlives the thread, which is joined before it goes out of scope.
        unsafe {
            let t = zmq_threadstart(Some(bump), (&value as *const AtomicI32).cast_mut().cast());
            assert!(!t.is_null());
            zmq_threadclose(t);
        }
        assert_eq!(value.load(Ordering::SeqCst), 42);
        // SAFETY: NULL is rejected.
        assert!(unsafe { zmq_threadstart(None, core::ptr::null_mut()) }.is_null());
    }
}
