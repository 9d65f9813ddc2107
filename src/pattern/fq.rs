//! Fair queueing (libzmq src/fq.cpp): take the next message from each peer in turn; once the
//! first frame of a message is taken, the rest come from the same peer. A peer whose far end
//! closed is removed once everything it sent was read.

use bytes::Bytes;
use ferromq_pipe::Read;

use crate::peer::{Peer, PipeId};

#[derive(Debug, Default)]
pub(crate) struct FairQueue {
    next: usize,
    current: Option<PipeId>,
}

/// A frame and the index of the peer it came from.
pub(crate) struct Received {
    pub frame: Bytes,
    pub more: bool,
    pub index: usize,
}

impl FairQueue {
    /// The next frame, or `None` when no peer has one. `eligible` filters peers (a ROUTER
    /// reads only identified ones).
    pub(crate) fn recv(
        &mut self,
        peers: &mut Vec<Peer>,
        eligible: impl Fn(&Peer) -> bool,
    ) -> Option<Received> {
        if let Some(id) = self.current {
            if let Some(index) = peers.iter().position(|p| p.id == id) {
                if let Read::Item { item, more } = peers[index].inp.read() {
                    if !more {
                        self.current = None;
                        self.next = index + 1;
                    }
                    return Some(Received {
                        frame: item,
                        more,
                        index,
                    });
                }
            }
            // Frames of a published message are always there; the peer is gone.
            self.current = None;
        }
        let mut tries = peers.len();
        while tries > 0 && !peers.is_empty() {
            tries -= 1;
            let index = self.next % peers.len();
            if !eligible(&peers[index]) {
                self.next = index + 1;
                continue;
            }
            match peers[index].inp.read() {
                Read::Item { item, more } => {
                    if more {
                        self.current = Some(peers[index].id);
                    } else {
                        self.next = index + 1;
                    }
                    return Some(Received {
                        frame: item,
                        more,
                        index,
                    });
                }
                Read::Empty => self.next = index + 1,
                Read::Closed => {
                    peers.remove(index);
                }
            }
        }
        None
    }

    /// Whether a frame is ready.
    pub(crate) fn has_in(&self, peers: &mut [Peer], eligible: impl Fn(&Peer) -> bool) -> bool {
        self.current.is_some() || peers.iter_mut().any(|p| eligible(p) && p.inp.has_message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer::pipe_pair;
    use crate::signaler::Signaler;
    use std::sync::Arc;

    #[test]
    fn alternates_between_peers_and_keeps_messages_whole() {
        let sig = Arc::new(Signaler::new().unwrap());
        let (mut peers, mut far): (Vec<_>, Vec<_>) =
            (0..2).map(|i| pipe_pair(i, sig.clone(), 0, 0)).unzip();
        for f in far.iter_mut() {
            f.to_socket
                .try_write(Bytes::from_static(b"1"), true)
                .unwrap();
            f.to_socket
                .try_write(Bytes::from_static(b"2"), false)
                .unwrap();
            f.to_socket
                .try_write(Bytes::from_static(b"3"), false)
                .unwrap();
            f.to_socket.flush();
        }
        let mut fq = FairQueue::default();
        let order: Vec<(usize, Bytes)> = std::iter::from_fn(|| fq.recv(&mut peers, |_| true))
            .map(|r| (r.index, r.frame))
            .collect();
        let idx: Vec<usize> = order.iter().map(|o| o.0).collect();
        assert_eq!(idx, vec![0, 0, 1, 1, 0, 1]);
        assert!(!fq.has_in(&mut peers, |_| true));
        drop(far);
        assert!(fq.recv(&mut peers, |_| true).is_none());
        assert!(peers.is_empty());
    }
}
