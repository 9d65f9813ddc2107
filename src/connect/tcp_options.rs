//! The per-connection socket options libzmq applies to its tcp sockets on Linux (src/tcp.cpp:
//! `tcp_open_socket`, `set_ip_type_of_service`, `bind_to_device`, `tune_tcp_maxrt`), kept in
//! one place so the connecter and the listener set them alike.

use std::time::Duration;

use crate::option::Options;

/// Before bind or connect, on the listening and on the connecting socket (as libzmq's
/// `tcp_open_socket`): ZMQ_TOS as IP_TOS and, for IPv6 sockets, IPV6_TCLASS; ZMQ_BINDTODEVICE
/// as SO_BINDTODEVICE. Accepted sockets inherit both from the listener, as in libzmq, which
/// sets neither on them. An error fails the bind (zmq_bind reports its errno, ENODEV for an
/// unknown device, EPERM without the privilege) or the connect attempt (retried later).
pub(crate) fn prepare_tcp_socket(socket: &socket2::Socket, options: &Options) -> std::io::Result<()> {
    if options.tos != 0 {
        let tos = options.tos.unsigned_abs();
        socket.set_tos_v4(tos)?;
        // libzmq ignores the failure (ENOPROTOOPT on an IPv4 socket).
        let _ = socket.set_tclass_v6(tos);
    }
    if !options.bindtodevice.is_empty() {
        socket.bind_device(Some(&options.bindtodevice))?;
    }
    Ok(())
}

/// ZMQ_TCP_MAXRT as TCP_USER_TIMEOUT on an established connection, connected or accepted (as
/// libzmq's `tune_tcp_maxrt`, which leaves the OS default for 0). Failures are ignored like
/// the other tuning in `configure_tcp`.
pub(crate) fn set_maxrt(socket: socket2::SockRef<'_>, options: &Options) {
    if let Ok(ms) = u64::try_from(options.tcp_maxrt)
        && ms > 0
    {
        let _ = socket.set_tcp_user_timeout(Some(Duration::from_millis(ms)));
    }
}
