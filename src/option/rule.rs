//! How one option's value is checked, stored and read back: libzmq 4.3's `options.cpp` rules
//! (`do_setsockopt`, `do_setsockopt_int_as_bool_strict/relaxed`, the string helpers,
//! `do_getsockopt`), written once so every row of the table uses the same code.
//!
//! The caller's buffer: an integer option is read and written only through exactly
//! `sizeof (int)` bytes (8 for the 64-bit ones); a string or blob is read into a buffer at least
//! as large as the value, whose unused rest libzmq zero-fills.

use bytes::Bytes;
use ferromq_zmtp::Secret;

use crate::error::{Error, Result};

/// The validation and wire form of an option's value.
///
/// ```
/// use ferromq::option::{spec, Rule, ZMQ_LINGER};
/// let rule = spec(ZMQ_LINGER).map(|row| row.rule);
/// assert_eq!(rule, Some(Rule::Int { min: -1, max: i32::MAX }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// A C `int` within `min..=max`.
    Int {
        /// Smallest accepted value.
        min: i32,
        /// Largest accepted value.
        max: i32,
    },
    /// A C `int` that must be 0 or 1 (libzmq's `int_as_bool_strict`).
    Flag01,
    /// A C `int`, any value, non-zero meaning on (libzmq's `int_as_bool_relaxed`).
    FlagAny,
    /// A C `int` >= 0, non-zero meaning on (the socket types' own flags).
    FlagNonNegative,
    /// An `int64_t` >= `min`.
    Int64 {
        /// Smallest accepted value.
        min: i64,
    },
    /// A `uint64_t`, any value.
    Uint64,
    /// Bytes, `min..=max` long, read back without a NUL (routing ids).
    Blob {
        /// Shortest accepted length.
        min: usize,
        /// Longest accepted length.
        max: usize,
    },
    /// A string of 1..=max bytes, read back with its NUL. `(NULL, 0)` clears it when
    /// `null_clears` (libzmq's `string_allow_empty_strict`), else is refused.
    Text {
        /// Longest accepted length.
        max: usize,
        /// Whether `(NULL, 0)` clears the value.
        null_clears: bool,
    },
    /// A string of 0..=max bytes, read back with its NUL; empty, from a NULL pointer or not,
    /// clears it (libzmq's ZMQ_SOCKS_USERNAME and ZMQ_SOCKS_PASSWORD).
    TextOrEmpty {
        /// Longest accepted length.
        max: usize,
    },
    /// The heartbeat TTL: milliseconds in, kept in deciseconds (the wire's 16 bits).
    Deciseconds,
    /// A set of C `int`s: one value adds to it, `(NULL, 0)` empties it; write-only.
    IntSet,
    /// A tcp address mask (`a.b.c.d[/n]`, IPv6 when ZMQ_IPV6 is on); `(NULL, 0)` clears;
    /// write-only.
    AcceptFilter,
    /// Bytes of any length, taken as they are (welcome message, subscriptions).
    AnyBytes,
    /// Read-only: the socket answers it; set is EINVAL.
    ReadOnly,
    /// A Curve25519 key: 32 raw bytes, or 40 Z85 characters (41 with a NUL); read back raw
    /// into 32 bytes or as Z85 text into 41.
    CurveKey,
}

/// A value passed to `set`: the bytes, and whether the C caller passed a NULL pointer.
///
/// ```
/// use ferromq::option::{Input, Rule, Slot};
/// let mut value = 0i32;
/// value.set(Rule::Int { min: 0, max: 10 }, Input::of(&7i32.to_ne_bytes()))?;
/// assert_eq!(value, 7);
/// let null = Input { bytes: &[], null: true }; // a C caller's (NULL, 0)
/// assert_eq!(value.set(Rule::Int { min: 0, max: 10 }, null), Err(ferromq::Error::Invalid));
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The value's bytes (empty for NULL).
    pub bytes: &'a [u8],
    /// The C caller passed NULL (only meaningful with an empty `bytes`).
    pub null: bool,
}

