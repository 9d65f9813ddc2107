//! Load balancing (libzmq src/lb.cpp): each message goes to the next peer, in turn, that has
//! room; the frames of one message all go to the same peer. A peer whose far end closed is
//! skipped (and dropped by the caller's receive path, or here when `drop_closed`).

use bytes::Bytes;

use crate::error::Error;
use crate::io::peer::PipeId;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::SendResult;

#[derive(Debug, Default)]
pub(crate) struct LoadBalancer {
    /// The slot and pipe the current multipart message goes to (`None` between messages).
    current: Option<(usize, PipeId)>,
    /// The current message's peer vanished: swallow the rest of it.
    dropping: bool,
}

/// Takes the peer at `slot` out of the writers if its far end closed (out of the set with
/// `drop_closed`); whether it did.
fn skip_closed(peers: &mut PeerSet, slot: usize, drop_closed: bool) -> bool {
    if !peers[slot].out.is_closed() {
        return false;
    }
    if drop_closed {
        peers.remove_slot(slot);
    } else {
        peers.writers.remove(slot);
    }
    true
}

/// The slot of the next writer with room, dropping full and closed peers from the writers on
/// the way (a full pipe wakes the socket with the peer's id once it has room; `drop_closed`
/// removes a closed peer altogether). Only writers are looked at, so a send costs the same
/// however many peers are full.
pub(crate) fn next_writable(peers: &mut PeerSet, drop_closed: bool) -> Option<usize> {
    loop {
        let slot = peers.writers.current()?;
        if skip_closed(peers, slot, drop_closed) {
            continue;
        }
        // `can_write` false arms the pipe's wake-up.
        if peers[slot].out.can_write() {
            return Some(slot);
        }
        peers.writers.remove(slot);
    }
}

impl LoadBalancer {
    /// Sends a frame to the next peer with room. `drop_closed` removes peers whose far end
    /// closed (for sockets that never read from their peers).
    pub(crate) fn send(
        &mut self,
        peers: &mut PeerSet,
        frame: Bytes,
        more: bool,
        drop_closed: bool,
    ) -> SendResult {
        if self.dropping {
            self.dropping = more;
            return Ok(());
        }
        if let Some((hint, id)) = self.current {
            let Some(slot) = peers.find(hint, id) else {
                self.current = None;
                self.dropping = more;
                return Ok(());
            };
            let p = &mut peers[slot];
            // Inside a message the pipe takes every frame.
            let _ = p.out.try_write(frame, more);
            self.current = Some((slot, id));
            if !more {
                p.out.flush();
                self.current = None;
                if peers.writers.current() == Some(slot) {
                    peers.writers.advance();
                }
            }
            return Ok(());
        }
        let mut frame = frame;
        loop {
            // As libzmq's lb: try the write itself, no `can_write` first (a refusal arms the
            // pipe's wake-up just the same, and the room check would read the reader's count).
            let Some(slot) = peers.writers.current() else {
                return Err((Error::Again, frame));
            };
            if skip_closed(peers, slot, drop_closed) {
                continue;
            }
            let p = &mut peers[slot];
            match p.out.try_write(frame, more) {
                Ok(()) => {
                    if more {
                        self.current = Some((slot, p.id));
                    } else {
                        p.out.flush();
                        peers.writers.advance();
                    }
                    return Ok(());
                }
                Err(back) => {
                    frame = back;
                    peers.writers.remove(slot);
                }
            }
        }
    }

    /// Whether a send would be accepted now (arms the pipes' wake-ups when not).
    pub(crate) fn has_out(&self, peers: &mut PeerSet, drop_closed: bool) -> bool {
        self.current.is_some() || self.dropping || next_writable(peers, drop_closed).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::peer_set::testing::Wakes;
    use ferromq_pipe::Read;

    fn peers(n: usize, hwm: usize) -> (PeerSet, Vec<crate::io::peer::SessionPipes>, Wakes) {
        let wakes = Wakes::new();
        let mut set = PeerSet::default();
        let mut far = Vec::new();
        for i in 0..n {
            let (p, f) = wakes.pipes(i as u64, hwm, hwm);
            set.push(p);
            far.push(f);
        }
        (set, far, wakes)
    }

    fn take(far: &mut crate::io::peer::SessionPipes) -> Vec<(Bytes, bool)> {
        let mut out = vec![];
        while let Read::Item { item, more } = far.from_socket.read() {
            out.push((item, more));
        }
        out
    }

    #[test]
    fn round_robin_keeps_multipart_together() {
        let (mut p, mut far, _w) = peers(2, 0);
        let mut lb = LoadBalancer::default();
        lb.send(&mut p, Bytes::from_static(b"a1"), true, false)
            .unwrap();
        lb.send(&mut p, Bytes::from_static(b"a2"), false, false)
            .unwrap();
        lb.send(&mut p, Bytes::from_static(b"b"), false, false)
            .unwrap();
        assert_eq!(take(&mut far[0]).len(), 2);
        assert_eq!(take(&mut far[1]), vec![(Bytes::from_static(b"b"), false)]);
    }

    #[test]
    fn full_peers_are_skipped_then_again() {
        let (mut p, mut far, wakes) = peers(2, 1);
        let mut lb = LoadBalancer::default();
        for _ in 0..2 {
            lb.send(&mut p, Bytes::from_static(b"x"), false, false)
                .unwrap();
        }
        let err = lb.send(&mut p, Bytes::from_static(b"y"), false, false);
        assert_eq!(err.unwrap_err().0, Error::Again);
        assert!(!lb.has_out(&mut p, false));
        take(&mut far[1]);
        wakes.deliver(&mut p);
        assert!(lb.has_out(&mut p, false));
        lb.send(&mut p, Bytes::from_static(b"y"), false, false)
            .unwrap();
        assert_eq!(take(&mut far[1]).len(), 1);
    }

    #[test]
    fn no_peer_is_again_and_closed_peers_drop() {
        let mut lb = LoadBalancer::default();
        let mut none = PeerSet::default();
        assert!(lb.send(&mut none, Bytes::new(), false, true).is_err());
        let (mut p, far, wakes) = peers(1, 0);
        drop(far);
        wakes.deliver(&mut p);
        assert!(lb.send(&mut p, Bytes::new(), false, true).is_err());
        assert!(p.is_empty());
    }

    #[test]
    fn a_raised_hwm_brings_full_peers_back() {
        let (mut p, _far, _wakes) = peers(1, 1);
        let mut lb = LoadBalancer::default();
        lb.send(&mut p, Bytes::from_static(b"x"), false, false)
            .unwrap();
        let err = lb.send(&mut p, Bytes::from_static(b"y"), false, false);
        assert_eq!(err.unwrap_err().0, Error::Again);
        // ZMQ_SNDHWM raised after connect: the pipe has room but sends no wake-up.
        p[0].hwms.out.as_ref().unwrap().set(3);
        p.activate_all_writers();
        lb.send(&mut p, Bytes::from_static(b"y"), false, false)
            .unwrap();
    }
}
