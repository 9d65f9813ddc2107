//! A context's I/O threads, to which connections are handed round robin once established.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::io_thread::{IoShared, IoThread};
use crate::option::ThreadOptions;

/// A context's I/O threads, handed connections round robin.
#[derive(Debug)]
pub(crate) struct IoPool {
    threads: Vec<IoThread>,
    next: AtomicUsize,
}

impl IoPool {
    pub(crate) fn new(n: usize, options: &ThreadOptions) -> Result<IoPool> {
        let threads = (0..n.max(1))
            .map(|index| IoThread::spawn(index, options))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(Error::from)?;
        Ok(IoPool {
            threads,
            next: AtomicUsize::new(0),
        })
    }

    pub(crate) fn pick(&self) -> &Arc<IoShared> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        self.threads[i].shared()
    }
}
