//! ZMQ_SOCKS_PROXY: a tcp connect through a SOCKS5 proxy (RFC 1928), as libzmq's
//! socks_connecter_t: the proxy is reached over tcp (`host:port`, or `src;host:port` to bind
//! first), offered "no authentication", asked to CONNECT to the endpoint's host, which goes
//! as an IPv4 or IPv6 address when it is one and as a domain name otherwise (the proxy
//! resolves it, not us), then the stream carries ZMTP as if connected directly. libzmq's
//! username and password options are DRAFT in 4.3 and not offered here.

use std::net::IpAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::connect::endpoint::TcpAddr;
use crate::error::{Error, Result};

const VERSION: u8 = 5;
const NO_AUTH: u8 = 0;
const CONNECT: u8 = 1;
const ATYP_V4: u8 = 1;
const ATYP_DOMAIN: u8 = 3;
const ATYP_V6: u8 = 4;

/// The CONNECT request for `host:port`.
fn request(host: &str, port: u16) -> Result<Vec<u8>> {
    let mut req = vec![VERSION, CONNECT, 0];
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => {
            req.push(ATYP_V4);
            req.extend_from_slice(&ip.octets());
        }
        Ok(IpAddr::V6(ip)) => {
            req.push(ATYP_V6);
            req.extend_from_slice(&ip.octets());
        }
        Err(_) => {
            let len = u8::try_from(host.len()).map_err(|_| Error::Invalid)?;
            req.push(ATYP_DOMAIN);
            req.push(len);
            req.extend_from_slice(host.as_bytes());
        }
    }
    req.extend_from_slice(&port.to_be_bytes());
    Ok(req)
}

/// How many bytes of bound address follow a reply's 4-byte head (`len` is the byte after the
/// head, read only for a domain name), plus the port's 2.
fn reply_tail(atyp: u8, len: u8) -> Result<usize> {
    match atyp {
        ATYP_V4 => Ok(4 + 2),
        ATYP_V6 => Ok(16 + 2),
        ATYP_DOMAIN => Ok(usize::from(len) + 2),
        _ => Err(Error::ConnRefused),
    }
}

/// Runs the SOCKS5 exchange on a stream connected to the proxy, asking it for `target`.
/// A proxy that refuses (no acceptable method, a non-zero reply) is ECONNREFUSED, which the
/// connecter retries after RECONNECT_IVL, as libzmq does.
pub(crate) async fn connect_through<S>(stream: &mut S, target: &TcpAddr) -> Result<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let port = target.port.ok_or(Error::Invalid)?;
    let req = request(&target.host, port)?;
    stream.write_all(&[VERSION, 1, NO_AUTH]).await?;
    let mut choice = [0u8; 2];
    stream.read_exact(&mut choice).await?;
    if choice != [VERSION, NO_AUTH] {
        return Err(Error::ConnRefused);
    }
    stream.write_all(&req).await?;
    let mut head = [0u8; 4];
    stream.read_exact(&mut head).await?;
    if head[0] != VERSION || head[1] != 0 {
        return Err(Error::ConnRefused);
    }
    let len = if head[3] == ATYP_DOMAIN {
        stream.read_u8().await?
    } else {
        0
    };
    let mut tail = vec![0u8; reply_tail(head[3], len)?];
    stream.read_exact(&mut tail).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_the_host_as_libzmq_does() {
        assert_eq!(
            request("127.0.0.1", 0x1234).unwrap(),
            [5, 1, 0, 1, 127, 0, 0, 1, 0x12, 0x34]
        );
        let v6 = request("::1", 80).unwrap();
        assert_eq!(&v6[..4], [5, 1, 0, 4]);
        assert_eq!(v6.len(), 4 + 16 + 2);
        assert_eq!(v6[19], 1);
        assert_eq!(
            request("ab.org", 1).unwrap(),
            [5, 1, 0, 3, 6, b'a', b'b', b'.', b'o', b'r', b'g', 0, 1]
        );
        assert_eq!(request(&"x".repeat(256), 1), Err(Error::Invalid));
    }

    /// The whole exchange against a scripted proxy: greeting, request, a domain-name reply
    /// (test_socks' proxy answers "localhost"), then the stream is the target's.
    #[test]
    fn exchange_with_a_proxy() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (mut us, mut proxy) = tokio::io::duplex(1024);
            let target = TcpAddr {
                source: None,
                host: "somedomainname.org".into(),
                port: Some(7),
            };
            let server = async {
                let mut greet = [0u8; 3];
                proxy.read_exact(&mut greet).await.unwrap();
                assert_eq!(greet, [5, 1, 0]);
                proxy.write_all(&[5, 0]).await.unwrap();
                let mut req = vec![0u8; 4 + 1 + 18 + 2];
                proxy.read_exact(&mut req).await.unwrap();
                assert_eq!(&req[..5], [5, 1, 0, 3, 18]);
                proxy.write_all(&[5, 0, 0, 3, 9]).await.unwrap();
                proxy.write_all(b"localhost\x00\x07after").await.unwrap();
                proxy
            };
            let (r, _proxy) = tokio::join!(connect_through(&mut us, &target), server);
            r.unwrap();
            let mut rest = [0u8; 5];
            us.read_exact(&mut rest).await.unwrap();
            assert_eq!(&rest, b"after");
        });
        rt.block_on(async {
            let (mut us, mut proxy) = tokio::io::duplex(64);
            proxy.write_all(&[5, 0xff]).await.unwrap();
            let target = TcpAddr {
                source: None,
                host: "127.0.0.1".into(),
                port: Some(7),
            };
            assert_eq!(
                connect_through(&mut us, &target).await,
                Err(Error::ConnRefused)
            );
        });
    }
}
