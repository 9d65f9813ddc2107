//! The public context: it creates sockets and terminates them all. Its machinery (management
//! runtime, I/O threads, inproc registry) is `crate::runtime::CtxInner`, below the sockets.

use std::sync::Arc;

use crate::api::socket::Socket;
use crate::api::zap_client::ContextZap;
use crate::error::{Error, Result};
use crate::option::ThreadOptions;
use crate::runtime::CtxInner;
use crate::SocketType;

/// A ZeroMQ context: owns the I/O threads and creates sockets. Cheap to clone (an `Arc`).
///
/// ```
/// use ferromq::{Context, RecvFlags, SendFlags, SocketType};
/// let ctx = Context::new();
/// let mut rep = ctx.socket(SocketType::Rep)?;
/// let mut req = ctx.clone().socket(SocketType::Req)?; // clones share one context
/// rep.bind("inproc://doc-context")?;
/// req.connect("inproc://doc-context")?;
/// req.send("ping", SendFlags::empty())?;
/// let m = rep.recv(RecvFlags::empty())?;
/// rep.send(m, SendFlags::empty())?;
/// assert_eq!(req.recv(RecvFlags::empty())?.as_slice(), b"ping");
/// # Ok::<(), ferromq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    inner: Arc<CtxInner>,
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Context {
    /// A context with one I/O thread, as libzmq's default.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Pub)?;
    /// assert_eq!(s.socket_type(), ferromq::SocketType::Pub);
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn new() -> Context {
        Context::with_io_threads(1)
    }

    /// A context with `n` I/O threads (at least one).
    ///
    /// ```
    /// let ctx = ferromq::Context::with_io_threads(2); // tcp/ipc connections spread over two
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.bind("tcp://127.0.0.1:*")?;
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn with_io_threads(n: usize) -> Context {
        Context::with_thread_options(n, ThreadOptions::default())
    }

    /// A context with `n` I/O threads whose threads are scheduled, pinned and named as
    /// `threads` says (libzmq's ZMQ_THREAD_* context options), from when they start.
    ///
    /// ```
    /// let threads = ferromq::option::ThreadOptions {
    ///     name_prefix: "app".into(),
    ///     ..Default::default()
    /// };
    /// let ctx = ferromq::Context::with_thread_options(1, threads);
    /// let mut s = ctx.socket(ferromq::SocketType::Pull)?;
    /// s.bind("tcp://127.0.0.1:*")?; // starts "app/ZMQbg/IO/0"
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn with_thread_options(n: usize, threads: ThreadOptions) -> Context {
        let inner = Arc::new(CtxInner::new(n, threads));
        inner.set_zap(ContextZap::new(Arc::downgrade(&inner)));
        Context { inner }
    }

    /// Creates a socket. `ETERM` after `shutdown`; `EINVAL` for types not implemented yet.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Router)?;
    /// assert_eq!(s.socket_type(), ferromq::SocketType::Router);
    /// ctx.shutdown();
    /// assert_eq!(ctx.socket(ferromq::SocketType::Router).err(), Some(ferromq::Error::Term));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        if self.inner.is_terminated() {
            return Err(Error::Term);
        }
        Socket::new(Arc::clone(&self.inner), kind)
    }

    /// Makes every blocking call on this context's sockets return `ETERM`, now and later
    /// (libzmq's `zmq_ctx_shutdown`). Sockets must still be closed.
    ///
    /// ```
    /// use ferromq::{Context, Error, RecvFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Pull)?;
    /// let waiter = std::thread::spawn(move || s.recv(RecvFlags::empty()).err());
    /// ctx.shutdown(); // wakes the blocked receive
    /// assert_eq!(waiter.join().expect("thread"), Some(Error::Term));
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }

    /// Shuts down, then waits until every socket is closed and has lingered
    /// (libzmq's `zmq_ctx_term`). It blocks the calling thread: in async code use
    /// [`Context::term_async`].
    ///
    /// In a forked child it does not wait: the I/O threads and session tasks that hold the
    /// activity count exist only in the parent (libzmq's term likewise closes what the
    /// child inherited and returns).
    ///
    /// ```
    /// use ferromq::{Context, SendFlags, SocketType};
    /// let ctx = Context::new();
    /// let mut s = ctx.socket(SocketType::Push)?;
    /// s.set_linger(0)?; // do not wait for the queued message to go anywhere
    /// s.connect("tcp://127.0.0.1:5557")?;
    /// s.send("never delivered", SendFlags::empty())?;
    /// drop(s); // every socket must be closed, or term waits for it
    /// ctx.term();
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn term(self) {
        self.shutdown();
        if self.inner.is_parent() {
            self.inner.activity.wait_idle();
        }
    }

    /// [`Context::term`] for programs that handle signals, as libzmq's `zmq_ctx_term`: a
    /// signal handler that runs on this thread while it waits ends the wait with
    /// [`Error::Interrupted`] (EINTR), so that Ctrl-C can stop a program whose sockets are
    /// still open. The context stays shut down; call it again to go on waiting.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// let s = ctx.socket(ferromq::SocketType::Pair)?;
    /// drop(s);
    /// ctx.term_interruptible()?; // nothing open: returns at once
    /// assert!(ctx.is_terminated());
    /// # Ok::<(), ferromq::Error>(())
    /// ```
    pub fn term_interruptible(&self) -> Result<()> {
        self.shutdown();
        if self.inner.is_parent() {
            self.inner.activity.wait_idle_interruptible()?;
        }
        Ok(())
    }

    /// [`Context::term`] for async code: shuts down, then waits for every socket to close
    /// and linger without blocking the executor's thread (the sockets may be closed by other
    /// tasks on the same thread meanwhile). The future is `Send + 'static`, so it can be
    /// spawned.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> ferromq::Result<()> {
    /// let ctx = ferromq::Context::new();
    /// let sock = ferromq::AsyncSocket::new(ctx.socket(ferromq::SocketType::Pull)?)?;
    /// let term = tokio::spawn(ctx.clone().term_async());
    /// drop(sock); // the same thread closes the last socket while `term` waits
    /// term.await.expect("term task");
    /// # Ok(())
    /// # }
    /// ```
    pub fn term_async(self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.shutdown();
        async move {
            // The context lives until the wait ends: its I/O threads and management runtime
            // are what finishes the lingering sessions.
            if self.inner.is_parent() {
                let activity = Arc::clone(&self.inner.activity);
                activity.idle().await;
            }
        }
    }

    /// Whether `shutdown` or `term` was called.
    ///
    /// ```
    /// let ctx = ferromq::Context::new();
    /// assert!(!ctx.is_terminated());
    /// ctx.clone().term();
    /// assert!(ctx.is_terminated());
    /// ```
    pub fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}
