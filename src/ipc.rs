//! Unix-domain-socket addressing for `ipc://`: file paths (a stale file is removed before
//! bind, as libzmq does), the Linux abstract namespace (`ipc://@name`), and `ipc://*`, which
//! picks a fresh path under the temp dir.

use std::io;
use std::os::linux::net::SocketAddrExt;
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

/// Binds; returns the listener and the path actually bound.
pub(crate) fn ipc_bind(path: &str) -> Result<(UnixListener, String)> {
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
    Ok((listener, path))
}

/// Removes a bound socket file (not for abstract names).
pub(crate) fn ipc_cleanup(path: &str) {
    if abstract_name(path).is_none() {
        let _ = std::fs::remove_file(path);
    }
}
