//! The hot path of one established connection, driven by an I/O thread.
//!
//! In: read into one large `BytesMut`, decode every complete frame (each body a zero-copy
//! `Bytes` slice of the buffer), write them all to the socket's inbound pipe, flush once. A
//! full pipe (RCVHWM) parks the refused frame and stops reading; the pipe's writer wake-up
//! (reader freed room) brings the engine back. Out: drain the outbound pipe into the
//! `Encoder` (small frames batched into one buffer, large bodies by reference) and write with
//! `write_vectored` until the kernel refuses. ZMTP commands on the data stream are handled
//! here: PING is answered with PONG, everything else is ignored as libzmq does.

use std::io::{self, IoSlice, Write};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferromq_pipe::Read as PipeRead;
use ferromq_zmtp::{Command, Decoded, Encoder, FrameDecoder};

use crate::io::framing::Framing;

use crate::error::Error;
use crate::io::frame_limit::inbound_frame_limit;
use crate::io::heartbeat::Heartbeat;
use crate::io::peer::SessionPipes;
use crate::io::recv_buffers::{self, RecvBuffers};
use crate::io::session::SessionCtl;
use crate::io::spin_backoff::{cpus_allowed, SpinBackoff};
use crate::io::stream::Stream;
use crate::option::Options;

/// Read size when the last read filled its buffer (a busy stream).
const BIG_READ: usize = 64 * 1024;
/// Read size otherwise (zeroing a big buffer per small read would cost more than it saves).
const SMALL_READ: usize = 8 * 1024;
/// Size of a fresh read buffer. Received frames are slices of it, so while any is alive the
/// buffer cannot be reused; a new one then serves many small reads rather than one.
const RECV_BUFFER: usize = 128 * 1024;
/// The longest frame header (ZMTP 1.0's: 0xFF, 8 size octets, flags), read together with
/// the end of a large body.
const NEXT_HEADER: usize = 10;
/// The read after a large frame when the next header has not come with it: enough for a
/// REQ/REP delimiter frame, a routing-id frame and a long header together, and the first
/// bytes of the body after them, which move (placed) to wherever that body's buffer is.
/// Reading only `NEXT_HEADER` bytes there left the header of a REQ/REP message one byte
/// short (the 2-byte delimiter comes first), so an 8 KiB read followed before the body's
/// own: one system call per large message more than libzmq (issue 18, session 18).
const HEAD_READ: usize = recv_buffers::HEAD_READ;
/// Stop filling the encoder above this many copied bytes (headers, small bodies) and write
/// first: the encoder's buffer grows to about this much and keeps it.
const WRITE_BATCH: usize = 256 * 1024;
/// Stop filling the encoder above this many pending bytes in all, large bodies (queued by
/// reference) included: a `writev` carries up to about this much. One 256 KiB body per
/// `sendmsg` cost the sending CPU, the bound of a 256 KiB tcp stream, about 20 us more per
/// message than four, and a wake-up of the receiver (paid on that CPU) about twice as often
/// (issue 18, session 17: per-message system calls, wake-ups and CPU in
/// docs/performance.md). A write this large may take more than a turn (`TURN_BYTES`).
const WRITE_BYTES: usize = 1024 * 1024;
/// Bodies of `LOWAT_MAX` or more stop a write's filling before one more of the same size
/// would take it past this many bytes: three 256 KiB bodies a write, one of 512 KiB. Linux's
/// `tcp_sendmsg` processes the socket's backlog (the receiver's ACKs queued while the writer
/// holds the socket, and the sends they clock) after every 16 segments it fills, and over
/// loopback a segment holds up to 64 KiB, fewer under pacing: a 1 MiB write of four 256 KiB
/// bodies had the sender, the bound of that stream, spend 14% of its CPU in that flush, and
/// 53.5 us a message against 35 us with three bodies a write (`local_thr`/`remote_thr`,
/// 20,000 messages, `perf record`; issue 18, session 31). tcp streams, medians of 7: 256 KiB
/// went from 16.7 k to 22.0 k msg/s unpinned and from 16.3 k to 23.5 k pinned, 512 KiB from
/// 6.3 k to 8.4 k; ipc did not move (its sockets have no such backlog). Smaller bodies keep
/// `WRITE_BYTES`: sixteen 64 KiB bodies a write went at 85 k msg/s pinned, twelve at 72 k.
const LARGE_WRITE: usize = 800 * 1024;
/// `WRITE_BYTES` for an engine whose connection's other end runs on the same I/O thread (a
/// process connected to itself over tcp, as the comparison matrix runs its tcp rows; see
/// `loopback_pairs.rs`): no byte of a write is read back until the write is done and the
/// peer's turn comes: at 1 MiB a write the tcp 64 KiB cells were 4-10% behind libzmq, and with
/// 256 KiB 1.07-1.3x ahead; 256 KiB messages went from 0.65x to 1.1x (issue 18, session 27).
/// An engine whose peer is another process (however many others share its thread) writes
/// the larger batches, which the 256 KiB two-process stream needs: a cap for every engine
/// that shares a thread cost local_thr/remote_thr a quarter at 64 and 256 KiB.
const SHARED_WRITE_BYTES: usize = 256 * 1024;
/// The send buffer an ipc stream asks for (`Stream::set_ipc_send_buffer`) the first time it
/// writes a body queued by reference (larger than the encoder's copy threshold), so that
/// such a write (up to `WRITE_BYTES`) can be taken whole. A Unix stream socket bounds what is
/// in flight by its sender's buffer alone (no window, no autotuning, unlike tcp), and the OS
/// default (`net.core.wmem_default`, 208 KiB on most systems) holds less than one 256 KiB
/// message: the sender stopped inside every large message until the reader had drained it,
/// each side waiting on the other once a message. The kernel doubles the request, so this
/// gives 1 MiB where `net.core.wmem_max` allows and 416 KiB on a stock system. ipc 256 KiB
/// `local_thr` went from 13.6 k to 21.6 k msg/s unpinned and from 13.9 k to 23.4 k pinned
/// (medians of 5; issue 18, session 31). Only then: with the larger buffer from the start,
/// small-message ipc rows of the comparison matrix went 4-10% slower (the sender runs further
/// ahead of its reader, out of its cache). The buffer is a limit, not memory: bytes are held
/// only while the reader lags.
const IPC_SEND_BUFFER: usize = 512 * 1024;
/// Frames taken from the outbound pipe, since the last yield, that make the engine yield the
/// CPU once before it sleeps on an empty pipe (see `Engine::pump_out`).
const YIELD_AFTER: usize = 64;
/// The first write of a large answer (request-reply) carries this many bytes of it, the
/// rest a second: the peer is woken by the first piece and wakes while the rest is copied,
/// where one write had it woken only once the whole message was in its socket, so its
/// wake-up came after the sender's copy rather than during it. libzmq's engine writes its
/// first 8 KiB batch (headers and the start of a large body) the same way.
///
/// Only in a process pinned to one CPU (as `MidFrameSpin`), where the peer's CPU is its own:
/// with two processes pinned to two CPUs, `local_lat`/`remote_lat` one-way latency went from
/// 36.4 to 33.1 us at 64 KiB over ipc (libzmq 33.3; 0.9x before), 36.5 to 35.1 over tcp, and
/// 46.7 to 44.9 at 256 KiB over tcp (medians of 5). Unpinned on two CPUs, the woken peer
/// took the CPU from the copy it was waiting for: 256 KiB over tcp went from 62.9 to 79.5 us
/// (medians of 7; issue 18, session 29).
const FIRST_PIECE: usize = 8 * 1024;
/// Answers from this size on are written in two pieces (see `FIRST_PIECE`).
const PIECE_FROM: usize = 4 * FIRST_PIECE;
/// Most slices per `writev`.
const MAX_SLICES: usize = 64;
/// Bytes an engine reads, and bytes it writes, per run before it lets the I/O thread's other
/// engines have a turn. Without a bound, one run fills the kernel's socket buffers (megabytes
/// on loopback) before the peer's engine reads any of it back, so large messages are copied
/// out of the kernel cold; libzmq's engine does one read or write per event.
const TURN_BYTES: usize = 512 * 1024;

