//! A connection lent to the thread that waits for its answer: the receiving side of
//! `Engine::send_through`.
//!
//! A message through an I/O thread wakes two threads on its way in: the I/O thread, woken by
//! the kernel, reads and decodes it and writes the socket's eventfd; the application, woken
//! by that, takes it from the pipe. A thread blocked on a raw socket pays one. On the 2-vCPU
//! VM each wake-up was worth about 7 us of a 30 us one-way latency (issue 18).
//!
//! So a blocking receive that waits for an answer (the socket sent since it last received)
//! on a socket with one tcp or ipc connection borrows that connection from its I/O thread:
//!
//! ```text
//!   lend:       engine lock; deregister the stream from the I/O thread's epoll; lent = true
//!   wait:       poll(2) on [socket's eventfd, stream (input; room too while output waits)]
//!   ready:      engine lock; read and decode into the inbound pipe, as the I/O thread
//!               would, and write what output waits; look at the socket again
//!   give back:  engine lock; register the stream again (edge-triggered: readiness that came
//!               meanwhile is reported at once); lent = false
//! ```
//!
//! The borrower writes only what waits in the engine: the rest of a request the kernel did
//! not take whole (a large one, past the socket's buffer), a PONG for a PING it read. The
//! rest stays the I/O thread's: the inbound pipe's room wake-up, deadlines (heartbeats) and
//! the connection's end. While lent, the I/O thread may still run the engine (a token
//! wake-up, a deadline). If that run is refused by the kernel, it registers the stream for
//! writable readiness itself and takes the connection back (`Engine::reclaim`); the borrower
//! sees that at its next run and goes back to waiting on the eventfd alone. Either thread
//! reads and writes only under the engine's lock, so no byte is read twice or lost: what the
//! borrower leaves is reported to the I/O thread when the stream is registered again.
//!
//! The borrower waits for the engine's lock (to lend, read and give back) rather than trying
//! it: an I/O thread running the engine (writing the request just sent, say) holds it for
//! one run, and a borrower that gave up then slept through the answer on the eventfd alone.
//! No cycle: the borrower holds nothing else meanwhile (not the socket's core, not a wake-up
//! slot), and what the I/O thread takes while it runs an engine (a wake-up slot, the socket's
//! ready list, its eventfd) is never held across a wait for an engine.

use std::collections::HashMap;
use std::os::fd::{BorrowedFd, RawFd};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rustix::event::{PollFd, PollFlags};

use crate::io::engine::LentRead;
use crate::io::recv_buffers::RecvBuffers;
use crate::io::shared_engine::SharedEngine;
use crate::io::signaler::{Signaler, Watch};
use crate::io::wake::NotifyToken;

/// The I/O thread an engine runs on, as a borrower needs it: its epoll, and its wake-up for
/// an engine that must run.
pub(crate) trait Lender: NotifyToken {
    fn registry(&self) -> &mio::Registry;
}

/// One socket's connections running on I/O threads, so that a receive can find its lone
/// connection. An I/O thread files an engine once it has registered its stream, and removes
/// it when the engine finishes.
#[derive(Debug, Default)]
pub(crate) struct Lenders {
    /// By (I/O thread, token): a bound socket may have thousands, coming and going.
    engines: Mutex<HashMap<(usize, usize), Lendable>>,
}

/// An engine as a receive may borrow it.
#[derive(Clone)]
pub(crate) struct Lendable {
    /// Weak: whether it still runs is its I/O thread's business.
    engine: Weak<SharedEngine>,
    io: Arc<dyn Lender>,
    token: usize,
}

impl std::fmt::Debug for Lendable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lendable")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// An I/O thread's key among `Lenders`: its address.
fn thread_key(io: &Arc<dyn Lender>) -> usize {
    Arc::as_ptr(io).cast::<()>() as usize
}

impl Lenders {
    pub(crate) fn new() -> Arc<Lenders> {
        Arc::new(Lenders::default())
    }

    /// Files engine `token` of the I/O thread `io` once that thread has registered its
    /// stream.
    pub(crate) fn add(&self, engine: &Arc<SharedEngine>, io: Arc<dyn Lender>, token: usize) {
        let key = (thread_key(&io), token);
        let engine = Arc::downgrade(engine);
        self.map().insert(key, Lendable { engine, io, token });
    }

    /// Removes engine `token` of the I/O thread `io` when it finishes.
    pub(crate) fn remove(&self, io: &Arc<dyn Lender>, token: usize) {
        self.map().remove(&(thread_key(io), token));
    }

