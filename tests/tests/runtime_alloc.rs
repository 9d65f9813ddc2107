//! The steady-state hot path allocates nothing per message.
//!
//! A counting global allocator (local to this test binary) counts every allocation, both per
//! thread (the application's sending and receiving threads) and process wide (which adds the
//! I/O threads' engines and everything else). After a warm-up that lets pipes, encoders and
//! read buffers reach their working size, 100,000 messages of 64 B cross a tcp connection
//! (PAIR, DEALER -> ROUTER and ROUTER -> DEALER). The receiving thread must allocate nothing;
//! the sending thread and the process only the occasional pipe chunk or read buffer (see
//! [`SENDER_FRAMES_PER_ALLOC`]), never anything per message. Sends use clones of one pre-built `Bytes` (zero copy), as a program that cares
//! about allocation would.
//!
//! `send_slice`, which copies as `zmq_send` does, is checked separately, message by message:
//! its copies come from buffers the socket recycles, with no allocation at all per message.
//!
//! The tests run one after another (a lock) so that one's traffic does not count in another.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use bytes::Bytes;
use ferromq::{Context, RecvFlags, SendFlags, Socket, SocketType};

struct Counting;

static PROCESS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static THREAD: Cell<u64> = const { Cell::new(0) };
    static THREAD_BIG: Cell<u64> = const { Cell::new(0) };
    static THREAD_LAST_BIG: Cell<usize> = const { Cell::new(0) };
}

/// Allocations of at least this many bytes also count as big: a message body's worth.
const BIG: usize = 4096;

