//! What the application touches: the socket handle and its async wrapper, flags, poll and
//! proxy. Everything here runs on the application's threads; it reaches the layers below
//! through the context's runtime (`crate::runtime`), the connection tasks (`crate::connect`)
//! and the socket's mailbox (`crate::pattern::mailbox`).

pub(crate) mod async_socket;
pub(crate) mod async_stream;
pub(crate) mod flags;
pub(crate) mod multipart;
pub(crate) mod poll;
pub(crate) mod proxy;
pub(crate) mod send_error;
pub(crate) mod socket;
pub(crate) mod zap_client;
