//! `zmq_recv`, `zmq_msg_recv`, `zmq_recvmsg`.
//!
//! `zmq_recv` copies at most `len` bytes and returns the frame's full size, so a caller sees
//! truncation by comparing the two (libzmq's semantics). `zmq_msg_recv` puts the runtime's
//! `Bytes` in the message without copying, with the peer's metadata for `zmq_msg_gets`.

use core::ffi::{c_int, c_void};

use std::sync::Arc;

use ferromq::{Error, Metadata, Msg, RecvFlags};

use crate::boundary::{guard, Errno};
use crate::errno::EFAULT;
use crate::msg::cell;
use crate::msg::zmq_msg_t;
use crate::send::clipped;
use crate::socket::{errno_of, socket, socket_in_use};

fn flags_of(flags: c_int) -> RecvFlags {
    RecvFlags::from_bits_truncate(flags)
}

/// Receives one frame from the socket behind `s` and hands it to `deliver` with its metadata
/// (held by the socket: see `Socket::recv_frame`): once without waiting, and only if there
/// is none and `flags` allow waiting, again with the socket counted in use while it waits (see
/// `socket_in_use`). (The frame goes to `deliver` in place rather than out as a return value:
/// returned, it was copied through the stack once more, and that cost more than the count
/// this saves.)
///
/// # Safety
/// As for [`socket`].
#[inline(always)]
unsafe fn recv_msg<R>(
    s: *mut c_void,
    flags: c_int,
    deliver: impl FnOnce(Msg, Option<&Arc<Metadata>>) -> R,
) -> Result<R, Errno> {
    let flags = flags_of(flags);
    // SAFETY: tag-checked; one thread per socket per the C contract.
    let handle = unsafe { socket(s) }?;
    let received =
        core::mem::ManuallyDrop::new(handle.socket.recv_frame(flags | RecvFlags::DONTWAIT));
    match &*received {
        Ok(msg) => Ok(deliver(
            // SAFETY: `received` is not dropped (`ManuallyDrop`) nor used again.
            unsafe { ferromq::settled::received(msg) },
            handle.socket.last_metadata(),
        )),
        Err(Error::Again) if !flags.contains(RecvFlags::DONTWAIT) => {
            // SAFETY: forwarded; `handle` is not used past this point.
            unsafe { recv_waiting(s, flags, deliver) }
        }
        Err(e) => Err(errno_of(*e)),
    }
}

/// [`recv_msg`] when it must wait.
///
/// # Safety
/// As for [`socket`].
#[cold]
#[inline(never)]
unsafe fn recv_waiting<R>(
    s: *mut c_void,
    flags: RecvFlags,
    deliver: impl FnOnce(Msg, Option<&Arc<Metadata>>) -> R,
) -> Result<R, Errno> {
    // SAFETY: forwarded caller contract.
    let mut held = unsafe { socket_in_use(s) }?;
    let msg = held.socket.recv_frame(flags).map_err(errno_of)?;
    Ok(deliver(msg, held.socket.last_metadata()))
}

/// Receives one frame into `buf`, copying at most `len` bytes; returns the frame's size
/// (clipped to `INT_MAX`), which may exceed `len`.
///
/// # Safety
/// `s` is NULL or a readable pointer (tag-checked); `buf` is NULL with `len` 0, or writable for
/// `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_recv(
    s: *mut c_void,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        unsafe { socket(s) }?;
        if buf.is_null() && len != 0 {
            return Err(Errno(EFAULT));
        }
        // SAFETY: forwarded caller contract.
        unsafe {
            recv_msg(s, flags, |msg, _| {
                let n = msg.len().min(len);
                if n > 0 {
                    // SAFETY: `buf` is writable for `len >= n` bytes and cannot overlap the
                    // received frame, which the runtime owns.
                    core::ptr::copy_nonoverlapping(msg.data.as_ptr(), buf.cast::<u8>(), n);
                }
                clipped(msg.len())
            })
        }
    })
}

