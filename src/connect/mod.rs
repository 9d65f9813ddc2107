//! Turning an endpoint into an established stream and handing it to an I/O thread: bind and
//! accept, connect and reconnect with back-off, the greeting and handshake under HANDSHAKE_IVL
//! (on the tokio management runtime), then the hand-off to `crate::io`. Nothing here touches
//! a message once its connection is established.

pub(crate) mod attach_order;
pub(crate) mod backoff;
pub(crate) mod connecter;
pub(crate) mod connection;
pub mod connection_props;
pub(crate) mod endpoint;
pub(crate) mod listener;
pub(crate) mod resolver;
pub(crate) mod socks;
pub(crate) mod tcp_options;
#[cfg(test)]
pub(crate) mod test_names;
pub(crate) mod zap;
