//! Socket options: ONE table, [`TABLE`], gives each option's libzmq name and number, the Rust
//! field and type that hold it, its default, its validation [`Rule`], the socket types that
//! accept it, whether it can be read back, and whether ferromq acts on it or only stores it.
//! `zmq_setsockopt`/`zmq_getsockopt` (ffi/src/sockopt.rs) and `Socket::set_option_raw` /
//! `get_option_raw` both go through it, so the C ABI and the Rust API cannot disagree. The
//! typed Rust API ([`typed`]: `Duration` in the row's unit, `bool`, `usize`, `Option<_>` for
//! the C API's -1, used through `Socket::set`/`get`) is generated from the same rows, whose
//! last column names each option's typed form, and converts to the C form before the rules
//! run.
//!
//! Semantics are libzmq 4.3.5's (`options.cpp`, the socket types' `xsetsockopt`,
//! `socket_base.cpp`): integer options read and write exactly `sizeof (int)` bytes, strings are
//! read back with their NUL into a buffer whose unused rest is zero-filled, and a socket type
//! that does not accept an option answers EINVAL. Options of mechanisms and transports ferromq
//! does not have (CURVE, GSSAPI, VMCI) are absent, as in a libzmq built without them
//! (docs/compatibility.md, "Socket options"). The security options also rewrite the mechanism
//! (src/option/security.rs).
//!
//! Options are copied into each connection when it is made, as libzmq does; SNDHWM and RCVHWM
//! also reach pipes that exist already (the socket re-applies them, as libzmq's
//! `update_pipe_options`).
//!
//! ```
//! use ferromq::option::{spec, State, Types, ZMQ_CONFLATE, ZMQ_SNDHWM};
//! let row = spec(ZMQ_SNDHWM).ok_or(ferromq::Error::Invalid)?;
//! assert_eq!((row.name, row.unit, row.readable), ("ZMQ_SNDHWM", "messages", true));
//! assert_eq!(row.types, Types::ALL);
//! assert_eq!(spec(ZMQ_CONFLATE).map(|r| r.state), Some(State::Implemented));
//! # Ok::<(), ferromq::Error>(())
//! ```

mod rule;
pub mod security;
mod threads;
#[path = "option/typed.rs"]
mod typed_value;

use bytes::Bytes;
use ferromq_zmtp::Secret;

use crate::error::{Error, Result};
use security::{CurveKey, MechanismKind};

pub(crate) use rule::{int_value, put, put_exact};
pub use rule::{Held, Input, Rule, Slot};
pub use threads::ThreadOptions;

/// The socket types an option applies to, one bit per libzmq type number (PAIR = bit 0 ...
/// STREAM = bit 11).
///
/// ```
/// use ferromq::option::Types;
/// assert!(Types::ROUTER.contains(6)); // ZMQ_ROUTER
/// assert!(Types::ROUTER.contains(4)); // ZMQ_REP, a ROUTER in libzmq
/// assert!(!Types::ROUTER.contains(5)); // ZMQ_DEALER
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Types(u16);

impl Types {
    /// Every socket type.
    pub const ALL: Types = Types(0x0fff);
    /// PUB and XPUB (PUB is an XPUB in libzmq and takes its options).
    pub const XPUB: Types = Types(1 << 1 | 1 << 9);
    /// SUB.
    pub const SUB: Types = Types(1 << 2);
    /// REQ.
    pub const REQ: Types = Types(1 << 3);
    /// ROUTER and REP (a REP is a ROUTER in libzmq and takes its options).
    pub const ROUTER: Types = Types(1 << 4 | 1 << 6);
    /// ROUTER, REP and STREAM: libzmq's routing sockets.
    pub const ROUTING: Types = Types(1 << 4 | 1 << 6 | 1 << 11);
    /// DEALER, REQ, ROUTER, REP: the types that can probe.
    pub const PROBING: Types = Types(1 << 3 | 1 << 4 | 1 << 5 | 1 << 6);
    /// STREAM.
    pub const STREAM: Types = Types(1 << 11);

    /// Whether the socket type with libzmq number `raw` is one of these.
    ///
    /// ```
    /// use ferromq::option::{spec, ZMQ_REQ_CORRELATE};
    /// let types = spec(ZMQ_REQ_CORRELATE).map(|row| row.types);
    /// assert_eq!(types.map(|t| (t.contains(3), t.contains(5))), Some((true, false))); // REQ, not DEALER
    /// ```
    pub fn contains(self, raw: i32) -> bool {
        u32::try_from(raw).is_ok_and(|n| n < 16 && self.0 & (1 << n) != 0)
    }
}

/// What ferromq does with an option's value.
///
/// ```
/// use ferromq::option::{spec, State, ZMQ_AFFINITY};
/// // Stored and read back as libzmq does, without the behaviour.
/// assert_eq!(spec(ZMQ_AFFINITY).map(|row| row.state), Some(State::StoredOnly));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Acts on it as libzmq does.
    Implemented,
    /// Stores it and reads it back as libzmq does, without the behaviour
    /// (docs/compatibility.md says why, per option).
    StoredOnly,
}

