//! Shared pieces of the ferromq benchmarks: one [`backend::Backend`] interface over ferromq,
//! libzmq and zmq.rs, the comparison-matrix measurements written once for both ([`matrix`]), and the
//! report writers ([`report`]).

#![allow(missing_debug_implementations)]

pub mod backend;
pub mod ferromq;
pub mod libzmq;
pub mod libzmq_trie;
pub mod matrix;
pub mod plot;
pub mod report;
pub mod zeromq;

/// How long any receive may wait before a run is declared failed, so a broken run never hangs.
pub const RECV_TIMEOUT_MS: i32 = 10_000;
