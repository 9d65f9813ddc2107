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
