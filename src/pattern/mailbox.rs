//! Commands that reach a socket from other threads (a connection was attached, a peer
//! finished its handshake), and the lock that lets whichever thread gets there first apply
//! them.
//!
//! libzmq applies such commands only inside the application's next API call, except that
//! it creates a connecting socket's pipes and sends a SUB's subscriptions from inside
//! `connect`. Here a peer's pipes and metadata arrive from the management runtime or from
//! another socket's thread, so waiting for the application would leave a SUB that
//! subscribed and then sleeps without its subscriptions upstream (the publisher drops
//! everything meanwhile), and an XPUB waiting for a subscription would wait forever.
//!
//! So the socket's state machine (`Core`) sits behind a mutex shared with every
//! [`Mailbox`]. A command is queued, then the deliverer tries the lock: if the socket is
//! idle, the deliverer applies the command at once; if the socket's thread holds the lock,
//! that thread applies it when it lets go ([`Shared::unlock`] rechecks the `pending` flag).
//!
//! ```text
//!   deliverer: queue cmd; pending = true; fence; try_lock ─ ok ──> apply all queued
//!                                                        └ busy ─> owner applies on unlock
//!   owner:     lock; apply queued; work; unlock; fence; pending? ─> try_lock, apply
//! ```
//!
//! The two SeqCst fences make it a Dekker handshake: either the owner's recheck sees
//! `pending`, or the deliverer's `try_lock` sees the lock free. `try_lock` never waits, so
//! no thread ever blocks on another socket's lock and no lock order can deadlock.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError, Weak};

use bytes::Bytes;
use ferromq_pipe::Notify;
use ferromq_zmtp::Metadata;

use crate::io::peer::{Peer, PipeId};
use crate::io::peer_hwm::HwmRegistry;
use crate::io::ready::{PeerWake, ReadyList};
use crate::io::signaler::Signaler;
use crate::option::Options;
use crate::pattern::Pattern;

/// What the management layer tells a socket.
#[derive(Debug)]
pub(crate) enum SocketCommand {
    /// A new peer's pipes (an accepted connection, an inproc connect).
    Attach(Box<Peer>),
    /// A peer's handshake completed: its metadata (Identity, Socket-Type ...).
    Identify { id: PipeId, metadata: Arc<Metadata> },
}

/// The socket's state machine and what applying a command needs.
pub(crate) struct Core {
    pub(crate) pattern: Box<dyn Pattern>,
    commands: Receiver<SocketCommand>,
    /// A copy of the socket's options, refreshed on every change, for commands applied on
    /// other threads (a new peer's pipes take their HWM from it).
    pub(crate) options: Options,
    /// The peers' pipe HWMs, for ZMQ_SNDHWM/RCVHWM set after they attached.
    hwms: HwmRegistry,
    /// Peers whose pipes woke the socket, handed to the pattern on each lock.
    ready: Arc<ReadyList>,
    woken: Vec<PipeId>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core").finish_non_exhaustive()
    }
}

impl Core {
    /// Hands a new peer to the pattern, keeping its HWM handles.
    ///
    /// With ZMQ_PROBE_ROUTER (only ROUTER, REP, DEALER and REQ accept it) the peer gets one
    /// empty message first, as libzmq's `xattach_pipe` writes it: a ROUTER on the other side
    /// learns the new peer's routing id without the application sending anything.
    pub(crate) fn attach(&mut self, mut peer: Peer) {
        self.hwms.add(peer.hwms.clone());
        if self.options.probe_router && peer.out.try_write(Bytes::new(), false).is_ok() {
            peer.out.flush();
        }
        self.pattern.attach(peer, &self.options);
    }

    /// ZMQ_SNDHWM or ZMQ_RCVHWM changed: the peers already attached take the new values.
    pub(crate) fn apply_hwms(&mut self) {
        self.hwms.apply(self.options.sndhwm, self.options.rcvhwm);
        self.pattern.hwm_changed();
    }

