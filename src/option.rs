//! Socket options: libzmq's numbers (so the C ABI passes `zmq_setsockopt` straight through)
//! and one plain struct holding the values.
//!
//! Options are read by the management layer when an endpoint is bound or connected and copied
//! into that endpoint's tasks, as libzmq does: changing SNDHWM after `connect` affects later
//! connections only.

use bytes::Bytes;

use crate::error::{Error, Result};

/// `ZMQ_AFFINITY`
pub const ZMQ_AFFINITY: i32 = 4;
/// `ZMQ_ROUTING_ID` (formerly `ZMQ_IDENTITY`)
pub const ZMQ_ROUTING_ID: i32 = 5;
/// `ZMQ_SUBSCRIBE`
pub const ZMQ_SUBSCRIBE: i32 = 6;
/// `ZMQ_UNSUBSCRIBE`
pub const ZMQ_UNSUBSCRIBE: i32 = 7;
/// `ZMQ_SNDBUF`
pub const ZMQ_SNDBUF: i32 = 11;
/// `ZMQ_RCVBUF`
pub const ZMQ_RCVBUF: i32 = 12;
/// `ZMQ_RCVMORE`
pub const ZMQ_RCVMORE: i32 = 13;
/// `ZMQ_FD`
pub const ZMQ_FD: i32 = 14;
/// `ZMQ_EVENTS`
pub const ZMQ_EVENTS: i32 = 15;
/// `ZMQ_TYPE`
pub const ZMQ_TYPE: i32 = 16;
/// `ZMQ_LINGER`
pub const ZMQ_LINGER: i32 = 17;
/// `ZMQ_RECONNECT_IVL`
pub const ZMQ_RECONNECT_IVL: i32 = 18;
/// `ZMQ_BACKLOG`
pub const ZMQ_BACKLOG: i32 = 19;
/// `ZMQ_RECONNECT_IVL_MAX`
pub const ZMQ_RECONNECT_IVL_MAX: i32 = 21;
/// `ZMQ_MAXMSGSIZE`
pub const ZMQ_MAXMSGSIZE: i32 = 22;
/// `ZMQ_SNDHWM`
pub const ZMQ_SNDHWM: i32 = 23;
/// `ZMQ_RCVHWM`
pub const ZMQ_RCVHWM: i32 = 24;
/// `ZMQ_RCVTIMEO`
pub const ZMQ_RCVTIMEO: i32 = 27;
/// `ZMQ_SNDTIMEO`
pub const ZMQ_SNDTIMEO: i32 = 28;
/// `ZMQ_IPV4ONLY` (deprecated inverse of `ZMQ_IPV6`)
pub const ZMQ_IPV4ONLY: i32 = 31;
/// `ZMQ_LAST_ENDPOINT`
pub const ZMQ_LAST_ENDPOINT: i32 = 32;
/// `ZMQ_ROUTER_MANDATORY`
pub const ZMQ_ROUTER_MANDATORY: i32 = 33;
/// `ZMQ_TCP_KEEPALIVE`
pub const ZMQ_TCP_KEEPALIVE: i32 = 34;
/// `ZMQ_TCP_KEEPALIVE_CNT`
pub const ZMQ_TCP_KEEPALIVE_CNT: i32 = 35;
/// `ZMQ_TCP_KEEPALIVE_IDLE`
pub const ZMQ_TCP_KEEPALIVE_IDLE: i32 = 36;
/// `ZMQ_TCP_KEEPALIVE_INTVL`
pub const ZMQ_TCP_KEEPALIVE_INTVL: i32 = 37;
/// `ZMQ_IMMEDIATE`
pub const ZMQ_IMMEDIATE: i32 = 39;
/// `ZMQ_IPV6`
pub const ZMQ_IPV6: i32 = 42;
/// `ZMQ_MECHANISM` (read-only: NULL = 0 is the only mechanism)
pub const ZMQ_MECHANISM: i32 = 43;
/// `ZMQ_ROUTER_HANDOVER`
pub const ZMQ_ROUTER_HANDOVER: i32 = 56;
/// `ZMQ_CONNECT_ROUTING_ID`
pub const ZMQ_CONNECT_ROUTING_ID: i32 = 61;
/// `ZMQ_HANDSHAKE_IVL`
pub const ZMQ_HANDSHAKE_IVL: i32 = 66;
/// `ZMQ_XPUB_VERBOSE`: XPUB passes every subscription up, not only new ones
pub const ZMQ_XPUB_VERBOSE: i32 = 40;
/// `ZMQ_REQ_CORRELATE`: REQ prefixes requests with a request-id frame
pub const ZMQ_REQ_CORRELATE: i32 = 52;
/// `ZMQ_REQ_RELAXED`: REQ may send a new request before the reply
pub const ZMQ_REQ_RELAXED: i32 = 53;
/// `ZMQ_CONFLATE`: keep only the last message
pub const ZMQ_CONFLATE: i32 = 54;
/// `ZMQ_XPUB_NODROP`: XPUB/PUB block (EAGAIN) instead of dropping at SNDHWM
pub const ZMQ_XPUB_NODROP: i32 = 69;
/// `ZMQ_XPUB_MANUAL`: the application decides subscriptions with ZMQ_SUBSCRIBE
pub const ZMQ_XPUB_MANUAL: i32 = 71;
/// `ZMQ_XPUB_WELCOME_MSG`: sent to every new subscriber
pub const ZMQ_XPUB_WELCOME_MSG: i32 = 72;
/// `ZMQ_INVERT_MATCHING`: deliver what does *not* match the subscriptions
pub const ZMQ_INVERT_MATCHING: i32 = 74;
/// `ZMQ_XPUB_VERBOSER`: XPUB passes every subscription and unsubscription up
pub const ZMQ_XPUB_VERBOSER: i32 = 78;
/// `ZMQ_STREAM_NOTIFY`: a STREAM socket receives `[id, empty]` when a peer connects and when it
/// disconnects
pub const ZMQ_STREAM_NOTIFY: i32 = 73;
/// `ZMQ_HEARTBEAT_IVL`: ms between ZMTP PINGs on each connection (0 = none)
pub const ZMQ_HEARTBEAT_IVL: i32 = 75;
/// `ZMQ_HEARTBEAT_TTL`: ms the peer may stay silent after our PING (sent in deciseconds)
pub const ZMQ_HEARTBEAT_TTL: i32 = 76;
/// `ZMQ_HEARTBEAT_TIMEOUT`: ms to wait for any traffic after a PING (-1 = the interval)
pub const ZMQ_HEARTBEAT_TIMEOUT: i32 = 77;

