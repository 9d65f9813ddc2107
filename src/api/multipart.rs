//! A whole message: every frame, plus the metadata of the connection it came from.
//!
//! Both APIs move messages whole where they can, because a message is ZeroMQ's unit of
//! delivery (a peer sees all of its frames or none): the async API's cancel safety, the
//! `Stream`/`Sink` impls and a refused send handing the message back are all stated in terms
//! of this type rather than of loose frames.

use std::ops::Deref;
use std::sync::Arc;

use bytes::Bytes;

use crate::msg::{Metadata, Msg};

/// A multipart message: its frames in order, and (on receive) the peer's handshake metadata.
///
/// ```
/// use ferromq::{Bytes, Multipart};
/// let m = Multipart::from(vec!["id", "", "body"]);
/// assert_eq!(m.len(), 3);
/// assert_eq!(m[2], Bytes::from("body"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Multipart {
    frames: Vec<Bytes>,
    metadata: Option<Arc<Metadata>>,
}

impl Multipart {
    /// An empty message (no frames yet).
    ///
    /// ```
    /// let mut m = ferromq::Multipart::new();
    /// assert!(m.is_empty());
    /// m.push("frame");
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn new() -> Multipart {
        Multipart::default()
    }

    /// Appends a frame.
    ///
    /// ```
    /// use ferromq::{Bytes, Multipart};
    /// let mut m = Multipart::new();
    /// m.push(Bytes::from_static(b"id"));
    /// m.push(vec![0u8; 0]);
    /// m.push("body");
    /// assert_eq!(m, vec![Bytes::from("id"), Bytes::new(), Bytes::from("body")]);
    /// ```
    pub fn push(&mut self, frame: impl Into<Bytes>) {
        self.frames.push(frame.into());
    }

    /// Adds a received part: its body, and the connection's metadata if none is known yet.
    pub(crate) fn push_part(&mut self, part: Msg) {
        if self.metadata.is_none() {
            self.metadata = part.metadata;
        }
        self.frames.push(part.data);
    }

    /// Removes and returns the last frame.
    ///
    /// ```
    /// let mut m = ferromq::Multipart::from(["a", "b"]);
    /// assert_eq!(m.pop(), Some(ferromq::Bytes::from("b")));
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn pop(&mut self) -> Option<Bytes> {
        self.frames.pop()
    }

    /// The frames.
    ///
    /// ```
    /// let m = ferromq::Multipart::from(["k", "v"]);
    /// let total: usize = m.frames().iter().map(|f| f.len()).sum();
    /// assert_eq!(total, 2);
    /// ```
    pub fn frames(&self) -> &[Bytes] {
        &self.frames
    }

    /// The frames, owned.
    ///
    /// ```
    /// let m = ferromq::Multipart::from(["k", "v"]);
    /// let frames: Vec<ferromq::Bytes> = m.into_frames();
    /// assert_eq!(frames[1], "v");
    /// ```
    pub fn into_frames(self) -> Vec<Bytes> {
        self.frames
    }

    /// The properties the sending peer announced in its handshake (Socket-Type, Identity,
    /// user properties); `None` for a message built locally and, as in libzmq, for one that
    /// came over inproc.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut router = ctx.socket(SocketType::Router)?;
    /// router.bind("tcp://127.0.0.1:*")?;
    /// let mut dealer = ctx.socket(SocketType::Dealer)?;
    /// dealer.connect(&router.last_endpoint()?)?;
    /// dealer.send("hi", SendFlags::empty())?;
    /// let msg = router.recv_multipart(RecvFlags::empty())?;
    /// let props = msg.metadata().ok_or(ferromq::Error::Invalid)?; // tcp peers announce theirs
    /// assert_eq!(props.get("Socket-Type").map(|t| &t[..]), Some(&b"DEALER"[..]));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_deref()
    }
}

impl Deref for Multipart {
    type Target = [Bytes];
    fn deref(&self) -> &[Bytes] {
        &self.frames
    }
}

impl<T: Into<Bytes>> From<Vec<T>> for Multipart {
    fn from(frames: Vec<T>) -> Multipart {
        frames.into_iter().collect()
    }
}

impl<T: Into<Bytes>, const N: usize> From<[T; N]> for Multipart {
    fn from(frames: [T; N]) -> Multipart {
        frames.into_iter().collect()
    }
}

impl<T: Into<Bytes>> FromIterator<T> for Multipart {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Multipart {
        Multipart {
            frames: iter.into_iter().map(Into::into).collect(),
            metadata: None,
        }
    }
}

impl IntoIterator for Multipart {
    type Item = Bytes;
    type IntoIter = std::vec::IntoIter<Bytes>;
    fn into_iter(self) -> Self::IntoIter {
        self.frames.into_iter()
    }
}

impl<'a> IntoIterator for &'a Multipart {
    type Item = &'a Bytes;
    type IntoIter = std::slice::Iter<'a, Bytes>;
    fn into_iter(self) -> Self::IntoIter {
        self.frames.iter()
    }
}

impl PartialEq<Vec<Bytes>> for Multipart {
    fn eq(&self, other: &Vec<Bytes>) -> bool {
        &self.frames == other
    }
}

impl From<Multipart> for Vec<Bytes> {
    fn from(m: Multipart) -> Vec<Bytes> {
        m.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn received_parts_keep_the_first_metadata() {
        let meta = Arc::new(Metadata::default());
        let mut m = Multipart::new();
        m.push_part(Msg {
            data: Bytes::from("a"),
            more: true,
            metadata: Some(Arc::clone(&meta)),
        });
        m.push_part(Msg::new("b"));
        assert_eq!(m, vec![Bytes::from("a"), Bytes::from("b")]);
        assert!(m.metadata().is_some());
        assert_eq!(Multipart::from(["x"]).into_frames(), vec![Bytes::from("x")]);
    }
}
