//! REQ (RFC 28, libzmq src/req.cpp): a DEALER that puts an empty delimiter (and with
//! REQ_CORRELATE a request-id frame before it) in front of each request, sends one request
//! at a time, and accepts the reply only from the peer the request went to.
//!
//! ```text
//!        send (last frame)                  recv (last frame)
//!   Sending ───────────────> AwaitingReply ──────────────────> Sending
//!      │ recv: EFSM              │ send: EFSM (strict); REQ_RELAXED: a new request,
//!                                │       the old reply will be ignored
//! ```

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::{int_value, Options, ZMQ_REQ_CORRELATE, ZMQ_REQ_RELAXED};
use crate::pattern::fq::FairQueue;
use crate::pattern::lb::next_writable;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::{note_metadata, set_metadata, Pattern, PeerMetadata, SendResult};

#[derive(Debug)]
pub(crate) struct Req {
    peers: PeerSet,
    fq: FairQueue,
    /// A request went out completely; its reply is due.
    receiving_reply: bool,
    /// The next frame sent (or received) starts a message.
    message_begins: bool,
    /// The peer the current request went to; replies from others are dropped.
    reply_pipe: Option<PipeId>,
    request_id: u32,
    strict: bool,
    correlate: bool,
}

impl Req {
    pub(crate) fn new() -> Req {
        Req {
            peers: PeerSet::default(),
            fq: FairQueue::default(),
            receiving_reply: false,
            message_begins: true,
            reply_pipe: None,
            request_id: fastrand::u32(..),
            strict: true,
            correlate: false,
        }
    }

    /// Picks the next peer with room for a request (libzmq's load balancer) and passes the
    /// turn on.
    fn pick(&mut self) -> Option<usize> {
        let slot = next_writable(&mut self.peers, false)?;
        self.peers.writers.advance();
        Some(slot)
    }

    fn reply_peer(&self) -> Option<usize> {
        self.peers.slot(self.reply_pipe?)
    }

    /// The next frame from the reply pipe; frames from other peers are dropped.
    fn recv_reply_frame(&mut self) -> Option<(Bytes, bool)> {
        loop {
            let r = self.fq.recv(&mut self.peers, |_| true)?;
            let from = Some(self.peers[r.index].id);
            if self.reply_pipe.is_none() || from == self.reply_pipe {
                return Some((r.frame, r.more));
            }
        }
    }

    fn skip_rest(&mut self, mut more: bool) {
        while more {
            more = self.recv_reply_frame().is_some_and(|(_, m)| m);
        }
    }
}

impl Pattern for Req {
    fn attach(&mut self, peer: Peer, _: &Options) {
        self.peers.push(peer);
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        set_metadata(&mut self.peers, id, metadata);
    }

