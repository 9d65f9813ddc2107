//! Sans-IO SOCKS5 client: the exchange a connection through ZMQ_SOCKS_PROXY makes with the
//! proxy before the ZMTP greeting (RFC 1928 CONNECT; username/password, RFC 1929, when
//! ZMQ_SOCKS_USERNAME is set).
//!
//! ```text
//!   greeting  [5, 1, method]                      ──►
//!             ◄── choice [5, method]
//!   (method 2) [1, ulen, user, plen, pass]        ──►
//!             ◄── status [1, 0]
//!   request   [5, 1 CONNECT, 0, atyp, addr, port] ──►
//!             ◄── reply [5, 0, 0, atyp, bound addr, port]   (at most 262 bytes)
//! ```
//!
//! As libzmq's socks connecter: one method is offered (no authentication, or
//! username/password when a username is set), the destination goes as an IPv4 or IPv6 address
//! when it is a numeric one and otherwise as a host name for the proxy to resolve, and any
//! refusal fails the connection, which the caller retries like a failed connect.
//!
//! The client never takes a byte past the proxy's reply: what follows it is the destination's
//! first traffic (a ZMTP peer's greeting may arrive in the same read). [`SocksClient::needed`]
//! says how many bytes the current answer still needs at least, so a driver reading that many
//! at a time never reads past it; [`SocksClient::handle_input`] consumes only the exchange's
//! bytes from the buffer it is given. What it holds is bounded by [`MAX_REPLY`].

use std::net::{Ipv4Addr, Ipv6Addr};

use bytes::{Buf, BufMut, BytesMut};

use crate::secret::Secret;

/// The longest answer a proxy gives: a reply with a 255-byte host name
/// (4 + 1 + 255 + 2 bytes).
pub const MAX_REPLY: usize = 262;

const VERSION: u8 = 5;
const AUTH_VERSION: u8 = 1;
const METHOD_NONE: u8 = 0;
const METHOD_USER_PASS: u8 = 2;
const CMD_CONNECT: u8 = 1;
const ATYP_IPV4: u8 = 1;
const ATYP_DOMAIN: u8 = 3;
const ATYP_IPV6: u8 = 4;
/// The last reply code RFC 1928 defines (8: address type not supported).
const LAST_REPLY_CODE: u8 = 8;

/// Why a SOCKS5 exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SocksError {
    /// The destination host name is longer than the 255 bytes SOCKS5 carries.
    HostTooLong,
    /// The destination port is 0.
    BadPort,
    /// A username or password is longer than the 255 bytes RFC 1929 carries.
    CredentialsTooLong,
    /// The proxy answered with another protocol version (the byte it sent).
    BadVersion(u8),
    /// The proxy chose a method that was not offered (0xFF: none of ours is acceptable).
    NoAcceptableMethod(u8),
    /// The proxy refused the username and password (its status byte).
    AuthFailed(u8),
    /// The proxy could not connect to the destination: its reply code (1..=8; 5 is
    /// "connection refused", 4 "host unreachable").
    Refused(u8),
    /// A reply outside RFC 1928: an unknown reply code, a reserved byte that is not 0, or an
    /// unknown address type.
    Malformed,
}

impl std::fmt::Display for SocksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SocksError::HostTooLong => write!(f, "SOCKS5: host name longer than 255 bytes"),
            SocksError::BadPort => write!(f, "SOCKS5: destination port 0"),
            SocksError::CredentialsTooLong => {
                write!(f, "SOCKS5: username or password longer than 255 bytes")
            }
            SocksError::BadVersion(v) => write!(f, "SOCKS5: proxy answered version {v}"),
            SocksError::NoAcceptableMethod(m) => {
                write!(
                    f,
                    "SOCKS5: proxy chose method {m:#04x}, not the one offered"
                )
            }
            SocksError::AuthFailed(s) => write!(f, "SOCKS5: authentication refused ({s})"),
            SocksError::Refused(c) => write!(f, "SOCKS5: proxy could not connect (reply {c})"),
            SocksError::Malformed => write!(f, "SOCKS5: malformed reply"),
        }
    }
}

impl std::error::Error for SocksError {}

/// Where the exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The greeting is still to be sent.
    Greeting,
    /// Waiting for the method choice.
    Choice,
    /// The username/password request is still to be sent.
    SendAuth,
    /// Waiting for the authentication status.
    AuthStatus,
    /// The CONNECT request is still to be sent.
    SendRequest,
    /// Waiting for the CONNECT reply.
    Reply,
    /// Connected: the stream now belongs to the destination.
    Done,
    /// Failed with this error.
    Failed(SocksError),
}

