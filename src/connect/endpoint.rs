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
        let (scheme, rest) = split_uri(s)?;
        match scheme {
            "tcp" => parse_tcp(rest).map(Endpoint::Tcp),
            "ipc" => check_ipc_path(rest).map(|()| Endpoint::Ipc(rest.to_owned())),
            _ => Ok(Endpoint::Inproc(rest.to_owned())),
        }
    }
}

/// The check libzmq makes first on every endpoint, unbind's and disconnect's too (parse_uri,
/// check_protocol): `scheme://rest` with neither part empty (EINVAL), and a transport this
/// library has (EPROTONOSUPPORT for pgm, udp, ws and the like, and for unknown ones).
pub(crate) fn check_uri(s: &str) -> Result<()> {
    split_uri(s).map(drop)
}

fn split_uri(s: &str) -> Result<(&str, &str)> {
    let (scheme, rest) = s.split_once("://").ok_or(Error::Invalid)?;
    if scheme.is_empty() || rest.is_empty() {
        return Err(Error::Invalid);
    }
    if !matches!(scheme, "tcp" | "ipc" | "inproc") {
        return Err(Error::ProtoNoSupport);
    }
    Ok((scheme, rest))
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
    // libzmq splits at the last `;` (tcp_address_t::resolve's strrchr).
    let (source, dest) = match rest.rsplit_once(';') {
        Some((src, dst)) => (Some(src.to_owned()), dst),
        None => (None, rest),
    };
    let (host, port) = split_host_port(dest)?;
    if host.is_empty() {
        return Err(Error::Invalid);
    }
    Ok(TcpAddr {
        source,
        host: host.to_owned(),
        port,
    })
}

/// `host:port` with the host's brackets removed; the port `*` or `0` is `None` (ephemeral),
/// any other must be a number from 1 to 65535. libzmq reads it with atoi and truncates to 16
/// bits, so that `5555x` is 5555 and `99999` is 34463 there; ferromq refuses both (EINVAL).
fn split_host_port(address: &str) -> Result<(&str, Option<u16>)> {
    let (host, port) = address.rsplit_once(':').ok_or(Error::Invalid)?;
    let port = match port {
        "*" | "0" => None,
        p => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err(Error::Invalid),
            Ok(n) => Some(n),
        },
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok((host, port))
}

impl TcpAddr {
    /// The address to bind, by libzmq's rules for a local address ([`resolve_local`]). A
    /// source part (`tcp://src;addr`) must resolve by the same rules and is then ignored, as
    /// libzmq's listener does.
    pub(crate) fn bind_addr(&self, ipv6: bool) -> Result<SocketAddr> {
        self.source_addr(ipv6)?;
        resolve_local(&self.host, self.port.unwrap_or(0), ipv6)
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

    /// Whether resolving this endpoint for a connect asks the system resolver (a host name),
    /// which may block for as long as DNS takes, rather than only parsing IP literals. The
    /// source part never does: it is resolved as a local address.
    pub(crate) fn names_a_host(&self) -> bool {
        let host = self.host.rsplit_once('%').map_or(&*self.host, |(h, _)| h);
        host.parse::<IpAddr>().is_err()
    }

    /// The source address of `tcp://src;dst`: `src` is `host:port` (port `*` or 0 for any),
    /// resolved as a bind's address is (libzmq: EINVAL without a port, ENODEV for a host that
    /// is neither `*`, an interface name nor a numeric address).
    pub(crate) fn source_addr(&self, ipv6: bool) -> Result<Option<SocketAddr>> {
        let Some(src) = self.source.as_deref() else {
            return Ok(None);
        };
        let (host, port) = split_host_port(src)?;
        resolve_local(host, port.unwrap_or(0), ipv6).map(Some)
    }
}

/// libzmq's rules for a local address (a bind's, or a connect's source; ip_resolver_t with
/// bindable, NIC names and no DNS): `*` is every interface (`::` when `ipv6`); a network
/// interface's name is its first address of the socket's family (IPv6 when `ipv6`, else
/// IPv4), as zmq_tcp(7) documents for `tcp://eth0:5555`; otherwise the host must be a numeric
/// address. Anything else, a host name among them, is ENODEV.
fn resolve_local(host: &str, port: u16, ipv6: bool) -> Result<SocketAddr> {
    let (host, zone) = split_zone(host)?;
    let ip = if host == "*" {
        if ipv6 {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        }
    } else {
        match host.parse::<IpAddr>() {
            Ok(ip) if ip.is_ipv4() || ipv6 => ip,
            Ok(_) => return Err(Error::NoDev),
            Err(_) => interface_address(host, ipv6).ok_or(Error::NoDev)?,
        }
    };
    Ok(with_zone(SocketAddr::new(ip, port), zone))
}

/// A host's IPv6 zone (RFC 4007: `fe80::1%eth0`, `fe80::1%2`), split off as libzmq's
/// ip_resolver does before anything else: an interface name (when it starts with a letter) or
/// its index; empty, unknown or 0 is EINVAL. 0 when there is none.
fn split_zone(host: &str) -> Result<(&str, u32)> {
    let Some((host, zone)) = host.rsplit_once('%') else {
        return Ok((host, 0));
    };
    let id = if zone.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if_addrs::get_if_addrs()
            .ok()
            .and_then(|all| all.into_iter().find(|i| i.name == zone))
            .and_then(|i| i.index)
            .unwrap_or(0)
    } else {
        zone.parse().unwrap_or(0)
    };
    if id == 0 {
        return Err(Error::Invalid);
    }
    Ok((host, id))
}