impl<'a> Input<'a> {
    /// Bytes from Rust: never NULL.
    ///
    /// ```
    /// let input = ferromq::option::Input::of(b"tcp");
    /// assert!(!input.null && input.bytes == b"tcp");
    /// ```
    pub fn of(bytes: &'a [u8]) -> Self {
        Input { bytes, null: false }
    }
}

/// A C `int` value, exactly `sizeof (int)` bytes.
pub(crate) fn int_value(value: &[u8]) -> Result<i32> {
    let bytes: [u8; 4] = value.try_into().map_err(|_| Error::Invalid)?;
    Ok(i32::from_ne_bytes(bytes))
}

fn int64_value(value: &[u8]) -> Result<[u8; 8]> {
    value.try_into().map_err(|_| Error::Invalid)
}

/// Copies `value` into `out` and zero-fills the rest, as libzmq's `do_getsockopt` does;
/// EINVAL if `out` is too small.
pub(crate) fn put(out: &mut [u8], value: &[u8]) -> Result<usize> {
    let (dst, rest) = out
        .split_at_mut_checked(value.len())
        .ok_or(Error::Invalid)?;
    dst.copy_from_slice(value);
    rest.fill(0);
    Ok(value.len())
}

/// Writes an `int` into a buffer of exactly its size (libzmq's `options_t::getsockopt`).
pub(crate) fn put_exact(out: &mut [u8], value: &[u8]) -> Result<usize> {
    if out.len() != value.len() {
        return Err(Error::Invalid);
    }
    out.copy_from_slice(value);
    Ok(value.len())
}

/// Storage for one option's value, set and read back under a [`Rule`].
///
/// ```
/// use ferromq::option::{Input, Rule, Slot};
/// let mut on = false;
/// on.set(Rule::Flag01, Input::of(&1i32.to_ne_bytes()))?;
/// assert!(on);
/// assert_eq!(on.set(Rule::Flag01, Input::of(&2i32.to_ne_bytes())), Err(ferromq::Error::Invalid));
/// # Ok::<(), ferromq::Error>(())
/// ```
pub trait Slot {
    /// Checks `value` against `rule` and stores it.
    ///
    /// ```
    /// use ferromq::option::{Input, Rule, Slot};
    /// let mut hwm = 1000i32;
    /// hwm.set(Rule::Int { min: 0, max: i32::MAX }, Input::of(&5i32.to_ne_bytes()))?;
    /// assert_eq!(hwm, 5);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()>;
    /// Writes the value into `out`; returns the length written.
    ///
    /// ```
    /// use ferromq::option::{Rule, Slot};
    /// let hwm = 42i32;
    /// let mut out = [0u8; 4];
    /// assert_eq!(hwm.get(Rule::Int { min: 0, max: i32::MAX }, &mut out)?, 4);
    /// assert_eq!(i32::from_ne_bytes(out), 42);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    fn get(&self, rule: Rule, out: &mut [u8]) -> Result<usize>;
}

fn bool_of(rule: Rule, value: &[u8]) -> Result<bool> {
    let v = int_value(value)?;
    match rule {
        Rule::Flag01 if v == 0 || v == 1 => Ok(v == 1),
        Rule::FlagAny => Ok(v != 0),
        Rule::FlagNonNegative if v >= 0 => Ok(v != 0),
        _ => Err(Error::Invalid),
    }
}

impl Slot for bool {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        *self = bool_of(rule, value.bytes)?;
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &i32::from(*self).to_ne_bytes())
    }
}

impl Slot for i32 {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        let v = int_value(value.bytes)?;
        match rule {
            Rule::Int { min, max } if (min..=max).contains(&v) => *self = v,
            _ => return Err(Error::Invalid),
        }
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &self.to_ne_bytes())
    }
}

impl Slot for u16 {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        // libzmq divides first (so -99..=99 all mean 0) and keeps what fits 16 bits.
        if rule != Rule::Deciseconds {
            return Err(Error::Invalid);
        }
        *self = u16::try_from(int_value(value.bytes)? / 100).map_err(|_| Error::Invalid)?;
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &(i32::from(*self) * 100).to_ne_bytes())
    }
}