/// The values of a socket's options, with libzmq's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Messages queued per outbound pipe (0 = unlimited).
    pub sndhwm: i32,
    /// Messages queued per inbound pipe (0 = unlimited).
    pub rcvhwm: i32,
    /// Milliseconds unsent messages are kept after close (-1 = until sent).
    pub linger: i32,
    /// Send timeout in ms (-1 = forever).
    pub sndtimeo: i32,
    /// Receive timeout in ms (-1 = forever).
    pub rcvtimeo: i32,
    /// Our routing id, announced as the `Identity` property.
    pub routing_id: Bytes,
    /// The routing id a ROUTER gives the peer of its next `connect`.
    pub connect_routing_id: Option<Bytes>,
    /// First reconnect delay in ms (-1 = no reconnect).
    pub reconnect_ivl: i32,
    /// Upper bound of the exponential back-off in ms (0 = no back-off).
    pub reconnect_ivl_max: i32,
    /// Time allowed for the greeting and handshake in ms (0 = unlimited).
    pub handshake_ivl: i32,
    /// SO_SNDBUF (-1 = OS default).
    pub sndbuf: i32,
    /// SO_RCVBUF (-1 = OS default).
    pub rcvbuf: i32,
    /// Largest inbound message in bytes (-1 = unlimited).
    pub maxmsgsize: i64,
    /// Queue only to completed connections.
    pub immediate: bool,
    /// SO_KEEPALIVE (-1 = OS default, 0 off, 1 on).
    pub tcp_keepalive: i32,
    /// TCP_KEEPCNT (-1 = OS default).
    pub tcp_keepalive_cnt: i32,
    /// TCP_KEEPIDLE in s (-1 = OS default).
    pub tcp_keepalive_idle: i32,
    /// TCP_KEEPINTVL in s (-1 = OS default).
    pub tcp_keepalive_intvl: i32,
    /// Allow IPv6 (and dual-stack binds).
    pub ipv6: bool,
    /// listen() backlog.
    pub backlog: i32,
    /// ROUTER: unroutable messages fail with EHOSTUNREACH instead of being dropped.
    pub router_mandatory: bool,
    /// ROUTER: a new connection with a known routing id takes it over.
    pub router_handover: bool,
    /// I/O thread affinity bit mask (accepted, stored).
    pub affinity: u64,
    /// ZMQ_CONFLATE: on DEALER, PULL, PUSH, PUB and SUB each peer pipe keeps only the newest
    /// whole message, with no HWM (src/peer.rs decides which types).
    pub conflate: bool,
    /// ZMQ_HEARTBEAT_IVL in ms (0 = no PINGs).
    pub heartbeat_ivl: i32,
    /// ZMQ_HEARTBEAT_TTL in deciseconds, as it goes on the wire (the option is set in ms).
    pub heartbeat_ttl: u16,
    /// ZMQ_HEARTBEAT_TIMEOUT in ms (-1 = the interval, 0 = never).
    pub heartbeat_timeout: i32,
    /// ZMQ_STREAM_NOTIFY: STREAM connect/disconnect notifications (libzmq's `raw_notify`).
    pub stream_notify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sndhwm: 1000,
            rcvhwm: 1000,
            linger: -1,
            sndtimeo: -1,
            rcvtimeo: -1,
            routing_id: Bytes::new(),
            connect_routing_id: None,
            reconnect_ivl: 100,
            reconnect_ivl_max: 0,
            handshake_ivl: 30_000,
            sndbuf: -1,
            rcvbuf: -1,
            maxmsgsize: -1,
            immediate: false,
            tcp_keepalive: -1,
            tcp_keepalive_cnt: -1,
            tcp_keepalive_idle: -1,
            tcp_keepalive_intvl: -1,
            ipv6: false,
            backlog: 100,
            router_mandatory: false,
            router_handover: false,
            affinity: 0,
            conflate: false,
            heartbeat_ivl: 0,
            heartbeat_ttl: 0,
            heartbeat_timeout: -1,
            stream_notify: true,
        }
    }
}

