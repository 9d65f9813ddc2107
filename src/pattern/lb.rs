//! Load balancing (libzmq src/lb.cpp): each message goes to the next peer, in turn, that has
//! room; the frames of one message all go to the same peer. A peer whose far end closed is
//! skipped (and dropped by the caller's receive path, or here when `drop_closed`).

use bytes::Bytes;

use crate::error::Error;
use crate::pattern::SendResult;
use crate::peer::{Peer, PipeId};

#[derive(Debug, Default)]
pub(crate) struct LoadBalancer {
    next: usize,
    /// The peer the current multipart message goes to (`None` between messages).
    current: Option<PipeId>,
    /// The current message's peer vanished: swallow the rest of it.
    dropping: bool,
}

impl LoadBalancer {
    /// Sends a frame to the next peer with room. `drop_closed` removes peers whose far end
    /// closed (for sockets that never read from their peers).
    pub(crate) fn send(
        &mut self,
        peers: &mut Vec<Peer>,
        frame: Bytes,
        more: bool,
        drop_closed: bool,
    ) -> SendResult {
        if self.dropping {
            self.dropping = more;
            return Ok(());
        }
        if let Some(id) = self.current {
            return match peers.iter().position(|p| p.id == id) {
                Some(idx) => {
                    let p = &mut peers[idx];
                    // Inside a message the pipe takes every frame.
                    let _ = p.out.try_write(frame, more);
                    if !more {
                        p.out.flush();
                        self.current = None;
                        self.next = idx + 1;
                    }
                    Ok(())
                }
                None => {
                    self.current = None;
                    self.dropping = more;
                    Ok(())
                }
            };
        }
        let mut frame = frame;
        let mut tries = peers.len();
        while tries > 0 && !peers.is_empty() {
            tries -= 1;
            let idx = self.next % peers.len();
            let p = &mut peers[idx];
            if p.out.is_closed() {
                if drop_closed {
                    peers.remove(idx);
                } else {
                    self.next = idx + 1;
                }
                continue;
            }
            match p.out.try_write(frame, more) {
                Ok(()) => {
                    if more {
                        self.current = Some(p.id);
                    } else {
                        p.out.flush();
                        self.next = idx + 1;
                    }
                    return Ok(());
                }
                Err(back) => {
                    frame = back;
                    self.next = idx + 1;
                }
            }
        }
        Err((Error::Again, frame))
    }

    /// Whether a send would be accepted now (arms the pipes' wake-ups when not).
    pub(crate) fn has_out(&self, peers: &[Peer]) -> bool {
        self.current.is_some()
            || self.dropping
            || peers
                .iter()
                .any(|p| !p.out.is_closed() && p.out.can_write())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer::pipe_pair;
    use crate::signaler::Signaler;
    use ferromq_pipe::Read;
    use std::sync::Arc;

    fn peers(n: usize, hwm: usize) -> (Vec<Peer>, Vec<crate::peer::SessionPipes>) {
        let sig = Arc::new(Signaler::new().unwrap());
        (0..n)
            .map(|i| pipe_pair(i as u64, sig.clone(), hwm, hwm))
            .unzip()
    }

    fn take(far: &mut crate::peer::SessionPipes) -> Vec<(Bytes, bool)> {
        let mut out = vec![];
        while let Read::Item { item, more } = far.from_socket.read() {
            out.push((item, more));
        }
        out
    }

    #[test]
    fn round_robin_keeps_multipart_together() {
        let (mut p, mut far) = peers(2, 0);
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
        let (mut p, mut far) = peers(2, 1);
        let mut lb = LoadBalancer::default();
        for _ in 0..2 {
            lb.send(&mut p, Bytes::from_static(b"x"), false, false)
                .unwrap();
        }
        let err = lb.send(&mut p, Bytes::from_static(b"y"), false, false);
        assert_eq!(err.unwrap_err().0, Error::Again);
        assert!(!lb.has_out(&p));
        take(&mut far[1]);
        assert!(lb.has_out(&p));
        lb.send(&mut p, Bytes::from_static(b"y"), false, false)
            .unwrap();
        assert_eq!(take(&mut far[1]).len(), 1);
    }

    #[test]
    fn no_peer_is_again_and_closed_peers_drop() {
        let mut lb = LoadBalancer::default();
        let mut none = vec![];
        assert!(lb.send(&mut none, Bytes::new(), false, true).is_err());
        let (mut p, far) = peers(1, 0);
        drop(far);
        assert!(lb.send(&mut p, Bytes::new(), false, true).is_err());
        assert!(p.is_empty());
    }
}
