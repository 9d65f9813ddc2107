//! Typed options: each key in [`crate::option::typed`]'s constants is generated from a row of
//! the option table and converts a Rust value (`Duration`, `bool`, `usize`, ...) to and from
//! the row's C form, scaled by the row's unit, so `socket.set(LINGER, ...)` takes exactly the
//! path `zmq_setsockopt` does and cannot disagree with it.

use std::marker::PhantomData;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::option::{int_value, spec};

/// A typed key for one socket option: `T` is the Rust type of its value.
///
/// ```
/// use std::time::Duration;
/// use ferromq::option::typed::{Opt, ZMQ_LINGER};
/// // The key's type parameter is the value's Rust type.
/// let key: Opt<Option<Duration>> = ZMQ_LINGER;
/// let ctx = ferromq::Context::new();
/// assert_eq!(ctx.socket(ferromq::SocketType::Push)?.get(key)?, None); // -1: linger forever
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug)]
pub struct Opt<T> {
    number: i32,
    value: PhantomData<fn() -> T>,
}

impl<T> Clone for Opt<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Opt<T> {}

impl<T> Opt<T> {
    pub(crate) const fn new(number: i32) -> Opt<T> {
        Opt {
            number,
            value: PhantomData,
        }
    }

    /// libzmq's number of the option.
    ///
    /// ```
    /// assert_eq!(ferromq::option::typed::ZMQ_SNDHWM.number(), 23);
    /// ```
    pub const fn number(self) -> i32 {
        self.number
    }

    /// The unit of the option's C value, from its table row.
    pub(crate) fn unit(self) -> &'static str {
        spec(self.number).map_or("", |s| s.unit)
    }
}

/// A Rust value an option can hold, and its C form in the unit of the option's row.
///
/// ```
/// use std::time::Duration;
/// use ferromq::option::typed::OptionValue;
/// // Seconds-unit options scale; `None` is the C API's -1.
/// assert_eq!(Duration::from_secs(3).encode("s")?, 3i32.to_ne_bytes());
/// assert_eq!(<Option<Duration>>::decode(&(-1i32).to_ne_bytes(), "ms")?, None);
/// # Ok::<(), ferromq::Error>(())
/// ```
pub trait OptionValue: Sized {
    /// The C form (a native-endian `int`, or `int64_t` for 64-bit options).
    ///
    /// ```
    /// use ferromq::option::typed::OptionValue;
    /// assert_eq!(true.encode("bool")?, 1i32.to_ne_bytes());
    /// assert_eq!(Some(64usize).encode("bytes")?, 64i32.to_ne_bytes());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    fn encode(&self, unit: &str) -> Result<Vec<u8>>;
    /// The value from its C form.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ferromq::option::typed::OptionValue;
    /// assert_eq!(Duration::decode(&250i32.to_ne_bytes(), "ms")?, Duration::from_millis(250));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    fn decode(raw: &[u8], unit: &str) -> Result<Self>;
    /// The size of the C form, for the buffer a read needs.
    const SIZE: usize = 4;
}

fn int(v: i64) -> Result<Vec<u8>> {
    Ok(i32::try_from(v)
        .map_err(|_| Error::Invalid)?
        .to_ne_bytes()
        .to_vec())
}

fn scale(unit: &str) -> Result<u64> {
    match unit {
        // HEARTBEAT_TTL is kept in deciseconds but set and read back in ms.
        "ms" | "ds" => Ok(1),
        "s" => Ok(1000),
        _ => Err(Error::Invalid),
    }
}

impl OptionValue for bool {
    fn encode(&self, _: &str) -> Result<Vec<u8>> {
        int(i64::from(*self))
    }
    fn decode(raw: &[u8], _: &str) -> Result<bool> {
        Ok(int_value(raw)? != 0)
    }
}

impl OptionValue for usize {
    fn encode(&self, _: &str) -> Result<Vec<u8>> {
        int(i64::try_from(*self).map_err(|_| Error::Invalid)?)
    }
    fn decode(raw: &[u8], _: &str) -> Result<usize> {
        usize::try_from(int_value(raw)?).map_err(|_| Error::Invalid)
    }
}

/// `None` is the C API's -1 (the OS default, no limit, forever: the row's doc says which).
impl OptionValue for Option<usize> {
    fn encode(&self, unit: &str) -> Result<Vec<u8>> {
        self.map_or_else(|| int(-1), |v| v.encode(unit))
    }
    fn decode(raw: &[u8], _: &str) -> Result<Option<usize>> {
        Ok(usize::try_from(int_value(raw)?).ok())
    }
}