/// How long an engine polls, awake, for the rest of a large frame that is moving right now
/// before it sleeps in the I/O thread's `epoll_wait`: after a short read of a large body in
/// request-reply (the peer is writing the rest), and after a short write with nothing
/// queued behind it (the peer is reading). An idle CPU of the VMs measured on halts
/// (`haltpoll` cpuidle with `guest_halt_poll_ns` 0), and waking it again is an
/// interrupt through the host. Over ipc a 256 KiB message does not fit the Unix socket's
/// buffer (about 214 KiB), so each hop was two writes and two reads with such a sleep and
/// wake-up on each side between them; polling for them took the pinned round trip from
/// 68.8 to 54.3 us (issue 18, session 18: docs/performance.md). Each wait is bounded and
/// only follows bytes that moved: a peer that stops mid-frame, or one that shares this CPU,
/// costs at most this much once per wake-up.
const MID_FRAME_SPIN: Duration = Duration::from_micros(20);

/// Polls awake (`MID_FRAME_SPIN`) only where that pays.
///
/// Only over ipc. A tcp echo over loopback mostly finds the whole message queued when it
/// wakes (the socket's buffer holds it), and polling there made the pinned 256 KiB round
/// trip 66.7 us against 62.1 without (medians of 11, one set): each poll answered brought a
/// segment's worth, read in more pieces.
///
/// Only in a process pinned to one CPU: its CPU is then its own, and the peer's progress
/// does not wait for this thread's. Unpinned, the peer may be waiting for this very CPU,
/// and on the 2-vCPU VM with other builds running the 256 KiB ipc round trip unpinned took
/// 82.7 us polling against 57.3 without (medians of 9), where pinned it gained a fifth.
///
/// And only while polls are answered: one that runs out before the bytes or the room come
/// skips the next 1, 2, 4 ... 64 chances, and one that is answered starts over. Unpinned
/// beside a busy loop per CPU every poll ran out and cost its whole length (256 KiB: tcp 207
/// us and ipc 218 against 125 and 139 without polling, medians of 5).
#[derive(Debug, Default)]
struct MidFrameSpin {
    /// The process is pinned to one CPU (see above); never polls otherwise.
    enabled: bool,
    backoff: SpinBackoff,
}

impl MidFrameSpin {
    fn new(stream: &Stream, pinned: bool) -> MidFrameSpin {
        MidFrameSpin {
            enabled: matches!(stream, Stream::Unix(_)) && pinned,
            backoff: SpinBackoff::default(),
        }
    }

    /// Polls `stream` for readable (writable with `out`) up to `MID_FRAME_SPIN` unless this
    /// chance is let pass; true when it became so.
    fn wait(&mut self, stream: &Stream, out: bool) -> bool {
        if !self.enabled || !self.backoff.chance() {
            return false;
        }
        let ready = stream.ready_within(out, MID_FRAME_SPIN);
        self.backoff.outcome(ready);
        ready
    }
}

/// Most frames taken from the outbound pipe for a write to count as one message (a
/// request or reply: routing ids, delimiter, body) rather than part of a stream.
const LONE_FRAMES: usize = 4;

/// Rest of a large body, still to come after a read, from which the engine asks the kernel
/// (tcp only) not to wake it before that much is queued (see `Engine::sleep_until`).
const LOWAT_FROM: usize = 64 * 1024;
/// Most bytes it waits for that way: the kernel raises an unlocked receive buffer to about
/// twice the mark, so the mark is kept to what the receive buffer holds on its own.
const LOWAT_MAX: usize = 256 * 1024;
/// A mark set once, just before the first mark for a frame of `LOWAT_MAX` or more, only for
/// the receive buffer it makes the kernel grant: `SO_RCVLOWAT` raises an unlocked receive
/// buffer to about what holds that many bytes (capped at half of `tcp_rmem`'s maximum), and
/// lowering the mark afterwards leaves the buffer as it is. Without it, a 256 KiB tcp stream's
/// receive buffer started from the body mark's own raise (about 512 KiB) and autotuning took
/// it to 1.3-2 MB in three of five runs sampled (18-33 MB in the others): a few bodies. On
/// the 16-core machine the window then closed 6-26 times per 8,000 messages and the sending
/// CPU, the bound, idled a tenth of the run (issue 18, session 18; a 4 MiB starting buffer took those runs 13-15 k to 15-17 k msg/s).
/// Autotuning gave libzmq's receiver 3-13 MB in the same stream. The buffer is a limit, not
/// memory: bytes are only held while the application reads slower than the peer sends.
/// Only for frames of at least `LOWAT_MAX`: a 64 KiB stream on the 2-core VM went no faster
/// with it (after below before in 6 of 8 interleaved rounds, medians 38.9 k against 41.6 k
/// msg/s, under load), and the 16-core machine's 64 KiB cells were at 1.3-1.4x libzmq
/// without it.
pub(crate) const WINDOW_MARK: usize = 4 * 1024 * 1024;

/// Why an engine stopped.
#[derive(Debug)]
pub(crate) enum EngineEnd {
    /// The connection failed or the peer closed it: reconnect if connecting.
    Disconnected(#[allow(dead_code)] Error),
    /// The socket closed and everything was written (or linger ran out), or the session was
    /// stopped.
    Finished,
}

/// What the engine gives back to the management task when it ends.
#[derive(Debug)]
pub(crate) struct EngineExit {
    pub pipes: SessionPipes,
    pub end: EngineEnd,
    /// A CURVE MESSAGE refused after the handshake: the `ZMQ_PROTOCOL_ERROR_ZMTP_*` code
    /// libzmq reports in a HANDSHAKE_FAILED_PROTOCOL event before the disconnect.
    pub protocol_error: Option<u32>,
}

/// What a borrower's run of a lent stream came to (`Engine::run_lent`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LentRead {
    /// Read what there was (maybe nothing), and wrote what it could.
    Read,
    /// The connection ended (the error is kept for the I/O thread, which must finish it).
    Ended,
    /// The I/O thread took the stream back, or the engine finished.
    NotLent,
}

/// What the I/O thread should do after a run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Wait for readiness or a wake-up.
    Idle,
    /// Wait, and run again at this instant if nothing happens before (a heartbeat is due,
    /// or linger runs out).
    Until(Instant),
    /// Used up its turn with work left: run again after the other ready engines.
    Again,
    /// Done: remove the engine.
    Done,
}

