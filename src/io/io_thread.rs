//! An I/O thread: one mio `Poll` loop over established connections.
//!
//! Other threads reach it through a small inbox (new engines to adopt, tokens whose pipes
//! need attention, stop) and one `mio::Waker`. A pipe wakes an engine through its `WakeSlot`,
//! which holds this thread and the engine's token: the token is appended to the ready list,
//! and the poll is woken only when the list was empty, so a burst of wake-ups costs one
//! syscall. Tokens are never reused, so a late wake-up for a finished engine finds nothing
//! and is ignored.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token, Waker};

use crate::io::deadlines::Deadlines;
use crate::io::engine::{Engine, Step};
use crate::io::lend::{Lender, Lenders};
use crate::io::loopback_pairs::LoopbackPairs;
use crate::io::recv_buffers::RecvBuffers;
use crate::io::shared_engine::SharedEngine;
use crate::io::wake::{NotifyToken, SendThrough};
use crate::option::ThreadOptions;

const WAKER: Token = Token(usize::MAX);

#[derive(Debug, Default)]
struct Inbox {
    ready: Vec<usize>,
    adopt: Vec<Adopted>,
    stop: bool,
}

/// An engine handed to the thread, its token, and its socket's connections, which it joins
/// once registered (see `lend.rs`).
type Adopted = (usize, Arc<SharedEngine>, Option<Arc<Lenders>>);

/// The part of an I/O thread other threads talk to.
#[derive(Debug)]
pub(crate) struct IoShared {
    waker: Waker,
    inbox: Mutex<Inbox>,
    next_token: AtomicUsize,
    /// The thread waits in `epoll_wait` (or is about to): see [`NotifyToken::asleep`].
    asleep: AtomicBool,
    /// The thread's epoll, for a receive that borrows one of its streams (`lend.rs`).
    registry: mio::Registry,
}

impl IoShared {
    /// Hands an established connection to this thread; with `lenders`, a receive on its
    /// socket may borrow it while it is the socket's only one (`lend.rs`).
    pub(crate) fn adopt(self: &Arc<Self>, engine: Engine, lenders: Option<Arc<Lenders>>) {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let wake = engine.pipes().map(|pipes| Arc::clone(&pipes.wake));
        let engine = Arc::new(SharedEngine::new(engine));
        if let Some(wake) = wake {
            let through: Arc<dyn SendThrough> = engine.clone();
            wake.install_token(Arc::clone(self) as _, token, Some(through));
        }
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.adopt.push((token, engine, lenders));
        }
        let _ = self.waker.wake();
    }

    fn stop(&self) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.stop = true;
        }
        let _ = self.waker.wake();
    }
}

impl NotifyToken for IoShared {
    /// Wakes the engine `token`: notes it in the ready list, and writes the waker only when
    /// the list was empty (the thread takes the whole list at once).
    fn notify_token(&self, token: usize) {
        let first = match self.inbox.lock() {
            Ok(mut inbox) => {
                inbox.ready.push(token);
                inbox.ready.len() == 1 && inbox.adopt.is_empty()
            }
            Err(_) => false,
        };
        if first {
            let _ = self.waker.wake();
        }
    }

    fn asleep(&self) -> bool {
        self.asleep.load(Ordering::Relaxed)
    }
}

impl Lender for IoShared {
    /// The thread's epoll registrations, which a borrowed stream leaves and rejoins.
    fn registry(&self) -> &mio::Registry {
        &self.registry
    }
}

/// A running I/O thread; stops when dropped.
#[derive(Debug)]
pub(crate) struct IoThread {
    shared: Arc<IoShared>,
    handle: Option<JoinHandle<()>>,
}

