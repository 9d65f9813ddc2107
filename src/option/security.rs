//! A socket's security settings: the `ZMQ_MECHANISM` the `ZMQ_PLAIN_*` options add up to,
//! and the [`Security`] each new connection's handshake starts with.
//!
//! libzmq (src/options.cpp) keeps one mechanism and one as-server flag that every security
//! option rewrites: `PLAIN_SERVER(1)` makes a PLAIN server, `PLAIN_USERNAME`/`PASSWORD` a
//! PLAIN client, `PLAIN_SERVER(0)` or a `(NULL, 0)` username or password back to NULL (the
//! stored credentials stay, readable); `CURVE_SERVER(1)` makes a CURVE server, `(0)` NULL,
//! any CURVE key makes the mechanism CURVE and `CURVE_SERVERKEY` a client. The rows of the
//! option table hold the values; the rules that tie them together are here.
//!
//! ```
//! use ferromq::option::security::MechanismKind;
//! use ferromq::option::ZMQ_MECHANISM;
//! let ctx = ferromq::Context::new();
//! let mut s = ctx.socket(ferromq::SocketType::Rep)?;
//! let mechanism = |s: &ferromq::Socket| -> ferromq::Result<i32> {
//!     let mut out = [0u8; 4];
//!     s.get_option_raw(ZMQ_MECHANISM, &mut out)?;
//!     Ok(i32::from_ne_bytes(out))
//! };
//! assert_eq!(mechanism(&s)?, MechanismKind::Null.to_raw());
//! s.set_plain_server(true)?; // a security option rewrites the mechanism
//! assert_eq!(mechanism(&s)?, MechanismKind::Plain.to_raw());
//! # Ok::<(), ferromq::Error>(())
//! ```

use ferromq_zmtp::{z85, CurveClientKeys, KeyPair, PlainCredentials, Secret, Security};

use crate::error::{Error, Result};
use crate::option::{put_exact, Input, Options, Rule, Slot};

/// `ZMQ_MECHANISM`'s values (zmq.h `ZMQ_NULL`, `ZMQ_PLAIN`).
///
/// ```
/// use ferromq::option::security::MechanismKind;
/// assert_eq!(MechanismKind::default(), MechanismKind::Null);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MechanismKind {
    /// `ZMQ_NULL` = 0.
    #[default]
    Null,
    /// `ZMQ_PLAIN` = 1.
    Plain,
    /// `ZMQ_CURVE` = 2.
    Curve,
}

impl MechanismKind {
    /// zmq.h's number.
    ///
    /// ```
    /// use ferromq::option::security::MechanismKind;
    /// assert_eq!(MechanismKind::Curve.to_raw(), 2); // ZMQ_CURVE
    /// ```
    pub fn to_raw(self) -> i32 {
        match self {
            Self::Null => 0,
            Self::Plain => 1,
            Self::Curve => 2,
        }
    }
}

/// Read-only: the security options change it.
impl Slot for MechanismKind {
    fn set(&mut self, _rule: Rule, _value: Input<'_>) -> Result<()> {
        Err(Error::Invalid)
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &self.to_raw().to_ne_bytes())
    }
}

/// A CURVE key option's 32 bytes (zeros until set, as libzmq's); wiped when dropped, since
/// one of them is the secret key and options are copied into every connection task.
///
/// ```
/// use ferromq::option::security::CurveKey;
/// use ferromq::option::{Input, Rule, Slot};
/// let mut key = CurveKey::default();
/// // 40 Z85 characters set the key; reading it into 41 bytes gives Z85 text back.
/// let z85 = b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
/// key.set(Rule::CurveKey, Input::of(z85))?;
/// let mut text = [0u8; 41];
/// key.get(Rule::CurveKey, &mut text)?;
/// assert_eq!(&text[..40], &z85[..]);
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CurveKey(pub [u8; 32]);

impl Drop for CurveKey {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl std::fmt::Debug for CurveKey {
    /// Never prints the key (one of them is a secret key).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CurveKey(..)")
    }
}

/// libzmq's `set_curve_key`/`do_getsockopt_curve_key`: 32 raw bytes, or Z85 text of 40
/// characters (41 with its NUL); read back raw into a 32-byte buffer or as Z85 with a NUL into
/// a 41-byte one.
impl Slot for CurveKey {
    fn set(&mut self, _rule: Rule, value: Input<'_>) -> Result<()> {
        let bytes = value.bytes;
        let text = match bytes.len() {
            32 => {
                self.0.copy_from_slice(bytes);
                return Ok(());
            }
            40 => bytes,
            // libzmq decodes the C string: the 41st byte must be its NUL.
            41 if bytes[40] == 0 => &bytes[..40],
            _ => return Err(Error::Invalid),
        };
        let key = z85::decode(text).ok_or(Error::Invalid)?;
        self.0 = key.try_into().map_err(|_| Error::Invalid)?;
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        match out.len() {
            32 => put_exact(out, &self.0),
            41 => {
                let mut text = z85::encode(&self.0).ok_or(Error::Invalid)?;
                text.push(0);
                put_exact(out, &text)
            }
            _ => Err(Error::Invalid),
        }
    }
}

