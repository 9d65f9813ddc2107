//! REP (RFC 28, libzmq src/rep.cpp): fair-queues requests, keeps each one's envelope (every
//! frame up to and including the empty delimiter, however many ROUTER/DEALER hops added
//! to it) and puts it in front of the one reply, which goes back to the peer the request
//! came from. Strict alternation: recv, recv..., send, send...; out of turn is EFSM.
//!
//! A reply whose peer has gone, or whose pipe is full, is dropped (REP never blocks on send).

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::fq::FairQueue;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::{note_metadata, set_metadata, Pattern, PeerMetadata, SendResult};

#[derive(Debug, Default)]
pub(crate) struct Rep {
    peers: PeerSet,
    fq: FairQueue,
    /// The request was read completely; the reply is due.
    sending_reply: bool,
    /// Inside a request's body (its envelope was read).
    in_body: bool,
    /// Where the reply goes, and the envelope it carries back.
    reply_to: Option<PipeId>,
    envelope: Vec<Bytes>,
    /// The reply is being written to this peer (`None`: being dropped).
    replying: Option<PipeId>,
    reply_started: bool,
}

impl Rep {
    /// Reads the next request's envelope; `false` when no request is waiting.
    fn read_envelope(&mut self) -> bool {
        'messages: loop {
            self.envelope.clear();
            let Some(first) = self.fq.recv(&mut self.peers, |_| true) else {
                return false;
            };
            self.reply_to = Some(self.peers[first.index].id);
            let mut r = first;
            loop {
                if !r.more {
                    // No delimiter before the last frame: a malformed request, dropped.
                    continue 'messages;
                }
                let bottom = r.frame.is_empty();
                self.envelope.push(r.frame);
                if bottom {
                    return true;
                }
                match self.fq.recv(&mut self.peers, |_| true) {
                    Some(next) => r = next,
                    None => continue 'messages,
                }
            }
        }
    }
}

impl Pattern for Rep {
    fn attach(&mut self, peer: Peer, _: &Options) {
        self.peers.push(peer);
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        set_metadata(&mut self.peers, id, metadata);
    }

    fn detach(&mut self, id: PipeId) {
        self.peers.remove(id);
        if self.replying == Some(id) {
            self.replying = None;
        }
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        if !self.sending_reply {
            return Err((Error::Fsm, frame));
        }
        if !self.reply_started {
            self.reply_started = true;
            self.replying = self.reply_to.filter(|&id| {
                self.peers
                    .get(id)
                    .is_some_and(|p| !p.out.is_closed() && p.out.can_write())
            });
            if let Some(p) = self.replying.and_then(|id| self.peers.get_mut(id)) {
                for part in self.envelope.drain(..) {
                    let _ = p.out.try_write(part, true);
                }
            }
        }
        if let Some(id) = self.replying
            && let Some(p) = self.peers.get_mut(id)
        {
            let _ = p.out.try_write(frame, more);
            if !more {
                p.out.flush();
            }
        }
        if !more {
            self.sending_reply = false;
            self.reply_started = false;
            self.replying = None;
            self.envelope.clear();
        }
        Ok(())
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if self.sending_reply {
            return Err(Error::Fsm);
        }
        if !self.in_body {
            if !self.read_envelope() {
                return Err(Error::Again);
            }
            self.in_body = true;
        }
        let r = self
            .fq
            .recv(&mut self.peers, |_| true)
            .ok_or(Error::Again)?;
        if !r.more {
            self.in_body = false;
            self.sending_reply = true;
        }
        note_metadata(metadata, &self.peers[r.index].metadata);
        Ok(Msg {
            data: r.frame,
            more: r.more,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        !self.sending_reply && (self.in_body || self.fq.has_in(&mut self.peers, |_| true))
    }

    fn has_out(&mut self) -> bool {
        self.sending_reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::{pipe_pair, SessionPipes};
    use crate::io::signaler::Signaler;
    use ferromq_pipe::Read;
    use std::sync::Arc;

    fn rep_with(n: u64) -> (Rep, Vec<SessionPipes>) {
        let sig = Arc::new(Signaler::new().unwrap());
        let mut r = Rep::default();
        let mut far = vec![];
        for i in 0..n {
            let (p, f) = pipe_pair(i, sig.clone(), 0, 0);
            r.attach(p, &Options::default());
            far.push(f);
        }
        (r, far)
    }

    fn request(f: &mut SessionPipes, frames: &[&'static [u8]]) {
        for (i, fr) in frames.iter().enumerate() {
            f.to_socket
                .try_write(Bytes::from_static(fr), i + 1 < frames.len())
                .unwrap();
        }
        f.to_socket.flush();
    }

    fn take(f: &mut SessionPipes) -> Vec<Bytes> {
        let mut out = vec![];
        while let Read::Item { item, .. } = f.from_socket.read() {
            out.push(item);
        }
        out
    }

    fn send(r: &mut Rep, m: &'static [u8], more: bool) -> std::result::Result<(), Error> {
        r.send(Bytes::from_static(m), more, &Options::default())
            .map_err(|e| e.0)
    }

    #[test]
    fn envelope_goes_back_to_the_requesting_peer() {
        let (mut r, mut far) = rep_with(2);
        assert_eq!(send(&mut r, b"x", false), Err(Error::Fsm));
        request(&mut far[1], &[b"hop2", b"hop1", b"", b"req", b"part2"]);
        assert_eq!(r.recv().unwrap().as_slice(), b"req");
        assert_eq!(r.recv().unwrap().as_slice(), b"part2");
        assert_eq!(r.recv(), Err(Error::Fsm));
        send(&mut r, b"rep", false).unwrap();
        let got = take(&mut far[1]);
        let want: Vec<Bytes> = [&b"hop2"[..], b"hop1", b"", b"rep"]
            .iter()
            .map(|s| Bytes::copy_from_slice(s))
            .collect();
        assert_eq!(got, want);
        assert!(take(&mut far[0]).is_empty());
    }

    #[test]
    fn malformed_requests_are_skipped_and_vanished_peers_lose_the_reply() {
        let (mut r, mut far) = rep_with(1);
        request(&mut far[0], &[b"no", b"delimiter"]);
        request(&mut far[0], &[b"", b"ok"]);
        assert_eq!(r.recv().unwrap().as_slice(), b"ok");
        r.detach(0);
        send(&mut r, b"lost", true).unwrap();
        send(&mut r, b"lost", false).unwrap();
        assert!(!r.has_out());
        assert_eq!(r.recv(), Err(Error::Again));
    }
}
