//! Socket monitoring as `zmq_socket_monitor` does it: events from the management layer go
//! to a PAIR socket bound at an inproc endpoint, in libzmq's two-frame binary format, so a
//! program (or a C caller through the ABI) reads them exactly as it would from libzmq.
//!
//! Frame 1 is 6 bytes: the event number (u16) then its value (u32), both in native byte
//! order; frame 2 is the endpoint the event concerns. Events are sent without waiting: a
//! monitor nobody reads, or that is behind by its HWM, loses events rather than stalling
//! the connections it watches.
//!
//! ```
//! use ferromq::monitor::{MonitorEvent, EVENT_ACCEPTED, EVENT_HANDSHAKE_SUCCEEDED};
//! use ferromq::{Context, RecvFlags, SocketType};
//! let ctx = Context::new();
//! let mut server = ctx.socket(SocketType::Rep)?;
//! server.monitor("inproc://doc-monitor-mod", EVENT_ACCEPTED | EVENT_HANDSHAKE_SUCCEEDED)?;
//! let mut events = ctx.socket(SocketType::Pair)?;
//! events.connect("inproc://doc-monitor-mod")?;
//! server.bind("tcp://127.0.0.1:*")?;
//! let mut client = ctx.socket(SocketType::Req)?;
//! client.connect(&server.last_endpoint()?)?;
//! let first = MonitorEvent::parse(&events.recv_multipart(RecvFlags::empty())?)?;
//! let second = MonitorEvent::parse(&events.recv_multipart(RecvFlags::empty())?)?;
//! assert_eq!((first.event, second.event), (EVENT_ACCEPTED, EVENT_HANDSHAKE_SUCCEEDED));
//! # Ok::<(), ferromq::Error>(())
//! ```

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::error::{Error, Result};

/// A connection was established; value: its fd.
pub const EVENT_CONNECTED: u16 = 0x0001;
/// A connect is in progress and will complete later; value: the errno (EINPROGRESS).
pub const EVENT_CONNECT_DELAYED: u16 = 0x0002;
/// A reconnect was scheduled; value: the reconnect interval in ms.
pub const EVENT_CONNECT_RETRIED: u16 = 0x0004;
/// Listening on an endpoint; value: the listening fd.
pub const EVENT_LISTENING: u16 = 0x0008;
/// A bind failed; value: its errno.
pub const EVENT_BIND_FAILED: u16 = 0x0010;
/// A connection was accepted; value: its fd.
pub const EVENT_ACCEPTED: u16 = 0x0020;
/// An accept failed; value: its errno.
pub const EVENT_ACCEPT_FAILED: u16 = 0x0040;
/// A listening socket was closed; value: its fd.
pub const EVENT_CLOSED: u16 = 0x0080;
/// Closing a socket failed; value: its errno.
pub const EVENT_CLOSE_FAILED: u16 = 0x0100;
/// An established session ended; value: its fd.
pub const EVENT_DISCONNECTED: u16 = 0x0200;
/// The monitor was stopped; the last event it sends.
pub const EVENT_MONITOR_STOPPED: u16 = 0x0400;
/// The handshake failed for a reason other than protocol or auth; value: the errno.
pub const EVENT_HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
/// The handshake completed.
pub const EVENT_HANDSHAKE_SUCCEEDED: u16 = 0x1000;
/// The peer broke the protocol in the handshake; value: a `ZMQ_PROTOCOL_ERROR_*` code.
pub const EVENT_HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
/// The security mechanism refused the peer; value: the ZAP status code.
pub const EVENT_HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
/// Every event above.
pub const EVENT_ALL: u16 = 0xFFFF;