    fn detach(&mut self, id: PipeId) {
        if self.reply_pipe == Some(id) {
            self.reply_pipe = None;
        }
        self.peers.remove(id);
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn hwm_changed(&mut self) {
        self.peers.activate_all_writers();
    }

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        if self.receiving_reply {
            if self.strict {
                return Err((Error::Fsm, frame));
            }
            self.receiving_reply = false;
            self.message_begins = true;
        }
        if self.message_begins {
            let Some(idx) = self.pick() else {
                return Err((Error::Again, frame));
            };
            let p = &mut self.peers[idx];
            self.reply_pipe = Some(p.id);
            if self.correlate {
                self.request_id = self.request_id.wrapping_add(1);
                let id = Bytes::copy_from_slice(&self.request_id.to_ne_bytes());
                let _ = p.out.try_write(id, true);
            }
            let _ = p.out.try_write(Bytes::new(), true);
            self.message_begins = false;
            // Replies still queued belong to earlier requests.
            while self.fq.recv(&mut self.peers, |_| true).is_some() {}
        }
        if let Some(idx) = self.reply_peer() {
            let p = &mut self.peers[idx];
            let _ = p.out.try_write(frame, more);
            if !more {
                p.out.flush();
            }
        }
        if !more {
            self.receiving_reply = true;
            self.message_begins = true;
        }
        Ok(())
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if !self.receiving_reply {
            return Err(Error::Fsm);
        }
        while self.message_begins {
            if self.correlate {
                let (id, more) = self.recv_reply_frame().ok_or(Error::Again)?;
                if !more || id[..] != self.request_id.to_ne_bytes() {
                    self.skip_rest(more);
                    continue;
                }
            }
            let (bottom, more) = self.recv_reply_frame().ok_or(Error::Again)?;
            if !more || !bottom.is_empty() {
                self.skip_rest(more);
                continue;
            }
            self.message_begins = false;
        }
        let (data, more) = self.recv_reply_frame().ok_or(Error::Again)?;
        if !more {
            self.receiving_reply = false;
            self.message_begins = true;
        }
        match self.reply_peer() {
            Some(i) => note_metadata(metadata, &self.peers[i].metadata),
            None => *metadata = None,
        }
        Ok(Msg {
            data,
            more,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        self.receiving_reply && self.fq.has_in(&mut self.peers, |_| true)
    }

    fn has_out(&mut self) -> bool {
        if self.receiving_reply && self.strict {
            return false;
        }
        !self.message_begins || next_writable(&mut self.peers, false).is_some()
    }

    fn set_option(&mut self, option: i32, value: &[u8]) -> Option<Result<()>> {
        let flag = |v: &[u8]| -> Result<bool> {
            let v = int_value(v)?;
            if v < 0 {
                return Err(Error::Invalid);
            }
            Ok(v != 0)
        };
        match option {
            ZMQ_REQ_RELAXED => Some(flag(value).map(|on| self.strict = !on)),
            ZMQ_REQ_CORRELATE => Some(flag(value).map(|on| self.correlate = on)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::SessionPipes;
    use crate::pattern::peer_set::testing::Wakes;
    use ferromq_pipe::Read;

    thread_local! {
        static WAKES: Wakes = Wakes::new();
    }

    fn req_with(n: u64) -> (Req, Vec<SessionPipes>) {
        let mut r = Req::new();
        let mut far = vec![];
        for i in 0..n {
            let (p, f) = WAKES.with(|w| w.pipes(i, 0, 0));
            r.attach(p, &Options::default());
            far.push(f);
        }
        (r, far)
    }

    fn take(f: &mut SessionPipes) -> Vec<Bytes> {
        let mut out = vec![];
        while let Read::Item { item, .. } = f.from_socket.read() {
            out.push(item);
        }
        out
    }

    /// A peer sends a message; the socket learns which peer woke it, as it would.
    fn reply(r: &mut Req, f: &mut SessionPipes, frames: &[&[u8]]) {
        for (i, fr) in frames.iter().enumerate() {
            f.to_socket
                .try_write(Bytes::copy_from_slice(fr), i + 1 < frames.len())
                .unwrap();
        }
        f.to_socket.flush();
        WAKES.with(|w| w.deliver_to(r));
    }

    fn send(r: &mut Req, m: &'static [u8]) -> std::result::Result<(), Error> {
        r.send(Bytes::from_static(m), false, &Options::default())
            .map_err(|e| e.0)
    }

    #[test]
    fn strict_alternation_with_efsm() {
        let (mut r, mut far) = req_with(1);
        assert_eq!(r.recv(), Err(Error::Fsm));
        send(&mut r, b"q").unwrap();
        assert_eq!(
            take(&mut far[0]),
            vec![Bytes::new(), Bytes::from_static(b"q")]
        );
        assert_eq!(send(&mut r, b"q2"), Err(Error::Fsm));
        assert!(!r.has_out());
        reply(&mut r, &mut far[0], &[b"", b"a"]);
        assert_eq!(r.recv().unwrap().as_slice(), b"a");
        assert_eq!(r.recv(), Err(Error::Fsm));
        send(&mut r, b"q3").unwrap();
    }

    #[test]
    fn replies_from_other_peers_and_without_delimiter_are_dropped() {
        let (mut r, mut far) = req_with(2);
        send(&mut r, b"q").unwrap();
        assert_eq!(take(&mut far[0]).len(), 2);
        reply(&mut r, &mut far[1], &[b"", b"wrong peer"]);
        reply(&mut r, &mut far[0], &[b"no delimiter"]);
        reply(&mut r, &mut far[0], &[b"", b"right"]);
        assert_eq!(r.recv().unwrap().as_slice(), b"right");
        // The next request round-robins to the other peer.
        send(&mut r, b"q2").unwrap();
        assert_eq!(take(&mut far[1]).len(), 2);
    }

    #[test]
    fn relaxed_and_correlated() {
        let (mut r, mut far) = req_with(1);
        r.set_option(ZMQ_REQ_RELAXED, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        r.set_option(ZMQ_REQ_CORRELATE, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        send(&mut r, b"first").unwrap();
        let first = take(&mut far[0]);
        assert_eq!(first.len(), 3);
        send(&mut r, b"second").unwrap();
        let second = take(&mut far[0]);
        assert_ne!(first[0], second[0], "a new request id");
        reply(&mut r, &mut far[0], &[&first[0], b"", b"stale"]);
        reply(&mut r, &mut far[0], &[&second[0], b"", b"fresh"]);
        assert_eq!(r.recv().unwrap().as_slice(), b"fresh");
        assert_eq!(
            r.set_option(ZMQ_REQ_RELAXED, &(-1i32).to_ne_bytes()),
            Some(Err(Error::Invalid))
        );
    }

    #[test]
    fn no_peer_is_again() {
        let (mut r, _far) = req_with(0);
        assert_eq!(send(&mut r, b"q"), Err(Error::Again));
        assert!(!r.has_out());
    }
}