/// Reads a C `int` option value.
pub(crate) fn int_value(value: &[u8]) -> Result<i32> {
    let bytes: [u8; 4] = value.try_into().map_err(|_| Error::Invalid)?;
    Ok(i32::from_ne_bytes(bytes))
}

fn at_least(value: &[u8], min: i32) -> Result<i32> {
    let v = int_value(value)?;
    if v < min {
        return Err(Error::Invalid);
    }
    Ok(v)
}

fn boolean(value: &[u8]) -> Result<bool> {
    match int_value(value)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::Invalid),
    }
}

/// A routing id: 1..=255 bytes, and libzmq refuses one starting with a zero byte (those are
/// reserved for generated ids).
fn routing_id(value: &[u8]) -> Result<Bytes> {
    if value.is_empty() || value.len() > 255 || value[0] == 0 {
        return Err(Error::Invalid);
    }
    Ok(Bytes::copy_from_slice(value))
}

impl Options {
    /// Sets an option stored in this struct; `Err(NotSup)`-free: unknown numbers are EINVAL.
    pub(crate) fn set(&mut self, option: i32, value: &[u8]) -> Result<()> {
        match option {
            ZMQ_SNDHWM => self.sndhwm = at_least(value, 0)?,
            ZMQ_RCVHWM => self.rcvhwm = at_least(value, 0)?,
            ZMQ_LINGER => self.linger = at_least(value, -1)?,
            ZMQ_SNDTIMEO => self.sndtimeo = at_least(value, -1)?,
            ZMQ_RCVTIMEO => self.rcvtimeo = at_least(value, -1)?,
            ZMQ_ROUTING_ID => self.routing_id = routing_id(value)?,
            ZMQ_CONNECT_ROUTING_ID => self.connect_routing_id = Some(routing_id(value)?),
            ZMQ_RECONNECT_IVL => self.reconnect_ivl = at_least(value, -1)?,
            ZMQ_RECONNECT_IVL_MAX => self.reconnect_ivl_max = at_least(value, 0)?,
            ZMQ_HANDSHAKE_IVL => self.handshake_ivl = at_least(value, 0)?,
            ZMQ_SNDBUF => self.sndbuf = at_least(value, -1)?,
            ZMQ_RCVBUF => self.rcvbuf = at_least(value, -1)?,
            ZMQ_MAXMSGSIZE => {
                let bytes: [u8; 8] = value.try_into().map_err(|_| Error::Invalid)?;
                let v = i64::from_ne_bytes(bytes);
                if v < -1 {
                    return Err(Error::Invalid);
                }
                self.maxmsgsize = v;
            }
            ZMQ_IMMEDIATE => self.immediate = boolean(value)?,
            ZMQ_TCP_KEEPALIVE => {
                let v = int_value(value)?;
                if !(-1..=1).contains(&v) {
                    return Err(Error::Invalid);
                }
                self.tcp_keepalive = v;
            }
            ZMQ_TCP_KEEPALIVE_CNT => self.tcp_keepalive_cnt = at_least(value, -1)?,
            ZMQ_TCP_KEEPALIVE_IDLE => self.tcp_keepalive_idle = at_least(value, -1)?,
            ZMQ_TCP_KEEPALIVE_INTVL => self.tcp_keepalive_intvl = at_least(value, -1)?,
            ZMQ_IPV6 => self.ipv6 = boolean(value)?,
            ZMQ_IPV4ONLY => self.ipv6 = !boolean(value)?,
            ZMQ_BACKLOG => self.backlog = at_least(value, 0)?,
            ZMQ_ROUTER_MANDATORY => self.router_mandatory = boolean(value)?,
            ZMQ_ROUTER_HANDOVER => self.router_handover = boolean(value)?,
            ZMQ_AFFINITY => {
                let bytes: [u8; 8] = value.try_into().map_err(|_| Error::Invalid)?;
                self.affinity = u64::from_ne_bytes(bytes);
            }
            ZMQ_CONFLATE => self.conflate = int_value(value)? != 0,
            ZMQ_HEARTBEAT_IVL => self.heartbeat_ivl = at_least(value, 0)?,
            // libzmq reads it as a relaxed boolean (any non-zero int is on) and, write-only,
            // answers getsockopt with EINVAL.
            ZMQ_STREAM_NOTIFY => self.stream_notify = int_value(value)? != 0,
            ZMQ_HEARTBEAT_TIMEOUT => self.heartbeat_timeout = at_least(value, 0)?,
            // libzmq divides first (so -99..=99 all mean 0) and keeps what fits the wire's
            // 16 bits.
            ZMQ_HEARTBEAT_TTL => {
                self.heartbeat_ttl =
                    u16::try_from(int_value(value)? / 100).map_err(|_| Error::Invalid)?;
            }
            _ => return Err(Error::Invalid),
        }
        Ok(())
    }