/// One connection's engine.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) stream: Stream,
    pipes: Option<SessionPipes>,
    ctl: Arc<SessionCtl>,
    exit: Option<tokio::sync::oneshot::Sender<EngineExit>>,
    decoder: Framing,
    encoder: Encoder,
    rbuf: BytesMut,
    /// The size of the allocation `rbuf` is a handle to.
    rbuf_size: usize,
    read_size: usize,
    /// The last read was of a frame larger than a big read: the next header is read alone.
    after_large: bool,
    /// The stream's `SO_RCVLOWAT` as this engine last set it (1: the kernel's default).
    recv_lowat: usize,
    /// `WINDOW_MARK` was set (or tried) once to grow the receive buffer.
    window_grown: bool,
    /// The first body by reference was written: `IPC_SEND_BUFFER` was asked for (a tcp
    /// stream is left alone).
    send_grown: bool,
    /// A message was delivered and nothing written since: the peer streams to us rather than
    /// waiting for a reply (see [`Engine::sleep_until`]).
    streaming: bool,
    /// A frame the inbound pipe refused (HWM), delivered first when room frees.
    stalled: Option<(Bytes, bool)>,
    readable: bool,
    writable: bool,
    /// The stream is registered for writable readiness as well as readable (see
    /// [`Engine::interest_change`]).
    pollout: bool,
    /// Writable readiness arrived while nothing waited to be written.
    idle_pollout: bool,
    /// The socket dropped its end of the outbound pipe and everything was read from it.
    out_closed: bool,
    linger_deadline: Option<Instant>,
    end: Option<EngineEnd>,
    /// A SUB socket talking to a ZMTP 3.1 peer: its 0x01/0x00 + topic messages go out as
    /// SUBSCRIBE/CANCEL commands (libzmq v3_1_encoder.cpp); to a 3.0 peer they stay messages.
    subscription_commands: bool,
    /// The last frame taken from the outbound pipe had MORE set.
    out_more: bool,
    heartbeat: Heartbeat,
    /// Why a CURVE MESSAGE was refused, for the monitor (see [`EngineExit`]).
    protocol_error: Option<u32>,
    /// When to poll awake for the rest of a frame (see [`MidFrameSpin`]).
    spin: MidFrameSpin,
    /// What the wake-up slot was last told of `streaming` (see [`Engine::note_answering`]).
    told_answering: bool,
    /// Large answers are written in two pieces (see `FIRST_PIECE`): the process is pinned to
    /// one CPU.
    pieces: bool,
    /// Most bytes pending in the encoder before it writes: `WRITE_BYTES`, or
    /// `SHARED_WRITE_BYTES` while the connection's other end runs on this I/O thread.
    write_bytes: usize,
    /// The stream is lent to a receiving thread: not registered with the I/O thread's epoll.
    lent: bool,
}

impl Engine {
    pub(crate) fn new(
        stream: Stream,
        pipes: SessionPipes,
        ctl: Arc<SessionCtl>,
        leftover: BytesMut,
        options: &Options,
        exit: tokio::sync::oneshot::Sender<EngineExit>,
    ) -> Engine {
        let pinned = cpus_allowed() == Some(1);
        let spin = MidFrameSpin::new(&stream, pinned);
        Engine {
            stream,
            pipes: Some(pipes),
            ctl,
            exit: Some(exit),
            decoder: Framing::Zmtp(FrameDecoder::new(Some(inbound_frame_limit(
                options.max_msg_size(),
            )))),
            encoder: Encoder::new(),
            rbuf_size: leftover.len() + leftover.capacity(),
            rbuf: leftover,
            read_size: SMALL_READ,
            after_large: false,
            recv_lowat: 1,
            window_grown: false,
            send_grown: false,
            streaming: false,
            stalled: None,
            readable: true,
            writable: true,
            pollout: false,
            idle_pollout: false,
            out_closed: false,
            linger_deadline: None,
            end: None,
            subscription_commands: false,
            out_more: false,
            heartbeat: Heartbeat::new(options, Instant::now()),
            protocol_error: None,
            spin,
            told_answering: false,
            pieces: pinned,
            write_bytes: WRITE_BYTES,
            lent: false,
        }
    }

    /// Lends the stream to a thread waiting for an answer (`lend.rs`): takes it out of the
    /// I/O thread's epoll and returns its fd, for the borrower to wait on. Not while a frame
    /// is held back by RCVHWM (the room wake-up is the I/O thread's), nor once ending. The
    /// rest of a write the kernel refused (a large request) goes with it: the borrower
    /// waits for room too and writes it (`Engine::run_lent`).
    pub(crate) fn lend(&mut self, registry: &mio::Registry) -> Option<RawFd> {
        if self.lent
            || self.pipes.is_none()
            || self.end.is_some()
            || self.ctl.is_stopped()
            || self.stalled.is_some()
        {
            return None;
        }
        registry.deregister(&mut self.stream).ok()?;
        self.lent = true;
        Some(self.stream.raw_fd())
    }

    /// Whether the borrower should wait for room as well: output waits for the kernel.
    pub(crate) fn lent_wants_out(&self) -> bool {
        self.lent && !self.encoder.is_empty()
    }

    /// Runs the engine for the borrower of its stream once `poll(2)` reported it readable
    /// or writable: a run's inbound half, then whatever output waits (the rest of a large
    /// request, a PONG).
    pub(crate) fn run_lent(
        &mut self,
        spares: &mut RecvBuffers,
        readable: bool,
        writable: bool,
    ) -> LentRead {
        if !self.lent || self.pipes.is_none() {
            return LentRead::NotLent;
        }
        if self.end.is_some() {
            return LentRead::Ended;
        }
        self.readable |= readable;
        self.writable |= writable;
        let mut run = self.pump_in(spares).map(|_| ());
        if run.is_ok() && !self.encoder.is_empty() {
            // To the end, not one turn (`TURN_BYTES`): a turn that ends with the outbound
            // pipe still awake leaves it so, and the socket's next send would then wake
            // nobody (the I/O thread runs again only engines it ran itself).
            run = loop {
                match self.pump_out() {
                    Ok(Step::Again) => {}
                    done => break done.map(|_| ()),
                }
            };
        }
        self.note_answering();
        match run {
            Err(e) => {
                self.end = Some(EngineEnd::Disconnected(e));
                LentRead::Ended
            }
            Ok(()) => LentRead::Read,
        }
    }

    /// The borrower gives the stream back: registered again with the I/O thread's epoll,
    /// for writable readiness too while output waits, which, edge-triggered, reports at once
    /// what came meanwhile. True when the I/O thread must run the engine (it ended, or could
    /// not be registered again).
    pub(crate) fn give_back(&mut self, registry: &mio::Registry, token: usize) -> bool {
        if !std::mem::take(&mut self.lent) || self.pipes.is_none() {
            return false;
        }
        if self.end.is_some() {
            return true;
        }
        self.pollout = !self.encoder.is_empty();
        let interest = if self.pollout {
            mio::Interest::READABLE | mio::Interest::WRITABLE
        } else {
            mio::Interest::READABLE
        };
        match registry.register(&mut self.stream, mio::Token(token), interest) {
            Ok(()) => false,
            Err(e) => {
                self.end = Some(EngineEnd::Disconnected(Error::from(e)));
                true
            }
        }
    }

    /// The I/O thread takes a lent stream back, to register it itself (its run needs
    /// writable readiness); true when it was lent.
    pub(crate) fn reclaim(&mut self) -> bool {
        std::mem::take(&mut self.lent)
    }

    /// Sends subscriptions as ZMTP 3.1 commands: for a SUB socket whose peer announced
    /// minor version 1 or later.
    pub(crate) fn set_subscription_commands(&mut self, on: bool) {
        self.subscription_commands = on;
    }

    /// CURVE: every frame in and out is a MESSAGE under the handshake's keys.
    pub(crate) fn set_curve(&mut self, codec: ferromq_zmtp::CurveCodec) {
        let (tx, rx) = codec.split();
        self.encoder.set_curve(tx);
        let decoder = match std::mem::replace(&mut self.decoder, Framing::Raw) {
            Framing::Zmtp(d) => d,
            _ => FrameDecoder::new(None),
        };
        self.decoder = Framing::Curve(decoder, rx);
    }

    /// Speaks no ZMTP (a STREAM socket's peer): no framing, no commands, no heartbeats.
    pub(crate) fn set_raw(&mut self) {
        self.decoder = Framing::Raw;
        self.set_no_commands();
    }

    /// Talks to a ZMTP 1.0 peer (libzmq 2.x): 1.0 framing, and nothing a 2.0 peer would not
    /// understand either.
    pub(crate) fn set_v1(&mut self, max_msg_size: Option<u64>) {
        self.decoder = Framing::V1(ferromq_zmtp::V1Decoder::new(Some(inbound_frame_limit(
            max_msg_size,
        ))));
        self.set_no_commands();
    }

    /// Talks to a ZMTP 2.0 peer: no heartbeats (nothing else it would not understand is sent:
    /// subscriptions stay messages, as for 3.0).
    pub(crate) fn set_no_commands(&mut self) {
        self.heartbeat = Heartbeat::new(&Options::default(), Instant::now());
    }

