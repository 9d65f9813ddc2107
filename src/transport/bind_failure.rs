//! Why a tcp or ipc bind failed, as the monitor must report it. libzmq's listeners close the
//! socket they made when bind or listen refuses, which reports ZMQ_EVENT_CLOSED with its
//! descriptor before the socket reports ZMQ_EVENT_BIND_FAILED; a failure before there was a
//! socket (an address that does not resolve, a device that cannot be set) reports only the
//! latter.

use std::os::fd::RawFd;

use crate::error::Error;

#[derive(Debug)]
pub(crate) struct BindFailure {
    pub error: Error,
    /// The descriptor of the listening socket that was made and is closed by now, if any.
    pub closed: Option<RawFd>,
}

impl BindFailure {
    /// A failure of the made socket `fd` (bind or listen), which is closed with it.
    pub(crate) fn of_socket(error: impl Into<Error>, fd: RawFd) -> BindFailure {
        BindFailure {
            error: error.into(),
            closed: Some(fd),
        }
    }
}

impl From<Error> for BindFailure {
    fn from(error: Error) -> BindFailure {
        BindFailure {
            error,
            closed: None,
        }
    }
}

impl From<std::io::Error> for BindFailure {
    fn from(error: std::io::Error) -> BindFailure {
        BindFailure::from(Error::from(error))
    }
}
