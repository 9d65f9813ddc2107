//! The context: I/O threads, the management runtime, the inproc registry, and termination.
//!
//! The I/O threads and the tokio runtime start on the first tcp/ipc bind or connect, so an
//! inproc-only program never pays for them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferromq_pipe::Notify;

use crate::connection::IoPool;
use crate::error::{Error, Result};
use crate::inproc::InprocRegistry;
use crate::session::Activity;
use crate::signaler::Signaler;
use crate::socket::Socket;
use crate::SocketType;

/// The tokio runtime and the I/O threads, started together on first use.
#[derive(Debug)]
pub(crate) struct Reactor {
    runtime: Option<tokio::runtime::Runtime>,
    pub io: Arc<IoPool>,
}

impl Reactor {
    pub(crate) fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.runtime.as_ref().map(|r| r.handle())
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

#[derive(Debug)]
pub(crate) struct CtxInner {
    io_threads: usize,
    reactor: Mutex<Option<Arc<Reactor>>>,
    pub inproc: InprocRegistry,
    terminated: AtomicBool,
    sockets: Mutex<HashMap<u64, Arc<Signaler>>>,
    next_socket: AtomicU64,
    pub pipe_ids: Arc<AtomicU64>,
    pub activity: Arc<Activity>,
    /// The process that made the context: a forked child has its memory but not its threads.
    pid: u32,
}

impl CtxInner {
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire)
    }

    pub(crate) fn reactor(&self) -> Result<Arc<Reactor>> {
        let mut slot = self.reactor.lock().map_err(|_| Error::Fault)?;
        if let Some(r) = slot.as_ref() {
            return Ok(Arc::clone(r));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ferromq-mgmt")
            .on_thread_start(crate::thread_signals::block_all)
            .enable_all()
            .build()
            .map_err(Error::from)?;
        let reactor = Arc::new(Reactor {
            runtime: Some(runtime),
            io: Arc::new(IoPool::new(self.io_threads)?),
        });
        *slot = Some(Arc::clone(&reactor));
        Ok(reactor)
    }

    pub(crate) fn register(&self, signal: Arc<Signaler>) -> u64 {
        let id = self.next_socket.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = self.sockets.lock() {
            s.insert(id, signal);
        }
        id
    }

    pub(crate) fn unregister(&self, id: u64) {
        if let Ok(mut s) = self.sockets.lock() {
            s.remove(&id);
        }
    }
}

/// A ZeroMQ context: owns the I/O threads and creates sockets. Cheap to clone (an `Arc`).
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
    pub fn new() -> Context {
        Context::with_io_threads(1)
    }

    /// A context with `n` I/O threads (at least one).
    pub fn with_io_threads(n: usize) -> Context {
        Context {
            inner: Arc::new(CtxInner {
                io_threads: n.max(1),
                reactor: Mutex::new(None),
                inproc: InprocRegistry::default(),
                terminated: AtomicBool::new(false),
                sockets: Mutex::new(HashMap::new()),
                next_socket: AtomicU64::new(1),
                pipe_ids: Arc::new(AtomicU64::new(1)),
                activity: Arc::new(Activity::default()),
                pid: std::process::id(),
            }),
        }
    }

    /// Creates a socket. `ETERM` after `shutdown`; `EINVAL` for types not implemented yet.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        if self.inner.is_terminated() {
            return Err(Error::Term);
        }
        Socket::new(Arc::clone(&self.inner), kind)
    }

    /// Makes every blocking call on this context's sockets return `ETERM`, now and later
    /// (libzmq's `zmq_ctx_shutdown`). Sockets must still be closed.
    pub fn shutdown(&self) {
        self.inner.terminated.store(true, Ordering::Release);
        let signals: Vec<Arc<Signaler>> = self
            .inner
            .sockets
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        for s in signals {
            s.notify();
        }
    }

    /// Shuts down, then waits until every socket is closed and has lingered
    /// (libzmq's `zmq_ctx_term`). It blocks the calling thread: in async code use
    /// [`Context::term_async`].
    ///
    /// In a forked child it does not wait: the I/O threads and session tasks that hold the
    /// activity count exist only in the parent (libzmq's term likewise closes what the
    /// child inherited and returns).
    pub fn term(self) {
        self.shutdown();
        if std::process::id() == self.inner.pid {
            self.inner.activity.wait_idle();
        }
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
            if std::process::id() == self.inner.pid {
                let activity = Arc::clone(&self.inner.activity);
                activity.idle().await;
            }
        }
    }

    /// Whether `shutdown` or `term` was called.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}