/// One monitor event as read from a monitor socket.
///
/// ```
/// use ferromq::monitor::{MonitorEvent, EVENT_ALL, EVENT_LISTENING};
/// use ferromq::{Context, RecvFlags, SocketType};
/// let ctx = Context::new();
/// let mut s = ctx.socket(SocketType::Pull)?;
/// s.monitor("inproc://doc-monitor-event", EVENT_ALL)?;
/// let mut events = ctx.socket(SocketType::Pair)?;
/// events.connect("inproc://doc-monitor-event")?;
/// s.bind("tcp://127.0.0.1:*")?;
/// let ev = MonitorEvent::parse(&events.recv_multipart(RecvFlags::empty())?)?;
/// assert_eq!(ev.event, EVENT_LISTENING);
/// assert!(ev.value > 0); // the listening fd
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorEvent {
    /// One of the `EVENT_*` numbers.
    pub event: u16,
    /// The event's value (fd, errno, interval or protocol error code).
    pub value: u32,
    /// The endpoint it concerns.
    pub endpoint: String,
}

impl MonitorEvent {
    /// Parses the two frames of one event; `EPROTO`-like `Invalid` when they are not one.
    ///
    /// ```
    /// use ferromq::monitor::{MonitorEvent, EVENT_CONNECT_RETRIED};
    /// use ferromq::Bytes;
    /// let mut head = EVENT_CONNECT_RETRIED.to_ne_bytes().to_vec();
    /// head.extend_from_slice(&200u32.to_ne_bytes()); // the next retry interval, ms
    /// let ev = MonitorEvent::parse(&[Bytes::from(head), Bytes::from("tcp://127.0.0.1:5555")])?;
    /// assert_eq!((ev.event, ev.value), (EVENT_CONNECT_RETRIED, 200));
    /// assert!(MonitorEvent::parse(&[Bytes::from("short")]).is_err());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn parse(frames: &[Bytes]) -> Result<MonitorEvent> {
        let [head, endpoint] = frames else {
            return Err(Error::Invalid);
        };
        let (Some(ev), Some(val)) = (head.get(0..2), head.get(2..6)) else {
            return Err(Error::Invalid);
        };
        if head.len() != 6 {
            return Err(Error::Invalid);
        }
        let event = u16::from_ne_bytes([ev[0], ev[1]]);
        let value = u32::from_ne_bytes([val[0], val[1], val[2], val[3]]);
        let endpoint = std::str::from_utf8(endpoint)
            .map_err(|_| Error::Invalid)?
            .to_owned();
        Ok(MonitorEvent {
            event,
            value,
            endpoint,
        })
    }

    /// The two frames libzmq sends for this event.
    ///
    /// ```
    /// use ferromq::monitor::{MonitorEvent, EVENT_CLOSED};
    /// let ev = MonitorEvent { event: EVENT_CLOSED, value: 7, endpoint: "ipc:///tmp/x".into() };
    /// let frames = ev.to_frames();
    /// assert_eq!(frames[0].len(), 6);
    /// assert_eq!(MonitorEvent::parse(&frames)?, ev);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn to_frames(&self) -> [Bytes; 2] {
        let mut head = Vec::with_capacity(6);
        head.extend_from_slice(&self.event.to_ne_bytes());
        head.extend_from_slice(&self.value.to_ne_bytes());
        [Bytes::from(head), Bytes::from(self.endpoint.clone())]
    }
}

/// Where a socket's events go: shared by the socket and its management tasks.
#[derive(Debug, Default)]
pub(crate) struct MonitorHub {
    sink: Mutex<Option<Sink>>,
}

/// Where events are written: the PAIR socket `zmq_socket_monitor` binds, which the socket
/// layer creates and installs, so that this module (used by the connection tasks) knows
/// nothing about sockets.
pub(crate) trait EventSink: Send + std::fmt::Debug {
    /// Sends one event's two frames without waiting; a monitor with no reader or at its HWM
    /// loses the event rather than blocking the connection that raised it.
    fn offer(&mut self, frames: [Bytes; 2]);
}

#[derive(Debug)]
struct Sink {
    out: Box<dyn EventSink>,
    events: u16,
}

impl Sink {
    fn send(&mut self, event: &MonitorEvent) {
        if self.events & event.event != 0 {
            self.out.offer(event.to_frames());
        }
    }
}

impl MonitorHub {
    pub(crate) fn new() -> Arc<MonitorHub> {
        Arc::new(MonitorHub::default())
    }