impl IoThread {
    /// Starts I/O thread `index`, named as libzmq names its I/O threads ("ZMQbg/IO/0", after
    /// ZMQ_THREAD_NAME_PREFIX) and scheduled as the ZMQ_THREAD_* context options say.
    pub(crate) fn spawn(index: usize, options: &ThreadOptions) -> io::Result<IoThread> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let registry = poll.registry().try_clone()?;
        let shared = Arc::new(IoShared {
            waker,
            registry,
            inbox: Mutex::new(Inbox::default()),
            next_token: AtomicUsize::new(0),
            asleep: AtomicBool::new(false),
        });
        let thread_shared = Arc::clone(&shared);
        let scheduling = options.clone();
        let name = options.io_thread_name(index);
        let handle = std::thread::Builder::new().spawn(move || {
            crate::io::thread_signals::block_all();
            scheduling.apply_scheduling();
            // Named last, as libzmq's thread_routine does: a name seen from outside
            // means the scheduling is in place.
            crate::option::ThreadOptions::name_current_thread(&name);
            run(poll, &thread_shared)
        })?;
        Ok(IoThread {
            shared,
            handle: Some(handle),
        })
    }

    pub(crate) fn shared(&self) -> &Arc<IoShared> {
        &self.shared
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        self.shared.stop();
        if let Some(h) = self.handle.take() {
            // Never join from the I/O thread itself (a context dropped by an engine's task),
            // nor from inside an async runtime, whose worker must not block: the thread has
            // been told to stop and owns all it touches, so it may end on its own.
            let in_runtime = tokio::runtime::Handle::try_current().is_ok();
            if h.thread().id() != std::thread::current().id() && !in_runtime {
                let _ = h.join();
            }
        }
    }
}

fn run(mut poll: Poll, shared: &Arc<IoShared>) {
    let mut events = Events::with_capacity(256);
    let mut hot = Engines::default();
    let mut ready = Vec::new();
    let mut adopt = Vec::new();
    // The engines being run from `hot.again`.
    let mut turn = Vec::new();
    let mut due = Vec::new();
    loop {
        let timeout = if hot.again.is_empty() {
            hot.deadlines
                .next()
                .map(|d| d.saturating_duration_since(Instant::now()))
        } else {
            Some(Duration::ZERO)
        };
        let sleeps = timeout != Some(Duration::ZERO);
        if sleeps {
            shared.asleep.store(true, Ordering::Relaxed);
        }
        let polled = poll.poll(&mut events, timeout);
        if sleeps {
            shared.asleep.store(false, Ordering::Relaxed);
        }
        if let Err(e) = polled
            && e.kind() != io::ErrorKind::Interrupted
        {
            return;
        }
        for ev in events.iter() {
            if ev.token() == WAKER {
                continue;
            }
            let token = ev.token().0;
            if let Some(engine) = hot.engines.get(&token) {
                engine.lock().set_ready(
                    ev.is_readable() || ev.is_read_closed() || ev.is_error(),
                    ev.is_writable() || ev.is_write_closed() || ev.is_error(),
                );
                hot.wake(&poll, token);
            }
        }
        let stop = match shared.inbox.lock() {
            Ok(mut inbox) => {
                std::mem::swap(&mut ready, &mut inbox.ready);
                std::mem::swap(&mut adopt, &mut inbox.adopt);
                inbox.stop
            }
            Err(_) => true,
        };
        if stop {
            let tokens: Vec<usize> = hot.engines.keys().copied().collect();
            for token in tokens {
                hot.finish(&poll, token);
            }
            for (_, e, _) in adopt.drain(..) {
                e.lock().finish();
            }
            return;
        }
        for (token, cell, lenders) in adopt.drain(..) {
            // Writable readiness only once a write is refused (`Engine::interest_change`).
            let interest = Interest::READABLE;
            {
                let mut engine = cell.lock();
                if poll
                    .registry()
                    .register(&mut engine.stream, Token(token), interest)
                    .is_err()
                {
                    engine.expire();
                    engine.finish();
                    continue;
                }
            }
            if let Some(lenders) = lenders {
                lenders.add(&cell, Arc::clone(shared) as _, token);
                hot.lenders
                    .insert(token, (lenders, Arc::clone(shared) as _));
            }
            hot.engines.insert(token, cell);
            hot.pair(token);
            hot.drive(&poll, token);
        }
        for token in ready.drain(..) {
            hot.wake(&poll, token);
        }
        std::mem::swap(&mut hot.again, &mut turn);
        hot.queued.clear();
        for token in turn.drain(..) {
            hot.drive(&poll, token);
        }
        if !hot.deadlines.is_empty() {
            hot.deadlines.take_due(Instant::now(), &mut due);
            for token in due.drain(..) {
                hot.drive(&poll, token);
            }
        }
    }
}