impl OptionValue for Duration {
    fn encode(&self, unit: &str) -> Result<Vec<u8>> {
        let n = self.as_millis() / u128::from(scale(unit)?);
        int(i64::try_from(n).map_err(|_| Error::Invalid)?)
    }
    fn decode(raw: &[u8], unit: &str) -> Result<Duration> {
        let n = u64::try_from(int_value(raw)?).map_err(|_| Error::Invalid)?;
        Ok(Duration::from_millis(n.saturating_mul(scale(unit)?)))
    }
}

/// `None` is the C API's -1: forever for timeouts and linger, the OS default for keepalive
/// times, "the interval" for HEARTBEAT_TIMEOUT, no reconnect for RECONNECT_IVL.
impl OptionValue for Option<Duration> {
    fn encode(&self, unit: &str) -> Result<Vec<u8>> {
        self.map_or_else(|| int(-1), |d| d.encode(unit))
    }
    fn decode(raw: &[u8], unit: &str) -> Result<Option<Duration>> {
        if int_value(raw)? < 0 {
            return Ok(None);
        }
        Duration::decode(raw, unit).map(Some)
    }
}

/// A 64-bit limit; `None` is the C API's -1 (unlimited).
impl OptionValue for Option<u64> {
    const SIZE: usize = 8;
    fn encode(&self, _: &str) -> Result<Vec<u8>> {
        let v = match self {
            None => -1,
            Some(v) => i64::try_from(*v).map_err(|_| Error::Invalid)?,
        };
        Ok(v.to_ne_bytes().to_vec())
    }
    fn decode(raw: &[u8], _: &str) -> Result<Option<u64>> {
        let bytes: [u8; 8] = raw.try_into().map_err(|_| Error::Invalid)?;
        Ok(u64::try_from(i64::from_ne_bytes(bytes)).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::option::typed::*;
    use crate::{Context, SocketType};

    fn raw_int(s: &crate::Socket, number: i32) -> i32 {
        let mut out = [0u8; 4];
        s.get_option_raw(number, &mut out).unwrap();
        i32::from_ne_bytes(out)
    }

    #[test]
    fn typed_values_are_the_c_values_in_the_rows_unit() {
        let ctx = Context::new();
        let mut s = ctx.socket(SocketType::Push).unwrap();
        assert_eq!(s.get(ZMQ_LINGER).unwrap(), None, "libzmq's default -1");
        s.set(ZMQ_LINGER, Some(Duration::from_millis(250))).unwrap();
        assert_eq!(raw_int(&s, crate::option::ZMQ_LINGER), 250);
        assert_eq!(s.get(ZMQ_LINGER).unwrap(), Some(Duration::from_millis(250)));
        // A row in seconds.
        s.set(ZMQ_TCP_KEEPALIVE_IDLE, Some(Duration::from_secs(30)))
            .unwrap();
        assert_eq!(raw_int(&s, crate::option::ZMQ_TCP_KEEPALIVE_IDLE), 30);
        // Set in ms, kept in deciseconds: read back rounded down, as from C.
        s.set(ZMQ_HEARTBEAT_TTL, Duration::from_millis(1234))
            .unwrap();
        assert_eq!(
            s.get(ZMQ_HEARTBEAT_TTL).unwrap(),
            Duration::from_millis(1200)
        );
        s.set(ZMQ_SNDHWM, 5).unwrap();
        assert_eq!(raw_int(&s, crate::option::ZMQ_SNDHWM), 5);
        assert_eq!(s.set(ZMQ_SNDHWM, usize::MAX), Err(Error::Invalid));
        assert_eq!(s.get(ZMQ_MAXMSGSIZE).unwrap(), None);
        s.set(ZMQ_MAXMSGSIZE, Some(100)).unwrap();
        assert_eq!(s.get(ZMQ_MAXMSGSIZE).unwrap(), Some(100));
        s.set(ZMQ_IMMEDIATE, true).unwrap();
        assert!(s.get(ZMQ_IMMEDIATE).unwrap());
        // The table's type list and readability apply as to the C API.
        assert_eq!(s.set(ZMQ_ROUTER_MANDATORY, true), Err(Error::Invalid));
        let mut r = ctx.socket(SocketType::Router).unwrap();
        r.set(ZMQ_ROUTER_MANDATORY, true).unwrap();
        assert_eq!(r.get(ZMQ_ROUTER_MANDATORY), Err(Error::Invalid));
        // The row's own range: HEARTBEAT_TIMEOUT reads -1 but refuses it.
        assert_eq!(s.get(ZMQ_HEARTBEAT_TIMEOUT).unwrap(), None);
        assert_eq!(s.set(ZMQ_HEARTBEAT_TIMEOUT, None), Err(Error::Invalid));
    }
}
