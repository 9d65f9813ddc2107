//! Socket types: libzmq's numeric values (include/zmq.h), their wire names (the READY
//! `Socket-Type` property) and which pairs may talk (RFC 23/37, libzmq src/mechanism.cpp
//! `check_socket_type`).

/// A ZeroMQ socket type. Numeric values are libzmq's `ZMQ_*` constants; 12..=20 are libzmq's
/// draft types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SocketType {
    /// ZMQ_PAIR (0)
    Pair,
    /// ZMQ_PUB (1)
    Pub,
    /// ZMQ_SUB (2)
    Sub,
    /// ZMQ_REQ (3)
    Req,
    /// ZMQ_REP (4)
    Rep,
    /// ZMQ_DEALER (5)
    Dealer,
    /// ZMQ_ROUTER (6)
    Router,
    /// ZMQ_PULL (7)
    Pull,
    /// ZMQ_PUSH (8)
    Push,
    /// ZMQ_XPUB (9)
    XPub,
    /// ZMQ_XSUB (10)
    XSub,
    /// ZMQ_STREAM (11): raw TCP, never speaks ZMTP, so it pairs with nothing.
    Stream,
    /// ZMQ_SERVER (12, draft)
    Server,
    /// ZMQ_CLIENT (13, draft)
    Client,
    /// ZMQ_RADIO (14, draft)
    Radio,
    /// ZMQ_DISH (15, draft)
    Dish,
    /// ZMQ_GATHER (16, draft)
    Gather,
    /// ZMQ_SCATTER (17, draft)
    Scatter,
    /// ZMQ_DGRAM (18, draft)
    Dgram,
    /// ZMQ_PEER (19, draft)
    Peer,
    /// ZMQ_CHANNEL (20, draft)
    Channel,
}

/// Every type in numeric order; index = libzmq value.
const ALL: [SocketType; 21] = [
    SocketType::Pair,
    SocketType::Pub,
    SocketType::Sub,
    SocketType::Req,
    SocketType::Rep,
    SocketType::Dealer,
    SocketType::Router,
    SocketType::Pull,
    SocketType::Push,
    SocketType::XPub,
    SocketType::XSub,
    SocketType::Stream,
    SocketType::Server,
    SocketType::Client,
    SocketType::Radio,
    SocketType::Dish,
    SocketType::Gather,
    SocketType::Scatter,
    SocketType::Dgram,
    SocketType::Peer,
    SocketType::Channel,
];