/// The engines of one I/O thread and what it keeps for them.
#[derive(Default)]
struct Engines {
    engines: HashMap<usize, Arc<SharedEngine>>,
    /// When each engine that asked for it runs again: heartbeats, linger. Empty on the hot
    /// path of connections without either.
    deadlines: Deadlines,
    /// Engines that ended their turn with work left.
    again: Vec<usize>,
    /// The tokens in `again`, so queueing one is O(1) however many engines are busy.
    queued: HashSet<usize>,
    spares: RecvBuffers,
    /// The tcp engines by their addresses, to find a connection's two ends.
    loopback: LoopbackPairs,
    /// The engines filed with their sockets' connections, to remove when they finish.
    lenders: HashMap<usize, (Arc<Lenders>, Arc<dyn Lender>)>,
}

impl Engines {
    /// Runs an engine that readiness or its pipes woke, unless it already waits in `again`:
    /// that one runs in its turn below. Running it here as well gave an engine with a long
    /// stream to read two turns per loop (its socket reports readable again after each turn,
    /// as data keeps arriving) while every other engine got one, so each hop of a round trip
    /// through the thread waited behind twice the bytes (about 1 MiB rather than the engine's
    /// turn of 512 KiB).
    fn wake(&mut self, poll: &Poll, token: usize) {
        if !self.queued.contains(&token) {
            self.drive(poll, token);
        }
    }

    /// Runs one engine and files it by what it asked for next.
    fn drive(&mut self, poll: &Poll, token: usize) {
        let Some(cell) = self.engines.get(&token) else {
            return;
        };
        let mut engine = cell.lock();
        let step = engine.run(&mut self.spares);
        if step != Step::Done
            && let Some(interest) = engine.interest_change()
            && {
                // A stream lent to a receive (`lend.rs`) is not registered: taken back here.
                let registry = poll.registry();
                let registered = if engine.reclaim() {
                    registry.register(&mut engine.stream, Token(token), interest)
                } else {
                    registry.reregister(&mut engine.stream, Token(token), interest)
                };
                registered.is_err()
            }
        {
            // Unregistered, it would never hear from its stream again: end it as a broken
            // connection, so a connecting socket reconnects.
            drop(engine);
            self.finish(poll, token);
            return;
        }
        drop(engine);
        match step {
            Step::Idle => {
                if !self.deadlines.is_empty() {
                    self.deadlines.remove(token);
                }
            }
            Step::Until(deadline) => {
                self.deadlines.set(token, deadline);
            }
            Step::Again => {
                if self.queued.insert(token) {
                    self.again.push(token);
                }
            }
            Step::Done => self.finish(poll, token),
        }
    }

    /// Files a new engine's tcp ends; when its connection's other end runs on this thread,
    /// both write smaller batches (see `loopback_pairs.rs`).
    fn pair(&mut self, token: usize) {
        let Some(ends) = self
            .engines
            .get(&token)
            .and_then(|e| e.lock().stream.tcp_ends())
        else {
            return;
        };
        if let Some(partner) = self.loopback.add(token, ends) {
            for t in [token, partner] {
                if let Some(e) = self.engines.get(&t) {
                    e.lock().set_loopback_pair(true);
                }
            }
        }
    }

    fn finish(&mut self, poll: &Poll, token: usize) {
        if let Some(partner) = self.loopback.remove(token)
            && let Some(e) = self.engines.get(&partner)
        {
            e.lock().set_loopback_pair(false);
        }
        self.deadlines.remove(token);
        if let Some((lenders, io)) = self.lenders.remove(&token) {
            lenders.remove(&io, token);
        }
        if let Some(cell) = self.engines.remove(&token) {
            let mut engine = cell.lock();
            let _ = poll.registry().deregister(&mut engine.stream);
            engine.finish();
        }
    }
}