/// One row of [`TABLE`].
///
/// ```
/// use ferromq::option::TABLE;
/// // Every option ferromq answers, for tools that list or document them.
/// let readable = TABLE.iter().filter(|row| row.readable).count();
/// assert!(readable > 40 && readable < TABLE.len());
/// assert!(TABLE.windows(2).all(|w| w[0].number < w[1].number));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// libzmq's name, without `ZMQ_`.
    pub name: &'static str,
    /// libzmq's number.
    pub number: i32,
    /// The Rust type holding it in [`Options`] (`Held` = the socket or its pattern holds it).
    pub rust_type: &'static str,
    /// The unit of an integer value (`ms`, `s`, `messages`, `bytes`, ...), for a typed API.
    pub unit: &'static str,
    /// Validation and wire form.
    pub rule: Rule,
    /// Socket types that accept it.
    pub types: Types,
    /// Whether getsockopt answers it.
    pub readable: bool,
    /// Whether ferromq acts on it.
    pub state: State,
}

/// Finds an option's row.
///
/// ```
/// use ferromq::option::{spec, ZMQ_RCVTIMEO};
/// let row = spec(ZMQ_RCVTIMEO).ok_or(ferromq::Error::Invalid)?;
/// assert_eq!((row.name, row.unit, row.rust_type), ("ZMQ_RCVTIMEO", "ms", "i32"));
/// assert!(spec(9999).is_none());
/// # Ok::<(), ferromq::Error>(())
/// ```
pub fn spec(number: i32) -> Option<&'static Spec> {
    TABLE.iter().find(|s| s.number == number)
}

const ANY: i32 = i32::MAX;

