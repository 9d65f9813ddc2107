//! A message part as the application sees it: the body is a `Bytes` (a received frame is a
//! slice of the engine's read buffer, never a copy) plus the MORE flag and the peer's metadata.

use std::sync::Arc;

use bytes::Bytes;

pub use ferromq_zmtp::Metadata;

/// One message part (frame).
///
/// ```
/// use ferromq::{Context, Msg, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut a = ctx.socket(SocketType::Pair)?;
/// let mut b = ctx.socket(SocketType::Pair)?;
/// a.bind("inproc://doc-msg")?;
/// b.connect("inproc://doc-msg")?;
/// b.send(Msg::new("part"), SendFlags::SNDMORE)?;
/// b.send(Msg::new("last"), SendFlags::empty())?;
/// let first: Msg = a.recv(RecvFlags::empty())?;
/// assert!(first.more); // another part follows
/// // An inproc message carries no metadata, as in libzmq (tcp and ipc ones do).
/// assert!(first.metadata.is_none());
/// assert!(!a.recv(RecvFlags::empty())?.more);
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Msg {
    /// The frame body.
    pub data: Bytes,
    /// Further parts of the same message follow (on receive; ignored on send, where
    /// `SendFlags::SNDMORE` decides).
    pub more: bool,
    /// Properties the peer announced in its handshake (Socket-Type, Identity, ...), shared by
    /// every message from that connection; `None` over inproc, where libzmq attaches none
    /// either (and the shared count would cost two atomic operations per message).
    pub metadata: Option<Arc<Metadata>>,
}

impl Msg {
    /// A message with the given body.
    ///
    /// ```
    /// let m = ferromq::Msg::new(vec![1u8, 2, 3]);
    /// assert_eq!(m.len(), 3);
    /// assert!(!m.more);
    /// ```
    pub fn new(data: impl Into<Bytes>) -> Msg {
        Msg {
            data: data.into(),
            more: false,
            metadata: None,
        }
    }

    /// The body as a slice.
    ///
    /// ```
    /// let m = ferromq::Msg::new("abc");
    /// assert_eq!(m.as_slice(), b"abc");
    /// ```
    pub fn as_slice(&self) -> &[u8] {
        &self.data
    }

    /// The body's length.
    ///
    /// ```
    /// assert_eq!(ferromq::Msg::new("four").len(), 4);
    /// ```
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the body is empty.
    ///
    /// ```
    /// assert!(ferromq::Msg::new("").is_empty());
    /// assert!(!ferromq::Msg::new("x").is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

impl From<Bytes> for Msg {
    fn from(data: Bytes) -> Msg {
        Msg::new(data)
    }
}

impl From<Vec<u8>> for Msg {
    fn from(data: Vec<u8>) -> Msg {
        Msg::new(data)
    }
}

impl From<&'static [u8]> for Msg {
    fn from(data: &'static [u8]) -> Msg {
        Msg::new(Bytes::from_static(data))
    }
}

impl<const N: usize> From<&'static [u8; N]> for Msg {
    fn from(data: &'static [u8; N]) -> Msg {
        Msg::new(Bytes::from_static(data))
    }
}

impl From<&str> for Msg {
    fn from(data: &str) -> Msg {
        Msg::new(Bytes::copy_from_slice(data.as_bytes()))
    }
}

impl From<String> for Msg {
    fn from(data: String) -> Msg {
        Msg::new(Bytes::from(data))
    }
}

pub mod settled;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_the_bytes() {
        assert_eq!(Msg::from("ab").as_slice(), b"ab");
        assert_eq!(Msg::from(vec![1u8, 2]).as_slice(), &[1, 2]);
        assert_eq!(Msg::from(&b"xyz"[..]).len(), 3);
        assert!(Msg::from(Bytes::new()).is_empty());
        assert!(!Msg::from("a").more);
    }

    #[test]
    fn a_settled_copy_owns_the_frame() {
        let body = Bytes::from(vec![7u8; 100]);
        let original = std::mem::ManuallyDrop::new(Msg {
            data: body.clone(),
            metadata: None,
            more: true,
        });
        // SAFETY: `original` is never dropped nor used after the copy.
        let copy = unsafe { settled::received(&original) };
        assert_eq!(copy.as_slice(), &[7u8; 100][..]);
        assert!(copy.more);
        assert!(!body.is_unique());
        drop(copy);
        // The copy held the original's share and released it: the body is unique again.
        assert!(body.is_unique());
    }
}
