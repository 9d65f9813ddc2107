//! `zmq_ctx_*`: the context handle C callers hold as `void *`.
//!
//! libzmq applies `ZMQ_IO_THREADS` when the first socket is created, so the runtime's
//! [`ferromq::Context`] is created then too, with whatever the caller set before. The handle
//! is registered (see [`crate::registry`]): a NULL, foreign or terminated context is `EFAULT`,
//! as in libzmq, without the pointer being read.
//!
//! ```text
//!   zmq_ctx_new ──> CtxHandle ──(first zmq_socket)──> ferromq::Context (I/O threads)
//!                      │ zmq_ctx_shutdown: blocking calls on its sockets fail with ETERM
//!                      │ zmq_ctx_term: shutdown, wait until every socket is closed, free
//! ```

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ferromq::{Context, Socket, SocketType};

use crate::boundary::{guard, Errno};
use crate::consts::{
    ZMQ_BLOCKY, ZMQ_IO_THREADS, ZMQ_IO_THREADS_DFLT, ZMQ_IPV6, ZMQ_MAX_MSGSZ, ZMQ_MAX_SOCKETS,
    ZMQ_MAX_SOCKETS_DFLT, ZMQ_MSG_T_SIZE, ZMQ_SOCKET_LIMIT, ZMQ_THREAD_AFFINITY_CPU_ADD,
    ZMQ_THREAD_AFFINITY_CPU_REMOVE, ZMQ_THREAD_NAME_PREFIX, ZMQ_THREAD_PRIORITY,
    ZMQ_THREAD_PRIORITY_DFLT, ZMQ_THREAD_SCHED_POLICY, ZMQ_THREAD_SCHED_POLICY_DFLT,
};
use crate::errno::{EFAULT, EINVAL, EMFILE};
use crate::registry::Registry;

/// libzmq's context tag, kept at the start of the handle.
const CTX_TAG: u32 = 0xabad_cafe;
/// The most sockets a context can be configured for: libzmq's limit on epoll systems.
const SOCKET_LIMIT: c_int = 65_535;

static CONTEXTS: Registry = Registry::new();

/// `ZMQ_ZERO_COPY_RECV`: a draft number that a non-draft libzmq 4.3 answers too.
const ZMQ_ZERO_COPY_RECV: c_int = 10;

/// The options `zmq_ctx_set` stores, with libzmq's defaults (ctx.cpp). The thread options are
/// stored and read back only: ferromq's I/O threads keep the OS's scheduling, affinity and
/// names (docs/compatibility.md, "Context options").
#[derive(Debug, Clone)]
struct Config {
    io_threads: c_int,
    max_sockets: c_int,
    ipv6: bool,
    blocky: bool,
    max_msgsz: c_int,
    zero_copy: bool,
    thread_sched_policy: c_int,
    thread_priority: c_int,
    thread_affinity: Vec<c_int>,
    thread_name_prefix: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            io_threads: ZMQ_IO_THREADS_DFLT,
            max_sockets: ZMQ_MAX_SOCKETS_DFLT,
            ipv6: false,
            blocky: true,
            max_msgsz: c_int::MAX,
            zero_copy: true,
            thread_sched_policy: ZMQ_THREAD_SCHED_POLICY_DFLT,
            thread_priority: ZMQ_THREAD_PRIORITY_DFLT,
            thread_affinity: Vec::new(),
            thread_name_prefix: String::new(),
        }
    }
}