/// Receives one frame into `msg` (which must be initialised; its old content is released);
/// returns the frame's size.
///
/// # Safety
/// `msg` is NULL or points to a `zmq_msg_t`; `s` as for [`zmq_recv`].
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_recv(msg: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    guard(|| {
        // SAFETY: tag-checked; one thread per socket per the C contract.
        unsafe { socket(s) }?;
        // SAFETY: forwarded caller contract (libzmq also refuses an uninitialised message).
        let cell = unsafe { cell::get_mut(msg) }?;
        // SAFETY: forwarded caller contract.
        unsafe {
            recv_msg(s, flags, |received, metadata| {
                let size = received.len();
                cell.set_received(received, metadata);
                clipped(size)
            })
        }
    })
}

/// Legacy form of [`zmq_msg_recv`] with the socket first.
///
/// # Safety
/// As for [`zmq_msg_recv`].
#[no_mangle]
pub unsafe extern "C" fn zmq_recvmsg(s: *mut c_void, msg: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { zmq_msg_recv(msg, s, flags) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{ZMQ_DONTWAIT, ZMQ_PAIR, ZMQ_SNDMORE};
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::errno::{errno, ENOTSOCK};
    use crate::msg::{zmq_msg_close, zmq_msg_data, zmq_msg_gets, zmq_msg_init, zmq_msg_more};
    use crate::send::{zmq_msg_send, zmq_send};
    use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_socket};
    use core::mem::MaybeUninit;

    #[test]
    fn truncation_metadata_and_errors() {
        let ctx = zmq_ctx_new();
        // SAFETY: sockets and messages are live while used; buffers are sized as passed.
        unsafe {
            let a = zmq_socket(ctx, ZMQ_PAIR);
            let b = zmq_socket(ctx, ZMQ_PAIR);
            assert_eq!(zmq_bind(a, c"inproc://unit-recv".as_ptr()), 0);
            assert_eq!(zmq_connect(b, c"inproc://unit-recv".as_ptr()), 0);
            let mut buf = [0u8; 4];
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, ZMQ_DONTWAIT), -1);
            assert_eq!(errno(), libc::EAGAIN);

            assert_eq!(zmq_send(b, b"truncated".as_ptr().cast(), 9, ZMQ_SNDMORE), 9);
            assert_eq!(zmq_send(b, b"last".as_ptr().cast(), 4, 0), 4);
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, 0), 9);
            assert_eq!(&buf, b"trun");

            let mut m = MaybeUninit::<zmq_msg_t>::zeroed();
            let m = m.as_mut_ptr();
            assert_eq!(zmq_msg_recv(m, a, 0), -1, "uninitialised message");
            assert_eq!(errno(), EFAULT);
            zmq_msg_init(m);
            assert_eq!(zmq_msg_recv(m, a, 0), 4);
            assert_eq!(zmq_msg_more(m), 0);
            assert_eq!(
                core::slice::from_raw_parts(zmq_msg_data(m).cast::<u8>(), 4),
                b"last"
            );
            // An inproc message carries no metadata, as in libzmq.
            assert!(zmq_msg_gets(m, c"Socket-Type".as_ptr()).is_null());
            assert_eq!(errno(), libc::EINVAL);

            assert_eq!(zmq_msg_send(m, b, 0), 4);
            assert_eq!(crate::msg::zmq_msg_size(m), 0, "sent message is empty");
            assert_eq!(zmq_recv(a, buf.as_mut_ptr().cast(), 4, 0), 4);
            assert_eq!(zmq_msg_recv(m, core::ptr::null_mut(), 0), -1);
            assert_eq!(errno(), ENOTSOCK);
            zmq_msg_close(m);
            zmq_close(a);
            zmq_close(b);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }

    /// A message keeps the metadata of the connection its frame came from, when frames of two
    /// connections arrive in turn into one `zmq_msg_t` (which takes a new count only when the
    /// connection changes) and when an older message is kept beside a newer one.
    #[test]
    fn each_frame_carries_its_own_connections_metadata() {
        use crate::consts::{
            ZMQ_DEALER, ZMQ_LAST_ENDPOINT, ZMQ_LINGER, ZMQ_ROUTER, ZMQ_ROUTER_MANDATORY,
            ZMQ_ROUTING_ID,
        };
        use crate::sockopt::{zmq_getsockopt, zmq_setsockopt};
        use core::ffi::CStr;

        /// The peer's Socket-Type and the body of the frame in `m`.
        unsafe fn seen(m: *mut zmq_msg_t) -> (String, Vec<u8>) {
            // SAFETY: `m` holds a received frame (the caller's contract).
            unsafe {
                let kind = zmq_msg_gets(m, c"Socket-Type".as_ptr());
                assert!(!kind.is_null(), "a tcp frame carries its peer's metadata");
                let body = core::slice::from_raw_parts(
                    zmq_msg_data(m).cast::<u8>(),
                    crate::msg::zmq_msg_size(m),
                );
                (
                    CStr::from_ptr(kind).to_str().unwrap().to_owned(),
                    body.to_vec(),
                )
            }
        }

        let ctx = zmq_ctx_new();
        // SAFETY: sockets and messages are live while used; option values are sized as passed.
        unsafe {
            let a = zmq_socket(ctx, ZMQ_DEALER);
            let zero: c_int = 0;
            let one: c_int = 1;
            zmq_setsockopt(a, ZMQ_LINGER, (&raw const zero).cast(), 4);
            assert_eq!(
                zmq_setsockopt(a, ZMQ_ROUTING_ID, b"a".as_ptr().cast(), 1),
                0
            );
            assert_eq!(zmq_bind(a, c"tcp://127.0.0.1:*".as_ptr()), 0);
            let mut endpoint = [0u8; 64];
            let mut len = endpoint.len();
            assert_eq!(
                zmq_getsockopt(a, ZMQ_LAST_ENDPOINT, endpoint.as_mut_ptr().cast(), &mut len),
                0
            );
            let d = zmq_socket(ctx, ZMQ_DEALER);
            let r = zmq_socket(ctx, ZMQ_ROUTER);
            for s in [d, r] {
                zmq_setsockopt(s, ZMQ_LINGER, (&raw const zero).cast(), 4);
            }
            zmq_setsockopt(r, ZMQ_ROUTER_MANDATORY, (&raw const one).cast(), 4);
            assert_eq!(zmq_connect(d, endpoint.as_ptr().cast()), 0);
            assert_eq!(zmq_connect(r, endpoint.as_ptr().cast()), 0);

            const ROUNDS: usize = 5;
            for i in 0..ROUNDS {
                let body = format!("dealer {i}");
                assert_eq!(
                    zmq_send(d, body.as_ptr().cast(), body.len(), 0),
                    body.len() as c_int
                );
                // Until its handshake with `a` is done, the ROUTER cannot route to "a".
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while zmq_send(r, b"a".as_ptr().cast(), 1, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 1 {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "router never reached a"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                let body = format!("router {i}");
                assert_eq!(
                    zmq_send(r, body.as_ptr().cast(), body.len(), 0),
                    body.len() as c_int
                );
            }
            let mut m = MaybeUninit::<zmq_msg_t>::zeroed();
            let m = m.as_mut_ptr();
            let mut kept = MaybeUninit::<zmq_msg_t>::zeroed();
            let kept = kept.as_mut_ptr();
            zmq_msg_init(m);
            zmq_msg_init(kept);
            let mut got = std::collections::HashMap::new();
            for n in 0..2 * ROUNDS {
                let target = if n == 3 { kept } else { m };
                assert!(zmq_msg_recv(target, a, 0) > 0);
                let (kind, body) = seen(target);
                let expected = if body.starts_with(b"dealer") {
                    "DEALER"
                } else {
                    "ROUTER"
                };
                assert_eq!(kind, expected, "{}", String::from_utf8_lossy(&body));
                *got.entry(kind).or_insert(0) += 1;
                // The message kept from the fourth receive still says where it came from.
                if n > 3 {
                    let (kind, body) = seen(kept);
                    let expected = if body.starts_with(b"dealer") {
                        "DEALER"
                    } else {
                        "ROUTER"
                    };
                    assert_eq!(kind, expected);
                }
            }
            assert_eq!(got.get("DEALER"), Some(&ROUNDS));
            assert_eq!(got.get("ROUTER"), Some(&ROUNDS));
            zmq_msg_close(m);
            zmq_msg_close(kept);
            for s in [a, d, r] {
                zmq_close(s);
            }
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