    /// Hands the peers that woke the socket to the pattern (kept out of line: under load the
    /// list is empty on almost every call).
    #[inline(never)]
    fn activate_woken(&mut self) {
        if self.ready.take(&mut self.woken) {
            for &id in &self.woken {
                self.pattern.activate(id);
            }
        }
    }

    /// Applies every queued command (libzmq's `process_commands`).
    fn apply_queued(&mut self) {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                SocketCommand::Attach(peer) => self.attach(*peer),
                SocketCommand::Identify { id, metadata } => {
                    self.pattern.identify(id, metadata, &self.options)
                }
            }
        }
    }
}

/// The core and its "commands are waiting" flag, shared by the socket and its mailboxes.
#[derive(Debug)]
pub(crate) struct Shared {
    core: Mutex<Core>,
    pending: AtomicBool,
}

impl Shared {
    /// Locks the core for the socket's thread, applies what is queued and tells the pattern
    /// which peers woke the socket.
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        let mut core = self.core.lock().unwrap_or_else(PoisonError::into_inner);
        self.take(&mut core);
        if core.ready.any() {
            core.activate_woken();
        }
        core
    }

    /// Releases the core, then applies any command that arrived while it was held.
    pub(crate) fn unlock(&self, core: MutexGuard<'_, Core>) {
        drop(core);
        self.settle();
    }

    /// Clears `pending` and applies the queue. The flag is cleared before the queue is
    /// read, so a command queued after the read sets it again.
    #[inline]
    fn take(&self, core: &mut Core) {
        if self.pending.load(Ordering::Relaxed) {
            self.pending.store(false, Ordering::Relaxed);
            core.apply_queued();
        }
    }

    /// Applies queued commands if nobody holds the core; whoever holds it does it on unlock.
    fn settle(&self) {
        loop {
            fence(Ordering::SeqCst);
            if !self.pending.load(Ordering::Relaxed) {
                return;
            }
            let mut core = match self.core.try_lock() {
                Ok(core) => core,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            self.take(&mut core);
        }
    }
}

/// A new socket's core and the receiving end of its command queue.
pub(crate) fn socket_core(
    pattern: Box<dyn Pattern>,
    signal: Arc<Signaler>,
    options: Options,
) -> (Arc<Shared>, Mailbox) {
    let (tx, rx) = channel();
    let ready = ReadyList::new();
    let shared = Arc::new(Shared {
        core: Mutex::new(Core {
            pattern,
            commands: rx,
            options,
            hwms: HwmRegistry::default(),
            ready: Arc::clone(&ready),
            woken: Vec::new(),
        }),
        pending: AtomicBool::new(false),
    });
    let mailbox = Mailbox {
        tx,
        signal,
        ready,
        shared: Arc::downgrade(&shared),
    };
    (shared, mailbox)
}

/// The sending side of a socket's command queue.
#[derive(Debug, Clone)]
pub(crate) struct Mailbox {
    tx: Sender<SocketCommand>,
    signal: Arc<Signaler>,
    ready: Arc<ReadyList>,
    /// Weak, so a socket that is gone is gone (its queue's receiver with it).
    shared: Weak<Shared>,
}

impl Mailbox {
    /// Queues a command and applies it now if the socket is idle; returns false when the
    /// socket is gone.
    pub(crate) fn send(&self, cmd: SocketCommand) -> bool {
        let Some(shared) = self.shared.upgrade() else {
            return false;
        };
        if self.tx.send(cmd).is_err() {
            return false;
        }
        shared.pending.store(true, Ordering::Relaxed);
        shared.settle();
        // A socket blocked in a call, or a poll on its ZMQ_FD, must look again.
        self.signal.notify();
        true
    }

    /// The wake-up for the socket-side ends of the peer `id`'s pipes: it names the peer, so
    /// the socket's pattern looks at that peer only.
    pub(crate) fn peer_wake(&self, id: PipeId) -> Arc<dyn Notify> {
        PeerWake::new(id, Arc::clone(&self.ready), Arc::clone(&self.signal))
    }
}
