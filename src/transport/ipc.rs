//! Unix-domain-socket addressing for `ipc://`: file paths (a stale file is removed before
//! bind, as libzmq does), the Linux abstract namespace (`ipc://@name`), and `ipc://*`, which
//! picks a fresh path under the temp dir.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::transport::bind_failure::BindFailure;

fn abstract_name(path: &str) -> Option<&str> {
    path.strip_prefix('@')
}

/// Connects (Unix sockets connect at once or fail: no need to go async). On failure, the
/// descriptor of the socket made for the attempt, closed by now, if one was made: libzmq's
/// ipc connecter reports it as ZMQ_EVENT_CLOSED before CONNECT_RETRIED.
pub(crate) fn ipc_connect(
    path: &str,
) -> std::result::Result<tokio::net::UnixStream, Option<RawFd>> {
    let addr = unix_addr(path).map_err(|_| None)?;
    let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM.cloexec(), None)
        .map_err(|_| None)?;
    let fd = socket.as_raw_fd();
    // Connected blocking, as before: a listener with a full backlog makes the connect wait
    // rather than fail with EAGAIN.
    socket.connect(&addr).map_err(|_| Some(fd))?;
    socket.set_nonblocking(true).map_err(|_| Some(fd))?;
    tokio::net::UnixStream::from_std(UnixStream::from(OwnedFd::from(socket))).map_err(|_| Some(fd))
}

/// What a listener bound: the path, and for a file path the file it created, so that closing
/// removes that file and not one a later bind to the same path has put there meanwhile.
#[derive(Debug)]
pub(crate) struct IpcPath {
    pub path: String,
    /// Identity of the socket file; `None` for an abstract name.
    file: Option<FileId>,
}

/// Which file a path names: device and inode, plus the modification time, because a
/// filesystem hands the inode number of a file just unlinked to the next file created (a
/// rebind right after close gets its predecessor's number on ext4). The modification time of
/// a socket file is its creation time (nothing writes to it) and, unlike the change time, a
/// chmod of the socket leaves it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl FileId {
    fn of(m: &std::fs::Metadata) -> FileId {
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
        }
    }
}

/// Held across a bind's remove-create-stat and a cleanup's stat-remove, so that in one process
/// the two cannot interleave. Without it a listener closing as its socket is rebound (a
/// listener closes on the management runtime after `close()` has returned) could find its own
/// file, lose the CPU, and remove the file the new bind created in the meantime: the new
/// listener then has no path and every connect to it fails (seen as a lost reply in
/// `io::engine`'s ping-pong test under load). Between processes the identity check alone
/// guards, as closely as a stat and a remove that are not one operation can.
static PATHS: Mutex<()> = Mutex::new(());

fn lock_paths() -> MutexGuard<'static, ()> {
    // The guarded data is `()`: a panic while it was held leaves nothing inconsistent.
    PATHS.lock().unwrap_or_else(PoisonError::into_inner)
}

impl IpcPath {
    /// The path of a ZMQ_USE_FD listener, which the application bound: as libzmq, neither
    /// the bind nor the close removes its file (the application does, after its service
    /// stops; removing it earlier would strand the descriptor it still listens on).
    pub(crate) fn adopted(path: &str) -> IpcPath {
        IpcPath {
            path: path.to_owned(),
            file: None,
        }
    }

    /// Removes the socket file if it is still the one this listener created. (libzmq unlinks
    /// unconditionally, so a socket closed and rebound at once could lose its new file to the
    /// old listener's late cleanup.)
    pub(crate) fn cleanup(&self) {
        self.cleanup_with(|| {});
    }

