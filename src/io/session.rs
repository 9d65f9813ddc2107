//! What the management layer, the I/O thread and the socket share about one connection (or
//! one connecting endpoint, which outlives its connections): a stop flag, the linger to apply
//! when the socket goes away, and the way to wake whoever drives the pipes now.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromq_pipe::Notify;

use crate::io::wake::WakeSlot;

/// Shared control of one session.
#[derive(Debug, Default)]
pub(crate) struct SessionCtl {
    stop: AtomicBool,
    /// The socket closed: stop reconnecting; a running engine drains under linger.
    closed: AtomicBool,
    /// ZMQ_LINGER in ms as of the socket's close (-1 = forever).
    linger: AtomicI32,
    /// When the linger that began at close runs out (`None`: open, or linger -1).
    linger_deadline: Mutex<Option<Instant>>,
    /// Wakes the management task.
    task_wake: tokio::sync::Notify,
    /// Wakes the engine (the pipes' far-end slot), once pipes exist.
    engine_wake: Mutex<Option<Arc<WakeSlot>>>,
}

impl SessionCtl {
    pub(crate) fn new(linger: i32) -> Arc<SessionCtl> {
        let ctl = SessionCtl::default();
        ctl.linger.store(linger, Ordering::Relaxed);
        Arc::new(ctl)
    }

    /// Ends the session now: the task stops reconnecting, the engine closes the connection.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.task_wake.notify_one();
        self.wake_engine();
    }

    /// The socket closed (the engine, if any, finishes by itself once it has drained).
    pub(crate) fn close(&self, linger: i32) {
        self.set_linger(linger);
        if let Ok(ms) = u64::try_from(linger)
            && let Ok(mut d) = self.linger_deadline.lock()
        {
            *d = Some(Instant::now() + Duration::from_millis(ms));
        }
        self.closed.store(true, Ordering::Release);
        self.task_wake.notify_one();
        // An engine already draining a closed pipe (a STREAM connection the application
        // closed) learns of the linger deadline now.
        self.wake_engine();
    }

    /// Stopped or closed: nothing more to start.
    pub(crate) fn is_done(&self) -> bool {
        self.is_stopped() || self.closed.load(Ordering::Acquire)
    }

    /// The instant the linger that began when the socket closed ends; `None` while open or
    /// when lingering forever (-1).
    pub(crate) fn linger_deadline(&self) -> Option<Instant> {
        self.linger_deadline.lock().ok().and_then(|d| *d)
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn set_linger(&self, linger: i32) {
        self.linger.store(linger, Ordering::Relaxed);
    }

    pub(crate) fn linger(&self) -> i32 {
        self.linger.load(Ordering::Relaxed)
    }

    pub(crate) fn set_engine_wake(&self, wake: Arc<WakeSlot>) {
        if let Ok(mut slot) = self.engine_wake.lock() {
            *slot = Some(wake);
        }
    }

    fn wake_engine(&self) {
        let wake = self.engine_wake.lock().ok().and_then(|w| w.clone());
        if let Some(w) = wake {
            w.notify();
        }
    }

    /// Resolves once `stop` or `close` was called.
    pub(crate) async fn done(&self) {
        self.until(Self::is_done).await;
    }

    /// Resolves once `stop` was called.
    pub(crate) async fn stopped(&self) {
        self.until(Self::is_stopped).await;
    }

    async fn until(&self, ready: impl Fn(&Self) -> bool) {
        loop {
            let notified = self.task_wake.notified();
            if ready(self) {
                return;
            }
            notified.await;
        }
    }
}