/// The zone as the scope of an IPv6 address; an IPv4 one has none (libzmq ignores it there).
fn with_zone(addr: SocketAddr, zone: u32) -> SocketAddr {
    match addr {
        SocketAddr::V6(mut v6) if zone != 0 => {
            v6.set_scope_id(zone);
            SocketAddr::V6(v6)
        }
        other => other,
    }
}

/// The first address of the wanted family on the interface called `name`, in the order
/// getifaddrs lists them (libzmq's resolve_nic_name); `None` when there is no such interface
/// or it has no address of that family.
fn interface_address(name: &str, ipv6: bool) -> Option<IpAddr> {
    if_addrs::get_if_addrs()
        .ok()?
        .into_iter()
        .filter(|interface| interface.name == name)
        .map(|interface| interface.ip())
        .find(|ip| ip.is_ipv6() == ipv6)
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

/// Resolves a connect's host (the address chosen by [`pick_address`]). A host
/// name asks the system resolver (getaddrinfo), which blocks: a connect calls this on the
/// blocking pool (src/connect/resolver.rs), never on the management thread.
fn resolve(host: &str, port: u16, ipv6: bool) -> Result<SocketAddr> {
    let (host, zone) = split_zone(host)?;
    if let Ok(ip) = host.parse::<IpAddr>() {
        if ip.is_ipv6() && !ipv6 {
            return Err(Error::NoDev);
        }
        return Ok(with_zone(SocketAddr::new(ip, port), zone));
    }
    #[cfg(test)]
    if let Some(answer) = crate::connect::test_names::lookup(host, port) {
        return answer;
    }
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| Error::Invalid)?
        .collect();
    pick_address(&addrs, ipv6)
        .map(|a| with_zone(a, zone))
        .ok_or(Error::Invalid)
}

