//! Unix-domain-socket addressing for `ipc://`: file paths (a stale file is removed before
//! bind, as libzmq does), the Linux abstract namespace (`ipc://@name`), and `ipc://*`, which
//! picks a fresh path under the temp dir.

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};

use crate::error::{Error, Result};

fn abstract_name(path: &str) -> Option<&str> {
    path.strip_prefix('@')
}

/// Connects (Unix sockets connect at once or fail: no need to go async).
pub(crate) fn ipc_connect(path: &str) -> Result<tokio::net::UnixStream> {
    let std = match abstract_name(path) {
        Some(name) => UnixStream::connect_addr(&SocketAddr::from_abstract_name(name)?)?,
        None => UnixStream::connect(path)?,
    };
    std.set_nonblocking(true)?;
    Ok(tokio::net::UnixStream::from_std(std)?)
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

impl IpcPath {
    /// Removes the socket file if it is still the one this listener created. (libzmq unlinks
    /// unconditionally, so a socket closed and rebound at once could lose its new file to the
    /// old listener's late cleanup.)
    pub(crate) fn cleanup(&self) {
        let Some(ours) = self.file else {
            return;
        };
        let current = std::fs::symlink_metadata(&self.path).map(|m| FileId::of(&m));
        if current.is_ok_and(|id| id == ours) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds; returns the listener and what it bound.
pub(crate) fn ipc_bind(path: &str) -> Result<(UnixListener, IpcPath)> {
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
    let listener = match abstract_name(&path) {
        Some(name) => UnixListener::bind_addr(&SocketAddr::from_abstract_name(name)?),
        None => {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::from(e)),
            }
            UnixListener::bind(&path)
        }
    }
    .map_err(Error::from)?;
    listener.set_nonblocking(true)?;
    let file = match abstract_name(&path) {
        Some(_) => None,
        None => Some(std::fs::symlink_metadata(&path).map(|m| FileId::of(&m))?),
    };
    Ok((listener, IpcPath { path, file }))
}
