//! `zmq_proxy` and `zmq_proxy_steerable` (libzmq 4.3.5 src/proxy.cpp): shuttle whole
//! messages between a frontend and a backend socket, copying each part to an optional
//! capture socket, until a socket fails (ETERM when the context shuts down) or the control
//! socket says TERMINATE.
//!
//! ```text
//!   frontend ──msg──> backend        control: PAUSE | RESUME | TERMINATE | STATISTICS
//!   frontend <──msg── backend        STATISTICS -> 8 u64 frames: frontend msgs in, bytes in,
//!        └──> capture (copy)          msgs out, bytes out, then the same for the backend
//! ```
//!
//! A message moves only when its destination can take it (POLLOUT), so a backend without
//! peers holds messages back instead of blocking the other direction.

use bytes::Bytes;
use ferromq_zmtp::SocketType;

use crate::api::flags::{RecvFlags, SendFlags};
use crate::api::multipart::Multipart;
use crate::api::poll::{poll, PollItem};
use crate::api::socket::Socket;
use crate::error::Result;
use crate::{POLLIN, POLLOUT};

/// Message and byte counts of one proxied socket (libzmq's `zmq_socket_stats_t`).
///
/// ```
/// use ferromq::{Context, RecvFlags, SendFlags, SocketStats, SocketType};
/// let ctx = Context::new();
/// let (mut front, mut back) = (ctx.socket(SocketType::Pull)?, ctx.socket(SocketType::Push)?);
/// front.bind("inproc://doc-stats-in")?;
/// back.bind("inproc://doc-stats-out")?;
/// let mut control = ctx.socket(SocketType::Rep)?;
/// control.bind("inproc://doc-stats-ctl")?;
/// let proxy = std::thread::spawn(move || {
///     ferromq::proxy_steerable(&mut front, &mut back, None, Some(&mut control))
/// });
/// let mut input = ctx.socket(SocketType::Push)?;
/// input.connect("inproc://doc-stats-in")?;
/// let mut output = ctx.socket(SocketType::Pull)?;
/// output.connect("inproc://doc-stats-out")?;
/// input.send("12345", SendFlags::empty())?;
/// output.recv(RecvFlags::empty())?;
/// let mut steer = ctx.socket(SocketType::Req)?;
/// steer.connect("inproc://doc-stats-ctl")?;
/// steer.send("STATISTICS", SendFlags::empty())?;
/// // Eight u64 figures: the frontend's msg_in, bytes_in, msg_out, bytes_out, then the backend's.
/// let figures = steer.recv_multipart(RecvFlags::empty())?;
/// let n = |i: usize| u64::from_ne_bytes(figures[i][..8].try_into().unwrap_or([0; 8]));
/// let frontend = SocketStats { msg_in: n(0), bytes_in: n(1), msg_out: n(2), bytes_out: n(3) };
/// assert_eq!(frontend, SocketStats { msg_in: 1, bytes_in: 5, ..SocketStats::default() });
/// steer.send("TERMINATE", SendFlags::empty())?;
/// steer.recv(RecvFlags::empty())?;
/// proxy.join().expect("proxy thread")?;
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// Messages received.
    pub msg_in: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Messages sent.
    pub msg_out: u64,
    /// Bytes sent.
    pub bytes_out: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    Paused,
    Terminated,
}

/// Whether `socket` can take a message now.
fn writable(socket: &mut Socket) -> Result<bool> {
    let mut item = [PollItem::socket_mut(socket, POLLOUT)];
    poll(&mut item, 0)?;
    Ok(item[0].is_writable())
}

/// Moves one whole message from `from` to `to` (`None`: back out through `from`, for the
/// single-socket proxy) and its parts to `capture`; returns the message's total size.
fn forward(
    from: &mut Socket,
    mut to: Option<&mut Socket>,
    capture: &mut Option<&mut Socket>,
) -> Result<u64> {
    let mut size = 0u64;
    loop {
        let msg = from.recv_frame(RecvFlags::DONTWAIT)?;
        let more = msg.more;
        size += msg.data.len() as u64;
        let flags = if more {
            SendFlags::SNDMORE
        } else {
            SendFlags::empty()
        };
        if let Some(c) = capture.as_deref_mut() {
            c.send(msg.data.clone(), flags)?;
        }
        match to.as_deref_mut() {
            Some(to) => to.send(msg.data, flags)?,
            None => from.send(msg.data, flags)?,
        }
        if !more {
            return Ok(size);
        }
    }
}