    /// The socket's connection when it has exactly one.
    pub(crate) fn lone(&self) -> Option<Lendable> {
        let map = self.map();
        if map.len() == 1 {
            map.values().next().cloned()
        } else {
            None
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, usize), Lendable>> {
        self.engines.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Lendable {
    /// Borrows the connection when its engine can be lent (see `Engine::lend`), waiting for
    /// its lock; `None` otherwise, and the receive waits as before.
    pub(crate) fn lend(self) -> Option<Borrowed> {
        let engine = self.engine.upgrade()?;
        let fd = engine.lock().lend(self.io.registry())?;
        #[cfg(test)]
        BORROWS.with(|n| n.set(n.get() + 1));
        Some(Borrowed {
            engine,
            io: self.io,
            token: self.token,
            fd,
        })
    }
}

thread_local! {
    /// The read buffers a thread's borrowed connections trade theirs for (see
    /// `recv_buffers.rs`), as an I/O thread keeps them for its engines: per thread, so that
    /// what is kept is bounded by threads, not by sockets.
    static SPARES: std::cell::RefCell<RecvBuffers> = std::cell::RefCell::default();
}

/// A borrowed connection; given back when dropped, however the receive ends.
pub(crate) struct Borrowed {
    engine: Arc<SharedEngine>,
    io: Arc<dyn Lender>,
    token: usize,
    fd: RawFd,
}

impl std::fmt::Debug for Borrowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Borrowed")
            .field("fd", &self.fd)
            .finish_non_exhaustive()
    }
}

/// What a run of a borrowed connection came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BorrowedRead {
    /// Read what there was (maybe nothing); the borrower looks at the socket and waits again.
    Read,
    /// The I/O thread took the connection back, or it ended: wait on the socket's eventfd
    /// alone.
    Taken,
}

