//! The hot path and what it stands on: the I/O threads (mio), the engine that turns a stream
//! into frames and frames into pipe items, the pipes between an engine and a socket (`peer`),
//! buffers, heartbeats, wake-ups, and the monitor's event sink. Nothing here knows a socket
//! type or a `Socket`: events leave through a sink the socket layer installs.

pub(crate) mod activity;
pub mod body_pool;
pub(crate) mod deadlines;
pub(crate) mod engine;
pub(crate) mod frame_limit;
pub(crate) mod framing;
pub(crate) mod heartbeat;
pub(crate) mod io_thread;
pub(crate) mod lend;
pub(crate) mod loopback_pairs;
pub mod monitor;
pub(crate) mod peer;
pub(crate) mod peer_hwm;
pub(crate) mod pool;
pub(crate) mod raw;
pub(crate) mod ready;
pub(crate) mod recv_buffers;
pub mod send_buffers;
pub(crate) mod session;
pub(crate) mod shared_engine;
pub(crate) mod signaler;
pub(crate) mod spin_backoff;
pub(crate) mod stream;
pub(crate) mod thread_signals;
pub(crate) mod wake;
