//! Sans-IO routing pieces for ferromq sockets: no sockets, threads or clocks, no unsafe.
//!
//! So far, the subscription tries of the publish/subscribe family:
//!
//! ```text
//!   SUB/XSUB                               PUB/XPUB
//!   SubscriptionTrie                       MultiTrie<PeerId>
//!   ZMQ_SUBSCRIBE "a" -> add("a") == true  SUBSCRIBE "a" from peer 7 -> add("a", 7)
//!     (first: send SUBSCRIBE upstream)       (first for "a": XPUB passes it up)
//!   incoming message -> matches(msg)       outgoing message -> for_each_match(msg, send_to)
//!   reconnect -> iter() resends all        peer gone -> remove_peer(7, |prefix| cancel up)
//! ```
//!
//! Both are path-compressed tries (see the `radix` module): with random 20-byte topics a
//! lookup touches a dense root table, a short sorted child list, and one leaf label compared
//! with a single `memcmp`, instead of one node per byte as libzmq's tries do.
#![forbid(unsafe_code)]

mod children;
mod label;
mod multi_trie;
mod radix;
mod subscribers;
mod subscription_trie;

pub use multi_trie::MultiTrie;
pub use subscription_trie::SubscriptionTrie;