impl Borrowed {
    /// The stream's fd, to wait on beside the socket's eventfd, and what to wait for: input,
    /// and room as well while output the kernel refused waits.
    pub(crate) fn poll_fd(&self) -> PollFd<'_> {
        let flags = if self.engine.lock().lent_wants_out() {
            PollFlags::IN | PollFlags::OUT
        } else {
            PollFlags::IN
        };
        // SAFETY: `self.fd` is the stream of `self.engine`, which `self` keeps alive: the
        // stream is closed only when the engine is dropped, and the fd is not reused before.
        let fd = unsafe { BorrowedFd::borrow_raw(self.fd) };
        PollFd::from_borrowed_fd(fd, flags)
    }

    /// Reads what the stream holds into the socket's inbound pipe, and writes what output
    /// waits, after `poll(2)` said the stream is readable or writable. The socket's eventfd
    /// is watched meanwhile, so the pipe's wake-up is counted rather than written (the caller
    /// looks at the socket next anyway).
    pub(crate) fn run(&self, signal: &Arc<Signaler>, ready: PollFlags) -> BorrowedRead {
        let failed = PollFlags::ERR | PollFlags::HUP;
        let readable = ready.intersects(PollFlags::IN | failed);
        let writable = ready.intersects(PollFlags::OUT | failed);
        let mut engine = self.engine.lock();
        let (watch, _) = Watch::start(signal);
        let run = SPARES.with_borrow_mut(|spares| engine.run_lent(spares, readable, writable));
        drop(watch);
        drop(engine);
        match run {
            LentRead::Read => {
                #[cfg(test)]
                BORROWED_READS.with(|n| n.set(n.get() + 1));
                #[cfg(test)]
                if writable {
                    BORROWED_WRITES.with(|n| n.set(n.get() + 1));
                }
                BorrowedRead::Read
            }
            // The I/O thread finishes the engine, once given back.
            LentRead::Ended | LentRead::NotLent => BorrowedRead::Taken,
        }
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        let wake = self.engine.lock().give_back(self.io.registry(), self.token);
        if wake {
            self.io.notify_token(self.token);
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Connections this thread borrowed (`Lendable::lend`).
    static BORROWS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Runs this thread made as a borrower (`Borrowed::run`).
    static BORROWED_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Of those, runs for room to write in.
    static BORROWED_WRITES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Connections this thread borrowed so far.
#[cfg(test)]
pub(crate) fn borrows() -> usize {
    BORROWS.with(std::cell::Cell::get)
}

/// Reads this thread made of borrowed connections so far.
#[cfg(test)]
pub(crate) fn borrowed_reads() -> usize {
    BORROWED_READS.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{borrowed_reads, borrows, BORROWED_WRITES};
    use crate::io::engine::tests::endpoints;
    use crate::{poll, Context, Error, PollItem, RecvFlags, SendFlags, SocketType, POLLIN};

    /// A body of `len` bytes that differs per round, to tell answers apart.
    fn body(round: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + round) as u8).collect()
    }

    /// A socket of type `bound` bound at `endpoint` (with `options` applied first) and one
    /// of type `connecting` connected to it, both with linger 0 and a 10 s receive timeout.
    fn connected(
        ctx: &Context,
        endpoint: &str,
        (bound, connecting): (SocketType, SocketType),
        options: impl Fn(&mut crate::Socket),
    ) -> (crate::Socket, crate::Socket) {
        let mut b = ctx.socket(bound).unwrap();
        let mut c = ctx.socket(connecting).unwrap();
        for s in [&mut b, &mut c] {
            s.set_linger(0).unwrap();
            s.set_rcvtimeo(10_000).unwrap();
        }
        options(&mut b);
        b.bind(endpoint).unwrap();
        c.connect(&b.last_endpoint().unwrap()).unwrap();
        (b, c)
    }

    /// Bodies of up to 300 KiB, more than a Unix socket's buffer holds: such an answer comes
    /// in several reads, some of them the I/O thread's (when the borrower gives back).
    const SIZES: [usize; 4] = [100, 96 * 1024, 300 * 1024, 1];

    /// A REQ waiting for its answer reads it from the connection itself, and every answer
    /// arrives whole and in order; a REQ with two connections never borrows.
    #[test]
    fn answers_are_read_by_the_waiting_thread_from_a_lone_connection_only() {
        let ctx = Context::new();
        let mut echoes = Vec::new();
        for endpoint in endpoints() {
            for repliers in [1, 2] {
                let mut req = ctx.socket(SocketType::Req).unwrap();
                req.set_linger(0).unwrap();
                req.set_rcvtimeo(10_000).unwrap();
                for n in 0..repliers {
                    let mut rep = ctx.socket(SocketType::Rep).unwrap();
                    rep.set_linger(0).unwrap();
                    let at = endpoint.replace(".sock", &format!("-{n}.sock"));
                    rep.bind(&at).unwrap();
                    req.connect(&rep.last_endpoint().unwrap()).unwrap();
                    echoes.push(std::thread::spawn(move || loop {
                        match rep.recv(RecvFlags::empty()) {
                            Ok(msg) => rep.send(msg, SendFlags::empty()).unwrap(),
                            Err(_) => return,
                        }
                    }));
                }
                // Answers from every replier first: all connections are made.
                for round in 0..2 * repliers {
                    req.send(body(round, 10), SendFlags::empty()).unwrap();
                    req.recv(RecvFlags::empty()).unwrap();
                }
                let before = borrowed_reads();
                for round in 0..200 {
                    let sent = body(round, SIZES[round % SIZES.len()]);
                    req.send(sent.clone(), SendFlags::empty()).unwrap();
                    let reply = req.recv(RecvFlags::empty()).unwrap();
                    assert!(reply.as_slice() == &sent[..], "{endpoint} round {round}");
                }
                let reads = borrowed_reads() - before;
                if repliers == 1 {
                    assert!(
                        reads > 0,
                        "{endpoint}: no answer read by the waiting thread"
                    );
                } else {
                    assert_eq!(reads, 0, "{endpoint}: two connections, none lent");
                }
            }
        }
        // The echoes' receives end with ETERM.
        ctx.shutdown();
        for echo in echoes {
            echo.join().unwrap();
        }
    }

    /// A borrowed wait that times out gives the connection back: an answer that comes later
    /// is seen by a poll, which borrows nothing, so only the I/O thread can deliver it.
    #[test]
    fn a_wait_that_times_out_gives_the_connection_back() {
        let ctx = Context::new();
        for endpoint in endpoints() {
            let kinds = (SocketType::Router, SocketType::Dealer);
            let (mut router, mut dealer) = connected(&ctx, &endpoint, kinds, |_| {});
            for round in 0..3 {
                dealer.send("question", SendFlags::empty()).unwrap();
                let asked = router.recv_multipart(RecvFlags::empty()).unwrap();
                dealer.set_rcvtimeo(50).unwrap();
                let before = borrows();
                assert_eq!(
                    dealer.recv(RecvFlags::empty()).err(),
                    Some(Error::Again),
                    "{endpoint}"
                );
                assert_eq!(borrows() - before, 1, "{endpoint}: the wait borrowed");
                router
                    .send_multipart(
                        [asked[0].clone(), format!("answer {round}").into()],
                        SendFlags::empty(),
                    )
                    .unwrap();
                let mut items = [PollItem::socket_mut(&mut dealer, POLLIN)];
                assert_eq!(poll(&mut items, 10_000).unwrap(), 1, "{endpoint}");
                let got = dealer.recv(RecvFlags::DONTWAIT).unwrap();
                assert_eq!(got.as_slice(), format!("answer {round}").as_bytes());
                dealer.set_rcvtimeo(10_000).unwrap();
            }
            // And it still lends afterwards.
            let before = borrowed_reads();
            for round in 0..20 {
                dealer.send("again", SendFlags::empty()).unwrap();
                let asked = router.recv_multipart(RecvFlags::empty()).unwrap();
                let router_thread = std::thread::scope(|s| {
                    s.spawn(|| {
                        std::thread::sleep(Duration::from_millis(1));
                        router.send_multipart(
                            [asked[0].clone(), round.to_string().into()],
                            SendFlags::empty(),
                        )
                    });
                    dealer.recv(RecvFlags::empty())
                });
                assert_eq!(
                    router_thread.unwrap().as_slice(),
                    round.to_string().as_bytes()
                );
            }
            assert!(borrowed_reads() > before, "{endpoint}");
        }
    }

    /// A peer's heartbeats are answered while the connection is lent: the borrower reads the
    /// PINGs and writes the PONGs, so a peer that checks them (a 100 ms
    /// heartbeat timeout) keeps the connection through a 600 ms wait for its answer.
    #[test]
    fn heartbeats_are_answered_while_lent() {
        let ctx = Context::new();
        for endpoint in endpoints() {
            let kinds = (SocketType::Rep, SocketType::Req);
            let (mut rep, mut req) = connected(&ctx, &endpoint, kinds, |rep| {
                rep.set_heartbeat_ivl(20).unwrap();
                rep.set_heartbeat_timeout(100).unwrap();
            });
            let slow = std::thread::spawn(move || {
                // A first round trip, so that the connection is made before the wait.
                let msg = rep.recv(RecvFlags::empty())?;
                rep.send(msg, SendFlags::empty()).map_err(|e| e.error())?;
                let msg = rep.recv(RecvFlags::empty())?;
                std::thread::sleep(Duration::from_millis(600));
                rep.send(msg, SendFlags::empty()).map_err(|e| e.error())?;
                Ok::<_, Error>(rep)
            });
            req.send("first", SendFlags::empty()).unwrap();
            req.recv(RecvFlags::empty()).unwrap();
            let before = borrowed_reads();
            let start = Instant::now();
            req.send("slow", SendFlags::empty()).unwrap();
            let reply = req.recv(RecvFlags::empty()).unwrap();
            assert_eq!(reply.as_slice(), b"slow", "{endpoint}");
            assert!(start.elapsed() >= Duration::from_millis(600));
            assert!(
                borrowed_reads() - before >= 5,
                "{endpoint}: PINGs read by the borrower"
            );
            drop(slow.join().unwrap().unwrap());
        }
    }

    /// A connection its I/O thread ends while a receive has it (here the REQ's heartbeat
    /// timeout, against a peer that went silent) is closed then, not when the receive
    /// returns: the peer sees it end within the timeout while the receive waits on.
    #[test]
    fn a_connection_ended_while_lent_is_closed_at_once() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (got_request, request_seen) = std::sync::mpsc::channel();
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            // A REP's greeting (NULL, as server 0) and READY; then silence.
            let mut greeting = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
            greeting.extend_from_slice(b"NULL");
            greeting.resize(64, 0);
            let mut ready = vec![0x04, 25, 5];
            ready.extend_from_slice(b"READY\x0bSocket-Type\0\0\0\x03REP");
            stream.write_all(&greeting).unwrap();
            stream.write_all(&ready).unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => return Instant::now(),
                    Ok(n) => {
                        seen.extend_from_slice(&buf[..n]);
                        if seen.windows(5).any(|w| w == b"hello") {
                            seen.clear();
                            let _ = got_request.send(());
                        }
                    }
                }
            }
        });
        let ctx = Context::new();
        let mut req = ctx.socket(SocketType::Req).unwrap();
        req.set_linger(0).unwrap();
        req.set_heartbeat_ivl(20).unwrap();
        req.set_heartbeat_timeout(100).unwrap();
        req.set_rcvtimeo(3_000).unwrap();
        req.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
        req.send("hello", SendFlags::empty()).unwrap();
        request_seen.recv_timeout(Duration::from_secs(10)).unwrap();
        let before = borrows();
        let start = Instant::now();
        assert_eq!(req.recv(RecvFlags::empty()).err(), Some(Error::Again));
        assert!(borrows() > before, "the wait borrowed the connection");
        let closed = peer.join().unwrap();
        assert!(
            closed.duration_since(start) < Duration::from_millis(1_500),
            "closed after {:?}, while the receive waited",
            closed.duration_since(start)
        );
    }

    /// A request larger than the socket's buffer (4 MiB over ipc, whose buffer holds at most
    /// 1 MiB once large bodies widen it: `engine::IPC_SEND_BUFFER`) is finished by the waiting
    /// thread: it waits for room as well as for the answer, and writes the rest itself. Every
    /// answer arrives whole.
    #[test]
    fn the_rest_of_a_large_request_is_written_by_the_waiting_thread() {
        let writes = || BORROWED_WRITES.with(std::cell::Cell::get);
        let ctx = Context::new();
        let endpoint = endpoints()[1].clone();
        let kinds = (SocketType::Rep, SocketType::Req);
        let (mut rep, mut req) = connected(&ctx, &endpoint, kinds, |_| {});
        let echo = std::thread::spawn(move || {
            for _ in 0..21 {
                let msg = rep.recv(RecvFlags::empty())?;
                rep.send(msg, SendFlags::empty()).map_err(|e| e.error())?;
            }
            Ok::<_, Error>(())
        });
        req.send("connected", SendFlags::empty()).unwrap();
        req.recv(RecvFlags::empty()).unwrap();
        let before = writes();
        for round in 0..20 {
            let sent = body(round, 4 * 1024 * 1024);
            req.send(sent.clone(), SendFlags::empty()).unwrap();
            let reply = req.recv(RecvFlags::empty()).unwrap();
            assert!(reply.as_slice() == &sent[..], "round {round}");
        }
        assert!(
            writes() > before,
            "no request finished by the waiting thread"
        );
        echo.join().unwrap().unwrap();
    }

    /// Everything at once, on two I/O threads: four REQs, each with its own tcp or ipc
    /// connection, send bodies of 1 B to 2.4 MiB (past a Unix socket's buffer) with
    /// heartbeats every 5 ms both ways; some of their waits time out (1 ms) and wait again,
    /// some answers come late. Every answer arrives whole and in order, and the waits borrow.
    #[test]
    fn borrowed_waits_under_timeouts_heartbeats_and_large_bodies() {
        const ROUNDS: usize = 400;
        let ctx = Context::with_io_threads(2);
        let mut clients = Vec::new();
        for n in 0..4 {
            let endpoint = endpoints()[n % 2].replace(".sock", &format!("-mix{n}.sock"));
            let kinds = (SocketType::Rep, SocketType::Req);
            let beats = |s: &mut crate::Socket| {
                s.set_heartbeat_ivl(5).unwrap();
                s.set_heartbeat_timeout(1_000).unwrap();
            };
            let (mut rep, mut req) = connected(&ctx, &endpoint, kinds, beats);
            beats(&mut req);
            let echo = std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(n as u64);
                for _ in 0..ROUNDS {
                    let msg = rep.recv(RecvFlags::empty()).unwrap();
                    if rng.u8(..) < 20 {
                        std::thread::sleep(Duration::from_millis(rng.u64(1..4)));
                    }
                    rep.send(msg, SendFlags::empty()).unwrap();
                }
            });
            let client = std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(100 + n as u64);
                let before = borrows();
                for round in 0..ROUNDS {
                    let len = match rng.u8(..4) {
                        0 => rng.usize(1..100),
                        1 => rng.usize(100..10_000),
                        2 => rng.usize(10_000..200_000),
                        _ => rng.usize(200_000..2_500_000),
                    };
                    let sent = body(round, len);
                    req.send(sent.clone(), SendFlags::empty()).unwrap();
                    let short = rng.bool();
                    req.set_rcvtimeo(if short { 1 } else { 10_000 }).unwrap();
                    let reply = loop {
                        match req.recv(RecvFlags::empty()) {
                            Ok(reply) => break reply,
                            Err(Error::Again) => req.set_rcvtimeo(10_000).unwrap(),
                            Err(e) => panic!("{endpoint} round {round}: {e:?}"),
                        }
                    };
                    assert!(reply.as_slice() == &sent[..], "{endpoint} round {round}");
                }
                assert!(borrows() > before, "{endpoint}: no wait borrowed");
            });
            clients.push((client, echo));
        }
        for (client, echo) in clients {
            client.join().unwrap();
            echo.join().unwrap();
        }
    }
}
