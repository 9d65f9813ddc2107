//! One error type whose variants map 1:1 onto the errno values libzmq reports, so that the C
//! ABI can translate without a table of special cases and Rust callers can still `match`.

use std::fmt;
use std::io;

/// libzmq's base for the errno values it invents (`ZMQ_HAUSNUMERO`).
pub const ZMQ_HAUSNUMERO: i32 = 156_384_712;
/// `EFSM`: the operation is not valid in the socket's current state.
pub const EFSM: i32 = ZMQ_HAUSNUMERO + 51;
/// `ENOCOMPATPROTO`: the transport does not fit the socket type.
pub const ENOCOMPATPROTO: i32 = ZMQ_HAUSNUMERO + 52;
/// `ETERM`: the context was terminated.
pub const ETERM: i32 = ZMQ_HAUSNUMERO + 53;
/// `EMTHREAD`: no I/O thread is available.
pub const EMTHREAD: i32 = ZMQ_HAUSNUMERO + 54;

/// Result with the crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Everything a ferromq call can fail with, one variant per libzmq errno.
///
/// ```
/// use ferromq::{Context, Error, SocketType};
/// let ctx = Context::new();
/// let mut s = ctx.socket(SocketType::Pair)?;
/// match s.bind("nope://x") {
///     Err(Error::ProtoNoSupport) => {} // an unknown transport
///     other => panic!("unexpected {other:?}"),
/// }
/// assert_eq!(s.bind("tcp://no-port"), Err(Error::Invalid));
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `EAGAIN`: nothing to receive / no room to send now (non-blocking or timed out).
    Again,
    /// `EINTR`: a blocking call was interrupted.
    Interrupted,
    /// `ETERM`: the context was shut down.
    Term,
    /// `EFSM`: not valid in the socket's current state.
    Fsm,
    /// `EHOSTUNREACH`: ROUTER_MANDATORY and the routing id is unknown.
    HostUnreachable,
    /// `ENOTSOCK`: the socket is closed or invalid.
    NotSock,
    /// `EINVAL`: invalid argument (endpoint, option, value).
    Invalid,
    /// `EPROTONOSUPPORT`: unknown transport.
    ProtoNoSupport,
    /// `EADDRINUSE`.
    AddrInUse,
    /// `EADDRNOTAVAIL`.
    AddrNotAvail,
    /// `ECONNREFUSED`.
    ConnRefused,
    /// `EMTHREAD`.
    MThread,
    /// `ENOCOMPATPROTO`.
    NoCompatProto,
    /// `EMSGSIZE`.
    MsgSize,
    /// `ENOTSUP`: the socket type does not support the operation.
    NotSup,
    /// `ENODEV`: no such interface.
    NoDev,
    /// `EFAULT`.
    Fault,
    /// `ENOENT`: e.g. unbind/disconnect of an endpoint not in use.
    NoEnt,
    /// `ENOMEM`.
    NoMem,
    /// `EMFILE`: too many open files.
    MFile,
    /// `ENOBUFS`.
    NoBufs,
    /// `ENOTCONN`.
    NotConn,
    /// `ECONNRESET`.
    ConnReset,
    /// `ECONNABORTED`.
    ConnAborted,
    /// `ETIMEDOUT`.
    TimedOut,
    /// `EACCES`.
    Access,
    /// `ENETDOWN`.
    NetDown,
    /// `ENETUNREACH`.
    NetUnreach,
    /// `ENAMETOOLONG`: an ipc path longer than a Unix socket address holds.
    NameTooLong,
    /// Any other OS errno, kept as is.
    Os(i32),
}

impl Error {
    /// The errno libzmq would set for this error.
    ///
    /// ```
    /// use ferromq::{Error, ETERM};
    /// assert_eq!(Error::Again.errno(), libc::EAGAIN);
    /// assert_eq!(Error::Term.errno(), ETERM); // libzmq's own number, above ZMQ_HAUSNUMERO
    /// ```
    pub fn errno(&self) -> i32 {
        match self {
            Error::Again => libc::EAGAIN,
            Error::Interrupted => libc::EINTR,
            Error::Term => ETERM,
            Error::Fsm => EFSM,
            Error::HostUnreachable => libc::EHOSTUNREACH,
            Error::NotSock => libc::ENOTSOCK,
            Error::Invalid => libc::EINVAL,
            Error::ProtoNoSupport => libc::EPROTONOSUPPORT,
            Error::AddrInUse => libc::EADDRINUSE,
            Error::AddrNotAvail => libc::EADDRNOTAVAIL,
            Error::ConnRefused => libc::ECONNREFUSED,
            Error::MThread => EMTHREAD,
            Error::NoCompatProto => ENOCOMPATPROTO,
            Error::MsgSize => libc::EMSGSIZE,
            Error::NotSup => libc::ENOTSUP,
            Error::NoDev => libc::ENODEV,
            Error::Fault => libc::EFAULT,
            Error::NoEnt => libc::ENOENT,
            Error::NoMem => libc::ENOMEM,
            Error::MFile => libc::EMFILE,
            Error::NoBufs => libc::ENOBUFS,
            Error::NotConn => libc::ENOTCONN,
            Error::ConnReset => libc::ECONNRESET,
            Error::ConnAborted => libc::ECONNABORTED,
            Error::TimedOut => libc::ETIMEDOUT,
            Error::Access => libc::EACCES,
            Error::NetDown => libc::ENETDOWN,
            Error::NetUnreach => libc::ENETUNREACH,
            Error::NameTooLong => libc::ENAMETOOLONG,
            Error::Os(n) => *n,
        }
    }