fn stats_reply(control: &mut Socket, front: SocketStats, back: SocketStats) -> Result<()> {
    let values = [
        front.msg_in,
        front.bytes_in,
        front.msg_out,
        front.bytes_out,
        back.msg_in,
        back.bytes_in,
        back.msg_out,
        back.bytes_out,
    ];
    let parts: Multipart = values
        .iter()
        .map(|v| Bytes::copy_from_slice(&v.to_ne_bytes()))
        .collect();
    Ok(control.send_multipart(parts, SendFlags::empty())?)
}

/// Reads one control command and applies it. Unknown commands are ignored (libzmq 4.3.5
/// asserts on them). As libzmq 4.3.5, a REP control socket gets a reply to every command
/// (STATISTICS its figures, anything else an empty message), so a REQ client can steer the
/// proxy without breaking its send/receive alternation; other types get only STATISTICS.
fn handle_control(
    control: &mut Socket,
    state: &mut State,
    front: SocketStats,
    back: SocketStats,
) -> Result<()> {
    let parts = control.recv_multipart(RecvFlags::DONTWAIT)?;
    let command = parts.first().map(|p| &p[..]).unwrap_or_default();
    match command {
        b"STATISTICS" => return stats_reply(control, front, back),
        b"PAUSE" => *state = State::Paused,
        b"RESUME" => *state = State::Active,
        b"TERMINATE" => *state = State::Terminated,
        _ => {}
    }
    if control.socket_type() == SocketType::Rep {
        control.send(Bytes::new(), SendFlags::empty())?;
    }
    Ok(())
}

/// `zmq_proxy`: runs until a socket fails; returns that error (`Error::Term` once the
/// context is shut down).
///
/// ```
/// use ferromq::{Context, Error, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let (mut front, mut back) = (ctx.socket(SocketType::Router)?, ctx.socket(SocketType::Dealer)?);
/// front.bind("inproc://doc-proxy-front")?;
/// back.bind("inproc://doc-proxy-back")?;
/// // A request-reply broker: clients' REQs to the ROUTER, workers' REPs behind the DEALER.
/// let broker = std::thread::spawn(move || ferromq::proxy(&mut front, &mut back, None));
/// let mut worker = ctx.socket(SocketType::Rep)?;
/// worker.connect("inproc://doc-proxy-back")?;
/// let mut client = ctx.socket(SocketType::Req)?;
/// client.connect("inproc://doc-proxy-front")?;
/// client.send("2+2", SendFlags::empty())?;
/// assert_eq!(worker.recv(RecvFlags::empty())?.as_slice(), b"2+2");
/// worker.send("4", SendFlags::empty())?;
/// assert_eq!(client.recv(RecvFlags::empty())?.as_slice(), b"4");
/// ctx.shutdown(); // the proxy returns ETERM
/// assert_eq!(broker.join().expect("broker thread"), Err(Error::Term));
/// # Ok::<(), ferromq::Error>(())
/// ```
pub fn proxy(
    frontend: &mut Socket,
    backend: &mut Socket,
    capture: Option<&mut Socket>,
) -> Result<()> {
    proxy_steerable(frontend, backend, capture, None)
}

