//! Endpoint strings (`tcp://host:port`, `tcp://src;dst`, `ipc://path`, `ipc://@abstract`,
//! `inproc://name`) parsed once into a typed value, so transports never look at strings.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use crate::error::{Error, Result};

/// A parsed endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Tcp(TcpAddr),
    Ipc(String),
    Inproc(String),
}

/// `tcp://[source;]host:port`; `port: None` is `*` or `0` (an ephemeral port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TcpAddr {
    pub source: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl Endpoint {
    pub(crate) fn parse(s: &str) -> Result<Endpoint> {
        let (scheme, rest) = s.split_once("://").ok_or(Error::Invalid)?;
        match scheme {
            "tcp" => parse_tcp(rest).map(Endpoint::Tcp),
            "ipc" if !rest.is_empty() => {
                check_ipc_path(rest).map(|()| Endpoint::Ipc(rest.to_owned()))
            }
            "inproc" if !rest.is_empty() => Ok(Endpoint::Inproc(rest.to_owned())),
            "ipc" | "inproc" => Err(Error::Invalid),
            "pgm" | "epgm" | "norm" | "vmci" | "udp" | "tipc" | "ws" | "wss" => {
                Err(Error::ProtoNoSupport)
            }
            _ => Err(Error::ProtoNoSupport),
        }
    }
}

/// libzmq's `ipc_address_t::resolve` rules, checked at bind and at connect alike: the path
/// (with its `@`) must fit `sun_path` with a NUL, and an abstract name must not be empty.
/// `*` is replaced by a generated path at bind, so it is exempt.
fn check_ipc_path(path: &str) -> Result<()> {
    const SUN_PATH_LEN: usize = 108;
    if path == "@" {
        return Err(Error::Invalid);
    }
    if path != "*" && path.len() >= SUN_PATH_LEN {
        return Err(Error::NameTooLong);
    }
    Ok(())
}

/// The syntax check libzmq's `zmq_connect` makes on a tcp address (`host:port` or
/// `src;host:port`) before resolving it later: a letter, digit, `[` or `:` first, then only
/// letters, digits and `.-:%;[]_*`, and a port that starts with a digit. A hostname with a
/// space, say, is refused here with EINVAL rather than failing to resolve forever.
pub(crate) fn check_tcp_connect_syntax(address: &str) -> Result<()> {
    let bytes = address.as_bytes();
    let first_ok = bytes
        .first()
        .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'[' || c == b':');
    let rest_ok = bytes
        .iter()
        .skip(1)
        .all(|&c| c.is_ascii_alphanumeric() || b".-:%;[]_*".contains(&c));
    let port_ok = address
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.as_bytes().first().is_some_and(u8::is_ascii_digit));
    if first_ok && rest_ok && port_ok {
        Ok(())
    } else {
        Err(Error::Invalid)
    }
}

fn parse_tcp(rest: &str) -> Result<TcpAddr> {
    let (source, dest) = match rest.split_once(';') {
        Some((src, dst)) => (Some(src.to_owned()), dst),
        None => (None, rest),
    };
    let (host, port) = dest.rsplit_once(':').ok_or(Error::Invalid)?;
    if host.is_empty() {
        return Err(Error::Invalid);
    }
    let port = match port {
        "*" | "0" => None,
        p => Some(p.parse::<u16>().map_err(|_| Error::Invalid)?),
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok(TcpAddr {
        source,
        host: host.to_owned(),
        port,
    })
}

impl TcpAddr {
    /// The address to bind: `*` is every interface (IPv6 `::` when `ipv6`).
    pub(crate) fn bind_addr(&self, ipv6: bool) -> Result<SocketAddr> {
        let port = self.port.unwrap_or(0);
        if self.host == "*" {
            let ip = if ipv6 {
                IpAddr::V6(Ipv6Addr::UNSPECIFIED)
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            };
            return Ok(SocketAddr::new(ip, port));
        }
        resolve(&self.host, port, ipv6).map_err(|_| Error::NoDev)
    }

    /// The address to connect to. Port 0 is connected to as given, as libzmq does (the kernel
    /// refuses it and the connecter retries); `*` never gets this far (zmq_connect's syntax
    /// check refuses it).
    pub(crate) fn connect_addr(&self, ipv6: bool) -> Result<SocketAddr> {
        let port = self.port.unwrap_or(0);
        if self.host == "*" {
            return Err(Error::Invalid);
        }
        resolve(&self.host, port, ipv6)
    }

    /// The host and port of `tcp://src;dst`'s `src` (`host:port` or `host`; port 0 if none).
    fn source_host(&self) -> Option<(&str, u16)> {
        let src = self.source.as_deref()?;
        let (host, port) = match src.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && (p == "*" || p.parse::<u16>().is_ok()) => {
                (h, p.parse::<u16>().unwrap_or(0))
            }
            _ => (src, 0),
        };
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Some((host, port))
    }

    /// Whether resolving this endpoint for a connect asks the system resolver (a host name,
    /// for the destination or the source), which may block for as long as DNS takes, rather
    /// than only parsing IP literals and `*`.
    pub(crate) fn names_a_host(&self) -> bool {
        let is_name = |host: &str| host != "*" && host.parse::<IpAddr>().is_err();
        is_name(&self.host) || self.source_host().is_some_and(|(host, _)| is_name(host))
    }

    /// The source address of `tcp://src;dst` (`src` is `host:port` or `host`).
    pub(crate) fn source_addr(&self, ipv6: bool) -> Result<Option<SocketAddr>> {
        let Some((host, port)) = self.source_host() else {
            return Ok(None);
        };
        if host == "*" {
            let ip = if ipv6 {
                IpAddr::V6(Ipv6Addr::UNSPECIFIED)
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            };
            return Ok(Some(SocketAddr::new(ip, port)));
        }
        resolve(host, port, ipv6).map(Some)
    }
}

