//! Send/receive flags and the ZMQ_EVENTS bits, with libzmq's numeric values so the C ABI
//! passes them through unchanged.

use std::ops::BitOr;

/// Flags for [`crate::Socket::send`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendFlags(u32);

impl SendFlags {
    /// `ZMQ_DONTWAIT`: fail with `EAGAIN` rather than block.
    pub const DONTWAIT: SendFlags = SendFlags(1);
    /// `ZMQ_SNDMORE`: more parts of this message follow.
    pub const SNDMORE: SendFlags = SendFlags(2);

    /// No flags.
    pub const fn empty() -> SendFlags {
        SendFlags(0)
    }
    /// The flags from libzmq's bits; unknown bits are ignored, as libzmq does.
    pub const fn from_bits_truncate(bits: i32) -> SendFlags {
        SendFlags(bits as u32 & 3)
    }
    /// The raw bits.
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// Whether every flag of `other` is set.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecvFlags(u32);

impl RecvFlags {
    /// `ZMQ_DONTWAIT`.
    pub const DONTWAIT: RecvFlags = RecvFlags(1);

    /// No flags.
    pub const fn empty() -> RecvFlags {
        RecvFlags(0)
    }
    /// The flags from libzmq's bits; unknown bits are ignored.
    pub const fn from_bits_truncate(bits: i32) -> RecvFlags {
        RecvFlags(bits as u32 & 1)
    }
    /// The raw bits.
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// Whether every flag of `other` is set.
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

/// The ZMQ_EVENTS bits: what a socket can do right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Events(i16);

impl Events {
    /// A message can be received without blocking.
    pub const POLLIN: Events = Events(POLLIN);
    /// A message can be sent without blocking.
    pub const POLLOUT: Events = Events(POLLOUT);

    /// No events.
    pub const fn empty() -> Events {
        Events(0)
    }
    /// The raw bits (libzmq's values).
    pub const fn bits(self) -> i16 {
        self.0
    }
    /// Whether every bit of `other` is set.
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