impl Slot for i64 {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        let v = i64::from_ne_bytes(int64_value(value.bytes)?);
        match rule {
            Rule::Int64 { min } if v >= min => *self = v,
            _ => return Err(Error::Invalid),
        }
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &self.to_ne_bytes())
    }
}

impl Slot for u64 {
    fn set(&mut self, _rule: Rule, value: Input<'_>) -> Result<()> {
        *self = u64::from_ne_bytes(int64_value(value.bytes)?);
        Ok(())
    }
    fn get(&self, _rule: Rule, out: &mut [u8]) -> Result<usize> {
        put_exact(out, &self.to_ne_bytes())
    }
}

fn checked_bytes(rule: Rule, value: Input<'_>) -> Result<Option<Bytes>> {
    Ok(check_bytes(rule, value)?.then(|| Bytes::copy_from_slice(value.bytes)))
}

/// Whether `value` fits `rule`: `Ok(true)` to store it, `Ok(false)` for a `(NULL, 0)` that
/// clears. Checked before any copy is made, so a secret is copied once, into its slot.
fn check_bytes(rule: Rule, value: Input<'_>) -> Result<bool> {
    let len = value.bytes.len();
    match rule {
        Rule::Blob { min, max } if (min..=max).contains(&len) => Ok(true),
        Rule::Text { max, .. } if (1..=max).contains(&len) => Ok(true),
        Rule::Text {
            null_clears: true, ..
        } if len == 0 && value.null => Ok(false),
        Rule::TextOrEmpty { .. } if len == 0 => Ok(false),
        Rule::TextOrEmpty { max } if len <= max => Ok(true),
        Rule::AnyBytes => Ok(true),
        _ => Err(Error::Invalid),
    }
}

/// A PLAIN username or password: as a `Bytes` text option, but wiped on drop, and so is the
/// NUL-terminated copy a read makes.
impl Slot for Secret {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        *self = if check_bytes(rule, value)? {
            Secret::new(value.bytes)
        } else {
            Secret::default()
        };
        Ok(())
    }
    fn get(&self, rule: Rule, out: &mut [u8]) -> Result<usize> {
        match rule {
            Rule::Text { .. } | Rule::TextOrEmpty { .. } => {
                let mut s = Vec::with_capacity(self.len() + 1);
                s.extend_from_slice(self);
                s.push(0);
                put(out, &Secret::from(s))
            }
            _ => put(out, self),
        }
    }
}

impl Slot for Bytes {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        *self = checked_bytes(rule, value)?.unwrap_or_default();
        Ok(())
    }
    fn get(&self, rule: Rule, out: &mut [u8]) -> Result<usize> {
        match rule {
            Rule::Text { .. } | Rule::TextOrEmpty { .. } => {
                let mut s = self.to_vec();
                s.push(0);
                put(out, &s)
            }
            _ => put(out, self),
        }
    }
}

/// A value that may be absent (the next connect's routing id): set-only, as in libzmq.
impl Slot for Option<Bytes> {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        *self = checked_bytes(rule, value)?;
        Ok(())
    }
    fn get(&self, _rule: Rule, _out: &mut [u8]) -> Result<usize> {
        Err(Error::Invalid)
    }
}

impl Slot for Vec<i32> {
    fn set(&mut self, _rule: Rule, value: Input<'_>) -> Result<()> {
        if value.bytes.is_empty() && value.null {
            self.clear();
        } else {
            let v = int_value(value.bytes)?;
            if !self.contains(&v) {
                self.push(v);
            }
        }
        Ok(())
    }
    fn get(&self, _rule: Rule, _out: &mut [u8]) -> Result<usize> {
        Err(Error::Invalid)
    }
}

/// The tcp accept filters: `Options::set` checks them (the check needs ZMQ_IPV6).
impl Slot for Vec<Bytes> {
    fn set(&mut self, _rule: Rule, _value: Input<'_>) -> Result<()> {
        Err(Error::Invalid)
    }
    fn get(&self, _rule: Rule, _out: &mut [u8]) -> Result<usize> {
        Err(Error::Invalid)
    }
}

