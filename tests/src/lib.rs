//! Shared helpers for the integration tests.

use std::time::{Duration, Instant};

use ferromq::monitor::MonitorEvent;
use ferromq::{RecvFlags, Socket};

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
