//! Which peers woke the socket.
//!
//! A socket's eventfd says only "something changed". With one active peer among thousands, a
//! socket that then looks at every peer pays for all of them on each message. So each peer's
//! socket-side pipe ends wake the socket through their own [`PeerWake`], which first notes the
//! peer's id in the socket's [`ReadyList`]; the socket hands those ids to its pattern
//! (`Pattern::activate`) before each operation, and the pattern puts the peer back among the
//! readers and writers it round-robins over (libzmq's `activated`/`read_activated` in fq.cpp
//! and lb.cpp). As the I/O threads' list of engine tokens, the list is a short `Vec` behind a
//! mutex: a pipe wakes its reader only on the empty -> non-empty edge and its writer only after
//! a refusal, so the list sees a few entries per peer at most between two socket calls, and an
//! `AtomicBool` lets the socket skip the lock when it is empty (the common case under load).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromq_pipe::Notify;

use crate::io::peer::PipeId;
use crate::io::signaler::Signaler;

/// Ids of peers whose pipes changed since the socket last looked.
#[derive(Debug, Default)]
pub(crate) struct ReadyList {
    ids: Mutex<Vec<PipeId>>,
    /// `ids` may be non-empty. Set under the lock after a push; cleared under it on take.
    any: AtomicBool,
}

impl ReadyList {
    pub(crate) fn new() -> Arc<ReadyList> {
        Arc::new(ReadyList::default())
    }

    fn push(&self, id: PipeId) {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        ids.push(id);
        self.any.store(true, Ordering::SeqCst);
    }

    /// Whether ids may be waiting (a hint: `take` decides).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.any.load(Ordering::SeqCst)
    }

    /// Moves the noted ids into `out` (emptied first); false when there were none. A wake-up
    /// noted after this returns is seen by the next call: the waker notes the id before it
    /// writes the eventfd the socket waits on.
    pub(crate) fn take(&self, out: &mut Vec<PipeId>) -> bool {
        out.clear();
        if !self.any.load(Ordering::SeqCst) {
            return false;
        }
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        self.any.store(false, Ordering::SeqCst);
        std::mem::swap(&mut *ids, out);
        !out.is_empty()
    }
}

/// The wake-up of one peer's socket-side pipe ends: notes the peer, then wakes the socket.
#[derive(Debug)]
pub(crate) struct PeerWake {
    id: PipeId,
    ready: Arc<ReadyList>,
    signal: Arc<Signaler>,
}

impl PeerWake {
    pub(crate) fn new(id: PipeId, ready: Arc<ReadyList>, signal: Arc<Signaler>) -> Arc<PeerWake> {
        Arc::new(PeerWake { id, ready, signal })
    }
}

impl Notify for PeerWake {
    fn notify(&self) {
        self.ready.push(self.id);
        self.signal.notify();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_each_wake_and_takes_them_once() {
        let ready = ReadyList::new();
        let signal = Arc::new(Signaler::new().unwrap());
        let (a, b) = (
            PeerWake::new(7, ready.clone(), signal.clone()),
            PeerWake::new(9, ready.clone(), signal.clone()),
        );
        let mut out = vec![1];
        assert!(!ready.take(&mut out));
        assert!(out.is_empty());
        a.notify();
        b.notify();
        assert!(signal.wait(Some(std::time::Instant::now())).unwrap());
        assert!(ready.take(&mut out));
        assert_eq!(out, [7, 9]);
        assert!(!ready.take(&mut out));
    }
}
