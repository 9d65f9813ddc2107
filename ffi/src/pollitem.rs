//! `zmq_pollitem_t`, the item array `zmq_poll` takes (the function itself arrives with sockets).

use core::ffi::{c_int, c_short, c_void};

/// The type of a native socket or file descriptor in `zmq_pollitem_t`.
pub type zmq_fd_t = c_int;

/// One entry of a `zmq_poll` set: a ferromq socket, or (when `socket` is NULL) a native fd.
#[repr(C)]
#[derive(Debug)]
pub struct zmq_pollitem_t {
    pub socket: *mut c_void,
    pub fd: zmq_fd_t,
    pub events: c_short,
    pub revents: c_short,
}