/// What a context and its sockets share; sockets keep it alive past `zmq_ctx_term`'s free.
#[derive(Debug, Default)]
pub struct CtxShared {
    config: Mutex<Config>,
    runtime: Mutex<Option<Context>>,
    terminating: AtomicBool,
    sockets: AtomicUsize,
    /// ZMQ_IO_THREADS as it was when the runtime started (libzmq fixes it then too).
    io_threads: AtomicI32,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values are plain data replaced whole; a poisoned lock still holds a valid one.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl CtxShared {
    /// A socket of `kind`, with the context's defaults applied (libzmq: `ETERM` once the
    /// context is shutting down, `EMFILE` past `ZMQ_MAX_SOCKETS`).
    pub fn open_socket(&self, kind: SocketType) -> Result<Socket, Errno> {
        if self.terminating.load(Ordering::Acquire) {
            return Err(Errno(ferromq::ETERM));
        }
        let config = lock(&self.config).clone();
        let max = usize::try_from(config.max_sockets).unwrap_or(0);
        if self.sockets.fetch_add(1, Ordering::AcqRel) >= max {
            self.sockets.fetch_sub(1, Ordering::AcqRel);
            return Err(Errno(EMFILE));
        }
        let opened = self
            .runtime_context(&config)
            .socket(kind)
            .and_then(|mut s| {
                if config.ipv6 {
                    s.set_ipv6(true)?;
                }
                if !config.blocky {
                    // libzmq: a non-blocky context gives new sockets a linger of 0.
                    s.set_linger(0)?;
                }
                Ok(s)
            });
        opened.map_err(|e| {
            self.sockets.fetch_sub(1, Ordering::AcqRel);
            Errno(e.errno())
        })
    }

    /// Whether `zmq_ctx_shutdown` or `zmq_ctx_term` was called.
    pub fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::Acquire)
    }

    /// A socket was closed.
    pub fn socket_closed(&self) {
        self.sockets.fetch_sub(1, Ordering::AcqRel);
    }

    fn runtime_context(&self, config: &Config) -> Context {
        lock(&self.runtime)
            .get_or_insert_with(|| {
                self.io_threads.store(config.io_threads, Ordering::Release);
                Context::with_thread_options(
                    usize::try_from(config.io_threads).unwrap_or(1),
                    ferromq::option::ThreadOptions {
                        sched_policy: config.thread_sched_policy,
                        priority: config.thread_priority,
                        affinity: config.thread_affinity.clone(),
                        name_prefix: config.thread_name_prefix.clone(),
                    },
                )
            })
            .clone()
    }

    /// Whether tcp/ipc can be used: libzmq fails them with `EMTHREAD` in a context started
    /// with `ZMQ_IO_THREADS` 0 (the runtime itself always has at least one I/O thread).
    pub fn has_io_threads(&self) -> bool {
        self.io_threads.load(Ordering::Acquire) > 0
    }

    fn shutdown(&self) -> Option<Context> {
        self.terminating.store(true, Ordering::Release);
        let ctx = lock(&self.runtime).clone();
        if let Some(c) = &ctx {
            c.shutdown();
        }
        ctx
    }

    fn set(&self, option: c_int, value: c_int) -> Result<(), Errno> {
        let mut c = lock(&self.config);
        // ZMQ_THREAD_PRIORITY shares number 3 with ZMQ_SOCKET_LIMIT: set means the former.
        match option {
            ZMQ_MAX_SOCKETS if value >= 1 => c.max_sockets = value,
            ZMQ_IO_THREADS if value >= 0 => c.io_threads = value,
            ZMQ_IPV6 if value >= 0 => c.ipv6 = value != 0,
            ZMQ_BLOCKY if value >= 0 => c.blocky = value != 0,
            ZMQ_MAX_MSGSZ if value >= 0 => c.max_msgsz = value,
            ZMQ_ZERO_COPY_RECV if value >= 0 => c.zero_copy = value != 0,
            ZMQ_THREAD_SCHED_POLICY if value >= 0 => c.thread_sched_policy = value,
            ZMQ_THREAD_PRIORITY if value >= 0 => c.thread_priority = value,
            ZMQ_THREAD_AFFINITY_CPU_ADD if value >= 0 => {
                if !c.thread_affinity.contains(&value) {
                    c.thread_affinity.push(value);
                }
            }
            ZMQ_THREAD_AFFINITY_CPU_REMOVE if value >= 0 => {
                let before = c.thread_affinity.len();
                c.thread_affinity.retain(|&cpu| cpu != value);
                if c.thread_affinity.len() == before {
                    return Err(Errno(EINVAL));
                }
            }
            ZMQ_THREAD_NAME_PREFIX => c.thread_name_prefix = value.to_string(),
            _ => return Err(Errno(EINVAL)),
        }
        Ok(())
    }

    fn get(&self, option: c_int) -> Result<c_int, Errno> {
        let c = lock(&self.config);
        Ok(match option {
            ZMQ_MAX_SOCKETS => c.max_sockets,
            ZMQ_SOCKET_LIMIT => SOCKET_LIMIT,
            ZMQ_IO_THREADS => c.io_threads,
            ZMQ_IPV6 => c_int::from(c.ipv6),
            ZMQ_BLOCKY => c_int::from(c.blocky),
            ZMQ_MAX_MSGSZ => c.max_msgsz,
            ZMQ_MSG_T_SIZE => 64,
            ZMQ_ZERO_COPY_RECV => c_int::from(c.zero_copy),
            ZMQ_THREAD_SCHED_POLICY => c.thread_sched_policy,
            // libzmq answers with atoi() of the stored prefix.
            ZMQ_THREAD_NAME_PREFIX => c.thread_name_prefix.parse().unwrap_or(0),
            _ => return Err(Errno(EINVAL)),
        })
    }
}