/// The bound endpoint an unbind of `endpoint` means when no bind resolved to that exact text:
/// as libzmq's `resolve_tcp_addr`, a tcp endpoint resolved as a connect address (so
/// `tcp://localhost:5555` finds `tcp://127.0.0.1:5555`), and nothing for a wildcard
/// (`tcp://*:*`, port `*` or 0) or any other transport, which libzmq refuses with ENOENT.
pub(crate) fn resolve_for_unbind(endpoint: &str, ipv6: bool) -> Option<String> {
    let Ok(Endpoint::Tcp(addr)) = Endpoint::parse(endpoint) else {
        return None;
    };
    addr.port?;
    let addr = addr.connect_addr(ipv6).ok()?;
    Some(tcp_endpoint_string(&addr))
}

/// Resolves a host; IPv4 addresses first unless IPv6 is enabled, as libzmq prefers. A host
/// name asks the system resolver (getaddrinfo), which blocks: a connect calls this on the
/// blocking pool (src/connect/resolver.rs), never on the management thread.
fn resolve(host: &str, port: u16, ipv6: bool) -> Result<SocketAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        if ip.is_ipv6() && !ipv6 {
            return Err(Error::NoDev);
        }
        return Ok(SocketAddr::new(ip, port));
    }
    #[cfg(test)]
    if let Some(answer) = crate::connect::test_names::lookup(host, port) {
        return answer;
    }
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| Error::Invalid)?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.iter().find(|a| ipv6 && a.is_ipv6()))
        .copied()
        .ok_or(Error::Invalid)
}

/// The `tcp://` form of a bound address, as ZMQ_LAST_ENDPOINT reports it.
pub(crate) fn tcp_endpoint_string(addr: &SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("tcp://[{}]:{}", a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_transport() {
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:5555").unwrap(),
            Endpoint::Tcp(TcpAddr {
                source: None,
                host: "127.0.0.1".into(),
                port: Some(5555)
            })
        );
        assert_eq!(
            Endpoint::parse("tcp://*:*").unwrap(),
            Endpoint::Tcp(TcpAddr {
                source: None,
                host: "*".into(),
                port: None
            })
        );
        assert_eq!(
            Endpoint::parse("ipc://@abc").unwrap(),
            Endpoint::Ipc("@abc".into())
        );
        assert_eq!(
            Endpoint::parse("inproc://x").unwrap(),
            Endpoint::Inproc("x".into())
        );
    }

    #[test]
    fn bad_endpoints_are_refused() {
        assert_eq!(Endpoint::parse("tcp:/x"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://host"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://h:99999"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("foo://x"), Err(Error::ProtoNoSupport));
        assert_eq!(Endpoint::parse("inproc://"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("ipc://@"), Err(Error::Invalid));
        let long = format!("ipc:///tmp/{}", "a".repeat(103));
        assert_eq!(Endpoint::parse(&long), Err(Error::NameTooLong));
        assert!(
            Endpoint::parse(&long[..long.len() - 1]).is_ok(),
            "107 bytes fit"
        );
    }

    #[test]
    fn connect_syntax_is_libzmqs() {
        for ok in [
            "127.0.0.1:5",
            "a_b:5",
            "[::1]:5",
            "127.0.0.1;10.0.0.1:5",
            "h:0",
        ] {
            assert_eq!(check_tcp_connect_syntax(ok), Ok(()), "{ok}");
        }
        for bad in [
            "local host:5",
            "127.0.0.1 :5",
            "-x:5",
            "x!:5",
            "h:*",
            "h",
            "",
        ] {
            assert_eq!(check_tcp_connect_syntax(bad), Err(Error::Invalid), "{bad}");
        }
    }

    #[test]
    fn ipv6_and_source_forms() {
        let Endpoint::Tcp(t) = Endpoint::parse("tcp://127.0.0.1:0;[::1]:7").unwrap() else {
            panic!("tcp expected")
        };
        assert_eq!(t.host, "::1");
        assert_eq!(t.connect_addr(true).unwrap().port(), 7);
        assert_eq!(t.connect_addr(false), Err(Error::NoDev));
        assert_eq!(
            t.source_addr(false).unwrap().unwrap().ip(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert_eq!(
            tcp_endpoint_string(&"[::1]:5".parse().unwrap()),
            "tcp://[::1]:5"
        );
    }

    #[test]
    fn names_a_host_only_for_names() {
        let tcp = |s: &str| match Endpoint::parse(s).unwrap() {
            Endpoint::Tcp(t) => t,
            other => panic!("tcp expected, got {other:?}"),
        };
        assert!(!tcp("tcp://127.0.0.1:5").names_a_host());
        assert!(!tcp("tcp://[::1]:5").names_a_host());
        assert!(!tcp("tcp://*:5;127.0.0.1:5").names_a_host());
        assert!(!tcp("tcp://[::1]:0;[::1]:5").names_a_host());
        assert!(tcp("tcp://localhost:5").names_a_host());
        assert!(tcp("tcp://localhost;127.0.0.1:5").names_a_host());
        assert!(tcp("tcp://localhost:7;127.0.0.1:5").names_a_host());
    }
}