    pub(crate) fn pipes(&self) -> Option<&SessionPipes> {
        self.pipes.as_ref()
    }

    pub(crate) fn set_ready(&mut self, readable: bool, writable: bool) {
        self.readable |= readable;
        self.writable |= writable;
        self.idle_pollout |= writable && self.encoder.is_empty();
    }

    /// The readiness the stream should now be registered for, when it is not what it is
    /// registered for: readable always, writable only while output waits for the kernel.
    ///
    /// An engine registered for writable readiness all the time was woken once per message
    /// it sent over ipc: a Unix stream socket wakes its writer whenever the peer reads (the
    /// kernel's `unix_write_space` does not check, as TCP does, that a write was refused), so
    /// in a round trip each I/O thread woke once more than the data needed, and on two busy
    /// CPUs that wake-up competed with the threads carrying the reply (issue 18: ipc 64 B
    /// latency unpinned). libzmq likewise asks for POLLOUT only while it has bytes to write.
    /// Writable interest is asked for when a write is refused (re-registering reports
    /// readiness that came meanwhile) and dropped when writable readiness finds nothing to
    /// write, so a stream that stays backed up does not change it per write.
    pub(crate) fn interest_change(&mut self) -> Option<mio::Interest> {
        let blocked = !self.writable && !self.encoder.is_empty();
        let idle = std::mem::take(&mut self.idle_pollout);
        // A lent stream is not registered: output the kernel refused on this thread makes it
        // take the stream back (`reclaim`), whatever it was registered for before.
        if blocked && (!self.pollout || self.lent) {
            self.pollout = true;
            Some(mio::Interest::READABLE | mio::Interest::WRITABLE)
        } else if self.pollout && idle && !blocked {
            self.pollout = false;
            Some(mio::Interest::READABLE)
        } else {
            None
        }
    }

    /// Tells the engine whether its connection's other end runs on its I/O thread (see
    /// `SHARED_WRITE_BYTES`).
    pub(crate) fn set_loopback_pair(&mut self, paired: bool) {
        self.write_bytes = if paired {
            SHARED_WRITE_BYTES
        } else {
            WRITE_BYTES
        };
    }

    /// Writes what the socket just sent from the sending thread itself (the caller of
    /// [`SendThrough`]), where that write answers a message this engine delivered since its
    /// last write (request-reply, either side), nothing is left of an earlier write, and the
    /// kernel took the last one; true when everything went out, false when the I/O thread
    /// must be woken for the rest (or for an error, which ends the engine there).
    ///
    /// A round trip through an I/O thread is three wake-ups a way (the sender's I/O thread,
    /// the receiver's, the receiving application), where two threads talking over a raw tcp
    /// socket pay one: on the 2-vCPU VM, with idle CPUs halting, each was worth about 7 us of
    /// a 37 us one-way latency (issue 18). Writing from the sending thread saves the first.
    /// A stream stays with the I/O thread: after a write, `streaming` is false until a
    /// message arrives, so back-to-back sends wake the thread as before and batch there,
    /// rather than costing the sender a system call each.
    pub(crate) fn send_through(&mut self) -> bool {
        if !self.streaming
            || !self.writable
            || !self.encoder.is_empty()
            || self.out_closed
            || self.end.is_some()
            || self.ctl.is_stopped()
        {
            return false;
        }
        let out = self.pump_out();
        self.note_answering();
        match out {
            Ok(Step::Idle) if self.encoder.is_empty() => {
                #[cfg(test)]
                SENT_THROUGH.with(|n| n.set(n.get() + 1));
                true
            }
            Ok(_) => false,
            Err(e) => {
                self.end = Some(EngineEnd::Disconnected(e));
                false
            }
        }
    }

    /// Moves as much data as possible both ways.
    pub(crate) fn run(&mut self, spares: &mut RecvBuffers) -> Step {
        let step = self.run_both(spares);
        self.note_answering();
        step
    }

    /// Tells the pipes' wake-up slot whether a send now would answer what was delivered (a
    /// message arrived and nothing was written since), for [`Engine::send_through`].
    /// The slot is written only on a change, from the engine's own copy (`told_answering`), so
    /// that a run (a PUB's engines in turn) reads no line of the slot's.
    fn note_answering(&mut self) {
        if self.told_answering != self.streaming
            && let Some(pipes) = &self.pipes
        {
            pipes.wake.set_answering(self.streaming);
            self.told_answering = self.streaming;
        }
    }

    fn run_both(&mut self, spares: &mut RecvBuffers) -> Step {
        // A write from a sending thread failed (see `send_through`).
        if self.end.is_some() {
            return Step::Done;
        }
        if self.ctl.is_stopped() {
            self.end = Some(EngineEnd::Finished);
            return Step::Done;
        }
        // The clock is read only while a heartbeat clock runs.
        if self.heartbeat.armed()
            && let Err(e) = self.heartbeat.tick(Instant::now(), &mut self.encoder)
        {
            self.end = Some(EngineEnd::Disconnected(e));
            return Step::Done;
        }
        let more_in = match self.pump_in(spares) {
            Err(e) => {
                self.end = Some(EngineEnd::Disconnected(e));
                return Step::Done;
            }
            Ok(more) => more,
        };
        let step = match self.pump_out() {
            Err(e) => {
                self.end = Some(EngineEnd::Disconnected(e));
                return Step::Done;
            }
            Ok(step) => step,
        };
        if more_in && step != Step::Done {
            return Step::Again;
        }
        match (step, self.heartbeat.deadline()) {
            (Step::Idle, Some(beat)) => Step::Until(beat),
            (Step::Until(linger), Some(beat)) => Step::Until(linger.min(beat)),
            (step, _) => step,
        }
    }

    /// The linger deadline passed.
    pub(crate) fn expire(&mut self) {
        self.end = Some(EngineEnd::Finished);
    }

    /// A stream's received messages are handed over when reading stops (see
    /// [`Engine::pump_in`]): an ipc connection in a process pinned to one CPU.
    fn batch_handover(&self) -> bool {
        self.pieces && matches!(self.stream, Stream::Unix(_))
    }