/// The object behind a context `void *`.
#[derive(Debug)]
#[repr(C)]
pub struct CtxHandle {
    tag: u32,
    shared: Arc<CtxShared>,
}

/// The live context behind `ctx`, or `EFAULT`.
///
/// # Safety
/// `ctx` is anything; it is dereferenced only if this library gave it out and has not freed it.
pub unsafe fn context<'a>(ctx: *mut c_void) -> Result<&'a CtxHandle, Errno> {
    let ptr = ctx.cast::<CtxHandle>();
    if !CONTEXTS.contains(ptr) {
        return Err(Errno(EFAULT));
    }
    // SAFETY: registered handles are live boxes from `zmq_ctx_new`, freed only after removal.
    let handle = unsafe { &*ptr };
    if handle.tag != CTX_TAG {
        return Err(Errno(EFAULT));
    }
    Ok(handle)
}

impl CtxHandle {
    /// What sockets of this context share with it.
    pub fn shared(&self) -> &Arc<CtxShared> {
        &self.shared
    }
}

/// Creates a context (no threads start until the first socket binds or connects over tcp/ipc).
#[no_mangle]
pub extern "C" fn zmq_ctx_new() -> *mut c_void {
    guard(|| {
        let handle = Box::into_raw(Box::new(CtxHandle {
            tag: CTX_TAG,
            shared: Arc::default(),
        }));
        CONTEXTS.insert(handle);
        Ok(handle.cast())
    })
}

/// Shuts the context down, waits until every socket is closed (and has lingered), then frees it;
/// `EINTR` (and nothing freed) when a signal handler runs on the calling thread meanwhile.
///
/// # Safety
/// `ctx` is anything; see [`context`].
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_term(ctx: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: `context` checks the registry before reading.
        let shared = Arc::clone(unsafe { context(ctx) }?.shared());
        if let Some(runtime) = shared.shutdown() {
            // EINTR leaves the context registered and shut down: libzmq's term returns the
            // same way, and a second call goes on waiting.
            runtime.term_interruptible().map_err(|e| Errno(e.errno()))?;
        }
        let ptr = ctx.cast::<CtxHandle>();
        // Two threads terminating the same context: only the one that removes it frees it.
        if CONTEXTS.remove(ptr) {
            // SAFETY: the pointer came from Box::into_raw in zmq_ctx_new and was live until the
            // removal above, which succeeds once.
            let mut handle = unsafe { Box::from_raw(ptr) };
            handle.tag = 0;
            drop(handle);
        }
        Ok(0)
    })
}

/// Makes blocking calls on the context's sockets return `ETERM`, now and later; new sockets
/// fail with `ETERM`. The sockets must still be closed, and the context terminated.
///
/// # Safety
/// `ctx` is anything; see [`context`].
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_shutdown(ctx: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: `context` checks the registry before reading.
        unsafe { context(ctx) }?.shared().shutdown();
        Ok(0)
    })
}

/// Sets a context option (`ZMQ_IO_THREADS`, `ZMQ_MAX_SOCKETS`, `ZMQ_IPV6`, `ZMQ_BLOCKY`,
/// `ZMQ_MAX_MSGSZ`); `EINVAL` for others or out-of-range values.
///
/// # Safety
/// `ctx` is anything; see [`context`].
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_set(ctx: *mut c_void, option: c_int, optval: c_int) -> c_int {
    guard(|| {
        // SAFETY: `context` checks the registry before reading.
        unsafe { context(ctx) }?.shared().set(option, optval)?;
        Ok(0)
    })
}

