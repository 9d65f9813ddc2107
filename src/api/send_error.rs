//! A refused send gives the message back.
//!
//! `zmq_send` leaves a refused `zmq_msg_t` with the caller; a Rust send takes the message by
//! value, so without this an `EAGAIN` from a full pipe (DONTWAIT, SNDTIMEO, the async API's
//! non-blocking try) would drop it and the caller could not retry or reroute it.

use std::fmt;

use crate::error::Error;

/// Why a send failed, and the message it did not send.
///
/// `?` turns it into the plain [`Error`] where the message is not wanted:
///
/// ```
/// use ferromq::{Context, Error, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut push = ctx.socket(SocketType::Push)?;
/// // No peer yet: a non-blocking send is refused and the message comes back.
/// let refused = push.send("hello", SendFlags::DONTWAIT).unwrap_err();
/// assert_eq!(refused.error(), Error::Again);
/// assert_eq!(refused.into_message().as_slice(), b"hello");
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SendError<M> {
    error: Error,
    msg: M,
}

impl<M> SendError<M> {
    pub(crate) fn new(error: Error, msg: M) -> SendError<M> {
        SendError { error, msg }
    }

    /// What went wrong (`Again` when the socket could not take the message now).
    ///
    /// ```
    /// use ferromq::{Context, Error, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut req = ctx.socket(SocketType::Req)?;
    /// req.connect("inproc://doc-send-error")?;
    /// req.send("first", SendFlags::empty())?;
    /// // A REQ must receive the reply before it sends again.
    /// let e = req.send("second", SendFlags::empty()).unwrap_err();
    /// assert_eq!(e.error(), Error::Fsm);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn error(&self) -> Error {
        self.error
    }

    /// The message, as it was before the send.
    ///
    /// ```
    /// use ferromq::{Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Push)?;
    /// let e = s.send_multipart(["a", "b"], SendFlags::DONTWAIT).unwrap_err();
    /// assert_eq!(e.message().len(), 2); // refused whole, so it comes back whole
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn message(&self) -> &M {
        &self.msg
    }

    /// The message back, to retry or reroute it.
    ///
    /// ```
    /// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut busy = ctx.socket(SocketType::Push)?;
    /// let mut spare = ctx.socket(SocketType::Push)?;
    /// let mut pull = ctx.socket(SocketType::Pull)?;
    /// pull.bind("inproc://doc-into-message")?;
    /// spare.connect("inproc://doc-into-message")?;
    /// if let Err(e) = busy.send("job", SendFlags::DONTWAIT) {
    ///     spare.send(e.into_message(), SendFlags::empty())?; // reroute it
    /// }
    /// assert_eq!(pull.recv(RecvFlags::empty())?.as_slice(), b"job");
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn into_message(self) -> M {
        self.msg
    }
}

impl<M> From<SendError<M>> for Error {
    fn from(e: SendError<M>) -> Error {
        e.error
    }
}

impl<M> fmt::Display for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "send refused: {}", self.error)
    }
}

impl<M: fmt::Debug> std::error::Error for SendError<M> {}
