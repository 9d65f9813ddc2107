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
//! So the socket's state machine (`Core`) sits behind a lock shared with every [`Mailbox`]. A
//! command is queued, then the deliverer marks it pending and tries the lock, both in one
//! atomic operation on the lock's word: if the socket is idle, the deliverer has the lock and
//! applies the command at once; if the socket's thread holds the lock, that thread applies it
//! when it lets go, because letting go is a compare-and-swap that fails while `PENDING` is set.
//!
//! ```text
//!   deliverer: queue cmd; state |= PENDING | LOCKED ─ was free ─> apply all queued; release
//!                                                  └ was held ─> the holder applies on release
//!   owner:     state: 0 -> LOCKED; work; release: LOCKED -> 0, or if PENDING, apply and retry
//! ```
//!
//! Both sides act on the one word, so its modification order decides who applies a command:
//! either the deliverer's operation came first and the owner's release fails and applies it, or
//! it came after the release and found the lock free. No fence is needed. (A `Mutex` with a
//! separate flag needed a SeqCst fence after each unlock, a Dekker handshake, and that fence
//! was about 2.5% of `inproc_thr 64`'s samples, issue 18.) `try`-style: a deliverer never
//! waits, so no thread ever blocks on another socket's lock and no lock order can deadlock. The
//! socket's own thread waits (spinning, then yielding) only while a deliverer applies commands.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Weak};

use bytes::Bytes;
use ferromq_pipe::Notify;

use crate::io::peer::{Peer, PipeId};
use crate::io::peer_hwm::HwmRegistry;
use crate::io::ready::{PeerWake, ReadyList};
use crate::io::signaler::Signaler;
use crate::option::Options;
use crate::pattern::{Pattern, PeerMetadata};

/// What the management layer tells a socket.
#[derive(Debug)]
pub(crate) enum SocketCommand {
    /// A new peer's pipes (an accepted connection, an inproc connect).
    Attach(Box<Peer>),
    /// A peer's handshake completed: its metadata (Identity, Socket-Type ...).
    Identify { id: PipeId, metadata: PeerMetadata },
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

/// `Shared::state`: someone holds the core.
const LOCKED: u8 = 1;
/// `Shared::state`: commands are queued that nobody has applied yet.
const PENDING: u8 = 2;

/// The core and the word that locks it, shared by the socket and its mailboxes.
pub(crate) struct Shared {
    core: UnsafeCell<Core>,
    /// `LOCKED` and `PENDING` bits.
    state: AtomicU8,
}

// SAFETY: `core` is reached only through a `CoreGuard`, and a guard exists only while its
// holder has set `LOCKED` in `state` (an acquiring read-modify-write that found it clear), which
// it clears with a releasing one when the guard goes: one holder at a time, as with a `Mutex`,
// which is `Sync` for a `Send` value. `Core` is `Send`.
unsafe impl Sync for Shared {}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The core, held: the lock goes (applying any command that came meanwhile) when this does.
pub(crate) struct CoreGuard<'a> {
    shared: &'a Shared,
}

impl Deref for CoreGuard<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        // SAFETY: this guard holds `LOCKED` (see `Shared`'s `Sync`), so nothing else reaches
        // the core while the reference lives.
        unsafe { &*self.shared.core.get() }
    }
}

impl DerefMut for CoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Core {
        // SAFETY: as in `deref`, and `&mut self` makes this the guard's only reference.
        unsafe { &mut *self.shared.core.get() }
    }
}

impl Drop for CoreGuard<'_> {
    /// Lets go: `LOCKED` to 0, unless a command is pending (kept inline, the rest out of line).
    #[inline]
    fn drop(&mut self) {
        if self
            .shared
            .state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            self.release_pending();
        }
    }
}