/// Reads a context option; also `ZMQ_SOCKET_LIMIT` and `ZMQ_MSG_T_SIZE`.
///
/// # Safety
/// `ctx` is anything; see [`context`].
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_get(ctx: *mut c_void, option: c_int) -> c_int {
    // SAFETY: `context` checks the registry before reading.
    guard(|| unsafe { context(ctx) }?.shared().get(option))
}

/// Legacy: a context with `io_threads` I/O threads.
#[no_mangle]
pub extern "C" fn zmq_init(io_threads: c_int) -> *mut c_void {
    if io_threads < 0 {
        return guard(|| Err(Errno(EINVAL)));
    }
    let ctx = zmq_ctx_new();
    // SAFETY: `ctx` is NULL or the live context just created.
    unsafe { zmq_ctx_set(ctx, ZMQ_IO_THREADS, io_threads) };
    ctx
}

/// Legacy name of [`zmq_ctx_term`].
///
/// # Safety
/// As for [`zmq_ctx_term`].
#[no_mangle]
pub unsafe extern "C" fn zmq_term(ctx: *mut c_void) -> c_int {
    // SAFETY: forwarded.
    unsafe { zmq_ctx_term(ctx) }
}

/// Legacy name of [`zmq_ctx_term`].
///
/// # Safety
/// As for [`zmq_ctx_term`].
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_destroy(ctx: *mut c_void) -> c_int {
    // SAFETY: forwarded.
    unsafe { zmq_ctx_term(ctx) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;

    #[test]
    fn options_follow_libzmq() {
        let ctx = zmq_ctx_new();
        // SAFETY: ctx is live until terminated at the end.
        unsafe {
            assert_eq!(zmq_ctx_get(ctx, ZMQ_IO_THREADS), 1);
            assert_eq!(zmq_ctx_get(ctx, ZMQ_MAX_SOCKETS), 1023);
            assert_eq!(zmq_ctx_get(ctx, ZMQ_SOCKET_LIMIT), 65535);
            assert_eq!(zmq_ctx_get(ctx, ZMQ_MSG_T_SIZE), 64);
            assert_eq!(zmq_ctx_set(ctx, ZMQ_IO_THREADS, 2), 0);
            assert_eq!(zmq_ctx_get(ctx, ZMQ_IO_THREADS), 2);
            assert_eq!(zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, 0), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_ctx_set(ctx, 9999, 1), -1);
            assert_eq!(zmq_ctx_get(ctx, 9999), -1);
            assert_eq!(errno(), EINVAL);
            assert_eq!(zmq_ctx_term(ctx), 0);
            assert_eq!(zmq_ctx_term(ctx), -1, "terminated twice");
            assert_eq!(errno(), EFAULT);
        }
    }

    #[test]
    fn foreign_and_null_contexts_are_efault() {
        let mut not_a_context = [0u64; 4];
        // SAFETY: the pointers are never read (not registered).
        unsafe {
            assert_eq!(zmq_ctx_shutdown(core::ptr::null_mut()), -1);
            assert_eq!(errno(), EFAULT);
            assert_eq!(
                zmq_ctx_get(not_a_context.as_mut_ptr().cast(), ZMQ_IO_THREADS),
                -1
            );
            assert_eq!(errno(), EFAULT);
        }
        assert!(zmq_init(-1).is_null());
        assert_eq!(errno(), EINVAL);
    }

    #[test]
    fn max_sockets_is_emfile_and_shutdown_is_eterm() {
        let ctx = zmq_ctx_new();
        // SAFETY: ctx is live until terminated at the end.
        let shared = Arc::clone(unsafe { context(ctx) }.unwrap().shared());
        // SAFETY: as above.
        unsafe { zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, 1) };
        let first = shared.open_socket(SocketType::Pair).unwrap();
        assert_eq!(
            shared.open_socket(SocketType::Pair).err(),
            Some(Errno(EMFILE))
        );
        drop(first);
        shared.socket_closed();
        let again = shared.open_socket(SocketType::Pair).unwrap();
        drop(again);
        shared.socket_closed();
        // SAFETY: as above.
        unsafe { zmq_ctx_shutdown(ctx) };
        assert_eq!(
            shared.open_socket(SocketType::Pair).err(),
            Some(Errno(ferromq::ETERM))
        );
        // SAFETY: as above.
        assert_eq!(unsafe { zmq_ctx_term(ctx) }, 0);
    }
}