impl Options {
    /// After a security option's row stored its value: the mechanism and role it implies.
    pub(crate) fn security_option_set(&mut self, option: i32, value: Input<'_>) {
        use crate::option::{
            ZMQ_CURVE_PUBLICKEY, ZMQ_CURVE_SECRETKEY, ZMQ_CURVE_SERVER, ZMQ_CURVE_SERVERKEY,
            ZMQ_PLAIN_PASSWORD, ZMQ_PLAIN_SERVER, ZMQ_PLAIN_USERNAME,
        };
        match option {
            ZMQ_CURVE_SERVER => {
                self.mechanism = if self.as_server {
                    MechanismKind::Curve
                } else {
                    MechanismKind::Null
                };
            }
            ZMQ_CURVE_PUBLICKEY | ZMQ_CURVE_SECRETKEY => self.mechanism = MechanismKind::Curve,
            ZMQ_CURVE_SERVERKEY => {
                self.mechanism = MechanismKind::Curve;
                self.as_server = false;
            }
            ZMQ_PLAIN_SERVER => {
                self.mechanism = if self.as_server {
                    MechanismKind::Plain
                } else {
                    MechanismKind::Null
                };
            }
            ZMQ_PLAIN_USERNAME | ZMQ_PLAIN_PASSWORD => {
                if value.bytes.is_empty() {
                    self.mechanism = MechanismKind::Null;
                } else {
                    self.as_server = false;
                    self.mechanism = MechanismKind::Plain;
                }
            }
            _ => {}
        }
    }

    /// `ZMQ_PLAIN_SERVER` as libzmq reads it back: a server of the PLAIN mechanism.
    pub(crate) fn plain_server(&self) -> bool {
        self.as_server && self.mechanism == MechanismKind::Plain
    }

    /// `ZMQ_CURVE_SERVER` as libzmq reads it back: a server of the CURVE mechanism.
    pub(crate) fn is_curve_server(&self) -> bool {
        self.as_server && self.mechanism == MechanismKind::Curve
    }

    /// The handshake's mechanism and role for a connection made now.
    pub(crate) fn security(&self) -> Security {
        match self.mechanism {
            MechanismKind::Null => Security::Null,
            MechanismKind::Plain if self.as_server => Security::PlainServer,
            MechanismKind::Plain => Security::PlainClient(PlainCredentials {
                username: self.plain_username.clone(),
                password: self.plain_password.clone(),
            }),
            MechanismKind::Curve => {
                let ours = KeyPair::from_parts(self.curve_publickey.0, self.curve_secretkey.0);
                if self.as_server {
                    Security::CurveServer(ours)
                } else {
                    Security::CurveClient(CurveClientKeys {
                        ours,
                        server: self.curve_serverkey.0,
                    })
                }
            }
        }
    }
}

/// A `(NULL, 0)` value: what turns a PLAIN username or password back to NULL.
pub(crate) fn is_null_input(value: Input<'_>) -> bool {
    value.null && value.bytes.is_empty()
}

/// Stored strings are kept on `(NULL, 0)` (libzmq only resets the mechanism).
pub(crate) fn keep_on_null(slot: &mut Secret, rule: Rule, value: Input<'_>) -> Result<()> {
    if is_null_input(value) {
        return Ok(());
    }
    slot.set(rule, value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::option::{ZMQ_MECHANISM, ZMQ_PLAIN_PASSWORD, ZMQ_PLAIN_SERVER, ZMQ_PLAIN_USERNAME};

    fn get_int(o: &Options, option: i32) -> i32 {
        let mut out = [0u8; 4];
        assert_eq!(o.get(option, &mut out), Some(Ok(4)));
        i32::from_ne_bytes(out)
    }

    #[test]
    fn mechanism_follows_the_plain_options() {
        let mut o = Options::default();
        assert_eq!(o.security(), Security::Null);
        o.set(ZMQ_PLAIN_SERVER, Input::of(&1i32.to_ne_bytes()))
            .unwrap();
        assert_eq!(
            (get_int(&o, ZMQ_MECHANISM), get_int(&o, ZMQ_PLAIN_SERVER)),
            (1, 1)
        );
        assert_eq!(o.security(), Security::PlainServer);
        o.set(ZMQ_PLAIN_USERNAME, Input::of(b"admin")).unwrap();
        o.set(ZMQ_PLAIN_PASSWORD, Input::of(b"secret")).unwrap();
        assert_eq!(
            (get_int(&o, ZMQ_MECHANISM), get_int(&o, ZMQ_PLAIN_SERVER)),
            (1, 0)
        );
        assert_eq!(
            o.security(),
            Security::PlainClient(PlainCredentials {
                username: Secret::from(b"admin"),
                password: Secret::from(b"secret"),
            })
        );
        let null = Input {
            bytes: &[],
            null: true,
        };
        o.set(ZMQ_PLAIN_PASSWORD, null).unwrap();
        assert_eq!(get_int(&o, ZMQ_MECHANISM), 0);
        let mut out = [0u8; 16];
        assert_eq!(o.get(ZMQ_PLAIN_PASSWORD, &mut out), Some(Ok(7)), "kept");
        assert_eq!(
            o.set(ZMQ_PLAIN_USERNAME, Input::of(b"")),
            Err(Error::Invalid)
        );
        assert_eq!(
            o.set(ZMQ_PLAIN_USERNAME, Input::of(&[b'x'; 256])),
            Err(Error::Invalid)
        );
        assert_eq!(
            o.set(ZMQ_PLAIN_SERVER, Input::of(&2i32.to_ne_bytes())),
            Err(Error::Invalid)
        );
        assert_eq!(
            o.set(ZMQ_MECHANISM, Input::of(&1i32.to_ne_bytes())),
            Err(Error::Invalid)
        );
    }
}
