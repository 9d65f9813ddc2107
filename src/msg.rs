//! A message part as the application sees it: the body is a `Bytes` (a received frame is a
//! slice of the engine's read buffer, never a copy) plus the MORE flag and the peer's metadata.

use std::sync::Arc;

use bytes::Bytes;

pub use ferromq_zmtp::Metadata;

/// One message part (frame).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Msg {
    /// The frame body.
    pub data: Bytes,
    /// Further parts of the same message follow (on receive; ignored on send, where
    /// `SendFlags::SNDMORE` decides).
    pub more: bool,
    /// Properties the peer announced in its handshake (Socket-Type, Identity, ...), shared by
    /// every message from that connection.
    pub metadata: Option<Arc<Metadata>>,
}

impl Msg {
    /// A message with the given body.
    pub fn new(data: impl Into<Bytes>) -> Msg {
        Msg {
            data: data.into(),
            more: false,
            metadata: None,
        }
    }

    /// The body as a slice.
    pub fn as_slice(&self) -> &[u8] {
        &self.data
    }

    /// The body's length.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the body is empty.
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
}
