//! ferromq's own threads (I/O threads, the management runtime's workers) take no signals.
//!
//! A process-directed signal (SIGALRM, SIGINT from Ctrl-C) goes to any thread that does not
//! block it. If one of ours took it, the application thread blocked in `recv` or `poll` would
//! never see `EINTR`, and a C or Python program could not be interrupted. libzmq blocks all
//! signals in its threads for the same reason.

/// Blocks every blocked-able signal in the calling thread. Call first thing in a thread we
/// start; threads it starts inherit the mask.
pub(crate) fn block_all() {
    // SAFETY: `set` is a local sigset_t, initialised by sigfillset before use; passing a null
    // old-set pointer is allowed. pthread_sigmask only changes the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_blocks_signals_reports_them_blocked() {
        let blocked = std::thread::spawn(|| {
            block_all();
            // SAFETY: as above; `now` receives the current mask.
            unsafe {
                let mut now: libc::sigset_t = std::mem::zeroed();
                libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now);
                libc::sigismember(&now, libc::SIGALRM) == 1
                    && libc::sigismember(&now, libc::SIGINT) == 1
            }
        })
        .join()
        .unwrap();
        assert!(blocked);
    }
}