    /// Writes an option stored in this struct into `out`; `None` if the number is not one of
    /// them (the socket answers the dynamic ones).
    pub(crate) fn get(&self, option: i32, out: &mut [u8]) -> Option<Result<usize>> {
        match option {
            ZMQ_SNDHWM => Some(put(out, &(self.sndhwm).to_ne_bytes())),
            ZMQ_RCVHWM => Some(put(out, &(self.rcvhwm).to_ne_bytes())),
            ZMQ_LINGER => Some(put(out, &(self.linger).to_ne_bytes())),
            ZMQ_SNDTIMEO => Some(put(out, &(self.sndtimeo).to_ne_bytes())),
            ZMQ_RCVTIMEO => Some(put(out, &(self.rcvtimeo).to_ne_bytes())),
            ZMQ_ROUTING_ID => Some(put(out, &self.routing_id)),
            ZMQ_RECONNECT_IVL => Some(put(out, &(self.reconnect_ivl).to_ne_bytes())),
            ZMQ_RECONNECT_IVL_MAX => Some(put(out, &(self.reconnect_ivl_max).to_ne_bytes())),
            ZMQ_HANDSHAKE_IVL => Some(put(out, &(self.handshake_ivl).to_ne_bytes())),
            ZMQ_SNDBUF => Some(put(out, &(self.sndbuf).to_ne_bytes())),
            ZMQ_RCVBUF => Some(put(out, &(self.rcvbuf).to_ne_bytes())),
            ZMQ_MAXMSGSIZE => Some(put(out, &self.maxmsgsize.to_ne_bytes())),
            ZMQ_IMMEDIATE => Some(put(out, &(i32::from(self.immediate)).to_ne_bytes())),
            ZMQ_TCP_KEEPALIVE => Some(put(out, &(self.tcp_keepalive).to_ne_bytes())),
            ZMQ_TCP_KEEPALIVE_CNT => Some(put(out, &(self.tcp_keepalive_cnt).to_ne_bytes())),
            ZMQ_TCP_KEEPALIVE_IDLE => Some(put(out, &(self.tcp_keepalive_idle).to_ne_bytes())),
            ZMQ_TCP_KEEPALIVE_INTVL => Some(put(out, &(self.tcp_keepalive_intvl).to_ne_bytes())),
            ZMQ_IPV6 => Some(put(out, &(i32::from(self.ipv6)).to_ne_bytes())),
            ZMQ_IPV4ONLY => Some(put(out, &(i32::from(!self.ipv6)).to_ne_bytes())),
            ZMQ_BACKLOG => Some(put(out, &(self.backlog).to_ne_bytes())),
            ZMQ_ROUTER_MANDATORY => {
                Some(put(out, &(i32::from(self.router_mandatory)).to_ne_bytes()))
            }
            ZMQ_ROUTER_HANDOVER => Some(put(out, &(i32::from(self.router_handover)).to_ne_bytes())),
            ZMQ_AFFINITY => Some(put(out, &self.affinity.to_ne_bytes())),
            ZMQ_CONFLATE => Some(put(out, &(i32::from(self.conflate)).to_ne_bytes())),
            ZMQ_HEARTBEAT_IVL => Some(put(out, &self.heartbeat_ivl.to_ne_bytes())),
            ZMQ_HEARTBEAT_TIMEOUT => Some(put(out, &self.heartbeat_timeout.to_ne_bytes())),
            ZMQ_HEARTBEAT_TTL => Some(put(
                out,
                &(i32::from(self.heartbeat_ttl) * 100).to_ne_bytes(),
            )),
            _ => None,
        }
    }

