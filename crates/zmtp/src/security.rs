//! Which security mechanism a connection speaks, and in which role: what a socket's
//! `ZMQ_PLAIN_*` (and later `ZMQ_CURVE_*`) options add up to when a connection starts.

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
}

impl Security {
    /// The mechanism named in our greeting; the peer's must be the same.
    pub fn mechanism(&self) -> Mechanism {
        match self {
            Self::Null => Mechanism::Null,
            Self::PlainClient(_) | Self::PlainServer => Mechanism::Plain,
        }
    }

    /// Whether we are the mechanism's server (the greeting's as-server flag).
    pub fn is_server(&self) -> bool {
        matches!(self, Self::PlainServer)
    }
}
