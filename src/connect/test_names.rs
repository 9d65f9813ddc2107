//! Host names a test answers itself, in the system resolver's place in `endpoint::resolve`
//! (test builds only): a lookup of one blocks until the test opens its gate, standing for a
//! DNS server that does not answer, then answers what the test set. Offline there is no slow
//! server to ask, and a sleep proves nothing. Used by src/connect/resolver.rs's tests.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// One name's state: how many lookups began, whether they may return, and the answer.
#[derive(Default)]
struct State {
    entered: usize,
    open: bool,
    answer: Option<SocketAddr>,
}

type Gate = Arc<(Mutex<State>, Condvar)>;

fn names() -> &'static Mutex<HashMap<String, Gate>> {
    static NAMES: std::sync::OnceLock<Mutex<HashMap<String, Gate>>> = std::sync::OnceLock::new();
    NAMES.get_or_init(Mutex::default)
}

/// The answer for `host` if a test registered it (blocking until its gate opens).
pub(crate) fn lookup(host: &str, port: u16) -> Option<Result<SocketAddr>> {
    let gate = names()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(host)
        .cloned()?;
    let (lock, changed) = &*gate;
    let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
    state.entered += 1;
    changed.notify_all();
    while !state.open {
        state = changed.wait(state).unwrap_or_else(PoisonError::into_inner);
    }
    Some(
        state
            .answer
            .map(|a| SocketAddr::new(a.ip(), port))
            .ok_or(Error::Invalid),
    )
}

/// A name whose lookups block until [`StalledName::open`] or the drop; then they answer
/// `answer`'s IP (with the endpoint's port), or fail as an unknown name for `None`.
pub(crate) struct StalledName {
    name: String,
    gate: Gate,
}

impl StalledName {
    pub(crate) fn new(name: &str, answer: Option<SocketAddr>) -> Self {
        let gate: Gate = Arc::default();
        gate.0.lock().unwrap_or_else(PoisonError::into_inner).answer = answer;
        names()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), Arc::clone(&gate));
        StalledName {
            name: name.to_owned(),
            gate,
        }
    }

    /// Waits at most `limit` until `n` lookups of the name have begun.
    pub(crate) fn wait_entered(&self, n: usize, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let (lock, changed) = &*self.gate;
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while state.entered < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// What later lookups answer once the gate is open.
    pub(crate) fn set_answer(&self, answer: Option<SocketAddr>) {
        let (lock, _) = &*self.gate;
        lock.lock().unwrap_or_else(PoisonError::into_inner).answer = answer;
    }

    /// Lets the lookups (this one and later ones) return.
    pub(crate) fn open(&self) {
        let (lock, changed) = &*self.gate;
        lock.lock().unwrap_or_else(PoisonError::into_inner).open = true;
        changed.notify_all();
    }
}

impl Drop for StalledName {
    fn drop(&mut self) {
        self.open();
        names()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.name);
    }
}