    /// Reads and delivers; `Ok(true)` when it stopped at the end of its turn with the stream
    /// still readable.
    fn pump_in(&mut self, spares: &mut RecvBuffers) -> Result<bool, Error> {
        let batch_handover = self.batch_handover();
        let Some(pipes) = self.pipes.as_mut() else {
            return Ok(false);
        };
        let mut turn = 0;
        let mut flowing = false;
        loop {
            if let Some((frame, more)) = self.stalled.take()
                && let Err(frame) = pipes.to_socket.try_write(frame, more)
            {
                self.stalled = Some((frame, more));
                return Ok(false);
            }
            // A message was delivered since the last write before this pass: a stream.
            let stream_before = self.streaming;
            // Bytes still missing from the frame at the front of the buffer (exact once its
            // header is complete).
            let missing = loop {
                match self.decoder.decode(&mut self.rbuf) {
                    Ok(Decoded::Frame(frame)) => {
                        // A large body leaves with its buffer (see `release_large`).
                        self.rbuf_size =
                            spares.release_large(&mut self.rbuf, self.rbuf_size, RECV_BUFFER)?;
                        self.heartbeat.heard();
                        let (body, more) = if frame.command {
                            match handle_command(
                                frame.body,
                                &mut self.encoder,
                                &mut self.heartbeat,
                            )? {
                                Some(subscription) => (subscription, false),
                                None => continue,
                            }
                        } else {
                            (frame.body, frame.more)
                        };
                        if let Err(body) = pipes.to_socket.try_write(body, more) {
                            self.stalled = Some((body, more));
                            pipes.to_socket.flush();
                            return Ok(false);
                        }
                        // The last frame of a message: the delimiter REQ puts before its
                        // body must not count, or each request looks like a stream.
                        self.streaming |= !more;
                    }
                    Ok(Decoded::NeedMore(n)) => break n,
                    // A bad CURVE box closes this connection like a broken stream.
                    Err(crate::io::framing::FramingError::Curve(e)) => {
                        self.protocol_error = Some(e.protocol_error_code());
                        return Err(Error::ConnReset);
                    }
                    Err(_) => return Err(Error::MsgSize),
                }
            };
            // In a process pinned to one CPU the application cannot take a message while this
            // thread reads, and the flush that wakes it has it preempt this thread at once:
            // a switch there and back for every message of a stream (1.8 context switches a
            // message on the receiving side of a 64 KiB stream). Over ipc a stream's messages
            // are then handed over when the reading stops (a short read, the end of the
            // turn), the first message after a write (an answer) at once: ipc 64 KiB
            // `local_thr` pinned went from 80 k to 127 k msg/s, 1 KiB from 3.7 M to 4.8 M
            // (issue 18, session 31). Over tcp the same made 64 KiB 8% slower in three
            // alternated sets (1 KiB 12% faster), so tcp hands each read's messages over.
            if !batch_handover || !stream_before || !self.readable || turn >= TURN_BYTES {
                pipes.to_socket.flush();
            } else {
                #[cfg(test)]
                HANDOVERS_HELD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            if !self.readable {
                // In request-reply, the rest of a large body the peer is writing right now
                // is waited for awake (see `MID_FRAME_SPIN`), once per run.
                let mid_body = flowing && !self.streaming && self.rbuf.len() + missing > BIG_READ;
                if !(mid_body && self.spin.wait(&self.stream, false)) {
                    self.sleep_until(missing)?;
                    return Ok(false);
                }
                self.readable = true;
                flowing = false;
            }
            if turn >= TURN_BYTES {
                return Ok(true);
            }
            let start = self.rbuf.len();
            // A body larger than the buffer gets one buffer reserved for all of it as soon as
            // its header is known (the decoder has checked it against MAXMSGSIZE and what the
            // process can hold): one allocation and no copy of what was received, so a large
            // message arrives in linear time. The room is read into as uninitialised memory,
            // so the kernel commits it only as bytes arrive. Each read stays within the turn,
            // so a large body being received does not hold up the thread's other engines.
            //
            // A frame larger than a big read (its header is complete: `missing` is exact and
            // the frame starts the buffer) is read to its end plus at most the next frame's
            // header, not a full read beyond it: bytes of the next body read here would have
            // to be copied to wherever that body's own buffer is reserved (a 64 KiB copy per
            // 256 KiB frame was 40% of the receiving I/O thread's time, issue 18). After a
            // large frame, the next header is read on its own when the read that ended the
            // body did not bring it (up to `HEAD_READ` bytes: the header and the body's first
            // few, which are cheap to move): an extra read per large frame, far cheaper than
            // the copy.
            let large = start + missing > BIG_READ;
            let peek = !large && self.after_large && start + missing <= NEXT_HEADER;
            let want = if large {
                missing.saturating_add(NEXT_HEADER).min(TURN_BYTES)
            } else if peek {
                HEAD_READ - start
            } else {
                missing.min(TURN_BYTES).max(self.read_size)
            };
            // A large body's first byte goes half a page in (see `RecvBuffers`: the kernel's
            // copy is slow at some distances from its source).
            if self.rbuf.capacity() - start < want || (large && recv_buffers::misplaced(&self.rbuf))
            {
                let reserve = if large {
                    missing.saturating_add(NEXT_HEADER)
                } else {
                    missing.max(self.read_size)
                };
                self.rbuf_size =
                    spares.grow(&mut self.rbuf, self.rbuf_size, reserve, RECV_BUFFER, large)?;
            }
            let room = &mut self.rbuf.spare_capacity_mut()[..want];
            let n = match self.stream.read_uninit(room) {
                Ok(n) => n,
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => {
                        pipes.to_socket.flush();
                        self.readable = false;
                        self.sleep_until(missing)?;
                        return Ok(false);
                    }
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(Error::from(e)),
                },
            };
            if n == 0 {
                return Err(Error::ConnReset);
            }
            // A short read emptied the kernel's buffer: data arriving after it raises a new
            // (edge-triggered) readiness event, so the read that would only say `EAGAIN` is
            // skipped, one system call per message in a round trip.
            if n < want {
                self.readable = false;
            }
            // SAFETY: `read_uninit` returned the number of leading bytes of `room` that the
            // kernel wrote, and `room` is the spare capacity starting right at `start`, the
            // buffer's length; so bytes `start..start + n` are initialised, and
            // `n <= want <= capacity - start`.
            unsafe { self.rbuf.set_len(start + n) };
            turn += n;
            flowing = large;
            self.after_large = large;
            self.read_size = if n >= self.read_size {
                BIG_READ
            } else {
                SMALL_READ
            };
        }
    }

    /// Before waiting for readability with `missing` bytes still to come of the frame that
    /// starts the buffer: when that is the rest of a large body and the peer is streaming
    /// (a message was delivered and nothing written since), the kernel is asked to wake this
    /// engine only once it is all queued (up to `LOWAT_MAX`); otherwise at the first byte.
    ///
    /// Without it a 256 KiB frame over loopback tcp woke the receiving I/O thread about three
    /// times (2.8 `epoll_wait` and 4.8 reads per message, each read whatever had arrived
    /// since), where a raw tcp program blocking in `read` wakes one to two times; and each
    /// wake-up is paid on the sending CPU too, whose softirq delivers the data and runs the
    /// epoll callback and the cross-CPU wake-up (the 256 KiB tcp throughput is bound by the
    /// sender's CPU, issue 18).
    /// The kernel still wakes early when the window or its memory runs short, or the peer
    /// closes, so a peer that stops mid-body costs nothing more than before. Two extra system
    /// calls at most per large frame (the mark, and back to 1 once the body is in).
    ///
    /// A message that follows a write (request-reply) is read as it arrives: waiting for all
    /// of it made the receiver's copy start only after the sender's had ended, where the two
    /// overlap otherwise, and the 256 KiB round trip took 89 us instead of 60 (`local_lat`,
    /// pinned, medians of 5). In a stream the copies overlap across messages anyway.
    fn sleep_until(&mut self, missing: usize) -> Result<(), Error> {
        let large = self.rbuf.len() + missing > BIG_READ;
        let mark = if self.streaming && large && missing >= LOWAT_FROM {
            missing.min(LOWAT_MAX)
        } else {
            1
        };
        // The frame's length (it starts the buffer), not what is missing of it: the read
        // that brings a header may bring a byte of its body too.
        if mark > 1 && self.rbuf.len() + missing >= LOWAT_MAX && !self.window_grown {
            self.window_grown = true;
            // Only the buffer it grants is wanted: the mark below replaces it before any
            // wait. Not granted (not tcp, or an error), the stream goes on as before.
            if let Ok(true) = self.stream.set_recv_lowat(WINDOW_MARK) {
                self.recv_lowat = WINDOW_MARK;
            }
        }
        if mark != self.recv_lowat {
            match self.stream.set_recv_lowat(mark) {
                Ok(true) => self.recv_lowat = mark,
                Ok(false) => {}
                // A mark left above 1 could keep a later small frame waiting: the connection
                // is not usable then.
                Err(e) if self.recv_lowat != 1 => return Err(Error::from(e)),
                Err(_) => {}
            }
        }
        Ok(())
    }

