//! ZMQ_SOCKS_PROXY: a tcp connect goes to the proxy, which is asked (SOCKS5) to connect to the
//! endpoint, before the ZMTP greeting. The exchange is `ferromq_zmtp::SocksClient`; this file
//! drives it over the stream under HANDSHAKE_IVL and turns its refusals into the errno a failed
//! connect has, so the connecter retries after RECONNECT_IVL as after any failed connect
//! (libzmq's socks connecter does the same, without a time limit: a proxy that never answers
//! holds libzmq's connect forever).

use std::time::Duration;

use bytes::BytesMut;
use ferromq_zmtp::socks::{SocksClient, SocksError, MAX_REPLY};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::connect::endpoint::{Endpoint, TcpAddr};
use crate::error::{Error, Result};
use crate::option::Options;

/// The proxy's address, parsed as a tcp endpoint (`[source;]host:port`, as libzmq allows).
pub(crate) fn proxy_addr(options: &Options) -> Result<TcpAddr> {
    let text = std::str::from_utf8(&options.socks_proxy).map_err(|_| Error::Invalid)?;
    match Endpoint::parse(&format!("tcp://{text}"))? {
        Endpoint::Tcp(addr) => Ok(addr),
        _ => Err(Error::Invalid),
    }
}

/// The endpoint libzmq names in a proxied connection's monitor events: the proxy's, as given
/// (its socks connecter and the engine it makes both carry that address).
pub(crate) fn monitor_endpoint(options: &Options) -> String {
    format!("tcp://{}", String::from_utf8_lossy(&options.socks_proxy))
}

/// The exchange for a connect to `target`, with username/password when ZMQ_SOCKS_USERNAME is
/// set (libzmq offers no authentication otherwise, whatever the password).
pub(crate) fn client_for(target: &TcpAddr, options: &Options) -> Result<SocksClient> {
    let port = target.port.ok_or(Error::Invalid)?;
    let credentials = (!options.socks_username.is_empty())
        .then(|| (&options.socks_username[..], &options.socks_password[..]));
    SocksClient::new(&target.host, port, credentials).map_err(errno)
}

/// Runs the exchange on a stream connected to the proxy, under HANDSHAKE_IVL (0: no limit).
/// On success the stream carries the destination's bytes, none of them read yet.
pub(crate) async fn negotiate(
    stream: &mut TcpStream,
    client: SocksClient,
    options: &Options,
) -> Result<()> {
    let work = exchange(stream, client);
    match u64::try_from(options.handshake_ivl) {
        Ok(ms) if ms > 0 => tokio::time::timeout(Duration::from_millis(ms), work)
            .await
            .unwrap_or(Err(Error::TimedOut)),
        _ => work.await,
    }
}

async fn exchange(stream: &mut TcpStream, mut client: SocksClient) -> Result<()> {
    let mut out = BytesMut::new();
    let mut input = BytesMut::with_capacity(MAX_REPLY);
    let mut buf = [0u8; MAX_REPLY];
    loop {
        client.poll_output(&mut out);
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if client.is_done() {
            return Ok(());
        }
        // Never more than the answer still needs: what follows the reply is the
        // destination's greeting, which the ZMTP handshake reads.
        let want = client.needed().min(buf.len());
        if want == 0 {
            return Err(Error::Fault);
        }
        let n = stream.read(&mut buf[..want]).await?;
        if n == 0 {
            return Err(Error::ConnReset);
        }
        input.clear();
        input.extend_from_slice(&buf[..n]);
        client.handle_input(&mut input).map_err(errno)?;
    }
}

/// The errno a refused exchange fails the connect with (it reaches only the retry, as a
/// failed connect's does).
fn errno(e: SocksError) -> Error {
    match e {
        SocksError::Refused(3) => Error::NetUnreach,
        SocksError::Refused(4) => Error::HostUnreachable,
        SocksError::Refused(5) => Error::ConnRefused,
        SocksError::Refused(6) => Error::TimedOut,
        SocksError::Refused(_) => Error::ConnAborted,
        SocksError::NoAcceptableMethod(_) | SocksError::AuthFailed(_) => Error::Access,
        SocksError::HostTooLong => Error::NameTooLong,
        SocksError::BadPort | SocksError::CredentialsTooLong => Error::Invalid,
        _ => Error::Os(libc::EPROTO),
    }
}
