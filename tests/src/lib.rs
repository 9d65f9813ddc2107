//! Shared helpers for the integration tests.

use std::io::IoSlice;
use std::time::{Duration, Instant};

use ferromq::monitor::MonitorEvent;
use ferromq::{RecvFlags, Socket};
use ferromq_zmtp::Encoder;

/// How long a test waits for a monitor event before it fails.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads monitor events from `m` (a PAIR connected to a socket's monitor endpoint, with a
/// short RCVTIMEO) until one of kind `want` arrives; returns it and the kinds seen before.
/// Panics after [`EVENT_TIMEOUT`].
pub fn wait_for_event(m: &mut Socket, want: u16) -> (MonitorEvent, Vec<u16>) {
    let until = Instant::now() + EVENT_TIMEOUT;
    let mut seen = Vec::new();
    while Instant::now() < until {
        let Ok(frames) = m.recv_multipart(RecvFlags::empty()) else {
            continue;
        };
        let ev = MonitorEvent::parse(&frames).expect("two-frame event");
        if ev.event == want {
            return (ev, seen);
        }
        seen.push(ev.event);
    }
    panic!("no event {want:#06x} within {EVENT_TIMEOUT:?}; saw {seen:x?}");
}

/// Everything queued in `encoder`, drained as a vectored write would.
pub fn drain_encoder(encoder: &mut Encoder) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoder.len());
    while !encoder.is_empty() {
        let mut slices = [IoSlice::new(&[]); 8];
        let n = encoder.io_slices(&mut slices);
        let before = out.len();
        for slice in &slices[..n] {
            out.extend_from_slice(slice);
        }
        assert!(out.len() > before, "a non-empty encoder handed out nothing");
        encoder.advance(out.len() - before);
    }
    out
}

/// The port of a `tcp://host:port` endpoint (as `last_endpoint` returns it).
pub fn tcp_port(endpoint: &str) -> u16 {
    endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("tcp endpoint with a port")
}

/// A socket under test in the wire tests: ferromq's or libzmq's, behind the same calls, so one
/// scenario runs against both.
pub trait Under {
    /// Receives one whole message.
    fn recv_parts(&mut self) -> Vec<Vec<u8>>;
    /// Sends one message of these parts.
    fn send_parts(&mut self, parts: &[&[u8]]);
    /// ZMQ_SUBSCRIBE (`on`) or ZMQ_UNSUBSCRIBE.
    fn subscribe(&mut self, topic: &[u8], on: bool);
}

impl Under for Socket {
    fn recv_parts(&mut self) -> Vec<Vec<u8>> {
        let parts = self.recv_multipart(RecvFlags::empty()).unwrap();
        parts.iter().map(|p| p.to_vec()).collect()
    }
    fn send_parts(&mut self, parts: &[&[u8]]) {
        self.send_multipart(
            parts.iter().map(|p| p.to_vec()),
            ferromq::SendFlags::empty(),
        )
        .unwrap();
    }
    fn subscribe(&mut self, topic: &[u8], on: bool) {
        if on {
            self.set_subscribe(topic).unwrap();
        } else {
            self.set_unsubscribe(topic).unwrap();
        }
    }
}

impl Under for zmq::Socket {
    fn recv_parts(&mut self) -> Vec<Vec<u8>> {
        self.recv_multipart(0).unwrap()
    }
    fn send_parts(&mut self, parts: &[&[u8]]) {
        self.send_multipart(parts.iter(), 0).unwrap();
    }
    fn subscribe(&mut self, topic: &[u8], on: bool) {
        if on {
            self.set_subscribe(topic).unwrap();
        } else {
            self.set_unsubscribe(topic).unwrap();
        }
    }
}

/// Asserts that nothing arrives on a raw peer's stream for `ms` (no PING, no rest of a 3.x
/// greeting), then restores a 5 s read timeout.
pub fn assert_quiet(stream: &mut std::net::TcpStream, ms: u64) {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_millis(ms)))
        .unwrap();
    let mut b = [0u8; 1];
    let r = stream.read(&mut b);
    assert!(
        matches!(&r, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "unexpected bytes: {r:?} {b:?}"
    );
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
}

/// Every `.rs` file under `dir`, recursively (the source scans of src/: layout, doc examples).
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