    fn pump_out(&mut self) -> Result<Step, Error> {
        let Some(pipes) = self.pipes.as_mut() else {
            return Ok(Step::Done);
        };
        let mut turn = 0;
        // Frames taken from the pipe since this run last yielded the CPU (see below).
        let mut taken = 0;
        let mut lone = false;
        // This write answers a message delivered since the last one (request-reply, either
        // side), rather than feeding a one-way stream.
        let answering = self.streaming;
        // The first write of a large answer is its first piece alone (see `FIRST_PIECE`).
        let mut piece = answering && self.pieces;
        loop {
            let write_bytes = self.write_bytes;
            while !self.out_closed && room(&self.encoder, write_bytes) {
                // The pipe is declared asleep (the socket's next flush then writes this
                // thread's eventfd) only when there is nothing left to write: a pipe found
                // empty before a write stays awake, and the read after the write sees what the
                // socket sent meanwhile for free. Declaring it on every empty read made each
                // message that arrived during a write cost the sender a wake-up, and a faster
                // sender paid more of them (issue 15: PUB over tcp at N = 1).
                let (encoder, decoder) = (&mut self.encoder, &self.decoder);
                let (out_more, commands) = (&mut self.out_more, self.subscription_commands);
                let drained = pipes.from_socket.read_awake_each(|item, more| {
                    taken += 1;
                    encode_out(encoder, decoder, out_more, commands, &item, more);
                    room(encoder, write_bytes) && room_after_large(encoder, item.len())
                });
                lone = answering && drained && taken <= LONE_FRAMES;
                if !drained || !self.encoder.is_empty() {
                    break;
                }
                // Everything taken is written and the pipe is empty. After a batch (a sender
                // keeping the pipe busy), the CPU is offered to whoever else may run first,
                // and the pipe looked at again, before going to sleep: when the sending
                // thread shares this CPU (two processes pinned to two CPUs), sleeping here
                // made its next flush pay an eventfd write and a switch to this thread every
                // few hundred messages (one per 300 at 64 B over tcp, issue 18). With the CPU
                // to itself this thread gets it straight back, for one system call per batch.
                // A lone message (request-reply) never yields.
                if taken >= YIELD_AFTER {
                    taken = 0;
                    std::thread::yield_now();
                    continue;
                }
                match pipes.from_socket.read() {
                    PipeRead::Item { item, more } => encode_out(
                        &mut self.encoder,
                        &self.decoder,
                        &mut self.out_more,
                        self.subscription_commands,
                        &item,
                        more,
                    ),
                    PipeRead::Empty => break,
                    PipeRead::Closed => {
                        self.out_closed = true;
                        // The linger counts from the socket's close, which may have come
                        // before this connection was even made.
                        let linger = self.ctl.linger();
                        self.linger_deadline = self.ctl.linger_deadline().or_else(|| {
                            // A STREAM socket that closed one connection is still open: what
                            // it sent first is written in full, as libzmq does.
                            if self.decoder.is_raw() {
                                return None;
                            }
                            let ms = u64::try_from(linger).ok()?;
                            Some(Instant::now() + Duration::from_millis(ms))
                        });
                    }
                }
            }
            if self.encoder.is_empty() {
                if self.out_closed {
                    self.end = Some(EngineEnd::Finished);
                    return Ok(Step::Done);
                }
                return Ok(Step::Idle);
            }
            if !self.writable {
                // Linger bounds the wait for the kernel only: what it takes without blocking
                // goes out even at linger 0, as in libzmq, whose engine writes the messages
                // sent before close (their activation precedes the term command) before the
                // session ends it. A reply sent right before close must not vanish.
                // (The socket's own close may come later than the pipe's, for STREAM.)
                let deadline = self.linger_deadline.or_else(|| self.ctl.linger_deadline());
                if self.out_closed && deadline.is_some_and(|d| d <= Instant::now()) {
                    self.end = Some(EngineEnd::Finished);
                    return Ok(Step::Done);
                }
                return Ok(match deadline {
                    Some(d) if self.out_closed => Step::Until(d),
                    _ => Step::Idle,
                });
            }
            if !self.send_grown && self.encoder.len() > self.encoder.copied() {
                self.send_grown = true;
                let _ = self.stream.set_ipc_send_buffer(IPC_SEND_BUFFER);
            }
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let limit = if std::mem::take(&mut piece) && self.encoder.len() >= PIECE_FROM {
                #[cfg(test)]
                FIRST_PIECES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                FIRST_PIECE
            } else {
                usize::MAX
            };
            let n = self.encoder.io_slices_within(&mut slices, limit);
            match self.stream.write_vectored(&slices[..n]) {
                Ok(0) => return Err(Error::ConnReset),
                Ok(written) => {
                    // A short write on a non-blocking stream socket means the kernel's buffer
                    // filled (Linux's tcp and Unix stream sockets return short only where
                    // they would have blocked, and mark the socket so that freed room wakes
                    // the writer). For one message that answers one just delivered, with
                    // nothing queued behind it (request-reply), the write that would only
                    // say `EAGAIN` is skipped, as the read side skips the one after a short
                    // read: one system call per 256 KiB message over ipc, whose socket buffer
                    // held about 214 KiB then (issue 18, session 18; `IPC_SEND_BUFFER` since);
                    // room is first waited for awake a while where that pays (see
                    // `MID_FRAME_SPIN`). A stream retries at once: its reader drains the
                    // buffer meanwhile, and sleeping on every short write cost an ipc 1 KiB
                    // stream 8% (3.50 -> 3.22 M msg/s, 2,700 `sendmsg` fewer but 1,000 more
                    // sleeps in `epoll_wait` per 2 M messages).
                    let asked: usize = slices[..n].iter().map(|s| s.len()).sum();
                    if written < asked && lone {
                        self.writable = self.spin.wait(&self.stream, true);
                    }
                    self.streaming = false;
                    self.encoder.advance(written);
                    turn += written;
                    if turn >= TURN_BYTES {
                        return Ok(Step::Again);
                    }
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => self.writable = false,
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(Error::from(e)),
                },
            }
        }
    }

    /// Hands the pipes back to the management task.
    pub(crate) fn finish(&mut self) {
        // A receive polling the lent stream keeps it open (and the peer connected) until it
        // wakes: a shut-down stream wakes it at once, and it finds the engine finished.
        if std::mem::take(&mut self.lent) {
            self.stream.shutdown();
        }
        let end = self
            .end
            .take()
            .unwrap_or(EngineEnd::Disconnected(Error::ConnReset));
        if let Some(mut pipes) = self.pipes.take() {
            pipes.wake.clear();
            // A message cut off by the connection's end never reaches the socket.
            pipes.to_socket.rollback();
            pipes.to_socket.flush();
            if let Some(exit) = self.exit.take() {
                // The task may be gone (runtime shut down): the pipes drop then.
                let _ = exit.send(EngineExit {
                    pipes,
                    end,
                    protocol_error: self.protocol_error,
                });
            }
        }
    }
}

