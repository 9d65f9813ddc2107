//! Fair queueing (libzmq src/fq.cpp): take the next message from each peer in turn; once the
//! first frame of a message is taken, the rest come from the same peer. A peer whose far end
//! closed is removed once everything it sent was read.

use bytes::Bytes;
use ferromq_pipe::Read;

use crate::io::peer::{Peer, PipeId};
use crate::pattern::peer_set::{PeerSet, Reading};

/// The fair queue's state is one word on the peer set's first line (`PeerSet::reading`: idle,
/// in the middle of a peer's message, or holding a frame), which a receive reads beside the
/// readers' turn; only a held frame lives here, read when that word says there is one.
#[derive(Debug, Default)]
pub(crate) struct FairQueue {
    /// A frame `has_in` took to learn that the pipe is not empty, for the next `recv`.
    prefetched: Option<(PipeId, Bytes, bool)>,
}

/// A frame and the slot of the peer it came from.
pub(crate) struct Received {
    pub frame: Bytes,
    pub more: bool,
    pub index: usize,
}

impl FairQueue {
    /// The next frame, or `None` when no peer has one. `eligible` filters peers (a ROUTER
    /// reads only identified ones); an ineligible peer leaves the readers until its owner
    /// activates it again. Only readers are looked at, so the cost does not depend on how
    /// many peers are idle.
    pub(crate) fn recv(
        &mut self,
        peers: &mut PeerSet,
        eligible: impl Fn(&Peer) -> bool,
    ) -> Option<Received> {
        let held = if peers.reading == Reading::HELD {
            self.prefetched.take()
        } else {
            None
        };
        let (index, frame, more) = match held {
            Some((id, frame, more)) => {
                peers.reading = Reading::IDLE;
                match peers.slot(id) {
                    Some(index) => (index, frame, more),
                    // The peer was detached meanwhile: its frame goes with it.
                    None => self.next(peers, eligible)?,
                }
            }
            None => self.next(peers, eligible)?,
        };
        if more {
            peers.reading = Reading::message(peers[index].id);
        } else {
            peers.reading = Reading::IDLE;
            if peers.readers.current() == Some(index) {
                peers.readers.advance();
            }
        }
        Some(Received { frame, more, index })
    }

    /// Reads the next frame from the peer whose turn it is, dropping empty, closed and
    /// ineligible peers from the readers on the way. The turn stays where it is.
    fn next(
        &mut self,
        peers: &mut PeerSet,
        eligible: impl Fn(&Peer) -> bool,
    ) -> Option<(usize, Bytes, bool)> {
        if let Some(id) = peers.reading.in_message() {
            // Frames of a published message are always there, so the peer is still the one
            // whose turn it is unless it left mid-message (then the rest is lost).
            if peers.readers.current().map(|s| peers[s].id) != Some(id) {
                peers.reading = Reading::IDLE;
            }
        }
        loop {
            let index = peers.readers.current()?;
            let mid_message = peers.reading.in_message().is_some();
            let peer = &mut peers[index];
            if !mid_message && !eligible(peer) {
                peers.readers.remove(index);
                continue;
            }
            match peer.inp.read() {
                Read::Item { item, more } => return Some((index, item, more)),
                // The pipe wakes the socket with this peer's id on its next flush.
                Read::Empty => {
                    peers.reading = Reading::IDLE;
                    peers.readers.remove(index);
                }
                Read::Closed => {
                    peers.reading = Reading::IDLE;
                    peers.remove_closed(index);
                }
            }
        }
    }

    /// Whether a frame is ready. Takes the frame to find out (a pipe cannot say "closed"
    /// without being read, and a closed peer must leave); `recv` returns it next.
    pub(crate) fn has_in(&mut self, peers: &mut PeerSet, eligible: impl Fn(&Peer) -> bool) -> bool {
        if peers.reading != Reading::IDLE {
            return true;
        }
        match self.next(peers, eligible) {
            Some((index, frame, more)) => {
                self.prefetched = Some((peers[index].id, frame, more));
                peers.reading = Reading::HELD;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::peer_set::testing::Wakes;

    #[test]
    fn alternates_between_peers_and_keeps_messages_whole() {
        let wakes = Wakes::new();
        let mut peers = PeerSet::default();
        let mut far = Vec::new();
        for i in 0..2 {
            let (p, f) = wakes.pipes(i, 0, 0);
            peers.push(p);
            far.push(f);
        }
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
        // Both far ends closed: their wake-ups put the peers back among the readers.
        wakes.deliver(&mut peers);
        assert!(fq.recv(&mut peers, |_| true).is_none());
        assert!(peers.is_empty());
    }

    #[test]
    fn only_woken_peers_are_read_and_each_active_peer_gets_its_turn() {
        let wakes = Wakes::new();
        let mut peers = PeerSet::default();
        let mut far = Vec::new();
        for i in 0..100 {
            let (p, f) = wakes.pipes(i, 0, 0);
            peers.push(p);
            far.push(f);
        }
        let mut fq = FairQueue::default();
        // Every peer is found empty once, then sleeps.
        assert!(fq.recv(&mut peers, |_| true).is_none());
        assert_eq!(peers.readers.len(), 0);
        // Ten of them send 50 messages each; only they come back.
        for f in far.iter_mut().step_by(10) {
            for _ in 0..50 {
                f.to_socket
                    .try_write(Bytes::from_static(b"m"), false)
                    .unwrap();
            }
            f.to_socket.flush();
        }
        wakes.deliver(&mut peers);
        assert_eq!(peers.readers.len(), 10);
        let mut counts = std::collections::HashMap::new();
        let mut order = Vec::new();
        while let Some(r) = fq.recv(&mut peers, |_| true) {
            let id = peers[r.index].id;
            *counts.entry(id).or_insert(0) += 1;
            order.push(id);
        }
        assert_eq!(counts.len(), 10);
        assert!(counts.values().all(|&c| c == 50));
        // Strict rotation: each window of ten holds every active peer once.
        for window in order.chunks(10) {
            let distinct: std::collections::HashSet<_> = window.iter().collect();
            assert_eq!(distinct.len(), 10);
        }
    }
}
