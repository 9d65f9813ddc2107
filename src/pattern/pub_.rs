//! PUB (RFC 29, libzmq src/pub.cpp): an XPUB that keeps subscriptions to itself and cannot
//! receive. Everything else (filtering, dropping at SNDHWM, XPUB_NODROP, INVERT_MATCHING)
//! is the XPUB's.

use crate::pattern::xpub::{Role, Xpub};

/// A PUB socket's pattern.
pub(crate) fn new() -> Xpub {
    Xpub::new(Role::Pub)
}
