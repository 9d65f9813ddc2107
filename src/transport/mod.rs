//! Transport specifics below the connection tasks: ipc paths and their clean-up, and inproc,
//! which has no connection at all (pipes straight between two sockets of one context).

pub(crate) mod bind_failure;
pub(crate) mod inproc;
pub(crate) mod ipc;
