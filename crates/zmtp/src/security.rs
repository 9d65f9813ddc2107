//! Which security mechanism a connection speaks, and in which role: what a socket's
//! `ZMQ_PLAIN_*` and `ZMQ_CURVE_*` options add up to when a connection starts.

use crate::curve::CurveClientKeys;
use crate::curve_keys::KeyPair;
use crate::greeting::Mechanism;
use crate::plain::PlainCredentials;

/// Our side's mechanism and role.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Security {
    /// RFC 37 NULL: no authentication.
    #[default]
    Null,
    /// RFC 24 PLAIN client, sending these credentials.
    PlainClient(PlainCredentials),
    /// RFC 24 PLAIN server.
    PlainServer,
    /// RFC 26 CURVE client: our long-term keys and the server's public key.
    CurveClient(CurveClientKeys),
    /// RFC 26 CURVE server with its long-term keys.
    CurveServer(KeyPair),
}

impl Security {
    /// The mechanism named in our greeting; the peer's must be the same.
    pub fn mechanism(&self) -> Mechanism {
        match self {
            Self::Null => Mechanism::Null,
            Self::PlainClient(_) | Self::PlainServer => Mechanism::Plain,
            Self::CurveClient(_) | Self::CurveServer(_) => Mechanism::Curve,
        }
    }

    /// Whether we are the mechanism's server (the greeting's as-server flag).
    pub fn is_server(&self) -> bool {
        matches!(self, Self::PlainServer | Self::CurveServer(_))
    }
}
