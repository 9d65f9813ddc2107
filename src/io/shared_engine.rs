//! An engine as its I/O thread keeps it: behind a lock that a thread sending to it may try,
//! to write for it (`Engine::send_through`), and that a thread waiting for its answer takes
//! to read for it (`lend.rs`).

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::io::engine::Engine;
use crate::io::wake::SendThrough;

#[derive(Debug)]
pub(crate) struct SharedEngine(Mutex<Engine>);

impl SharedEngine {
    pub(crate) fn new(engine: Engine) -> SharedEngine {
        SharedEngine(Mutex::new(engine))
    }

    /// Locks the engine for its I/O thread, which holds it while it runs the engine, or for
    /// a borrower giving its stream back.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Engine> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The engine if nobody holds it; a poisoned one is left to its I/O thread.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, Engine>> {
        self.0.try_lock().ok()
    }
}

impl SendThrough for SharedEngine {
    /// Only tried: while its I/O thread runs the engine, that thread sees the output itself
    /// once woken (and may be waiting in `WakeSlot::clear` for the caller's lock).
    fn send_through(&self) -> bool {
        self.try_lock()
            .is_some_and(|mut engine| engine.send_through())
    }
}
