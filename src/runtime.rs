//! A context's machinery below its sockets: the tokio management runtime and the I/O threads
//! (started together on the first tcp/ipc bind or connect, so an inproc-only program never
//! pays for them), the inproc registry, the sockets' wake-ups for termination, and the count
//! of lingering work `term` waits for. The public `Context` (src/context.rs) sits above the
//! sockets and owns one of these; sockets and connection tasks hold it too, so it must not
//! know them.

use crate::option::ThreadOptions;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferromq_pipe::Notify;

use crate::connect::zap::{ZapAsker, ZapReplyFuture};
use crate::error::{Error, Result};
use crate::io::activity::Activity;
use crate::io::pool::IoPool;
use crate::io::signaler::Signaler;
use crate::transport::inproc::InprocRegistry;

/// The tokio runtime and the I/O threads, started together on first use.
#[derive(Debug)]
pub(crate) struct Reactor {
    handle: Option<tokio::runtime::Handle>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub io: Arc<IoPool>,
}

impl Reactor {
    pub(crate) fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.handle.as_ref()
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A context with no way to reach a ZAP handler.
#[derive(Debug)]
struct NoZap;

impl ZapAsker for NoZap {
    fn bound(&self) -> bool {
        false
    }
    fn request_id(&self) -> bytes::Bytes {
        bytes::Bytes::from_static(b"1")
    }
    fn ask(&self, _id: bytes::Bytes, _request: Vec<bytes::Bytes>) -> ZapReplyFuture {
        Box::pin(async { Err(crate::error::Error::Fault) })
    }
}

#[derive(Debug)]
pub(crate) struct CtxInner {
    io_threads: usize,
    /// ZMQ_THREAD_* context options, applied by each thread the reactor starts.
    threads: ThreadOptions,
    reactor: Mutex<Option<Arc<Reactor>>>,
    pub inproc: InprocRegistry,
    terminated: AtomicBool,
    sockets: Mutex<HashMap<u64, Arc<Signaler>>>,
    next_socket: AtomicU64,
    pub pipe_ids: Arc<AtomicU64>,
    pub activity: Arc<Activity>,
    /// The process that made the context: a forked child has its memory but not its threads.
    pid: u32,
    /// Its ZAP handler as handshakes ask it, installed by the context (the socket layer
    /// implements it).
    zap: std::sync::OnceLock<Arc<dyn ZapAsker>>,
}

impl CtxInner {
    pub(crate) fn new(io_threads: usize, threads: ThreadOptions) -> CtxInner {
        CtxInner {
            io_threads: io_threads.max(1),
            threads,
            reactor: Mutex::new(None),
            inproc: InprocRegistry::default(),
            terminated: AtomicBool::new(false),
            sockets: Mutex::new(HashMap::new()),
            next_socket: AtomicU64::new(1),
            pipe_ids: Arc::new(AtomicU64::new(1)),
            activity: Arc::new(Activity::default()),
            pid: std::process::id(),
            zap: std::sync::OnceLock::new(),
        }
    }

    /// Installs the ZAP asker; once.
    pub(crate) fn set_zap(&self, zap: Arc<dyn ZapAsker>) {
        let _ = self.zap.set(zap);
    }

    /// The ZAP asker handshakes use: none installed is a context without a handler.
    pub(crate) fn zap(&self) -> Arc<dyn ZapAsker> {
        match self.zap.get() {
            Some(z) => Arc::clone(z),
            None => Arc::new(NoZap),
        }
    }

    /// Marks the context terminated and wakes every socket, so blocking calls return ETERM.
    pub(crate) fn shutdown(&self) {
        self.terminated.store(true, Ordering::Release);
        let signals: Vec<Arc<Signaler>> = self
            .sockets
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        for s in signals {
            s.notify();
        }
    }

    /// Whether this process made the context: a forked child has its memory but not the I/O
    /// threads and session tasks that hold the activity count, so `term` must not wait there.
    pub(crate) fn is_parent(&self) -> bool {
        std::process::id() == self.pid
    }

    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire)
    }

    pub(crate) fn reactor(&self) -> Result<Arc<Reactor>> {
        let mut slot = self.reactor.lock().map_err(|_| Error::Fault)?;
        if let Some(r) = slot.as_ref() {
            return Ok(Arc::clone(r));
        }
        // One thread, as before, but tokio's current-thread scheduler, driven by a thread of
        // its own until the reactor is dropped: it polls tasks spawned from other threads in
        // the order they were spawned, and the tasks it wakes in the order they were woken.
        // The multi-thread one (even with one worker) moves spawned tasks to its local queue
        // in batches yet takes the next from its global queue ahead of them every few dozen
        // ticks, and runs the task woken last first (its LIFO slot). So five `connect` calls
        // made one after the other reached the kernel out of order (seen in 9 of 60 runs of
        // listener.rs's attach-order test under load, with the accept order kept), and the
        // peers were accepted, and attached, in that order: libzmq's single I/O thread makes
        // its connects in the order the calls came, and its test_spec_req counts on it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .thread_name("ferromq-mgmt")
            .on_thread_start({
                let threads = self.threads.clone();
                move || {
                    crate::io::thread_signals::block_all();
                    threads.apply_scheduling();
                }
            })
            .enable_all()
            .build()
            .map_err(Error::from)?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let threads = self.threads.clone();
        std::thread::Builder::new()
            .name("ferromq-mgmt".into())
            .spawn(move || {
                crate::io::thread_signals::block_all();
                threads.apply_scheduling();
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                runtime.shutdown_background();
            })
            .map_err(Error::from)?;
        let reactor = Arc::new(Reactor {
            handle: Some(handle),
            stop: Some(stop),
            io: Arc::new(IoPool::new(self.io_threads, &self.threads)?),
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
