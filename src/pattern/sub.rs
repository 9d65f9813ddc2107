//! SUB (RFC 29, libzmq src/sub.cpp): an XSUB whose subscriptions come from ZMQ_SUBSCRIBE /
//! ZMQ_UNSUBSCRIBE rather than from sent messages, which filters what it receives against
//! them (the publisher filters too), and which cannot send.

use crate::pattern::xsub::{Role, Xsub};

/// A SUB socket's pattern.
pub(crate) fn new() -> Xsub {
    Xsub::new(Role::Sub)
}
