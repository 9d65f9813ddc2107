//! Which engines of one I/O thread are the two ends of one tcp connection.
//!
//! A process that connects to itself over tcp (tests, the comparison matrix, a broker and its
//! workers in one binary) gets both ends' engines, often on the same I/O thread. Those two
//! cannot run at once: bytes one writes wait in the kernel until the other's turn comes. The
//! engine writes smaller batches then (`SHARED_WRITE_BYTES` in `engine.rs`), and only then:
//! an engine whose peer is another process writes the larger ones however many other
//! connections share its thread.
//!
//! A connection's ends are found by their addresses: one end's (local, peer) is the other's
//! (peer, local).

use std::collections::HashMap;
use std::net::SocketAddr;

/// A tcp stream's (local, peer) addresses.
pub(crate) type Ends = (SocketAddr, SocketAddr);

/// The tcp engines of one I/O thread by their addresses.
#[derive(Debug, Default)]
pub(crate) struct LoopbackPairs {
    by_ends: HashMap<Ends, usize>,
    of_token: HashMap<usize, Ends>,
}

impl LoopbackPairs {
    /// Files engine `token`, whose stream has `ends`; returns the token of the engine at the
    /// connection's other end, if it is on this thread. Only a connection that may be to this
    /// host is filed (a loopback peer, or one at the local address), so a server's remote
    /// clients cost nothing here.
    pub(crate) fn add(&mut self, token: usize, ends: Ends) -> Option<usize> {
        if !(ends.1.ip().is_loopback() || ends.0.ip() == ends.1.ip()) {
            return None;
        }
        self.by_ends.insert(ends, token);
        self.of_token.insert(token, ends);
        self.by_ends.get(&(ends.1, ends.0)).copied()
    }

    /// Forgets engine `token`; returns its partner's token, which has no partner any more.
    pub(crate) fn remove(&mut self, token: usize) -> Option<usize> {
        let ends = self.of_token.remove(&token)?;
        self.by_ends.remove(&ends);
        self.by_ends.get(&(ends.1, ends.0)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn the_two_ends_of_a_connection_find_each_other() {
        let mut pairs = LoopbackPairs::default();
        assert_eq!(pairs.add(1, (addr(5555), addr(40000))), None);
        // Another process's connection to the same listener: no partner here.
        assert_eq!(pairs.add(2, (addr(5555), addr(40001))), None);
        assert_eq!(pairs.add(3, (addr(40000), addr(5555))), Some(1));
        assert_eq!(pairs.remove(1), Some(3));
        assert_eq!(pairs.remove(3), None);
        assert_eq!(pairs.remove(2), None);
        assert_eq!(pairs.remove(2), None);
        // A remote peer is not filed.
        let remote = SocketAddr::from(([192, 0, 2, 7], 40002));
        assert_eq!(
            pairs.add(6, (SocketAddr::from(([192, 0, 2, 1], 5555)), remote)),
            None
        );
        assert_eq!(pairs.remove(6), None);
        // The ends come back (a reconnect reusing the port): paired again.
        assert_eq!(pairs.add(4, (addr(40000), addr(5555))), None);
        assert_eq!(pairs.add(5, (addr(5555), addr(40000))), Some(4));
    }
}