    /// [`cleanup`](Self::cleanup), running `between` after the file has been found to be ours
    /// and before it is removed (where a test rebinds).
    fn cleanup_with(&self, between: impl FnOnce()) {
        let Some(ours) = self.file else {
            return;
        };
        let _paths = lock_paths();
        let current = std::fs::symlink_metadata(&self.path).map(|m| FileId::of(&m));
        if current.is_ok_and(|id| id == ours) {
            between();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds; returns the listener and what it bound.
pub(crate) fn ipc_bind(
    path: &str,
    backlog: i32,
) -> std::result::Result<(UnixListener, IpcPath), BindFailure> {
    let path = if path == "*" {
        let dir = std::env::temp_dir();
        let name = format!(
            "ferromq-{}-{:016x}.ipc",
            std::process::id(),
            fastrand::u64(..)
        );
        dir.join(name).to_string_lossy().into_owned()
    } else {
        path.to_owned()
    };
    let _paths = lock_paths();
    if abstract_name(&path).is_none() {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(BindFailure::from(e)),
        }
    }
    let addr = unix_addr(&path)?;
    let socket =
        socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM.cloexec(), None)?;
    let fd = socket.as_raw_fd();
    // ZMQ_BACKLOG, as libzmq's ipc listener applies it.
    if let Err(e) = socket.bind(&addr).and_then(|()| socket.listen(backlog)) {
        return Err(BindFailure::of_socket(e, fd));
    }
    socket.set_nonblocking(true)?;
    let listener = UnixListener::from(OwnedFd::from(socket));
    let file = match abstract_name(&path) {
        Some(_) => None,
        None => Some(std::fs::symlink_metadata(&path).map(|m| FileId::of(&m))?),
    };
    Ok((listener, IpcPath { path, file }))
}

/// The socket address of an ipc path: a file path, or `@name` in the abstract namespace
/// (there a leading NUL).
fn unix_addr(path: &str) -> io::Result<socket2::SockAddr> {
    match abstract_name(path) {
        Some(name) => {
            socket2::SockAddr::unix(OsStr::from_bytes(&[b"\0", name.as_bytes()].concat()))
        }
        None => socket2::SockAddr::unix(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(what: &str) -> String {
        std::env::temp_dir()
            .join(format!(
                "ferromq-ipc-{what}-{}-{:x}.sock",
                std::process::id(),
                fastrand::u64(..)
            ))
            .to_string_lossy()
            .into_owned()
    }

    /// A listener's cleanup removes the file it created.
    #[test]
    fn cleanup_removes_its_own_file() {
        let path = temp_path("own");
        let (_listener, bound) = ipc_bind(&path, 100).unwrap();
        assert!(std::fs::symlink_metadata(&path).is_ok());
        bound.cleanup();
        assert!(std::fs::symlink_metadata(&path).is_err());
    }

    /// A rebind after the old listener's cleanup is done keeps its file.
    #[test]
    fn cleanup_after_a_rebind_leaves_the_new_file() {
        let path = temp_path("after");
        let (old_listener, old) = ipc_bind(&path, 100).unwrap();
        drop(old_listener);
        let (_listener, new) = ipc_bind(&path, 100).unwrap();
        old.cleanup();
        assert!(UnixStream::connect(&path).is_ok());
        new.cleanup();
        assert!(std::fs::symlink_metadata(&path).is_err());
    }

    /// A rebind that comes while the old listener's cleanup has found its file but not yet
    /// removed it (another thread, as when a socket is closed and the path bound again at
    /// once) must keep its file: the cleanup may remove only the old one. Before the bind and
    /// the cleanup excluded each other, the rebind ran in the gap and lost its new file.
    #[test]
    fn a_rebind_racing_a_cleanup_keeps_its_file() {
        let path = temp_path("race");
        let (old_listener, old) = ipc_bind(&path, 100).unwrap();
        drop(old_listener);
        let rebind = std::sync::Mutex::new(None);
        old.cleanup_with(|| {
            let p = path.clone();
            *rebind.lock().unwrap() = Some(std::thread::spawn(move || ipc_bind(&p, 100)));
            // Time for the rebind to run inside the gap if nothing keeps it out.
            std::thread::sleep(std::time::Duration::from_millis(100));
        });
        let (_listener, new) = rebind
            .into_inner()
            .unwrap()
            .expect("the cleanup found its own file")
            .join()
            .unwrap()
            .unwrap();
        assert!(
            UnixStream::connect(&path).is_ok(),
            "the rebound listener lost its file"
        );
        new.cleanup();
    }
}