/// A SOCKS5 client exchange for one connection.
///
/// ```
/// use bytes::BytesMut;
/// use ferromq_zmtp::socks::SocksClient;
/// let mut client = SocksClient::new("example.org", 5555, None)?;
/// let mut out = BytesMut::new();
/// client.poll_output(&mut out);
/// assert_eq!(&out[..], &[5, 1, 0]); // version 5, one method: no authentication
/// let mut input = BytesMut::from(&[5u8, 0][..]);
/// client.handle_input(&mut input)?;
/// out.clear();
/// client.poll_output(&mut out);
/// assert_eq!(&out[..5], &[5, 1, 0, 3, 11]); // CONNECT to a host name of 11 bytes
/// // The reply, and the destination's first bytes behind it, which stay in the buffer.
/// let mut input = BytesMut::from(&[5u8, 0, 0, 1, 127, 0, 0, 1, 0x15, 0xb3, 0xff][..]);
/// client.handle_input(&mut input)?;
/// assert!(client.is_done());
/// assert_eq!(&input[..], &[0xff]);
/// # Ok::<(), ferromq_zmtp::socks::SocksError>(())
/// ```
#[derive(Debug)]
pub struct SocksClient {
    state: State,
    /// The encoded CONNECT request.
    request: Vec<u8>,
    /// The encoded username/password request, when a username was given.
    auth: Option<Secret>,
    /// The answer being read: at most [`MAX_REPLY`] bytes, `have` of them so far.
    answer: [u8; MAX_REPLY],
    have: usize,
}

impl SocksClient {
    /// An exchange that asks the proxy to connect to `host:port`. `credentials` (username,
    /// password) offers username/password authentication instead of none; libzmq offers it
    /// when ZMQ_SOCKS_USERNAME is not empty. A numeric IPv4 or IPv6 host (in brackets or not)
    /// goes as an address, anything else as a name the proxy resolves.
    pub fn new(
        host: &str,
        port: u16,
        credentials: Option<(&[u8], &[u8])>,
    ) -> Result<SocksClient, SocksError> {
        if port == 0 {
            return Err(SocksError::BadPort);
        }
        let mut request = Vec::with_capacity(7 + host.len());
        request.extend_from_slice(&[VERSION, CMD_CONNECT, 0]);
        let unbracketed = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Ok(ip) = host.parse::<Ipv4Addr>() {
            request.push(ATYP_IPV4);
            request.extend_from_slice(&ip.octets());
        } else if let Ok(ip) = unbracketed.parse::<Ipv6Addr>() {
            request.push(ATYP_IPV6);
            request.extend_from_slice(&ip.octets());
        } else {
            let len = u8::try_from(host.len()).map_err(|_| SocksError::HostTooLong)?;
            request.push(ATYP_DOMAIN);
            request.push(len);
            request.extend_from_slice(host.as_bytes());
        }
        request.extend_from_slice(&port.to_be_bytes());
        let auth = match credentials {
            None => None,
            Some((user, pass)) => {
                let ulen = u8::try_from(user.len()).map_err(|_| SocksError::CredentialsTooLong)?;
                let plen = u8::try_from(pass.len()).map_err(|_| SocksError::CredentialsTooLong)?;
                let mut a = Vec::with_capacity(3 + user.len() + pass.len());
                a.push(AUTH_VERSION);
                a.push(ulen);
                a.extend_from_slice(user);
                a.push(plen);
                a.extend_from_slice(pass);
                Some(Secret::from(a))
            }
        };
        Ok(SocksClient {
            state: State::Greeting,
            request,
            auth,
            answer: [0; MAX_REPLY],
            have: 0,
        })
    }

    /// Appends what is due to the proxy now: the greeting at first, the username/password
    /// request after the proxy chose it, the CONNECT request once the proxy is satisfied.
    /// Each goes once; nothing is due while an answer is awaited.
    pub fn poll_output(&mut self, out: &mut BytesMut) {
        match self.state {
            State::Greeting => {
                let method = if self.auth.is_some() {
                    METHOD_USER_PASS
                } else {
                    METHOD_NONE
                };
                out.put_slice(&[VERSION, 1, method]);
                self.state = State::Choice;
            }
            State::SendAuth => {
                if let Some(auth) = &self.auth {
                    out.put_slice(auth);
                }
                self.state = State::AuthStatus;
            }
            State::SendRequest => {
                out.put_slice(&self.request);
                self.state = State::Reply;
            }
            _ => {}
        }
    }