    /// Starts sending the `events` asked for to `out`. The caller has stopped any monitor
    /// running before (`stop`), so it got MONITOR_STOPPED before its endpoint was reused.
    pub(crate) fn install(&self, out: Box<dyn EventSink>, events: u16) -> Result<()> {
        let mut slot = self.sink.lock().map_err(|_| Error::Fault)?;
        *slot = Some(Sink { out, events });
        Ok(())
    }

    /// Stops monitoring, sending MONITOR_STOPPED if it was asked for.
    pub(crate) fn stop(&self) {
        let old = self.sink.lock().ok().and_then(|mut s| s.take());
        if let Some(mut sink) = old {
            sink.send(&MonitorEvent {
                event: EVENT_MONITOR_STOPPED,
                value: 0,
                endpoint: String::new(),
            });
        }
    }

    /// Reports one event if a monitor wants it.
    pub(crate) fn emit(&self, event: u16, value: u32, endpoint: &str) {
        let Ok(mut slot) = self.sink.lock() else {
            return;
        };
        if let Some(sink) = slot.as_mut()
            && sink.events & event != 0
        {
            sink.send(&MonitorEvent {
                event,
                value,
                endpoint: endpoint.to_owned(),
            });
        }
    }

    /// Reports an event whose value is an errno.
    pub(crate) fn emit_errno(&self, event: u16, error: &Error, endpoint: &str) {
        self.emit(event, u32::try_from(error.errno()).unwrap_or(0), endpoint);
    }

    /// Reports an event whose value is a file descriptor.
    pub(crate) fn emit_fd(&self, event: u16, fd: std::os::fd::RawFd, endpoint: &str) {
        self.emit(event, u32::try_from(fd).unwrap_or(u32::MAX), endpoint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, RecvFlags, SocketType};

    #[test]
    fn frames_round_trip_and_bad_frames_are_refused() {
        let ev = MonitorEvent {
            event: EVENT_HANDSHAKE_FAILED_PROTOCOL,
            value: 0x1100_0001,
            endpoint: "tcp://127.0.0.1:5555".into(),
        };
        let frames = ev.to_frames();
        assert_eq!(frames[0].len(), 6);
        assert_eq!(MonitorEvent::parse(&frames).unwrap(), ev);
        assert_eq!(
            MonitorEvent::parse(&frames[..1]),
            Err(Error::Invalid),
            "one frame"
        );
        let short = [Bytes::from_static(b"\x01\x00\x00"), frames[1].clone()];
        assert_eq!(MonitorEvent::parse(&short), Err(Error::Invalid));
        let bad_utf8 = [frames[0].clone(), Bytes::from_static(b"\xff")];
        assert_eq!(MonitorEvent::parse(&bad_utf8), Err(Error::Invalid));
    }

    #[test]
    fn only_inproc_and_masked_events_and_stop_event() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Dealer).unwrap();
        assert_eq!(
            s.monitor("tcp://127.0.0.1:0", EVENT_ALL),
            Err(Error::ProtoNoSupport)
        );
        s.monitor("inproc://unit-mon", EVENT_LISTENING | EVENT_MONITOR_STOPPED)
            .unwrap();
        let mut m = ctx.socket(SocketType::Pair).unwrap();
        m.connect("inproc://unit-mon").unwrap();
        m.set_rcvtimeo(2000).unwrap();
        s.bind("inproc://unit-mon-target").unwrap();
        // inproc binds emit nothing; a tcp bind emits LISTENING.
        s.bind("tcp://127.0.0.1:*").unwrap();
        let ev = MonitorEvent::parse(&m.recv_multipart(RecvFlags::empty()).unwrap()).unwrap();
        assert_eq!(ev.event, EVENT_LISTENING);
        assert_eq!(ev.endpoint, s.last_endpoint().unwrap());
        drop(s);
        let ev = MonitorEvent::parse(&m.recv_multipart(RecvFlags::empty()).unwrap()).unwrap();
        assert_eq!(ev.event, EVENT_MONITOR_STOPPED);
    }
}