/// `zmq_proxy_steerable`: as [`proxy`], also obeying PAUSE, RESUME, TERMINATE and
/// STATISTICS on `control`. Returns `Ok(())` after TERMINATE.
///
/// ```
/// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let (mut front, mut back) = (ctx.socket(SocketType::Pull)?, ctx.socket(SocketType::Push)?);
/// front.bind("inproc://doc-steer-in")?;
/// back.bind("inproc://doc-steer-out")?;
/// let mut control = ctx.socket(SocketType::Pair)?;
/// control.bind("inproc://doc-steer-ctl")?;
/// let mut capture = ctx.socket(SocketType::Push)?;
/// capture.bind("inproc://doc-steer-cap")?;
/// let proxy = std::thread::spawn(move || {
///     ferromq::proxy_steerable(&mut front, &mut back, Some(&mut capture), Some(&mut control))
/// });
/// let mut tap = ctx.socket(SocketType::Pull)?;
/// tap.connect("inproc://doc-steer-cap")?;
/// let mut input = ctx.socket(SocketType::Push)?;
/// input.connect("inproc://doc-steer-in")?;
/// let mut output = ctx.socket(SocketType::Pull)?;
/// output.connect("inproc://doc-steer-out")?;
/// input.send("m", SendFlags::empty())?;
/// assert_eq!(output.recv(RecvFlags::empty())?.as_slice(), b"m");
/// assert_eq!(tap.recv(RecvFlags::empty())?.as_slice(), b"m"); // every message, copied
/// let mut steer = ctx.socket(SocketType::Pair)?;
/// steer.connect("inproc://doc-steer-ctl")?;
/// steer.send("TERMINATE", SendFlags::empty())?;
/// proxy.join().expect("proxy thread")?; // Ok(()) after TERMINATE
/// # Ok::<(), ferromq::Error>(())
/// ```
pub fn proxy_steerable(
    frontend: &mut Socket,
    backend: &mut Socket,
    mut capture: Option<&mut Socket>,
    mut control: Option<&mut Socket>,
) -> Result<()> {
    let mut state = State::Active;
    let mut front = SocketStats::default();
    let mut back = SocketStats::default();
    while state != State::Terminated {
        let (readable, control_in) = {
            let mut items = vec![
                PollItem::socket_mut(frontend, POLLIN),
                PollItem::socket_mut(backend, POLLIN),
            ];
            if let Some(c) = control.as_deref_mut() {
                items.push(PollItem::socket_mut(c, POLLIN));
            }
            poll(&mut items, -1)?;
            let control_in = items.get(2).is_some_and(PollItem::is_readable);
            ([items[0].is_readable(), items[1].is_readable()], control_in)
        };
        let front_in = readable[0] && writable(backend)?;
        let back_in = readable[1] && writable(frontend)?;
        if control_in {
            if let Some(c) = control.as_deref_mut() {
                handle_control(c, &mut state, front, back)?;
            }
            continue;
        }
        if state != State::Active {
            // Paused: only the control socket is served; don't spin on pending input.
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        if front_in {
            let n = forward(frontend, Some(backend), &mut capture)?;
            front.msg_in += 1;
            front.bytes_in += n;
            back.msg_out += 1;
            back.bytes_out += n;
        }
        if back_in {
            let n = forward(backend, Some(frontend), &mut capture)?;
            back.msg_in += 1;
            back.bytes_in += n;
            front.msg_out += 1;
            front.bytes_out += n;
        }
        if !front_in && !back_in {
            // Input is waiting but its destination is full: let it drain.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    Ok(())
}

/// `zmq_proxy_steerable` with one socket as both frontend and backend, which libzmq allows
/// (a ROUTER that routes between its own peers, a DEALER echoing to its peers): every message
/// the socket receives goes back out through it. libzmq skips the POLLOUT check then, so a
/// message waits on the socket's own send (HWM, timeout) instead. Counts go to the frontend's
/// in and the backend's out, as libzmq counts them.
///
/// ```
/// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut echo = ctx.socket(SocketType::Dealer)?;
/// echo.bind("inproc://doc-loopback")?;
/// let mut control = ctx.socket(SocketType::Pair)?;
/// control.bind("inproc://doc-loopback-ctl")?;
/// let proxy = std::thread::spawn(move || {
///     ferromq::proxy_steerable_loopback(&mut echo, None, Some(&mut control))
/// });
/// let mut peer = ctx.socket(SocketType::Dealer)?;
/// peer.connect("inproc://doc-loopback")?;
/// peer.send("echo me", SendFlags::empty())?;
/// assert_eq!(peer.recv(RecvFlags::empty())?.as_slice(), b"echo me");
/// let mut steer = ctx.socket(SocketType::Pair)?;
/// steer.connect("inproc://doc-loopback-ctl")?;
/// steer.send("TERMINATE", SendFlags::empty())?;
/// proxy.join().expect("proxy thread")?;
/// # Ok::<(), ferromq::Error>(())
/// ```
pub fn proxy_steerable_loopback(
    socket: &mut Socket,
    mut capture: Option<&mut Socket>,
    mut control: Option<&mut Socket>,
) -> Result<()> {
    let mut state = State::Active;
    let mut front = SocketStats::default();
    let mut back = SocketStats::default();
    while state != State::Terminated {
        let (socket_in, control_in) = {
            let mut items = vec![PollItem::socket_mut(socket, POLLIN)];
            if let Some(c) = control.as_deref_mut() {
                items.push(PollItem::socket_mut(c, POLLIN));
            }
            poll(&mut items, -1)?;
            (
                items[0].is_readable(),
                items.get(1).is_some_and(PollItem::is_readable),
            )
        };
        if control_in {
            if let Some(c) = control.as_deref_mut() {
                handle_control(c, &mut state, front, back)?;
            }
            continue;
        }
        if state != State::Active {
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        if socket_in {
            let n = forward(socket, None, &mut capture)?;
            front.msg_in += 1;
            front.bytes_in += n;
            back.msg_out += 1;
            back.bytes_out += n;
        }
    }
    Ok(())
}