fn count(size: usize) {
    PROCESS.fetch_add(1, Ordering::Relaxed);
    // A thread being torn down has no thread-locals left; its allocations count process wide.
    let _ = THREAD.try_with(|c| c.set(c.get() + 1));
    if size >= BIG {
        let _ = THREAD_BIG.try_with(|c| c.set(c.get() + 1));
        let _ = THREAD_LAST_BIG.try_with(|c| c.set(size));
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; counting
// touches only an atomic and a const-initialised thread-local `Cell`, neither of which
// allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn thread_count() -> u64 {
    THREAD.with(Cell::get)
}

fn thread_big_count() -> u64 {
    THREAD_BIG.with(Cell::get)
}

/// Messages measured per test.
const MESSAGES: u64 = 100_000;
/// Messages sent before counting starts.
const WARM_UP: u64 = 20_000;
const SIZE: usize = 64;
/// Most allocations tolerated in the receiving thread over the measured messages: none is
/// expected (a received frame is a slice of the engine's buffer, metadata an `Arc` clone).
const RECEIVER_LIMIT: u64 = 4;
/// Frames per allocation at least, in the sending thread and process wide. What remains is
/// not per message: a pipe keeps one spare chunk of 256 frames, so a writer that refilled
/// several chunks after waiting at SNDHWM allocates about one chunk per 256 frames per pipe
/// (two pipes per direction), and the engine replaces its 8-64 KiB read buffer when received
/// frames still hold the old one. Anything allocated per frame fails this by two orders of
/// magnitude.
const SENDER_FRAMES_PER_ALLOC: u64 = 128;
const PROCESS_FRAMES_PER_ALLOC: u64 = 64;
const TIMEOUT_MS: i32 = 10_000;

static SERIAL: Mutex<()> = Mutex::new(());

/// One message as the sender builds it: optional routing id frame, then the payload.
#[derive(Clone)]
struct Outgoing {
    envelope: Option<Bytes>,
    payload: Bytes,
}

fn socket(ctx: &Context, kind: SocketType, id: &[u8]) -> Socket {
    let mut s = ctx.socket(kind).unwrap();
    s.set_linger(0).unwrap();
    s.set_sndhwm(1_000).unwrap();
    s.set_rcvhwm(1_000).unwrap();
    s.set_rcvtimeo(TIMEOUT_MS).unwrap();
    s.set_sndtimeo(TIMEOUT_MS).unwrap();
    s.set_routing_id(id).unwrap();
    if kind == SocketType::Router {
        // Block at SNDHWM like the other types instead of dropping.
        s.set_router_mandatory(true).unwrap();
    }
    s
}

fn send_all(s: &mut Socket, out: &Outgoing, n: u64) {
    for _ in 0..n {
        if let Some(id) = &out.envelope {
            s.send(id.clone(), SendFlags::SNDMORE).unwrap();
        }
        s.send(out.payload.clone(), SendFlags::empty()).unwrap();
    }
}

/// Receives `n` whole messages; checks the payload's size.
fn recv_all(s: &mut Socket, n: u64) {
    for _ in 0..n {
        loop {
            let msg = s.recv(RecvFlags::empty()).unwrap();
            if !msg.more {
                assert_eq!(msg.len(), SIZE);
                break;
            }
        }
    }
}

/// Runs `n` messages from `tx` (on its own thread) to `rx` (on this one); returns the
/// allocations counted in the sending thread, the receiving thread and the whole process.
fn measure(tx: Socket, rx: &mut Socket, out: &Outgoing, n: u64) -> (Socket, u64, u64, u64) {
    let before = PROCESS.load(Ordering::Relaxed);
    let sender = {
        let out = out.clone();
        thread::spawn(move || {
            let mut tx = tx;
            let start = thread_count();
            send_all(&mut tx, &out, n);
            (tx, thread_count() - start)
        })
    };
    // Counted from after the spawn, which allocates on this thread.
    let receiver_before = thread_count();
    recv_all(rx, n);
    let receiver = thread_count() - receiver_before;
    let (tx, sender) = sender.join().unwrap();
    let process = PROCESS.load(Ordering::Relaxed) - before;
    (tx, sender, receiver, process)
}

/// Connects `tx_kind` to a bound `rx_kind`, warms up, measures, and checks the counts.
fn steady_state(tx_kind: SocketType, rx_kind: SocketType, envelope: Option<&'static [u8]>) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    let mut rx = socket(&ctx, rx_kind, b"rx");
    rx.bind("tcp://127.0.0.1:*").unwrap();
    let mut tx = socket(&ctx, tx_kind, b"tx");
    tx.connect(&rx.last_endpoint().unwrap()).unwrap();
    let out = Outgoing {
        envelope: envelope.map(Bytes::from_static),
        payload: Bytes::from(vec![0x5a; SIZE]),
    };
    if tx_kind == SocketType::Router {
        // A ROUTER drops messages for peers it does not know yet: hear from the peer first.
        let hello = Outgoing {
            envelope: None,
            payload: out.payload.clone(),
        };
        send_all(&mut rx, &hello, 1);
        recv_all(&mut tx, 1);
    }
    let (tx, _, _, _) = measure(tx, &mut rx, &out, WARM_UP);
    let (tx, sender, receiver, process) = measure(tx, &mut rx, &out, MESSAGES);
    eprintln!(
        "{tx_kind:?} -> {rx_kind:?}: {MESSAGES} messages of {SIZE} B: {sender} allocations in \
         the sending thread, {receiver} in the receiving thread, {process} process wide"
    );
    let frames = MESSAGES * (1 + u64::from(envelope.is_some()));
    assert!(
        receiver <= RECEIVER_LIMIT,
        "the receiving thread allocated {receiver} times"
    );
    assert!(
        sender <= frames / SENDER_FRAMES_PER_ALLOC,
        "the sending thread allocated {sender} times for {frames} frames"
    );
    assert!(
        process <= frames / PROCESS_FRAMES_PER_ALLOC,
        "the process allocated {process} times for {frames} frames"
    );
    drop(tx);
    drop(rx);
    ctx.term();
}

#[test]
fn pair_over_tcp_allocates_nothing_per_message() {
    steady_state(SocketType::Pair, SocketType::Pair, None);
}

#[test]
fn dealer_to_router_over_tcp_allocates_nothing_per_message() {
    steady_state(SocketType::Dealer, SocketType::Router, None);
}

#[test]
fn router_to_dealer_over_tcp_allocates_nothing_per_message() {
    steady_state(SocketType::Router, SocketType::Dealer, Some(b"rx"));
}

/// Messages in flight at most in the `send_slice` test: the receiver takes and drops each
/// window before the next is sent, so what the sender's buffers can reuse never depends on
/// how the two threads happen to be scheduled (with the sender running ahead up to SNDHWM,
/// the counts depended on the machine's load).
const WINDOW: u64 = 4;

/// What `send_slice` allocated in the sending thread, counted around each call.
#[derive(Debug, Default)]
struct SliceCounts {
    /// All allocations over every message.
    all: u64,
    /// Those of at least `BIG` bytes.
    big: u64,
    /// The most any one message cost.
    most: u64,
    /// The size of the sending thread's last big allocation (what it was, when one failed
    /// the test: a pipe chunk, a send buffer).
    last_big: usize,
}

/// Sends `windows` windows of `WINDOW` copies of `body` with `send_slice` from a new thread
/// over inproc; this thread receives each window, dropping each message at once as most
/// receivers do, before the next is sent (a barrier). Returns the sending thread's counts.
fn send_slices(tx: Socket, rx: &mut Socket, body: &[u8], windows: u64) -> (Socket, SliceCounts) {
    let turn = Arc::new(Barrier::new(2));
    let sender = {
        let body = body.to_vec();
        let turn = Arc::clone(&turn);
        thread::spawn(move || {
            let mut tx = tx;
            let mut counts = SliceCounts::default();
            for _ in 0..windows {
                for _ in 0..WINDOW {
                    let (all, big) = (thread_count(), thread_big_count());
                    tx.send_slice(&body, SendFlags::empty()).unwrap();
                    let cost = thread_count() - all;
                    counts.all += cost;
                    counts.big += thread_big_count() - big;
                    counts.most = counts.most.max(cost);
                }
                turn.wait();
            }
            counts.last_big = THREAD_LAST_BIG.with(Cell::get);
            (tx, counts)
        })
    };
    for _ in 0..windows {
        for _ in 0..WINDOW {
            let msg = rx.recv(RecvFlags::empty()).unwrap();
            assert_eq!(msg.as_slice(), body);
        }
        turn.wait();
    }
    sender.join().unwrap()
}

/// `send_slice` copies, as `zmq_send` does, but into buffers the socket recycles (see
/// `send_buffers`): in steady state no message costs an allocation, small or big; a fresh
/// allocation per message (the body, or a header for it) fails this on the first message.
#[test]
fn send_slice_recycles_its_copies() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = Context::new();
    for (size, windows) in [
        (64, 5_000),
        (1024, 5_000),
        (64 * 1024, 1_000),
        (256 * 1024, 250),
    ] {
        let mut rx = socket(&ctx, SocketType::Pair, b"rx");
        let endpoint = format!("inproc://send-slice-{size}-{}", std::process::id());
        rx.bind(&endpoint).unwrap();
        let mut tx = socket(&ctx, SocketType::Pair, b"tx");
        tx.connect(&endpoint).unwrap();
        let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        // Warm-up: first a burst, all in flight at once, so the socket has made the buffers a
        // window of messages in flight can need (which of them are free when the current one
        // fills depends on how far the receiver has got, so windows alone reached that set
        // only by chance, and the test failed when a measured message made it); then windows,
        // past the pipe's first chunks (256 frames each), whose spare is then reused.
        let mut tx = tx;
        let burst = (64 * 1024 / size).max(32);
        for _ in 0..burst {
            tx.send_slice(&body, SendFlags::empty()).unwrap();
        }
        for _ in 0..burst {
            rx.recv(RecvFlags::empty()).unwrap();
        }
        let (tx, _) = send_slices(tx, &mut rx, &body, 300);
        let (tx, counts) = send_slices(tx, &mut rx, &body, windows);
        let n = windows * WINDOW;
        eprintln!(
            "send_slice, {n} messages of {size} B over inproc, {WINDOW} in flight: {counts:?}"
        );
        assert_eq!(counts.big, 0, "{size} B: big allocations: {counts:?}");
        assert_eq!(counts.most, 0, "{size} B: a message allocated: {counts:?}");
        drop(tx);
        drop(rx);
    }
    ctx.term();
}

#[test]
fn the_counter_sees_allocations() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = thread_count();
    let v = std::hint::black_box(vec![1u8; 100]);
    assert_eq!(thread_count() - before, 1);
    drop(v);
}
