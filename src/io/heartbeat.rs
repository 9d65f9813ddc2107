//! ZMTP 3.1 connection heartbeats (ZMQ_HEARTBEAT_IVL, _TTL, _TIMEOUT), as libzmq runs them.
//!
//! Three clocks per connection, all off unless asked for, so the hot path of a connection
//! without heartbeats never reads the clock:
//! - every HEARTBEAT_IVL a PING goes out, carrying our HEARTBEAT_TTL;
//! - after a PING, if nothing at all arrives within HEARTBEAT_TIMEOUT (default: the
//!   interval), the connection is dead;
//! - a PING that arrives with a TTL gives the peer that long to send anything else.
//!
//! Any frame received stops the second and third clocks, exactly as libzmq's
//! `decode_and_push` cancels both timers; a PING then restarts the TTL clock.

use std::time::{Duration, Instant};

use bytes::Bytes;
use ferromq_zmtp::{Command, Encoder};

use crate::error::Error;
use crate::option::Options;

/// One connection's heartbeat state.
#[derive(Debug)]
pub(crate) struct Heartbeat {
    /// Time between our PINGs (`None`: we send none).
    interval: Option<Duration>,
    /// How long after a PING we wait for any traffic (`None`: forever).
    timeout: Option<Duration>,
    /// Our TTL in deciseconds, announced in each PING.
    ttl: u16,
    next_ping: Option<Instant>,
    timeout_at: Option<Instant>,
    ttl_at: Option<Instant>,
}

impl Heartbeat {
    /// The socket's heartbeat options; the interval clock starts at `now` (the end of the
    /// handshake, where libzmq's `mechanism_ready` starts it).
    pub(crate) fn new(options: &Options, now: Instant) -> Heartbeat {
        let interval = millis(options.heartbeat_ivl);
        // libzmq: a timeout of -1 means "the interval".
        let timeout = if options.heartbeat_timeout < 0 {
            interval
        } else {
            millis(options.heartbeat_timeout)
        };
        Heartbeat {
            interval,
            timeout,
            ttl: options.heartbeat_ttl,
            next_ping: interval.map(|i| now + i),
            timeout_at: None,
            ttl_at: None,
        }
    }

    /// Whether any clock runs, i.e. whether [`Heartbeat::tick`] needs the time.
    pub(crate) fn armed(&self) -> bool {
        self.next_ping.is_some() || self.timeout_at.is_some() || self.ttl_at.is_some()
    }

    /// Something arrived from the peer: it is alive.
    pub(crate) fn heard(&mut self) {
        self.timeout_at = None;
        self.ttl_at = None;
    }

    /// The peer sent a PING with `ttl` deciseconds: without further traffic within that
    /// time the connection is dead.
    pub(crate) fn pinged(&mut self, ttl: u16) {
        if ttl > 0 && self.ttl_at.is_none() {
            self.ttl_at = Some(Instant::now() + Duration::from_millis(u64::from(ttl) * 100));
        }
    }

    /// Checks the clocks at `now`: queues a PING that is due, or fails when the peer has
    /// been silent too long.
    pub(crate) fn tick(&mut self, now: Instant, encoder: &mut Encoder) -> Result<(), Error> {
        if self.timeout_at.is_some_and(|t| t <= now) || self.ttl_at.is_some_and(|t| t <= now) {
            return Err(Error::TimedOut);
        }
        if let (Some(due), Some(interval)) = (self.next_ping, self.interval)
            && due <= now
        {
            encoder.push_command(&Command::Ping {
                ttl: self.ttl,
                context: Bytes::new(),
            });
            self.next_ping = Some(now + interval);
            if self.timeout_at.is_none() {
                self.timeout_at = self.timeout.map(|t| now + t);
            }
        }
        Ok(())
    }

    /// When [`Heartbeat::tick`] next has something to do.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        [self.next_ping, self.timeout_at, self.ttl_at]
            .into_iter()
            .flatten()
            .min()
    }
}

/// A positive millisecond option as a duration; 0 (or less) turns the clock off.
fn millis(ms: i32) -> Option<Duration> {
    u64::try_from(ms)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(ivl: i32, timeout: i32, ttl_ds: u16) -> Options {
        Options {
            heartbeat_ivl: ivl,
            heartbeat_timeout: timeout,
            heartbeat_ttl: ttl_ds,
            ..Options::default()
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn off_by_default_and_never_reads_the_clock() {
        let hb = Heartbeat::new(&Options::default(), Instant::now());
        assert!(!hb.armed());
        assert_eq!(hb.deadline(), None);
    }

    #[test]
    fn pings_every_interval_with_the_ttl_and_times_out_on_silence() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(&options(100, -1, 30), t0);
        let mut enc = Encoder::new();
        assert_eq!(hb.deadline(), Some(t0 + ms(100)));
        hb.tick(t0 + ms(50), &mut enc).unwrap();
        assert!(enc.is_empty(), "nothing is due before the interval");
        hb.tick(t0 + ms(100), &mut enc).unwrap();
        // 0x04 size 9, command flag; "\x04PING" + TTL 30 (big-endian u16).
        let mut wire = Vec::new();
        let mut slices = [std::io::IoSlice::new(&[]); 4];
        let n = enc.io_slices(&mut slices);
        for s in &slices[..n] {
            wire.extend_from_slice(s);
        }
        assert_eq!(wire, b"\x04\x07\x04PING\x00\x1e");
        // The timeout defaults to the interval, counted from the PING.
        assert_eq!(hb.deadline(), Some(t0 + ms(200)));
        assert!(matches!(
            hb.tick(t0 + ms(200), &mut enc),
            Err(Error::TimedOut)
        ));
    }

    #[test]
    fn any_traffic_stops_the_timeout() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(&options(100, 150, 0), t0);
        let mut enc = Encoder::new();
        hb.tick(t0 + ms(100), &mut enc).unwrap();
        hb.heard();
        // The next PING is due at 200; the timeout of the first one is gone.
        hb.tick(t0 + ms(260), &mut enc).unwrap();
        assert_eq!(hb.deadline(), Some(t0 + ms(360)));
    }

    #[test]
    fn a_peer_ping_with_ttl_arms_the_ttl_clock_until_traffic() {
        let mut hb = Heartbeat::new(&Options::default(), Instant::now());
        hb.pinged(0);
        assert!(!hb.armed(), "a TTL of 0 means none");
        hb.pinged(2);
        let at = hb.deadline().unwrap();
        let mut enc = Encoder::new();
        assert!(matches!(hb.tick(at, &mut enc), Err(Error::TimedOut)));
        hb.heard();
        assert!(!hb.armed());
    }

    #[test]
    fn timeout_zero_waits_forever() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(&options(10, 0, 0), t0);
        let mut enc = Encoder::new();
        hb.tick(t0 + ms(10), &mut enc).unwrap();
        hb.tick(t0 + ms(1000), &mut enc).unwrap();
        assert_eq!(hb.deadline(), Some(t0 + ms(1010)));
    }
}