impl SocketType {
    /// Every socket type, in libzmq numeric order.
    pub fn all() -> &'static [SocketType] {
        &ALL
    }

    /// libzmq's numeric value (`ZMQ_PAIR` = 0 ... `ZMQ_CHANNEL` = 20).
    pub fn to_raw(self) -> i32 {
        match self {
            Self::Pair => 0,
            Self::Pub => 1,
            Self::Sub => 2,
            Self::Req => 3,
            Self::Rep => 4,
            Self::Dealer => 5,
            Self::Router => 6,
            Self::Pull => 7,
            Self::Push => 8,
            Self::XPub => 9,
            Self::XSub => 10,
            Self::Stream => 11,
            Self::Server => 12,
            Self::Client => 13,
            Self::Radio => 14,
            Self::Dish => 15,
            Self::Gather => 16,
            Self::Scatter => 17,
            Self::Dgram => 18,
            Self::Peer => 19,
            Self::Channel => 20,
        }
    }

    /// The type with libzmq numeric value `raw`, if any.
    pub fn from_raw(raw: i32) -> Option<Self> {
        usize::try_from(raw).ok().and_then(|i| ALL.get(i).copied())
    }

    /// The wire name sent in the READY `Socket-Type` property.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pair => "PAIR",
            Self::Pub => "PUB",
            Self::Sub => "SUB",
            Self::Req => "REQ",
            Self::Rep => "REP",
            Self::Dealer => "DEALER",
            Self::Router => "ROUTER",
            Self::Pull => "PULL",
            Self::Push => "PUSH",
            Self::XPub => "XPUB",
            Self::XSub => "XSUB",
            Self::Stream => "STREAM",
            Self::Server => "SERVER",
            Self::Client => "CLIENT",
            Self::Radio => "RADIO",
            Self::Dish => "DISH",
            Self::Gather => "GATHER",
            Self::Scatter => "SCATTER",
            Self::Dgram => "DGRAM",
            Self::Peer => "PEER",
            Self::Channel => "CHANNEL",
        }
    }

    /// The type with wire name `name`. Case-sensitive, as libzmq compares it byte for byte.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        ALL.iter().copied().find(|t| t.name().as_bytes() == name)
    }

    /// Whether a socket of this type accepts a peer of type `peer` (libzmq's
    /// `mechanism_t::check_socket_type`; STREAM never pairs).
    pub fn is_compatible(self, peer: SocketType) -> bool {
        use SocketType as T;
        match self {
            T::Req => matches!(peer, T::Rep | T::Router),
            T::Rep => matches!(peer, T::Req | T::Dealer),
            T::Dealer => matches!(peer, T::Rep | T::Dealer | T::Router),
            T::Router => matches!(peer, T::Req | T::Dealer | T::Router),
            T::Push => peer == T::Pull,
            T::Pull => peer == T::Push,
            T::Pub | T::XPub => matches!(peer, T::Sub | T::XSub),
            T::Sub | T::XSub => matches!(peer, T::Pub | T::XPub),
            T::Pair => peer == T::Pair,
            T::Server => peer == T::Client,
            T::Client => peer == T::Server,
            T::Radio => peer == T::Dish,
            T::Dish => peer == T::Radio,
            T::Gather => peer == T::Scatter,
            T::Scatter => peer == T::Gather,
            T::Dgram => peer == T::Dgram,
            T::Peer => peer == T::Peer,
            T::Channel => peer == T::Channel,
            T::Stream => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_round_trip() {
        for (i, t) in SocketType::all().iter().enumerate() {
            assert_eq!(t.to_raw(), i32::try_from(i).unwrap());
            assert_eq!(SocketType::from_raw(t.to_raw()), Some(*t));
            assert_eq!(SocketType::from_name(t.name().as_bytes()), Some(*t));
        }
        assert_eq!(SocketType::from_raw(-1), None);
        assert_eq!(SocketType::from_raw(21), None);
        assert_eq!(SocketType::from_name(b"dealer"), None);
        assert_eq!(SocketType::from_raw(5), Some(SocketType::Dealer));
        assert_eq!(SocketType::from_raw(20), Some(SocketType::Channel));
    }

    #[test]
    fn matrix_is_symmetric_and_matches_rfc() {
        use SocketType as T;
        for &a in SocketType::all() {
            for &b in SocketType::all() {
                assert_eq!(a.is_compatible(b), b.is_compatible(a), "{a:?} {b:?}");
            }
        }
        assert!(T::Req.is_compatible(T::Router));
        assert!(!T::Req.is_compatible(T::Req));
        assert!(T::XPub.is_compatible(T::Sub));
        assert!(!T::Pub.is_compatible(T::Pub));
        assert!(!T::Push.is_compatible(T::Push));
        assert!(!T::Stream.is_compatible(T::Stream));
        let pairs = SocketType::all()
            .iter()
            .flat_map(|&a| SocketType::all().iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| a.is_compatible(b))
            .count();
        // REQ 2, REP 2, DEALER 3, ROUTER 3, PUSH/PULL 2, PUB/XPUB/SUB/XSUB 8, PAIR 1,
        // CLIENT/SERVER 2, RADIO/DISH 2, GATHER/SCATTER 2, DGRAM 1, PEER 1, CHANNEL 1.
        assert_eq!(pairs, 30);
    }
}