macro_rules! options {
    ($(
        $(#[doc = $doc:literal])*
        $konst:ident = $num:literal => $field:ident: $ty:ty = $default:expr,
            $unit:literal, $rule:expr, $types:expr, $readable:literal, $state:ident
            $(, typed $typed:ty)?;
    )*) => {
        $(
            $(#[doc = $doc])*
            pub const $konst: i32 = $num;
        )*

        /// Typed keys for [`crate::Socket::set`] and [`crate::Socket::get`], one per row of
        /// [`TABLE`] that has a typed Rust form (durations in the row's unit, `None` for the
        /// C API's -1), named as libzmq names the option.
        ///
        /// ```
        /// use std::time::Duration;
        /// use ferromq::option::typed::{ZMQ_CONFLATE, ZMQ_RCVTIMEO};
        /// let ctx = ferromq::Context::new();
        /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
        /// s.set(ZMQ_RCVTIMEO, Some(Duration::from_millis(100)))?;
        /// s.set(ZMQ_CONFLATE, true)?;
        /// assert_eq!(s.get(ZMQ_RCVTIMEO)?, Some(Duration::from_millis(100)));
        /// assert_eq!(ZMQ_CONFLATE.number(), ferromq::option::ZMQ_CONFLATE);
        /// # Ok::<(), ferromq::Error>(())
        /// ```
        pub mod typed {
            pub use super::typed_value::{Opt, OptionValue};
            $($(
                #[doc = concat!("Typed [`", stringify!($konst), "`](super::", stringify!($konst),
                    "), its C value in ", $unit, ".")]
                pub const $konst: Opt<$typed> = Opt::new($num);
            )?)*
        }

        /// Every socket option of libzmq 4.3's zmq.h that ferromq answers, in number order.
        pub static TABLE: &[Spec] = &[$(
            Spec {
                name: stringify!($konst),
                number: $num,
                rust_type: stringify!($ty),
                unit: $unit,
                rule: $rule,
                types: $types,
                readable: $readable,
                state: State::$state,
            },
        )*];

        /// The values of a socket's options, with libzmq's defaults (one field per row of
        /// [`TABLE`]; `Held` fields are answered by the socket or its pattern).
        ///
        /// ```
        /// let defaults = ferromq::option::Options::default();
        /// assert_eq!((defaults.sndhwm, defaults.linger, defaults.conflate), (1000, -1, false));
        /// ```
        #[derive(Debug, Clone, PartialEq)]
        pub struct Options {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        impl Default for Options {
            fn default() -> Self {
                Options { $( $field: $default, )* }
            }
        }

        impl Options {
            fn slot_mut(&mut self, number: i32) -> Option<&mut dyn Slot> {
                match number {
                    $( $num => Some(&mut self.$field), )*
                    _ => None,
                }
            }

            fn slot(&self, number: i32) -> Option<&dyn Slot> {
                match number {
                    $( $num => Some(&self.$field), )*
                    _ => None,
                }
            }
        }
    };
}

options! {
    /// `ZMQ_AFFINITY`: I/O thread bit mask for new connections.
    ZMQ_AFFINITY = 4 => affinity: u64 = 0, "mask", Rule::Uint64, Types::ALL, true, StoredOnly;
    /// `ZMQ_ROUTING_ID` (formerly `ZMQ_IDENTITY`): announced as the `Identity` property.
    ZMQ_ROUTING_ID = 5 => routing_id: Bytes = Bytes::new(), "",
        Rule::Blob { min: 1, max: 255 }, Types::ALL, true, Implemented;
    /// `ZMQ_SUBSCRIBE`: SUB, or XPUB with XPUB_MANUAL (the pattern decides).
    ZMQ_SUBSCRIBE = 6 => subscribe: Held = Held, "", Rule::AnyBytes,
        Types(1 << 1 | 1 << 2 | 1 << 9), false, Implemented;
    /// `ZMQ_UNSUBSCRIBE`.
    ZMQ_UNSUBSCRIBE = 7 => unsubscribe: Held = Held, "", Rule::AnyBytes,
        Types(1 << 1 | 1 << 2 | 1 << 9), false, Implemented;
    /// `ZMQ_RATE`: multicast rate in kbit/s (pgm/norm only).
    ZMQ_RATE = 8 => rate: i32 = 100, "kbit/s", Rule::Int { min: 1, max: ANY }, Types::ALL, true,
        StoredOnly;
    /// `ZMQ_RECOVERY_IVL`: multicast recovery interval (pgm/norm only).
    ZMQ_RECOVERY_IVL = 9 => recovery_ivl: i32 = 10_000, "ms", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, StoredOnly;
    /// `ZMQ_SNDBUF`: SO_SNDBUF (-1 = OS default).
    ZMQ_SNDBUF = 11 => sndbuf: i32 = -1, "bytes", Rule::Int { min: -1, max: ANY }, Types::ALL,
        true, Implemented, typed Option<usize>;
    /// `ZMQ_RCVBUF`: SO_RCVBUF (-1 = OS default).
    ZMQ_RCVBUF = 12 => rcvbuf: i32 = -1, "bytes", Rule::Int { min: -1, max: ANY }, Types::ALL,
        true, Implemented, typed Option<usize>;
    /// `ZMQ_RCVMORE` (read-only).
    ZMQ_RCVMORE = 13 => rcvmore: Held = Held, "bool", Rule::ReadOnly, Types::ALL, true,
        Implemented;
    /// `ZMQ_FD` (read-only).
    ZMQ_FD = 14 => fd: Held = Held, "fd", Rule::ReadOnly, Types::ALL, true, Implemented;
    /// `ZMQ_EVENTS` (read-only).
    ZMQ_EVENTS = 15 => events: Held = Held, "flags", Rule::ReadOnly, Types::ALL, true,
        Implemented;
    /// `ZMQ_TYPE` (read-only).
    ZMQ_TYPE = 16 => socket_type: Held = Held, "", Rule::ReadOnly, Types::ALL, true,
        Implemented;
    /// `ZMQ_LINGER`: how long unsent messages are kept after close (-1 = until sent).
    ZMQ_LINGER = 17 => linger: i32 = -1, "ms", Rule::Int { min: -1, max: ANY }, Types::ALL, true,
        Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_RECONNECT_IVL`: first reconnect delay (-1 = no reconnect).
    ZMQ_RECONNECT_IVL = 18 => reconnect_ivl: i32 = 100, "ms", Rule::Int { min: -1, max: ANY },
        Types::ALL, true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_BACKLOG`: listen() backlog.
    ZMQ_BACKLOG = 19 => backlog: i32 = 100, "connections", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed usize;
    /// `ZMQ_RECONNECT_IVL_MAX`: upper bound of the exponential back-off (0 = none).
    ZMQ_RECONNECT_IVL_MAX = 21 => reconnect_ivl_max: i32 = 0, "ms",
        Rule::Int { min: 0, max: ANY }, Types::ALL, true, Implemented, typed std::time::Duration;
    /// `ZMQ_MAXMSGSIZE`: largest inbound message (negative = unlimited).
    ZMQ_MAXMSGSIZE = 22 => maxmsgsize: i64 = -1, "bytes", Rule::Int64 { min: i64::MIN },
        Types::ALL, true, Implemented, typed Option<u64>;
    /// `ZMQ_SNDHWM`: messages queued per outbound pipe (0 = unlimited).
    ZMQ_SNDHWM = 23 => sndhwm: i32 = 1000, "messages", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed usize;
    /// `ZMQ_RCVHWM`: messages queued per inbound pipe (0 = unlimited).
    ZMQ_RCVHWM = 24 => rcvhwm: i32 = 1000, "messages", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed usize;
    /// `ZMQ_MULTICAST_HOPS` (pgm/norm only).
    ZMQ_MULTICAST_HOPS = 25 => multicast_hops: i32 = 1, "hops", Rule::Int { min: 1, max: ANY },
        Types::ALL, true, StoredOnly;
    /// `ZMQ_RCVTIMEO` (-1 = forever).
    ZMQ_RCVTIMEO = 27 => rcvtimeo: i32 = -1, "ms", Rule::Int { min: -1, max: ANY }, Types::ALL,
        true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_SNDTIMEO` (-1 = forever).
    ZMQ_SNDTIMEO = 28 => sndtimeo: i32 = -1, "ms", Rule::Int { min: -1, max: ANY }, Types::ALL,
        true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_IPV4ONLY`: the deprecated inverse of `ZMQ_IPV6` (stored there).
    ZMQ_IPV4ONLY = 31 => ipv4only: Held = Held, "bool", Rule::Flag01, Types::ALL, true,
        Implemented;
    /// `ZMQ_LAST_ENDPOINT` (read-only).
    ZMQ_LAST_ENDPOINT = 32 => last_endpoint: Held = Held, "", Rule::ReadOnly, Types::ALL, true,
        Implemented;
    /// `ZMQ_ROUTER_MANDATORY`: unroutable messages fail with EHOSTUNREACH.
    ZMQ_ROUTER_MANDATORY = 33 => router_mandatory: bool = false, "bool", Rule::FlagNonNegative,
        Types::ROUTER, false, Implemented, typed bool;
    /// `ZMQ_TCP_KEEPALIVE`: SO_KEEPALIVE (-1 = OS default).
    ZMQ_TCP_KEEPALIVE = 34 => tcp_keepalive: i32 = -1, "", Rule::Int { min: -1, max: 1 },
        Types::ALL, true, Implemented;
    /// `ZMQ_TCP_KEEPALIVE_CNT`: TCP_KEEPCNT (-1 = OS default).
    ZMQ_TCP_KEEPALIVE_CNT = 35 => tcp_keepalive_cnt: i32 = -1, "probes",
        Rule::Int { min: -1, max: ANY }, Types::ALL, true, Implemented;
    /// `ZMQ_TCP_KEEPALIVE_IDLE`: TCP_KEEPIDLE (-1 = OS default).
    ZMQ_TCP_KEEPALIVE_IDLE = 36 => tcp_keepalive_idle: i32 = -1, "s",
        Rule::Int { min: -1, max: ANY }, Types::ALL, true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_TCP_KEEPALIVE_INTVL`: TCP_KEEPINTVL (-1 = OS default).
    ZMQ_TCP_KEEPALIVE_INTVL = 37 => tcp_keepalive_intvl: i32 = -1, "s",
        Rule::Int { min: -1, max: ANY }, Types::ALL, true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_TCP_ACCEPT_FILTER`: address masks a tcp listener accepts (write-only).
    ZMQ_TCP_ACCEPT_FILTER = 38 => tcp_accept_filters: Vec<Bytes> = Vec::new(), "",
        Rule::AcceptFilter, Types::ALL, false, StoredOnly;
    /// `ZMQ_IMMEDIATE`: queue only to completed connections.
    ZMQ_IMMEDIATE = 39 => immediate: bool = false, "bool", Rule::Flag01, Types::ALL, true,
        Implemented, typed bool;
    /// `ZMQ_XPUB_VERBOSE`: XPUB passes every subscription up, not only new ones.
    ZMQ_XPUB_VERBOSE = 40 => xpub_verbose: Held = Held, "bool", Rule::FlagNonNegative,
        Types::XPUB, false, Implemented, typed bool;
    /// `ZMQ_ROUTER_RAW`: raw tcp instead of ZMTP.
    ZMQ_ROUTER_RAW = 41 => router_raw: bool = false, "bool", Rule::FlagNonNegative,
        Types::ROUTER, false, StoredOnly;
    /// `ZMQ_IPV6`: allow IPv6 (and dual-stack binds).
    ZMQ_IPV6 = 42 => ipv6: bool = false, "bool", Rule::Flag01, Types::ALL, true, Implemented, typed bool;
    /// `ZMQ_MECHANISM` (read-only): what the security options set last.
    ZMQ_MECHANISM = 43 => mechanism: MechanismKind = MechanismKind::Null, "", Rule::ReadOnly,
        Types::ALL, true, Implemented;
    /// `ZMQ_PLAIN_SERVER`: be the PLAIN server (1) or back to NULL (0). The field is libzmq's
    /// one as-server flag, which the PLAIN client options clear.
    ZMQ_PLAIN_SERVER = 44 => as_server: bool = false, "bool", Rule::Flag01, Types::ALL, true,
        Implemented, typed bool;
    /// `ZMQ_PLAIN_USERNAME`: be a PLAIN client with this username; `(NULL, 0)` goes back to
    /// NULL and keeps the stored name.
    ZMQ_PLAIN_USERNAME = 45 => plain_username: Secret = Secret::default(), "",
        Rule::Text { max: 255, null_clears: true }, Types::ALL, true, Implemented;
    /// `ZMQ_PLAIN_PASSWORD`: be a PLAIN client with this password; `(NULL, 0)` as the
    /// username.
    ZMQ_PLAIN_PASSWORD = 46 => plain_password: Secret = Secret::default(), "",
        Rule::Text { max: 255, null_clears: true }, Types::ALL, true, Implemented;
    /// `ZMQ_CURVE_SERVER`: be the CURVE server (1) or back to NULL (0); shares the as-server
    /// flag with `ZMQ_PLAIN_SERVER`.
    ZMQ_CURVE_SERVER = 47 => curve_server: Held = Held, "bool", Rule::Flag01, Types::ALL, true,
        Implemented;
    /// `ZMQ_CURVE_PUBLICKEY`: our long-term public key; makes the mechanism CURVE.
    ZMQ_CURVE_PUBLICKEY = 48 => curve_publickey: CurveKey = CurveKey::default(), "",
        Rule::CurveKey, Types::ALL, true, Implemented;
    /// `ZMQ_CURVE_SECRETKEY`: our long-term secret key; makes the mechanism CURVE.
    ZMQ_CURVE_SECRETKEY = 49 => curve_secretkey: CurveKey = CurveKey::default(), "",
        Rule::CurveKey, Types::ALL, true, Implemented;
    /// `ZMQ_CURVE_SERVERKEY`: the server's public key; makes this socket a CURVE client.
    ZMQ_CURVE_SERVERKEY = 50 => curve_serverkey: CurveKey = CurveKey::default(), "",
        Rule::CurveKey, Types::ALL, true, Implemented;
    /// `ZMQ_PROBE_ROUTER`: send an empty message to each new peer.
    ZMQ_PROBE_ROUTER = 51 => probe_router: bool = false, "bool", Rule::FlagNonNegative,
        Types::PROBING, false, Implemented, typed bool;
    /// `ZMQ_REQ_CORRELATE`: REQ prefixes requests with a request-id frame.
    ZMQ_REQ_CORRELATE = 52 => req_correlate: Held = Held, "bool", Rule::FlagNonNegative,
        Types::REQ, false, Implemented, typed bool;
    /// `ZMQ_REQ_RELAXED`: REQ may send a new request before the reply.
    ZMQ_REQ_RELAXED = 53 => req_relaxed: Held = Held, "bool", Rule::FlagNonNegative,
        Types::REQ, false, Implemented, typed bool;
    /// `ZMQ_CONFLATE`: on DEALER, PULL, PUSH, PUB and SUB each pipe keeps only the newest
    /// whole message, with no HWM (src/io/peer.rs decides which types).
    ZMQ_CONFLATE = 54 => conflate: bool = false, "bool", Rule::Flag01, Types::ALL, true,
        Implemented, typed bool;
    /// `ZMQ_ZAP_DOMAIN`: the domain ZAP requests name; on NULL it makes the handshake ask ZAP.
    ZMQ_ZAP_DOMAIN = 55 => zap_domain: Bytes = Bytes::new(), "",
        Rule::Text { max: 255, null_clears: false }, Types::ALL, true, Implemented;
    /// `ZMQ_ROUTER_HANDOVER`: a new connection with a known routing id takes it over.
    ZMQ_ROUTER_HANDOVER = 56 => router_handover: bool = false, "bool", Rule::FlagNonNegative,
        Types::ROUTER, false, Implemented, typed bool;
    /// `ZMQ_TOS`: IP_TOS of tcp connections.
    ZMQ_TOS = 57 => tos: i32 = 0, "", Rule::Int { min: 0, max: ANY }, Types::ALL, true,
        Implemented;
    /// `ZMQ_IPC_FILTER_PID`: peer pids an ipc listener accepts (write-only).
    ZMQ_IPC_FILTER_PID = 58 => ipc_filter_pid: Vec<i32> = Vec::new(), "", Rule::IntSet,
        Types::ALL, false, StoredOnly;
    /// `ZMQ_IPC_FILTER_UID`: peer uids an ipc listener accepts (write-only).
    ZMQ_IPC_FILTER_UID = 59 => ipc_filter_uid: Vec<i32> = Vec::new(), "", Rule::IntSet,
        Types::ALL, false, StoredOnly;
    /// `ZMQ_IPC_FILTER_GID`: peer gids an ipc listener accepts (write-only).
    ZMQ_IPC_FILTER_GID = 60 => ipc_filter_gid: Vec<i32> = Vec::new(), "", Rule::IntSet,
        Types::ALL, false, StoredOnly;
    /// `ZMQ_CONNECT_ROUTING_ID`: the routing id a ROUTER gives the peer of its next connect.
    ZMQ_CONNECT_ROUTING_ID = 61 => connect_routing_id: Option<Bytes> = None, "",
        Rule::Blob { min: 1, max: usize::MAX }, Types::ROUTING, false, Implemented;
    /// `ZMQ_HANDSHAKE_IVL`: time allowed for the greeting and handshake (0 = unlimited).
    ZMQ_HANDSHAKE_IVL = 66 => handshake_ivl: i32 = 30_000, "ms", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed std::time::Duration;
    /// `ZMQ_SOCKS_PROXY`: connect through this SOCKS5 proxy.
    ZMQ_SOCKS_PROXY = 68 => socks_proxy: Bytes = Bytes::new(), "",
        Rule::Text { max: usize::MAX, null_clears: true }, Types::ALL, true, Implemented;
    /// `ZMQ_XPUB_NODROP`: XPUB/PUB block (EAGAIN) instead of dropping at SNDHWM.
    ZMQ_XPUB_NODROP = 69 => xpub_nodrop: Held = Held, "bool", Rule::FlagNonNegative,
        Types::XPUB, false, Implemented, typed bool;
    /// `ZMQ_XPUB_MANUAL`: the application decides subscriptions with ZMQ_SUBSCRIBE.
    ZMQ_XPUB_MANUAL = 71 => xpub_manual: Held = Held, "bool", Rule::FlagNonNegative,
        Types::XPUB, false, Implemented, typed bool;
    /// `ZMQ_XPUB_WELCOME_MSG`: sent to every new subscriber.
    ZMQ_XPUB_WELCOME_MSG = 72 => xpub_welcome_msg: Held = Held, "", Rule::AnyBytes,
        Types::XPUB, false, Implemented;
    /// `ZMQ_STREAM_NOTIFY`: STREAM reports connects and disconnects.
    ZMQ_STREAM_NOTIFY = 73 => stream_notify: bool = true, "bool", Rule::Flag01, Types::STREAM,
        false, StoredOnly, typed bool;
    /// `ZMQ_INVERT_MATCHING`: deliver what does *not* match the subscriptions.
    ZMQ_INVERT_MATCHING = 74 => invert_matching: bool = false, "bool", Rule::FlagAny,
        Types::ALL, true, Implemented, typed bool;
    /// `ZMQ_HEARTBEAT_IVL`: ZMTP PINGs on each connection (0 = none).
    ZMQ_HEARTBEAT_IVL = 75 => heartbeat_ivl: i32 = 0, "ms", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed std::time::Duration;
    /// `ZMQ_HEARTBEAT_TTL`: how long the peer may stay silent after our PING; set in ms,
    /// kept in deciseconds as it goes on the wire.
    ZMQ_HEARTBEAT_TTL = 76 => heartbeat_ttl: u16 = 0, "ds", Rule::Deciseconds, Types::ALL,
        true, Implemented, typed std::time::Duration;
    /// `ZMQ_HEARTBEAT_TIMEOUT`: wait for any traffic after a PING (-1 = the interval).
    ZMQ_HEARTBEAT_TIMEOUT = 77 => heartbeat_timeout: i32 = -1, "ms",
        Rule::Int { min: 0, max: ANY }, Types::ALL, true, Implemented, typed Option<std::time::Duration>;
    /// `ZMQ_XPUB_VERBOSER`: XPUB passes every subscription and unsubscription up.
    ZMQ_XPUB_VERBOSER = 78 => xpub_verboser: Held = Held, "bool", Rule::FlagNonNegative,
        Types::XPUB, false, Implemented, typed bool;
    /// `ZMQ_CONNECT_TIMEOUT`: give up a tcp connect attempt after this long (0 = the OS's).
    ZMQ_CONNECT_TIMEOUT = 79 => connect_timeout: i32 = 0, "ms", Rule::Int { min: 0, max: ANY },
        Types::ALL, true, Implemented, typed std::time::Duration;
    /// `ZMQ_TCP_MAXRT`: TCP_USER_TIMEOUT-style retransmission limit (0 = the OS's).
    ZMQ_TCP_MAXRT = 80 => tcp_maxrt: i32 = 0, "ms", Rule::Int { min: 0, max: ANY }, Types::ALL,
        true, Implemented, typed std::time::Duration;
    /// `ZMQ_THREAD_SAFE` (read-only: 0, no thread-safe socket types).
    ZMQ_THREAD_SAFE = 81 => thread_safe: Held = Held, "bool", Rule::ReadOnly, Types::ALL, true,
        Implemented;
    /// `ZMQ_MULTICAST_MAXTPDU` (pgm/norm only).
    ZMQ_MULTICAST_MAXTPDU = 84 => multicast_maxtpdu: i32 = 1500, "bytes",
        Rule::Int { min: 1, max: ANY }, Types::ALL, true, StoredOnly;
    /// `ZMQ_USE_FD`: bind on this already-open listening descriptor (-1 = none).
    ZMQ_USE_FD = 89 => use_fd: i32 = -1, "fd", Rule::Int { min: -1, max: ANY }, Types::ALL,
        true, Implemented;
    /// `ZMQ_BINDTODEVICE`: SO_BINDTODEVICE for tcp connections and listeners.
    ZMQ_BINDTODEVICE = 92 => bindtodevice: Bytes = Bytes::new(), "",
        Rule::Text { max: 16, null_clears: true }, Types::ALL, true, Implemented;
    /// `ZMQ_ZAP_ENFORCE_DOMAIN` (draft number, answered by non-draft libzmq 4.3 too): with
    /// ZAP_DOMAIN, no ZAP handler fails NULL and CURVE handshakes; without, CURVE skips ZAP.
    ZMQ_ZAP_ENFORCE_DOMAIN = 93 => zap_enforce_domain: bool = false, "bool", Rule::FlagAny,
        Types::ALL, true, Implemented;
    /// `ZMQ_LOOPBACK_FASTPATH` (draft number; Windows-only behaviour in libzmq).
    ZMQ_LOOPBACK_FASTPATH = 94 => loopback_fastpath: bool = false, "bool", Rule::FlagAny,
        Types::ALL, true, StoredOnly;
    /// `ZMQ_MULTICAST_LOOP` (draft number; pgm/norm only).
    ZMQ_MULTICAST_LOOP = 96 => multicast_loop: bool = true, "bool", Rule::FlagAny, Types::ALL,
        true, StoredOnly;
    /// `ZMQ_SOCKS_USERNAME` (draft number, answered by non-draft libzmq 4.3 too): offer the
    /// SOCKS5 proxy username/password authentication with this name (empty: none).
    ZMQ_SOCKS_USERNAME = 99 => socks_username: Secret = Secret::default(), "",
        Rule::TextOrEmpty { max: 255 }, Types::ALL, true, Implemented;
    /// `ZMQ_SOCKS_PASSWORD` (draft number, as the username): the password that goes with it.
    ZMQ_SOCKS_PASSWORD = 100 => socks_password: Secret = Secret::default(), "",
        Rule::TextOrEmpty { max: 255 }, Types::ALL, true, Implemented;
}

/// Reads an option from `TABLE`'s slots after the caller checked the socket type.
impl Options {
    /// Sets an option held in this struct. EINVAL for an unknown number or a bad value.
    pub(crate) fn set(&mut self, option: i32, value: Input<'_>) -> Result<()> {
        let spec = spec(option).ok_or(Error::Invalid)?;
        match option {
            ZMQ_IPV4ONLY => {
                let mut v4 = false;
                v4.set(spec.rule, value)?;
                self.ipv6 = !v4;
                Ok(())
            }
            ZMQ_TCP_ACCEPT_FILTER => self.set_accept_filter(value),
            ZMQ_PLAIN_USERNAME | ZMQ_PLAIN_PASSWORD => {
                let slot = if option == ZMQ_PLAIN_USERNAME {
                    &mut self.plain_username
                } else {
                    &mut self.plain_password
                };
                security::keep_on_null(slot, spec.rule, value)?;
                self.security_option_set(option, value);
                Ok(())
            }
            ZMQ_PLAIN_SERVER | ZMQ_CURVE_SERVER => {
                self.as_server.set(spec.rule, value)?;
                self.security_option_set(option, value);
                Ok(())
            }
            ZMQ_CURVE_PUBLICKEY | ZMQ_CURVE_SECRETKEY | ZMQ_CURVE_SERVERKEY => {
                self.slot_mut(option)
                    .ok_or(Error::Invalid)?
                    .set(spec.rule, value)?;
                self.security_option_set(option, value);
                Ok(())
            }
            _ => self
                .slot_mut(option)
                .ok_or(Error::Invalid)?
                .set(spec.rule, value),
        }
    }

    /// Writes an option held in this struct into `out` (the caller's whole buffer); `None` if
    /// the socket answers it.
    pub(crate) fn get(&self, option: i32, out: &mut [u8]) -> Option<Result<usize>> {
        let spec = spec(option)?;
        if !spec.readable {
            return Some(Err(Error::Invalid));
        }
        match option {
            ZMQ_IPV4ONLY => Some((!self.ipv6).get(spec.rule, out)),
            ZMQ_RCVMORE | ZMQ_FD | ZMQ_EVENTS | ZMQ_TYPE | ZMQ_LAST_ENDPOINT => None,
            ZMQ_PLAIN_SERVER => Some(self.plain_server().get(spec.rule, out)),
            ZMQ_CURVE_SERVER => Some(self.is_curve_server().get(spec.rule, out)),
            // libzmq's do_getsockopt<int>: at least sizeof (int), the rest zero-filled.
            ZMQ_THREAD_SAFE => Some(put(out, &0i32.to_ne_bytes())),
            _ => self.slot(option).map(|s| s.get(spec.rule, out)),
        }
    }

    /// libzmq's `tcp_address_mask_t::resolve`: an IP address, optionally `/bits`; an IPv6 one
    /// only with ZMQ_IPV6 on; `(NULL, 0)` clears the list.
    fn set_accept_filter(&mut self, value: Input<'_>) -> Result<()> {
        if value.bytes.is_empty() {
            if value.null {
                self.tcp_accept_filters.clear();
                return Ok(());
            }
            return Err(Error::Invalid);
        }
        if value.bytes.len() > 255 {
            return Err(Error::Invalid);
        }
        let text = std::str::from_utf8(value.bytes).map_err(|_| Error::Invalid)?;
        let (addr, bits) = match text.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        let addr: std::net::IpAddr = addr.parse().map_err(|_| Error::Invalid)?;
        if addr.is_ipv6() && !self.ipv6 {
            return Err(Error::Invalid);
        }
        let full = if addr.is_ipv6() { 128 } else { 32 };
        if let Some(bits) = bits {
            let n: u32 = bits.parse().map_err(|_| Error::Invalid)?;
            if n > full || bits.is_empty() {
                return Err(Error::Invalid);
            }
        }
        self.tcp_accept_filters
            .push(Bytes::copy_from_slice(value.bytes));
        Ok(())
    }

    /// The most bytes an inbound message may have, as the frame decoder wants it.
    pub(crate) fn max_msg_size(&self) -> Option<u64> {
        u64::try_from(self.maxmsgsize).ok()
    }
}

impl Options {
    /// libzmq's defaults for a new socket of `kind`: the table's, except that a SUB or XSUB
    /// lingers 0 ms (libzmq's `xsub_t` constructor: closing it does not wait for its
    /// subscriptions to reach the wire), which `ZMQ_LINGER` reads back as 0.
    ///
    /// ```
    /// use ferromq::{option::Options, SocketType};
    /// assert_eq!(Options::for_type(SocketType::Sub).linger, 0);
    /// assert_eq!(Options::for_type(SocketType::Pub).linger, -1);
    /// ```
    pub fn for_type(kind: crate::SocketType) -> Options {
        let mut options = Options::default();
        if matches!(kind, crate::SocketType::Sub | crate::SocketType::XSub) {
            options.linger = 0;
        }
        options
    }
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
        let mut out = [0u8; 4];
        assert_eq!(o.get(ZMQ_SNDHWM, &mut out), Some(Ok(4)));
        assert_eq!(i32::from_ne_bytes(out[..4].try_into().unwrap()), 1000);
        o.set(ZMQ_SNDHWM, Input::of(&5i32.to_ne_bytes())).unwrap();
        assert_eq!(o.sndhwm, 5);
        assert_eq!(
            o.set(ZMQ_SNDHWM, Input::of(&(-1i32).to_ne_bytes())),
            Err(Error::Invalid)
        );
        assert_eq!(o.set(ZMQ_SNDHWM, Input::of(&[1, 2])), Err(Error::Invalid));
        assert_eq!(
            o.set(9999, Input::of(&1i32.to_ne_bytes())),
            Err(Error::Invalid)
        );
        assert_eq!(o.get(9999, &mut out), None);
        assert_eq!(
            o.get(ZMQ_SNDHWM, &mut [0u8; 8]),
            Some(Err(Error::Invalid)),
            "ints need exactly sizeof (int), as libzmq"
        );
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
        o.set(ZMQ_HEARTBEAT_IVL, Input::of(&250i32.to_ne_bytes()))
            .unwrap();
        o.set(ZMQ_HEARTBEAT_TIMEOUT, Input::of(&0i32.to_ne_bytes()))
            .unwrap();
        // The TTL travels in deciseconds: 1,234 ms is stored (and read back) as 1,200.
        o.set(ZMQ_HEARTBEAT_TTL, Input::of(&1234i32.to_ne_bytes()))
            .unwrap();
        assert_eq!(o.heartbeat_ttl, 12);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TTL), 1200);
        o.set(ZMQ_HEARTBEAT_TTL, Input::of(&6_553_599i32.to_ne_bytes()))
            .unwrap();
        assert_eq!(o.heartbeat_ttl, u16::MAX);
        // libzmq divides before it checks: -99 is 0, -100 and 6,553,600 are refused.
        o.set(ZMQ_HEARTBEAT_TTL, Input::of(&(-99i32).to_ne_bytes()))
            .unwrap();
        assert_eq!(o.heartbeat_ttl, 0);
        for bad in [-100i32, 6_553_600] {
            assert_eq!(
                o.set(ZMQ_HEARTBEAT_TTL, Input::of(&bad.to_ne_bytes())),
                Err(Error::Invalid)
            );
        }
        for opt in [ZMQ_HEARTBEAT_IVL, ZMQ_HEARTBEAT_TIMEOUT] {
            assert_eq!(
                o.set(opt, Input::of(&(-1i32).to_ne_bytes())),
                Err(Error::Invalid)
            );
        }
        assert_eq!(get(&o, ZMQ_HEARTBEAT_IVL), 250);
        assert_eq!(get(&o, ZMQ_HEARTBEAT_TIMEOUT), 0);
    }

    #[test]
    fn routing_id_rules() {
        let mut o = Options::default();
        o.set(ZMQ_ROUTING_ID, Input::of(b"abc")).unwrap();
        let mut out = [0u8; 255];
        assert_eq!(o.get(ZMQ_ROUTING_ID, &mut out), Some(Ok(3)));
        assert_eq!(o.set(ZMQ_ROUTING_ID, Input::of(b"")), Err(Error::Invalid));
        // libzmq's options.cpp takes any 1..=255 bytes, a leading zero too.
        o.set(ZMQ_ROUTING_ID, Input::of(&[0, 1])).unwrap();
        assert_eq!(
            o.get(ZMQ_ROUTING_ID, &mut out[..1]),
            Some(Err(Error::Invalid))
        );
    }

    /// Seen through Ruby's ffi-rzmq, whose getsockopt read 0 on Debian's libzmq and -1 on
    /// ferromq for a fresh SUB's and XSUB's ZMQ_LINGER (tests/c/options.c now reads it too).
    #[test]
    fn sub_and_xsub_linger_zero_by_default_as_in_libzmq() {
        use crate::SocketType as T;
        let linger = |kind| {
            let mut out = [0u8; 4];
            assert_eq!(
                Options::for_type(kind).get(ZMQ_LINGER, &mut out),
                Some(Ok(4))
            );
            i32::from_ne_bytes(out)
        };
        assert_eq!((linger(T::Sub), linger(T::XSub)), (0, 0));
        for kind in [
            T::Pair,
            T::Pub,
            T::Req,
            T::Rep,
            T::Dealer,
            T::Router,
            T::Pull,
            T::Push,
        ] {
            assert_eq!(linger(kind), -1, "{kind:?}");
        }
        assert_eq!((linger(T::XPub), linger(T::Stream)), (-1, -1));
    }

    #[test]
    fn booleans_accept_only_zero_and_one() {
        let mut o = Options::default();
        o.set(ZMQ_IMMEDIATE, Input::of(&1i32.to_ne_bytes()))
            .unwrap();
        assert!(o.immediate);
        assert_eq!(
            o.set(ZMQ_IMMEDIATE, Input::of(&2i32.to_ne_bytes())),
            Err(Error::Invalid)
        );
        o.set(ZMQ_MAXMSGSIZE, Input::of(&100i64.to_ne_bytes()))
            .unwrap();
        assert_eq!(o.max_msg_size(), Some(100));
    }
}
