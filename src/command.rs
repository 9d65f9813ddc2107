//! Commands that reach a socket from other threads (a connection was attached, a peer
//! finished its handshake), processed on every send/recv/events call as libzmq's
//! `process_commands` does. The queue is a plain channel; the socket's eventfd wakes it.

use std::sync::mpsc::Sender;
use std::sync::Arc;

use ferromq_pipe::Notify;
use ferromq_zmtp::Metadata;

use crate::peer::{Peer, PipeId};
use crate::signaler::Signaler;

/// What the management layer tells a socket.
#[derive(Debug)]
pub(crate) enum SocketCommand {
    /// A new peer's pipes (an accepted connection, an inproc connect).
    Attach(Box<Peer>),
    /// A peer's handshake completed: its metadata (Identity, Socket-Type ...).
    Identify { id: PipeId, metadata: Arc<Metadata> },
}

/// The sending side of a socket's command queue.
#[derive(Debug, Clone)]
pub(crate) struct Mailbox {
    tx: Sender<SocketCommand>,
    signal: Arc<Signaler>,
}

impl Mailbox {
    pub(crate) fn new(tx: Sender<SocketCommand>, signal: Arc<Signaler>) -> Mailbox {
        Mailbox { tx, signal }
    }

    /// Queues a command; returns false when the socket is gone.
    pub(crate) fn send(&self, cmd: SocketCommand) -> bool {
        let sent = self.tx.send(cmd).is_ok();
        if sent {
            self.signal.notify();
        }
        sent
    }

    pub(crate) fn signal(&self) -> Arc<Signaler> {
        Arc::clone(&self.signal)
    }
}