/// A value that the socket itself answers or acts on (read-only options, the socket types'
/// own options): the table checks a set's value, the socket does the rest.
///
/// ```
/// use ferromq::option::{Held, Input, Rule, Slot};
/// // The table still checks the value; the socket acts on it.
/// assert_eq!(Held.set(Rule::ReadOnly, Input::of(&[])), Err(ferromq::Error::Invalid));
/// Held.set(Rule::Flag01, Input::of(&1i32.to_ne_bytes()))?;
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held;

impl Slot for Held {
    fn set(&mut self, rule: Rule, value: Input<'_>) -> Result<()> {
        match rule {
            Rule::ReadOnly => Err(Error::Invalid),
            Rule::Flag01 | Rule::FlagAny | Rule::FlagNonNegative => {
                bool_of(rule, value.bytes).map(drop)
            }
            Rule::Int { .. } => 0i32.set(rule, value),
            _ => checked_bytes(rule, value).map(drop),
        }
    }
    fn get(&self, _rule: Rule, _out: &mut [u8]) -> Result<usize> {
        Err(Error::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_nul() {
        let mut s = Bytes::new();
        let text = Rule::Text {
            max: 16,
            null_clears: true,
        };
        s.set(text, Input::of(b"lo")).unwrap();
        let mut out = [0xAAu8; 8];
        assert_eq!(s.get(text, &mut out), Ok(3));
        assert_eq!(
            out,
            [b'l', b'o', 0, 0, 0, 0, 0, 0],
            "NUL and zero-filled rest"
        );
        assert_eq!(s.get(text, &mut out[..2]), Err(Error::Invalid));
        assert_eq!(s.set(text, Input::of(b"")), Err(Error::Invalid));
        s.set(
            text,
            Input {
                bytes: &[],
                null: true,
            },
        )
        .unwrap();
        assert!(s.is_empty());
        assert_eq!(s.set(text, Input::of(&[b'x'; 17])), Err(Error::Invalid));
    }

    #[test]
    fn text_or_empty_clears_on_any_empty_value() {
        let rule = Rule::TextOrEmpty { max: 4 };
        let mut s = Secret::default();
        s.set(rule, Input::of(b"user")).unwrap();
        let mut out = [0xAAu8; 6];
        assert_eq!(s.get(rule, &mut out), Ok(5));
        assert_eq!(&out[..5], b"user\0");
        s.set(rule, Input::of(b"")).unwrap();
        assert!(s.is_empty());
        assert_eq!(
            s.get(rule, &mut out),
            Ok(1),
            "an empty value reads back as a NUL"
        );
        s.set(rule, Input::of(b"x")).unwrap();
        s.set(
            rule,
            Input {
                bytes: &[],
                null: true,
            },
        )
        .unwrap();
        assert!(s.is_empty());
        assert_eq!(s.set(rule, Input::of(b"12345")), Err(Error::Invalid));
    }

    #[test]
    fn ints_need_exact_buffers() {
        let mut v = 5i32;
        let mut out = [0u8; 8];
        assert_eq!(
            v.get(Rule::Int { min: 0, max: 9 }, &mut out),
            Err(Error::Invalid)
        );
        assert_eq!(v.get(Rule::Int { min: 0, max: 9 }, &mut out[..4]), Ok(4));
        assert_eq!(
            v.set(
                Rule::Int { min: 0, max: 9 },
                Input::of(&10i32.to_ne_bytes())
            ),
            Err(Error::Invalid)
        );
        v.set(Rule::Int { min: 0, max: 9 }, Input::of(&9i32.to_ne_bytes()))
            .unwrap();
        assert_eq!(v, 9);
    }

    #[test]
    fn flags() {
        let mut b = false;
        assert_eq!(
            b.set(Rule::Flag01, Input::of(&2i32.to_ne_bytes())),
            Err(Error::Invalid)
        );
        b.set(Rule::FlagAny, Input::of(&(-3i32).to_ne_bytes()))
            .unwrap();
        assert!(b);
        assert_eq!(
            b.set(Rule::FlagNonNegative, Input::of(&(-1i32).to_ne_bytes())),
            Err(Error::Invalid)
        );
    }
}