    /// How many more bytes the awaited answer needs at least: reading no more than this never
    /// reads past the proxy's reply. 0 when nothing is awaited (output is due, or the exchange
    /// is over).
    pub fn needed(&self) -> usize {
        match self.state {
            State::Choice | State::AuthStatus => 2 - self.have,
            State::Reply => self.reply_len().unwrap_or(5) - self.have,
            _ => 0,
        }
    }

    /// Whether the proxy is connected to the destination: the stream now carries its bytes.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Takes the proxy's answer from the front of `input`, never more than the exchange's
    /// bytes: once [`is_done`](Self::is_done), what is left in `input` is the destination's.
    /// A refusal or a malformed answer is an error, and the same error again on every later
    /// call.
    pub fn handle_input(&mut self, input: &mut BytesMut) -> Result<(), SocksError> {
        while !input.is_empty() {
            if let State::Failed(e) = self.state {
                return Err(e);
            }
            let want = self.needed();
            if want == 0 {
                break;
            }
            let take = want.min(input.len());
            self.answer[self.have..self.have + take].copy_from_slice(&input[..take]);
            input.advance(take);
            let from = self.have;
            self.have += take;
            if let Err(e) = self.check(from) {
                self.state = State::Failed(e);
            }
        }
        match self.state {
            State::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Checks the answer's bytes from `from` on as they arrive (a bad version fails at its
    /// first byte), and moves on when the answer is complete.
    fn check(&mut self, from: usize) -> Result<(), SocksError> {
        for i in from..self.have {
            let b = self.answer[i];
            match (self.state, i) {
                (State::Choice | State::Reply, 0) if b != VERSION => {
                    return Err(SocksError::BadVersion(b))
                }
                (State::AuthStatus, 0) if b != AUTH_VERSION => {
                    return Err(SocksError::BadVersion(b))
                }
                (State::Choice, 1) => {
                    let offered = if self.auth.is_some() {
                        METHOD_USER_PASS
                    } else {
                        METHOD_NONE
                    };
                    if b != offered {
                        return Err(SocksError::NoAcceptableMethod(b));
                    }
                }
                (State::AuthStatus, 1) if b != 0 => return Err(SocksError::AuthFailed(b)),
                (State::Reply, 1) if b > LAST_REPLY_CODE => return Err(SocksError::Malformed),
                (State::Reply, 1) if b != 0 => return Err(SocksError::Refused(b)),
                (State::Reply, 2) if b != 0 => return Err(SocksError::Malformed),
                (State::Reply, 3) if ![ATYP_IPV4, ATYP_DOMAIN, ATYP_IPV6].contains(&b) => {
                    return Err(SocksError::Malformed)
                }
                _ => {}
            }
        }
        if self.needed() == 0 {
            self.state = match self.state {
                State::Choice if self.auth.is_some() => State::SendAuth,
                State::Choice | State::AuthStatus => State::SendRequest,
                _ => State::Done,
            };
            self.have = 0;
        }
        Ok(())
    }

    /// The whole reply's length once its address type (and a name's length) is known.
    fn reply_len(&self) -> Option<usize> {
        if self.have < 4 {
            return None;
        }
        match self.answer[3] {
            ATYP_IPV4 => Some(4 + 4 + 2),
            ATYP_IPV6 => Some(4 + 16 + 2),
            _ if self.have < 5 => None,
            _ => Some(4 + 1 + usize::from(self.answer[4]) + 2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs the exchange up to the CONNECT reply; returns the client and what it sent.
    fn up_to_reply(credentials: Option<(&[u8], &[u8])>) -> (SocksClient, Vec<u8>) {
        let mut c = SocksClient::new("10.1.2.3", 0x1234, credentials).unwrap();
        let mut out = BytesMut::new();
        c.poll_output(&mut out);
        let method = if credentials.is_some() { 2 } else { 0 };
        c.handle_input(&mut BytesMut::from(&[5u8, method][..]))
            .unwrap();
        c.poll_output(&mut out);
        if credentials.is_some() {
            c.handle_input(&mut BytesMut::from(&[1u8, 0][..])).unwrap();
            c.poll_output(&mut out);
        }
        assert_eq!(c.state, State::Reply);
        (c, out.to_vec())
    }

    #[test]
    fn encodes_each_address_type() {
        let cases: [(&str, &[u8]); 4] = [
            ("10.1.2.3", &[1, 10, 1, 2, 3]),
            ("::1", &[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            (
                "[::1]",
                &[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            ),
            ("a.org", &[3, 5, b'a', b'.', b'o', b'r', b'g']),
        ];
        for (host, addr) in cases {
            let c = SocksClient::new(host, 0x1234, None).unwrap();
            let mut want = vec![5, 1, 0];
            want.extend_from_slice(addr);
            want.extend_from_slice(&[0x12, 0x34]);
            assert_eq!(c.request, want, "{host}");
        }
        assert_eq!(
            SocksClient::new(&"h".repeat(256), 1, None).err(),
            Some(SocksError::HostTooLong)
        );
        assert!(SocksClient::new(&"h".repeat(255), 1, None).is_ok());
        assert_eq!(
            SocksClient::new("h", 0, None).err(),
            Some(SocksError::BadPort)
        );
    }

    #[test]
    fn username_password_exchange() {
        let (_, sent) = up_to_reply(Some((b"someuser", b"pw")));
        let mut want = vec![5, 1, 2, 1, 8];
        want.extend_from_slice(b"someuser");
        want.extend_from_slice(&[2, b'p', b'w']);
        want.extend_from_slice(&[5, 1, 0, 1, 10, 1, 2, 3, 0x12, 0x34]);
        assert_eq!(sent, want);
        let long = [b'x'; 256];
        assert_eq!(
            SocksClient::new("h", 1, Some((&long, b""))).err(),
            Some(SocksError::CredentialsTooLong)
        );
    }

    #[test]
    fn refusals_are_typed() {
        let mut c = SocksClient::new("h", 1, None).unwrap();
        c.poll_output(&mut BytesMut::new());
        assert_eq!(
            c.handle_input(&mut BytesMut::from(&[5u8, 0xff][..])),
            Err(SocksError::NoAcceptableMethod(0xff))
        );
        // A method that was not offered is refused too (libzmq would go on to authenticate).
        let mut c = SocksClient::new("h", 1, None).unwrap();
        c.poll_output(&mut BytesMut::new());
        assert_eq!(
            c.handle_input(&mut BytesMut::from(&[5u8, 2][..])),
            Err(SocksError::NoAcceptableMethod(2))
        );
        let mut c = SocksClient::new("h", 1, Some((b"u", b"p"))).unwrap();
        c.poll_output(&mut BytesMut::new());
        c.handle_input(&mut BytesMut::from(&[5u8, 2][..])).unwrap();
        c.poll_output(&mut BytesMut::new());
        assert_eq!(
            c.handle_input(&mut BytesMut::from(&[1u8, 1][..])),
            Err(SocksError::AuthFailed(1))
        );
        // The version is checked at its byte, before the rest arrives.
        let mut c = SocksClient::new("h", 1, None).unwrap();
        c.poll_output(&mut BytesMut::new());
        assert_eq!(
            c.handle_input(&mut BytesMut::from(&[4u8][..])),
            Err(SocksError::BadVersion(4))
        );
        for (reply, err) in [
            (&[5u8, 5][..], SocksError::Refused(5)),
            (&[5, 9], SocksError::Malformed),
            (&[5, 0, 1], SocksError::Malformed),
            (&[5, 0, 0, 2], SocksError::Malformed),
            (&[4], SocksError::BadVersion(4)),
        ] {
            let (mut c, _) = up_to_reply(None);
            assert_eq!(c.handle_input(&mut BytesMut::from(reply)), Err(err));
            // And again after: a failed exchange stays failed.
            assert_eq!(c.handle_input(&mut BytesMut::from(&[0u8][..])), Err(err));
        }
    }

    #[test]
    fn never_reads_past_the_reply() {
        for (reply, len) in [
            (vec![5u8, 0, 0, 1, 1, 2, 3, 4, 0, 1], 10),
            ([vec![5u8, 0, 0, 4], vec![0; 16], vec![0, 1]].concat(), 22),
            (
                [vec![5u8, 0, 0, 3, 9], b"localhost".to_vec(), vec![0, 1]].concat(),
                16,
            ),
            (vec![5u8, 0, 0, 3, 0, 0, 1], 7),
            (
                [vec![5u8, 0, 0, 3, 255], vec![b'a'; 255], vec![0, 1]].concat(),
                MAX_REPLY,
            ),
        ] {
            assert_eq!(reply.len(), len);
            let (mut c, _) = up_to_reply(None);
            // A driver reading `needed()` at a time ends exactly at the reply's end.
            let mut fed = 0;
            while !c.is_done() {
                let n = c.needed();
                assert!(n > 0 && fed + n <= len, "needed {n} after {fed} of {len}");
                c.handle_input(&mut BytesMut::from(&reply[fed..fed + n]))
                    .unwrap();
                fed += n;
            }
            assert_eq!(fed, len);
            assert_eq!(c.needed(), 0);
        }
    }

    proptest! {
        /// Whatever the proxy answers, in whatever pieces: no panic, at most the exchange's
        /// bytes taken from the buffer (never past a complete reply), and feeding byte by
        /// byte or in random pieces gives the outcome of feeding at once.
        #[test]
        fn any_answer_is_safe(
            auth in any::<bool>(),
            answer in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(1usize..40, 0..40),
        ) {
            let creds: Option<(&[u8], &[u8])> = auth.then_some((b"u", b"p"));
            let drive = |pieces: &mut dyn Iterator<Item = Vec<u8>>| {
                let mut c = SocksClient::new("::1", 7, creds).unwrap();
                let mut out = BytesMut::new();
                let mut pending = BytesMut::new();
                let mut arrived = 0usize;
                let mut result = Ok(());
                'feed: for piece in pieces {
                    arrived += piece.len();
                    pending.extend_from_slice(&piece);
                    loop {
                        // A driver sends what is due before it waits for the next answer.
                        c.poll_output(&mut out);
                        let before = pending.len();
                        result = c.handle_input(&mut pending);
                        assert!(c.have <= MAX_REPLY);
                        if result.is_err() || c.is_done() {
                            break 'feed;
                        }
                        if pending.len() == before {
                            break;
                        }
                    }
                }
                (result, c.is_done(), arrived - pending.len())
            };
            let whole = drive(&mut std::iter::once(answer.clone()));
            let bytes = drive(&mut answer.iter().map(|b| vec![*b]));
            let mut rest = &answer[..];
            let mut pieces = Vec::new();
            for cut in cuts.iter().copied().chain(std::iter::once(usize::MAX)) {
                let n = cut.min(rest.len());
                pieces.push(rest[..n].to_vec());
                rest = &rest[n..];
            }
            let cut = drive(&mut pieces.into_iter());
            // The same outcome; and once done, the same bytes taken (after a failure the
            // stream is dropped, so how far into the bad answer it read does not matter).
            let key = |r: &(Result<(), SocksError>, bool, usize)| (r.0, r.1, r.1.then_some(r.2));
            prop_assert_eq!(key(&whole), key(&bytes));
            prop_assert_eq!(key(&whole), key(&cut));
            let limit = 2 + if auth { 2 } else { 0 } + MAX_REPLY;
            prop_assert!(whole.2 <= limit.min(answer.len()));
        }

        /// Any well-formed reply, with the destination's bytes behind it: done, and those
        /// bytes are left in the buffer untouched.
        #[test]
        fn a_valid_reply_leaves_the_rest(
            atyp in prop_oneof![Just(1u8), Just(3u8), Just(4u8)],
            name in proptest::collection::vec(any::<u8>(), 0..256),
            port in any::<u16>(),
            rest in proptest::collection::vec(any::<u8>(), 0..100),
        ) {
            let (mut c, _) = up_to_reply(None);
            let mut reply = vec![5u8, 0, 0, atyp];
            match atyp {
                1 => reply.extend_from_slice(&[127, 0, 0, 1]),
                4 => reply.extend_from_slice(&[0; 16]),
                _ => {
                    reply.push(u8::try_from(name.len()).unwrap());
                    reply.extend_from_slice(&name);
                }
            }
            reply.extend_from_slice(&port.to_be_bytes());
            reply.extend_from_slice(&rest);
            let mut buf = BytesMut::from(&reply[..]);
            prop_assert_eq!(c.handle_input(&mut buf), Ok(()));
            prop_assert!(c.is_done());
            prop_assert_eq!(&buf[..], &rest[..]);
        }
    }
}
