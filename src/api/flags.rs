//! Send/receive flags and the ZMQ_EVENTS bits, with libzmq's numeric values so the C ABI
//! passes them through unchanged.

use std::ops::BitOr;

/// Flags for [`crate::Socket::send`].
///
/// ```
/// use ferromq::{Context, Error, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut s = ctx.socket(SocketType::Dealer)?;
/// let refused = s.send("x", SendFlags::DONTWAIT | SendFlags::SNDMORE).unwrap_err();
/// assert_eq!(refused.error(), Error::Again); // no peer, and DONTWAIT: refused at once
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendFlags(u32);

impl SendFlags {
    /// `ZMQ_DONTWAIT`: fail with `EAGAIN` rather than block.
    pub const DONTWAIT: SendFlags = SendFlags(1);
    /// `ZMQ_SNDMORE`: more parts of this message follow.
    pub const SNDMORE: SendFlags = SendFlags(2);

    /// No flags.
    ///
    /// ```
    /// use ferromq::SendFlags;
    /// assert_eq!(SendFlags::empty().bits(), 0);
    /// assert!(!SendFlags::empty().contains(SendFlags::DONTWAIT));
    /// ```
    pub const fn empty() -> SendFlags {
        SendFlags(0)
    }
    /// The flags from libzmq's bits; unknown bits are ignored, as libzmq does.
    ///
    /// ```
    /// use ferromq::SendFlags;
    /// let f = SendFlags::from_bits_truncate(1 | 2 | 64); // ZMQ_DONTWAIT | ZMQ_SNDMORE | unknown
    /// assert_eq!(f, SendFlags::DONTWAIT | SendFlags::SNDMORE);
    /// ```
    pub const fn from_bits_truncate(bits: i32) -> SendFlags {
        SendFlags(bits as u32 & 3)
    }
    /// The raw bits.
    ///
    /// ```
    /// assert_eq!(ferromq::SendFlags::SNDMORE.bits(), 2); // ZMQ_SNDMORE
    /// ```
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// Whether every flag of `other` is set.
    ///
    /// ```
    /// use ferromq::SendFlags;
    /// let f = SendFlags::DONTWAIT | SendFlags::SNDMORE;
    /// assert!(f.contains(SendFlags::SNDMORE));
    /// assert!(!SendFlags::DONTWAIT.contains(f));
    /// ```
    pub const fn contains(self, other: SendFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for SendFlags {
    type Output = SendFlags;
    fn bitor(self, rhs: SendFlags) -> SendFlags {
        SendFlags(self.0 | rhs.0)
    }
}

/// Flags for [`crate::Socket::recv`].
///
/// ```
/// use ferromq::{Context, Error, RecvFlags, SocketType};
/// let ctx = Context::new();
/// let mut s = ctx.socket(SocketType::Pull)?;
/// assert_eq!(s.recv(RecvFlags::DONTWAIT).err(), Some(Error::Again));
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecvFlags(u32);

impl RecvFlags {
    /// `ZMQ_DONTWAIT`.
    pub const DONTWAIT: RecvFlags = RecvFlags(1);

    /// No flags.
    ///
    /// ```
    /// assert_eq!(ferromq::RecvFlags::empty().bits(), 0);
    /// ```
    pub const fn empty() -> RecvFlags {
        RecvFlags(0)
    }
    /// The flags from libzmq's bits; unknown bits are ignored.
    ///
    /// ```
    /// use ferromq::RecvFlags;
    /// assert_eq!(RecvFlags::from_bits_truncate(1 | 8), RecvFlags::DONTWAIT);
    /// ```
    pub const fn from_bits_truncate(bits: i32) -> RecvFlags {
        RecvFlags(bits as u32 & 1)
    }
    /// The raw bits.
    ///
    /// ```
    /// assert_eq!(ferromq::RecvFlags::DONTWAIT.bits(), 1); // ZMQ_DONTWAIT
    /// ```
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// Whether every flag of `other` is set.
    ///
    /// ```
    /// use ferromq::RecvFlags;
    /// assert!(RecvFlags::DONTWAIT.contains(RecvFlags::DONTWAIT));
    /// assert!(!RecvFlags::empty().contains(RecvFlags::DONTWAIT));
    /// ```
    pub const fn contains(self, other: RecvFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for RecvFlags {
    type Output = RecvFlags;
    fn bitor(self, rhs: RecvFlags) -> RecvFlags {
        RecvFlags(self.0 | rhs.0)
    }
}

/// `ZMQ_POLLIN`.
pub const POLLIN: i16 = 1;
/// `ZMQ_POLLOUT`.
pub const POLLOUT: i16 = 2;
/// `ZMQ_POLLERR`.
pub const POLLERR: i16 = 4;
/// `ZMQ_POLLPRI`: urgent data on a raw fd ([`crate::PollItem::fd`]); a socket never has any.
pub const POLLPRI: i16 = 8;

/// The ZMQ_EVENTS bits: what a socket can do right now.
///
/// ```
/// use ferromq::{Context, Events, SocketType};
/// let ctx = Context::new();
/// let mut s = ctx.socket(SocketType::Dealer)?;
/// // No peer yet: nothing to read, nowhere to write.
/// assert_eq!(s.events(), Events::empty());
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Events(i16);

impl Events {
    /// A message can be received without blocking.
    pub const POLLIN: Events = Events(POLLIN);
    /// A message can be sent without blocking.
    pub const POLLOUT: Events = Events(POLLOUT);

    /// No events.
    ///
    /// ```
    /// assert!(!ferromq::Events::empty().contains(ferromq::Events::POLLIN));
    /// ```
    pub const fn empty() -> Events {
        Events(0)
    }
    /// The raw bits (libzmq's values).
    ///
    /// ```
    /// use ferromq::Events;
    /// assert_eq!((Events::POLLIN | Events::POLLOUT).bits(), ferromq::POLLIN | ferromq::POLLOUT);
    /// ```
    pub const fn bits(self) -> i16 {
        self.0
    }
    /// Whether every bit of `other` is set.
    ///
    /// ```
    /// use ferromq::Events;
    /// let both = Events::POLLIN | Events::POLLOUT;
    /// assert!(both.contains(Events::POLLOUT) && !Events::POLLIN.contains(both));
    /// ```
    pub const fn contains(self, other: Events) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Events {
    type Output = Events;
    fn bitor(self, rhs: Events) -> Events {
        Events(self.0 | rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_are_libzmqs() {
        assert_eq!(SendFlags::DONTWAIT.bits(), 1);
        assert_eq!(SendFlags::SNDMORE.bits(), 2);
        assert!((SendFlags::DONTWAIT | SendFlags::SNDMORE).contains(SendFlags::SNDMORE));
        assert_eq!(SendFlags::from_bits_truncate(0x7f), SendFlags(3));
        assert_eq!((Events::POLLIN | Events::POLLOUT).bits(), 3);
    }
}
