//! An engine as its I/O thread keeps it: behind a lock that a thread sending to it may take
//! to write for it (`Engine::send_through`), with a hint read without the lock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::io::engine::Engine;
use crate::io::wake::SendThrough;

#[derive(Debug)]
pub(crate) struct SharedEngine {
    /// The engine's [`Engine::answering`] as of its last run or write. Only a hint (a run may
    /// be delivering right now), but what a one-way stream's sends look at: they then leave
    /// the lock and the engine's own lines, which its I/O thread writes, alone.
    answering: AtomicBool,
    engine: Mutex<Engine>,
}

impl SharedEngine {
    pub(crate) fn new(engine: Engine) -> SharedEngine {
        SharedEngine {
            answering: AtomicBool::new(engine.answering()),
            engine: Mutex::new(engine),
        }
    }

    /// Locks the engine for its I/O thread, which holds it while it runs the engine; a
    /// sending thread only tries it.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Updates the hint after `engine` ran (under the lock); stores only on a change.
    pub(crate) fn note(&self, engine: &Engine) {
        let answering = engine.answering();
        if self.answering.load(Ordering::Relaxed) != answering {
            self.answering.store(answering, Ordering::Relaxed);
        }
    }
}

impl SendThrough for SharedEngine {
    /// While its I/O thread runs the engine (the lock is taken), that thread sees the output
    /// itself once woken.
    fn send_through(&self) -> bool {
        if !self.answering.load(Ordering::Relaxed) {
            return false;
        }
        let Ok(mut engine) = self.engine.try_lock() else {
            return false;
        };
        let written = engine.send_through();
        self.note(&engine);
        written
    }
}