    /// The most bytes an inbound message may have, as the frame decoder wants it.
    pub(crate) fn max_msg_size(&self) -> Option<u64> {
        u64::try_from(self.maxmsgsize).ok()
    }
}

/// Copies `value` into `out`, refusing (EINVAL) a buffer too small, as libzmq does.
pub(crate) fn put(out: &mut [u8], value: &[u8]) -> Result<usize> {
    let dst = out.get_mut(..value.len()).ok_or(Error::Invalid)?;
    dst.copy_from_slice(value);
    Ok(value.len())
}

/// A HWM as the pipe wants it (0 = unlimited).
pub(crate) fn hwm(value: i32) -> usize {
    usize::try_from(value).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_options_round_trip_with_libzmq_defaults() {
        let mut o = Options::default();
        let mut out = [0u8; 8];
        assert_eq!(o.get(ZMQ_SNDHWM, &mut out), Some(Ok(4)));
        assert_eq!(i32::from_ne_bytes(out[..4].try_into().unwrap()), 1000);
        o.set(ZMQ_SNDHWM, &5i32.to_ne_bytes()).unwrap();
        assert_eq!(o.sndhwm, 5);
        assert_eq!(
            o.set(ZMQ_SNDHWM, &(-1i32).to_ne_bytes()),
            Err(Error::Invalid)
        );
        assert_eq!(o.set(ZMQ_SNDHWM, &[1, 2]), Err(Error::Invalid));
        assert_eq!(o.set(9999, &1i32.to_ne_bytes()), Err(Error::Invalid));
        assert_eq!(o.get(9999, &mut out), None);
    }

    #[test]
    fn heartbeat_options_as_libzmq_stores_them() {
        let mut o = Options::default();
        let get = |o: &Options, opt| {
            let mut out = [0u8; 4];
            assert_eq!(o.get(opt, &mut out), Some(Ok(4)));
            i32::from_ne_bytes(out)
        };
        assert_eq!(get(&o, ZMQ_HEARTBEAT_IVL), 0);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TTL), 0);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TIMEOUT), -1);
        o.set(ZMQ_HEARTBEAT_IVL, &250i32.to_ne_bytes()).unwrap();
        o.set(ZMQ_HEARTBEAT_TIMEOUT, &0i32.to_ne_bytes()).unwrap();
        // The TTL travels in deciseconds: 1,234 ms is stored (and read back) as 1,200.
        o.set(ZMQ_HEARTBEAT_TTL, &1234i32.to_ne_bytes()).unwrap();
        assert_eq!(o.heartbeat_ttl, 12);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TTL), 1200);
        o.set(ZMQ_HEARTBEAT_TTL, &6_553_599i32.to_ne_bytes())
            .unwrap();
        assert_eq!(o.heartbeat_ttl, u16::MAX);
        // libzmq divides before it checks: -99 is 0, -100 and 6,553,600 are refused.
        o.set(ZMQ_HEARTBEAT_TTL, &(-99i32).to_ne_bytes()).unwrap();
        assert_eq!(o.heartbeat_ttl, 0);
        for bad in [-100i32, 6_553_600] {
            assert_eq!(
                o.set(ZMQ_HEARTBEAT_TTL, &bad.to_ne_bytes()),
                Err(Error::Invalid)
            );
        }
        for opt in [ZMQ_HEARTBEAT_IVL, ZMQ_HEARTBEAT_TIMEOUT] {
            assert_eq!(o.set(opt, &(-1i32).to_ne_bytes()), Err(Error::Invalid));
        }
        assert_eq!(get(&o, ZMQ_HEARTBEAT_IVL), 250);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TIMEOUT), 0);
    }

    #[test]
    fn routing_id_rules() {
        let mut o = Options::default();
        o.set(ZMQ_ROUTING_ID, b"abc").unwrap();
        let mut out = [0u8; 255];
        assert_eq!(o.get(ZMQ_ROUTING_ID, &mut out), Some(Ok(3)));
        assert_eq!(o.set(ZMQ_ROUTING_ID, b""), Err(Error::Invalid));
        assert_eq!(o.set(ZMQ_ROUTING_ID, &[0, 1]), Err(Error::Invalid));
        assert_eq!(
            o.get(ZMQ_ROUTING_ID, &mut out[..2]),
            Some(Err(Error::Invalid))
        );
    }

    #[test]
    fn booleans_accept_only_zero_and_one() {
        let mut o = Options::default();
        o.set(ZMQ_IMMEDIATE, &1i32.to_ne_bytes()).unwrap();
        assert!(o.immediate);
        assert_eq!(
            o.set(ZMQ_IMMEDIATE, &2i32.to_ne_bytes()),
            Err(Error::Invalid)
        );
        o.set(ZMQ_MAXMSGSIZE, &100i64.to_ne_bytes()).unwrap();
        assert_eq!(o.max_msg_size(), Some(100));
    }
}