    /// The error for an errno value; unknown values are kept as [`Error::Os`].
    ///
    /// ```
    /// use ferromq::{Error, EFSM};
    /// assert_eq!(Error::from_errno(EFSM), Error::Fsm);
    /// assert_eq!(Error::from_errno(libc::EINVAL), Error::Invalid);
    /// assert_eq!(Error::from_errno(Error::HostUnreachable.errno()), Error::HostUnreachable);
    /// ```
    pub fn from_errno(errno: i32) -> Error {
        match errno {
            libc::EAGAIN => Error::Again,
            libc::EINTR => Error::Interrupted,
            ETERM => Error::Term,
            EFSM => Error::Fsm,
            libc::EHOSTUNREACH => Error::HostUnreachable,
            libc::ENOTSOCK => Error::NotSock,
            libc::EINVAL => Error::Invalid,
            libc::EPROTONOSUPPORT => Error::ProtoNoSupport,
            libc::EADDRINUSE => Error::AddrInUse,
            libc::EADDRNOTAVAIL => Error::AddrNotAvail,
            libc::ECONNREFUSED => Error::ConnRefused,
            EMTHREAD => Error::MThread,
            ENOCOMPATPROTO => Error::NoCompatProto,
            libc::EMSGSIZE => Error::MsgSize,
            libc::ENOTSUP => Error::NotSup,
            libc::ENODEV => Error::NoDev,
            libc::EFAULT => Error::Fault,
            libc::ENOENT => Error::NoEnt,
            libc::ENOMEM => Error::NoMem,
            libc::EMFILE => Error::MFile,
            libc::ENOBUFS => Error::NoBufs,
            libc::ENOTCONN => Error::NotConn,
            libc::ECONNRESET => Error::ConnReset,
            libc::ECONNABORTED => Error::ConnAborted,
            libc::ETIMEDOUT => Error::TimedOut,
            libc::EACCES => Error::Access,
            libc::ENETDOWN => Error::NetDown,
            libc::ENETUNREACH => Error::NetUnreach,
            libc::ENAMETOOLONG => Error::NameTooLong,
            other => Error::Os(other),
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Error::Again => "resource temporarily unavailable",
            Error::Interrupted => "interrupted system call",
            Error::Term => "context was terminated",
            Error::Fsm => "operation cannot be accomplished in current state",
            Error::HostUnreachable => "host unreachable",
            Error::NotSock => "not a socket",
            Error::Invalid => "invalid argument",
            Error::ProtoNoSupport => "protocol not supported",
            Error::AddrInUse => "address already in use",
            Error::AddrNotAvail => "cannot assign requested address",
            Error::ConnRefused => "connection refused",
            Error::MThread => "no thread available",
            Error::NoCompatProto => "the protocol is not compatible with the socket type",
            Error::MsgSize => "message too long",
            Error::NotSup => "operation not supported",
            Error::NoDev => "no such device",
            Error::Fault => "bad address",
            Error::NoEnt => "no such file or directory",
            Error::NoMem => "cannot allocate memory",
            Error::MFile => "too many open files",
            Error::NoBufs => "no buffer space available",
            Error::NotConn => "transport endpoint is not connected",
            Error::ConnReset => "connection reset by peer",
            Error::ConnAborted => "software caused connection abort",
            Error::TimedOut => "connection timed out",
            Error::Access => "permission denied",
            Error::NetDown => "network is down",
            Error::NetUnreach => "network is unreachable",
            Error::NameTooLong => "file name too long",
            Error::Os(_) => "operating system error",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Os(n) => write!(f, "operating system error {n}"),
            other => f.write_str(other.describe()),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        match e.raw_os_error() {
            Some(n) => Error::from_errno(n),
            None => match e.kind() {
                io::ErrorKind::WouldBlock => Error::Again,
                io::ErrorKind::Interrupted => Error::Interrupted,
                io::ErrorKind::InvalidInput => Error::Invalid,
                io::ErrorKind::AddrInUse => Error::AddrInUse,
                io::ErrorKind::AddrNotAvailable => Error::AddrNotAvail,
                io::ErrorKind::ConnectionRefused => Error::ConnRefused,
                io::ErrorKind::NotFound => Error::NoEnt,
                io::ErrorKind::TimedOut => Error::TimedOut,
                _ => Error::Invalid,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_round_trips() {
        let all = [
            Error::Again,
            Error::Interrupted,
            Error::Term,
            Error::Fsm,
            Error::HostUnreachable,
            Error::NotSock,
            Error::Invalid,
            Error::ProtoNoSupport,
            Error::AddrInUse,
            Error::AddrNotAvail,
            Error::ConnRefused,
            Error::MThread,
            Error::NoCompatProto,
            Error::MsgSize,
            Error::NotSup,
            Error::NoDev,
            Error::Fault,
            Error::NoEnt,
            Error::NameTooLong,
            Error::Os(12345),
        ];
        for e in all {
            assert_eq!(Error::from_errno(e.errno()), e);
        }
    }

    #[test]
    fn libzmq_specific_values() {
        assert_eq!(Error::Fsm.errno(), 156_384_763);
        assert_eq!(Error::NoCompatProto.errno(), 156_384_764);
        assert_eq!(Error::Term.errno(), 156_384_765);
        assert_eq!(Error::MThread.errno(), 156_384_766);
        assert_eq!(Error::Again.errno(), 11);
        assert_eq!(Error::HostUnreachable.errno(), 113);
    }

    #[test]
    fn io_errors_keep_their_errno() {
        let e = io::Error::from_raw_os_error(libc::EADDRINUSE);
        assert_eq!(Error::from(e), Error::AddrInUse);
    }
}