impl CoreGuard<'_> {
    /// Letting go found `PENDING` set: applies the queue, then tries again.
    #[cold]
    #[inline(never)]
    fn release_pending(&mut self) {
        if std::thread::panicking() {
            // A command that panicked while being applied is not applied again here.
            self.shared.state.fetch_and(!LOCKED, Ordering::Release);
            return;
        }
        loop {
            // `PENDING` is cleared before the queue is read, so a command queued after the
            // read sets it again and the compare-and-swap below fails. A swap, not a store:
            // reading the deliverers' `fetch_or`s makes what they queued visible here.
            self.shared.state.swap(LOCKED, Ordering::Acquire);
            self.apply_queued();
            if self
                .shared
                .state
                .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl Shared {
    /// Locks the core for the socket's thread, applies what is queued and tells the pattern
    /// which peers woke the socket.
    #[inline]
    pub(crate) fn lock(&self) -> CoreGuard<'_> {
        if self
            .state
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        let mut core = CoreGuard { shared: self };
        if core.ready.any() {
            core.activate_woken();
        }
        core
    }

    /// [`Shared::lock`] when the word was not 0: a deliverer holds the core. Waits for it. A
    /// command pending meanwhile (`PENDING` is set with `LOCKED`, and survives a release only
    /// after a panic while applying) is applied when this thread lets go.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut spins = 0u32;
        loop {
            let state = self.state.fetch_or(LOCKED, Ordering::Acquire);
            if state & LOCKED == 0 {
                break;
            }
            if spins < 64 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Releases the core (applying any command that arrived while it was held).
    pub(crate) fn unlock(&self, core: CoreGuard<'_>) {
        drop(core);
    }

    /// A command was queued: applies it now if nobody holds the core; whoever holds it does
    /// when it lets go.
    fn settle(&self) {
        if self.state.fetch_or(PENDING | LOCKED, Ordering::AcqRel) & LOCKED == 0 {
            // Ours now, with `PENDING` set: letting go applies the queue.
            drop(CoreGuard { shared: self });
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
        core: UnsafeCell::new(Core {
            pattern,
            commands: rx,
            options,
            hwms: HwmRegistry::default(),
            ready: Arc::clone(&ready),
            woken: Vec::new(),
        }),
        state: AtomicU8::new(0),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::socket_pipes;
    use crate::pattern::for_type;
    use crate::SocketType;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    /// Deliverers on two threads attach peers, each with one message already queued, while
    /// the socket's thread takes and lets go of the core as fast as it can and reads. Each
    /// deliverer waits until its peer's message has been read before it attaches the next, so
    /// a command that was queued but left for nobody to apply stops the test: every command
    /// is applied (by whichever side gets there), none twice, and nothing needs a later
    /// command to push it through.
    #[test]
    fn commands_from_other_threads_are_applied_while_the_owner_works() {
        const THREADS: usize = 2;
        const PEERS: usize = 300;
        let signal = Arc::new(Signaler::new().unwrap());
        let options = Options::default();
        let pattern = for_type(SocketType::Pull).unwrap();
        let (shared, mailbox) = socket_core(pattern, signal, options.clone());
        let seen: Arc<Vec<AtomicBool>> = Arc::new(
            (0..THREADS * PEERS)
                .map(|_| AtomicBool::new(false))
                .collect(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let owner = {
            let (shared, seen, stop) = (Arc::clone(&shared), Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut core = shared.lock();
                    let received = core.pattern.recv();
                    shared.unlock(core);
                    if let Ok(msg) = received {
                        let id: usize = std::str::from_utf8(&msg.data).unwrap().parse().unwrap();
                        assert!(!seen[id].swap(true, Ordering::Release), "{id} read twice");
                    }
                }
            })
        };
        let deliverers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (mailbox, options, seen) =
                    (mailbox.clone(), options.clone(), Arc::clone(&seen));
                std::thread::spawn(move || {
                    let mut far_ends = Vec::new();
                    for id in t * PEERS..(t + 1) * PEERS {
                        let pipe = id as PipeId;
                        let (peer, mut far) =
                            socket_pipes(pipe, mailbox.peer_wake(pipe), SocketType::Pull, &options);
                        far.to_socket
                            .try_write(Bytes::from(id.to_string()), false)
                            .unwrap();
                        far.to_socket.flush();
                        assert!(mailbox.send(SocketCommand::Attach(Box::new(peer))));
                        far_ends.push(far);
                        let deadline = Instant::now() + Duration::from_secs(10);
                        while !seen[id].load(Ordering::Acquire) {
                            assert!(Instant::now() < deadline, "peer {id} never attached");
                            std::thread::yield_now();
                        }
                    }
                    far_ends
                })
            })
            .collect();
        let far_ends: Vec<_> = deliverers.into_iter().map(|d| d.join().unwrap()).collect();
        stop.store(true, Ordering::Relaxed);
        owner.join().unwrap();
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed)));
        assert_eq!(shared.state.load(Ordering::Relaxed), 0, "lock left clean");
        drop(far_ends);
    }
}