/// Reads whose messages waited for the end of the reading (`Engine::batch_handover`), by all
/// engines.
#[cfg(test)]
static HANDOVERS_HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Large answers written in two pieces (see `FIRST_PIECE`), by all engines.
#[cfg(test)]
static FIRST_PIECES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(test)]
thread_local! {
    /// Writes this thread made for engines (`Engine::send_through`).
    pub(crate) static SENT_THROUGH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether the engine takes another frame from the outbound pipe before it writes.
#[inline(always)]
fn room(encoder: &Encoder, write_bytes: usize) -> bool {
    encoder.copied() < WRITE_BATCH && encoder.len() < write_bytes
}

/// Whether a write that has just taken a body of `len` bytes takes another (see
/// `LARGE_WRITE`).
#[inline(always)]
fn room_after_large(encoder: &Encoder, len: usize) -> bool {
    len < LOWAT_MAX || encoder.len() + len <= LARGE_WRITE
}

/// Encodes one frame taken from the outbound pipe. A SUB socket's whole 0x01/0x00 + topic
/// message to a ZMTP 3.1 peer goes out as a SUBSCRIBE/CANCEL command (see
/// `Engine::subscription_commands`); the body's first byte is looked at only then, so the
/// common case reads the body once, in the copy that encodes it.
#[inline(always)]
fn encode_out(
    encoder: &mut Encoder,
    decoder: &Framing,
    out_more: &mut bool,
    subscription_commands: bool,
    item: &Bytes,
    more: bool,
) {
    let whole = !more && !*out_more;
    *out_more = more;
    if subscription_commands
        && whole
        && let Some(&marker) = item.first()
        && marker <= 1
    {
        let topic = item.slice(1..);
        encoder.push_command(&if marker == 1 {
            Command::Subscribe(topic)
        } else {
            Command::Cancel(topic)
        });
        return;
    }
    decoder.encode(encoder, item, more);
}

/// Answers a PING; turns SUBSCRIBE/CANCEL into the 0x01/0x00 + topic message a PUB/XPUB
/// reads (what a ZMTP 3.0 peer sends; libzmq's xpub.cpp accepts both forms the same way);
/// ignores the rest (PONG, unknown commands, commands it cannot parse).
fn handle_command(
    body: Bytes,
    encoder: &mut Encoder,
    heartbeat: &mut Heartbeat,
) -> Result<Option<Bytes>, Error> {
    let marked = |marker: u8, topic: Bytes| {
        let mut b = BytesMut::with_capacity(topic.len() + 1);
        b.extend_from_slice(&[marker]);
        b.extend_from_slice(&topic);
        Some(b.freeze())
    };
    match Command::decode(body) {
        Ok(Command::Ping { ttl, context }) => {
            heartbeat.pinged(ttl);
            encoder.push_command(&Command::Pong { context });
            Ok(None)
        }
        Ok(Command::Subscribe(topic)) => Ok(marked(1, topic)),
        Ok(Command::Cancel(topic)) => Ok(marked(0, topic)),
        Ok(Command::Error(_)) => Err(Error::ConnReset),
        Ok(_) => Ok(None),
        // An empty command frame, a name length of 0 or past the frame, a PING without its
        // two TTL bytes: RFC 37 has a peer ignore commands it does not know, and a command it
        // cannot parse is one it does not know. libzmq 4.3 ignores all of these too (it
        // answers the short PING with a PONG read from past the frame; we send none).
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::{Context, RecvFlags, SendFlags, SocketType};

    /// How many bodies of `len` bytes one write takes from a pipe that has plenty.
    fn bodies_per_write(len: usize) -> usize {
        let mut encoder = super::Encoder::new();
        let body = bytes::Bytes::from(vec![0u8; len]);
        let mut taken = 0;
        loop {
            encoder.push_frame(&body, false);
            taken += 1;
            let room =
                super::room(&encoder, super::WRITE_BYTES) && super::room_after_large(&encoder, len);
            if !room {
                return taken;
            }
        }
    }

    /// A write stays under `LARGE_WRITE` with bodies of 256 KiB or more (three of 256 KiB, one
    /// of 512 KiB or 1 MiB) and fills `WRITE_BYTES` with smaller ones (sixteen of 64 KiB).
    #[test]
    fn large_bodies_make_smaller_writes() {
        assert_eq!(bodies_per_write(256 * 1024), 3);
        assert_eq!(bodies_per_write(300 * 1024), 2);
        assert_eq!(bodies_per_write(512 * 1024), 1);
        assert_eq!(bodies_per_write(1024 * 1024), 1);
        assert_eq!(bodies_per_write(64 * 1024), 16);
        assert_eq!(bodies_per_write(128 * 1024), 8);
    }

    /// Polls that run out make the next chances pass unpolled, more of them each time, even
    /// when the stream is ready meanwhile; one answered poll starts over.
    #[test]
    fn polling_backs_off_while_it_runs_out() {
        use std::io::{Read, Write};
        let (a, mut b) = mio::net::UnixStream::pair().unwrap();
        let mut stream = super::Stream::Unix(a);
        let mut spin = super::MidFrameSpin {
            enabled: true,
            ..super::MidFrameSpin::default()
        };
        assert!(!spin.wait(&stream, false));
        b.write_all(b"x").unwrap();
        assert!(!spin.wait(&stream, false), "skipped after one miss");
        assert!(spin.wait(&stream, false));
        let mut byte = [0u8; 1];
        assert_eq!(stream.read(&mut byte).unwrap(), 1);
        // Misses now: polled, skip 1, polled, skip 2, polled. A chance is polled when none
        // is left to skip (told from the state, not the clock: a descheduled test thread
        // would make a skipped chance look as long as a poll), and a poll that runs out
        // lasts the whole spin.
        let polled: Vec<bool> = (0..6)
            .map(|_| {
                let polls = !spin.backoff.skips_next();
                let start = std::time::Instant::now();
                assert!(!spin.wait(&stream, false));
                if polls {
                    assert!(start.elapsed() >= super::MID_FRAME_SPIN);
                }
                polls
            })
            .collect();
        assert_eq!(polled, [true, false, true, false, false, true]);
    }

    const ROUNDS: usize = 4;
    const ROUND_TRIPS: usize = 1_000;

    /// A tcp endpoint to bind (any port) and an ipc one (a fresh path): the two transports
    /// an engine runs (the lend tests use them too).
    pub(crate) fn endpoints() -> [String; 2] {
        let ipc = std::env::temp_dir().join(format!(
            "ferromq-engine-{}-{:x}.sock",
            std::process::id(),
            fastrand::u64(..)
        ));
        [
            "tcp://127.0.0.1:*".to_owned(),
            format!("ipc://{}", ipc.display()),
        ]
    }

    /// A REQ connected to a REP bound at `endpoint` that a thread of its own echoes `rounds`
    /// requests on (both with linger 0 and a 10 s receive timeout).
    fn req_to_echo(
        ctx: &Context,
        endpoint: &str,
        rounds: usize,
    ) -> (
        crate::Socket,
        std::thread::JoinHandle<Result<(), crate::Error>>,
    ) {
        let mut rep = ctx.socket(SocketType::Rep).unwrap();
        let mut req = ctx.socket(SocketType::Req).unwrap();
        for s in [&mut rep, &mut req] {
            s.set_linger(0).unwrap();
            s.set_rcvtimeo(10_000).unwrap();
        }
        rep.bind(endpoint).unwrap();
        req.connect(&rep.last_endpoint().unwrap()).unwrap();
        let echo = std::thread::spawn(move || {
            for _ in 0..rounds {
                let msg = rep.recv(RecvFlags::empty())?;
                rep.send(msg, SendFlags::empty())?;
            }
            Ok(())
        });
        (req, echo)
    }

    /// In request-reply the sending thread writes its request itself (one wake-up less per
    /// hop); a one-way stream never does, so its sends still batch on the I/O thread.
    #[test]
    fn answers_are_written_by_the_sending_thread_and_streams_are_not() {
        use super::SENT_THROUGH;
        let through = || SENT_THROUGH.with(std::cell::Cell::get);
        let ctx = Context::new();
        for endpoint in endpoints() {
            let (mut req, echo) = req_to_echo(&ctx, &endpoint, ROUND_TRIPS);
            let before = through();
            for i in 0..ROUND_TRIPS {
                req.send(vec![i as u8; 100], SendFlags::empty()).unwrap();
                let reply = req.recv(RecvFlags::empty()).unwrap();
                assert_eq!(reply.as_slice(), &[i as u8; 100][..], "{endpoint}");
            }
            echo.join().unwrap().unwrap();
            // Each request after the first answers a reply; one the I/O thread was still
            // running the engine for goes through it instead.
            let answered = through() - before;
            assert!(
                answered > 0,
                "{endpoint}: no request was written by its sender"
            );

            let mut pull = ctx.socket(SocketType::Pull).unwrap();
            let mut push = ctx.socket(SocketType::Push).unwrap();
            pull.set_rcvtimeo(10_000).unwrap();
            push.set_linger(0).unwrap();
            pull.bind(&endpoint.replace("ping", "stream")).unwrap();
            push.connect(&pull.last_endpoint().unwrap()).unwrap();
            let before = through();
            let received = std::thread::spawn(move || {
                (0..ROUND_TRIPS).all(|i| {
                    pull.recv(RecvFlags::empty())
                        .is_ok_and(|m| m.as_slice() == [i as u8; 10])
                })
            });
            for i in 0..ROUND_TRIPS {
                push.send(vec![i as u8; 10], SendFlags::empty()).unwrap();
            }
            assert!(
                received.join().unwrap(),
                "{endpoint}: stream lost or reordered"
            );
            assert_eq!(
                through(),
                before,
                "{endpoint}: a stream was written by its sender"
            );
        }
        ctx.term();
    }

    /// In a process pinned to one CPU, large answers go out in two pieces (see
    /// `FIRST_PIECE`), and each arrives whole: request and reply bodies of 256 KiB and of
    /// just past the piece threshold, over tcp and ipc. The threads the context starts
    /// inherit the pinned thread's CPU set, as a process started under `taskset` does.
    #[test]
    fn large_answers_in_a_pinned_process_arrive_whole() {
        use std::sync::atomic::Ordering;
        let pinned = std::thread::spawn(|| {
            let mut one = rustix::thread::CpuSet::new();
            let cpu = rustix::thread::sched_getcpu();
            one.set(cpu);
            rustix::thread::sched_setaffinity(None, &one).unwrap();
            let before = super::FIRST_PIECES.load(Ordering::Relaxed);
            let ctx = Context::new();
            for endpoint in endpoints() {
                let (mut req, echo) = req_to_echo(&ctx, &endpoint, 40);
                for i in 0..40 {
                    let size = if i % 2 == 0 {
                        256 * 1024
                    } else {
                        super::PIECE_FROM + 1
                    };
                    let body: Vec<u8> = (0..size).map(|b| (b * 7 + i) as u8).collect();
                    req.send(body.clone(), SendFlags::empty()).unwrap();
                    let reply = req.recv(RecvFlags::empty()).unwrap();
                    assert!(
                        reply.as_slice() == &body[..],
                        "{endpoint}: reply {i} differs"
                    );
                }
                echo.join().unwrap().unwrap();
            }
            ctx.term();
            super::FIRST_PIECES.load(Ordering::Relaxed) - before
        });
        let pieces = pinned.join().unwrap();
        assert!(pieces > 0, "no answer was written in pieces");
    }

    /// In a process pinned to one CPU, a stream over ipc hands its messages over when the
    /// reading stops, and none is held back: bursts of 1 B to 100 KiB messages, each burst
    /// received whole (every body checked, in order) before the next is sent, so the last
    /// messages of a burst must be handed over with nothing after them. tcp and ipc both
    /// (only ipc holds any back).
    #[test]
    fn a_pinned_stream_hands_over_every_message() {
        use std::sync::atomic::Ordering;
        let pinned = std::thread::spawn(|| {
            let mut one = rustix::thread::CpuSet::new();
            one.set(rustix::thread::sched_getcpu());
            rustix::thread::sched_setaffinity(None, &one).unwrap();
            let ctx = Context::new();
            let mut held = Vec::new();
            for endpoint in endpoints() {
                let before = super::HANDOVERS_HELD.load(Ordering::Relaxed);
                let mut pull = ctx.socket(SocketType::Pull).unwrap();
                pull.set_rcvtimeo(10_000).unwrap();
                pull.bind(&endpoint).unwrap();
                let mut push = ctx.socket(SocketType::Push).unwrap();
                push.connect(&pull.last_endpoint().unwrap()).unwrap();
                let mut rng = fastrand::Rng::with_seed(31);
                for burst in 0..30 {
                    let sizes: Vec<usize> = (0..rng.usize(1..200))
                        .map(|_| match rng.u8(..3) {
                            0 => rng.usize(1..100),
                            1 => rng.usize(100..10_000),
                            _ => rng.usize(10_000..100_000),
                        })
                        .collect();
                    for (i, &size) in sizes.iter().enumerate() {
                        let body: Vec<u8> = (0..size).map(|b| (b + i + burst) as u8).collect();
                        push.send(body, SendFlags::empty()).unwrap();
                    }
                    for (i, &size) in sizes.iter().enumerate() {
                        let got = pull.recv(RecvFlags::empty()).unwrap();
                        let want: Vec<u8> = (0..size).map(|b| (b + i + burst) as u8).collect();
                        assert!(
                            got.as_slice() == &want[..],
                            "{endpoint}: burst {burst}, message {i} differs"
                        );
                    }
                }
                held.push(super::HANDOVERS_HELD.load(Ordering::Relaxed) - before);
            }
            ctx.term();
            held
        });
        let held = pinned.join().unwrap();
        assert!(held[1] > 0, "ipc never held a read's messages back");
    }

    /// A sender whose writes the kernel refuses (the receiver's pipe is full, so its engine
    /// stops reading) must ask for writable readiness and go on once the receiver drains:
    /// twice, so interest dropped after the first backlog is asked for again. 16 MiB is more
    /// than loopback tcp and a Unix socket buffer between them.
    #[test]
    fn backed_up_stream_resumes_when_the_reader_drains() {
        const PARTS: usize = 256;
        let ctx = Context::new();
        for endpoint in endpoints() {
            let mut pull = ctx.socket(SocketType::Pull).unwrap();
            let mut push = ctx.socket(SocketType::Push).unwrap();
            pull.set_rcvhwm(1).unwrap();
            pull.set_rcvtimeo(10_000).unwrap();
            push.set_sndhwm(PARTS as i32 + 1).unwrap();
            push.set_linger(0).unwrap();
            pull.bind(&endpoint).unwrap();
            push.connect(&pull.last_endpoint().unwrap()).unwrap();
            let body = bytes::Bytes::from(vec![3u8; 64 * 1024]);
            for round in 0..2 {
                for _ in 0..PARTS {
                    push.send(body.clone(), SendFlags::empty()).unwrap();
                }
                // Long enough for the sending engine to fill the kernel's buffers.
                std::thread::sleep(std::time::Duration::from_millis(200));
                for i in 0..PARTS {
                    let msg = pull.recv(RecvFlags::empty()).unwrap_or_else(|e| {
                        panic!("{endpoint} round {round}: message {i} of {PARTS} lost ({e})")
                    });
                    assert_eq!(msg.as_slice().len(), body.len());
                }
            }
        }
        ctx.term();
    }

    /// Ping-pong on fresh PAIR sockets whose echo side closes (linger 0) right after its last
    /// reply, as benchmark harnesses do: every reply, the last included, must arrive. The last
    /// one used to be dropped by the closing engine, so the pinger waited out RCVTIMEO.
    #[test]
    fn ping_pong_on_fresh_sockets_loses_no_reply() {
        let ctx = Context::new();
        for endpoint in endpoints() {
            for round in 0..ROUNDS {
                let mut bound = ctx.socket(SocketType::Pair).unwrap();
                let mut connected = ctx.socket(SocketType::Pair).unwrap();
                for s in [&mut bound, &mut connected] {
                    s.set_linger(0).unwrap();
                    s.set_rcvtimeo(5_000).unwrap();
                    s.set_sndhwm(1_000).unwrap();
                    s.set_rcvhwm(1_000).unwrap();
                }
                bound.bind(&endpoint).unwrap();
                connected.connect(&bound.last_endpoint().unwrap()).unwrap();
                let echo = std::thread::spawn(move || {
                    for _ in 0..ROUND_TRIPS {
                        let msg = bound.recv(RecvFlags::empty())?;
                        bound.send(msg, SendFlags::empty())?;
                    }
                    // `bound` closes here, right after the last reply.
                    Ok::<_, crate::Error>(())
                });
                let payload = bytes::Bytes::from(vec![7u8; 64]);
                for i in 0..ROUND_TRIPS {
                    connected.send(payload.clone(), SendFlags::empty()).unwrap();
                    let reply = connected.recv(RecvFlags::empty()).unwrap_or_else(|e| {
                        panic!("{endpoint} round {round}: reply {i} lost ({e})")
                    });
                    assert_eq!(reply.as_slice(), &payload[..]);
                }
                echo.join().unwrap().unwrap();
            }
        }
        ctx.term();
    }
}