/// Which of a name's addresses a connect uses, as libzmq's getaddrinfo query picks it: without
/// ZMQ_IPV6 it asks for IPv4 only (AF_INET) and takes the first; with it, for IPv6 with
/// IPv4-mapped answers only where the name has no IPv6 address (AF_INET6, AI_V4MAPPED), so the
/// first IPv6 address wins and an IPv4 one is the fallback.
fn pick_address(addrs: &[SocketAddr], ipv6: bool) -> Option<SocketAddr> {
    let first_v4 = || addrs.iter().find(|a| a.is_ipv4());
    let chosen = if ipv6 {
        addrs.iter().find(|a| a.is_ipv6()).or_else(first_v4)
    } else {
        first_v4()
    };
    chosen.copied()
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
        assert_eq!(Endpoint::parse("tcp://h:5555x"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://h:-1"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("foo://x"), Err(Error::ProtoNoSupport));
        assert_eq!(Endpoint::parse("ws://h:5"), Err(Error::ProtoNoSupport));
        assert_eq!(Endpoint::parse("://x"), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("foo://"), Err(Error::Invalid));
        assert_eq!(check_uri("bogus"), Err(Error::Invalid));
        assert_eq!(check_uri("bogus://x"), Err(Error::ProtoNoSupport));
        assert_eq!(check_uri("tcp://not an address"), Ok(()));
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
        assert!(!tcp("tcp://127.0.0.1:5").names_a_host());
        assert!(!tcp("tcp://[::1]:5").names_a_host());
        assert!(!tcp("tcp://*:5;127.0.0.1:5").names_a_host());
        assert!(!tcp("tcp://[::1]:0;[::1]:5").names_a_host());
        assert!(tcp("tcp://localhost:5").names_a_host());
        // A source is a local address: an interface name at most, never looked up.
        assert!(!tcp("tcp://localhost:7;127.0.0.1:5").names_a_host());
    }

    fn tcp(s: &str) -> TcpAddr {
        match Endpoint::parse(s) {
            Ok(Endpoint::Tcp(t)) => t,
            other => panic!("{s}: tcp expected, got {other:?}"),
        }
    }

    #[test]
    fn local_addresses_follow_libzmq() {
        let bind = |s: &str, ipv6: bool| tcp(s).bind_addr(ipv6);
        assert_eq!(
            bind("tcp://*:0", false).unwrap(),
            "0.0.0.0:0".parse().unwrap()
        );
        assert_eq!(bind("tcp://*:7", true).unwrap(), "[::]:7".parse().unwrap());
        assert_eq!(
            bind("tcp://127.0.0.1:7", false).unwrap(),
            "127.0.0.1:7".parse().unwrap()
        );
        assert_eq!(bind("tcp://[::1]:7", false), Err(Error::NoDev));
        assert_eq!(
            bind("tcp://[::1]:7", true).unwrap(),
            "[::1]:7".parse().unwrap()
        );
        // No DNS for a local address.
        assert_eq!(bind("tcp://localhost:7", false), Err(Error::NoDev));
        assert_eq!(bind("tcp://no-such-interface0:7", false), Err(Error::NoDev));
        // A source part must itself be a local address with a port; then it is ignored.
        assert_eq!(
            bind("tcp://127.0.0.1;127.0.0.1:7", false),
            Err(Error::Invalid)
        );
        assert_eq!(
            bind("tcp://localhost:0;127.0.0.1:7", false),
            Err(Error::NoDev)
        );
        assert!(bind("tcp://127.0.0.1:0;127.0.0.1:7", false).is_ok());
        // The last `;` splits, as libzmq's strrchr.
        assert_eq!(tcp("tcp://a;b;127.0.0.1:7").source.as_deref(), Some("a;b"));
        assert_eq!(
            tcp("tcp://*:*;127.0.0.1:7").source_addr(false).unwrap(),
            Some("0.0.0.0:0".parse().unwrap())
        );
    }

    #[test]
    fn a_names_address_is_picked_as_libzmq() {
        let v4: SocketAddr = "10.0.0.1:5".parse().unwrap();
        let v4b: SocketAddr = "10.0.0.2:5".parse().unwrap();
        let v6: SocketAddr = "[fd00::1]:5".parse().unwrap();
        assert_eq!(pick_address(&[v6, v4, v4b], false), Some(v4));
        assert_eq!(pick_address(&[v4, v6], true), Some(v6));
        assert_eq!(pick_address(&[v4, v4b], true), Some(v4));
        assert_eq!(pick_address(&[v6], false), None);
        assert_eq!(pick_address(&[], true), None);
    }

    #[test]
    fn ipv6_zones_as_libzmq() {
        let scope = |a: SocketAddr| match a {
            SocketAddr::V6(v6) => v6.scope_id(),
            SocketAddr::V4(_) => 0,
        };
        assert_eq!(scope(tcp("tcp://[::1%7]:5").bind_addr(true).unwrap()), 7);
        assert_eq!(scope(tcp("tcp://[::1%7]:5").connect_addr(true).unwrap()), 7);
        assert!(!tcp("tcp://[::1%7]:5").names_a_host());
        // On an IPv4 address the zone is read and dropped.
        assert_eq!(
            tcp("tcp://127.0.0.1%7:5").bind_addr(false).unwrap(),
            "127.0.0.1:5".parse().unwrap()
        );
        for bad in [
            "tcp://[::1%]:5",
            "tcp://[::1%0]:5",
            "tcp://[::1%no-such-if0]:5",
        ] {
            assert_eq!(tcp(bad).bind_addr(true), Err(Error::Invalid), "{bad}");
            assert_eq!(tcp(bad).connect_addr(true), Err(Error::Invalid), "{bad}");
        }
    }

    /// The loopback interface by name, where the machine has one called `lo` (Linux).
    #[test]
    fn an_interface_name_is_its_address() {
        let Ok(interfaces) = if_addrs::get_if_addrs() else {
            return;
        };
        for ipv6 in [false, true] {
            let Some(want) = interfaces
                .iter()
                .filter(|i| i.name == "lo")
                .map(if_addrs::Interface::ip)
                .find(|ip| ip.is_ipv6() == ipv6)
            else {
                continue;
            };
            assert_eq!(
                tcp("tcp://lo:7").bind_addr(ipv6).unwrap(),
                SocketAddr::new(want, 7)
            );
            assert_eq!(
                tcp("tcp://lo:9;127.0.0.1:7").source_addr(ipv6).unwrap(),
                Some(SocketAddr::new(want, 9))
            );
            let lo = interfaces
                .iter()
                .find(|i| i.name == "lo")
                .and_then(|i| i.index);
            if let (true, Some(index), SocketAddr::V6(v6)) =
                (ipv6, lo, tcp("tcp://[::1%lo]:7").bind_addr(true).unwrap())
            {
                assert_eq!(v6.scope_id(), index);
            }
        }
    }
}
