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
pub(crate) fn prepare_tcp_socket(
    socket: &socket2::Socket,
    options: &Options,
) -> std::io::Result<()> {
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
/// libzmq's `tune_tcp_maxrt`, which leaves the OS default for 0; its socks_connecter does not
/// call it, so neither does a connection through ZMQ_SOCKS_PROXY). Failures are ignored like
/// the other tuning in `configure_tcp`.
pub(crate) fn set_maxrt(socket: socket2::SockRef<'_>, options: &Options) {
    if let Ok(ms) = u64::try_from(options.tcp_maxrt)
        && ms > 0
    {
        let _ = socket.set_tcp_user_timeout(Some(Duration::from_millis(ms)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_socket() -> socket2::Socket {
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap()
    }

    #[test]
    fn tos_is_set_only_when_asked() {
        let socket = tcp_socket();
        prepare_tcp_socket(&socket, &Options::default()).unwrap();
        assert_eq!(socket.tos_v4().unwrap(), 0);
        let options = Options {
            tos: 0x28,
            ..Options::default()
        };
        prepare_tcp_socket(&socket, &options).unwrap();
        assert_eq!(socket.tos_v4().unwrap(), 0x28);
    }

    #[test]
    fn an_unknown_device_is_an_error() {
        let options = Options {
            bindtodevice: bytes::Bytes::from_static(b"nosuchdev0"),
            ..Options::default()
        };
        let err = prepare_tcp_socket(&tcp_socket(), &options).unwrap_err();
        // ENODEV, or EPERM where the process may not bind to devices at all.
        assert!(matches!(
            err.raw_os_error(),
            Some(libc::ENODEV | libc::EPERM)
        ));
    }

    #[test]
    fn maxrt_becomes_tcp_user_timeout() {
        let socket = tcp_socket();
        set_maxrt(socket2::SockRef::from(&socket), &Options::default());
        assert_eq!(socket.tcp_user_timeout().unwrap(), None);
        let options = Options {
            tcp_maxrt: 2500,
            ..Options::default()
        };
        set_maxrt(socket2::SockRef::from(&socket), &options);
        assert_eq!(
            socket.tcp_user_timeout().unwrap(),
            Some(Duration::from_millis(2500))
        );
    }
}
