//! STREAM (libzmq src/stream.cpp): raw TCP peers that speak no ZMTP. Every chunk a peer sends
//! arrives as two frames, `[routing id, data]`; with ZMQ_STREAM_NOTIFY (the default) a new
//! connection and a lost one each arrive as `[routing id, empty]` (the engine writes them,
//! see `connection::run_engine`). Sending `[routing id, data]` writes the data as it is;
//! `[routing id, empty]` closes that connection once what was sent before it is written.
//!
//! Ids are given at attach, never announced: ZMQ_CONNECT_ROUTING_ID for the peer of the
//! `connect` it was set before, else a generated 5-byte `[0x00, u32 BE]` counting up from a
//! random start. As in libzmq, the last generated id is what ZMQ_ROUTING_ID reads back, which
//! is how an application learns the id of the peer it just connected to.
//!
//! Sending follows libzmq's `stream_t::xsend` exactly: the first frame of a message names the
//! peer and must carry SNDMORE (`EHOSTUNREACH` for an unknown id, `EAGAIN` for a full one);
//! a first frame without SNDMORE is ignored and so is the frame after it; the second frame
//! always ends the message, whatever its SNDMORE says.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::{self, Options};
use crate::pattern::fq::FairQueue;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::routing_ids::RoutingIds;
use crate::pattern::{note_metadata, Pattern, PeerMetadata, SendResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outbound {
    /// The next frame names a peer.
    Idle,
    /// The next frame is data for the pipe `id`.
    To(PipeId),
    /// The next frame is data for nobody (a routing-id frame came without SNDMORE).
    Dropping,
}

#[derive(Debug)]
pub(crate) struct Stream {
    peers: PeerSet,
    /// Routing id -> its peer's pipe; every peer has exactly one entry.
    by_id: RoutingIds,
    fq: FairQueue,
    outbound: Outbound,
    /// The data frame behind the routing-id frame just returned.
    pending: Option<Msg>,
    next_generated: u32,
    /// The last generated id, which ZMQ_ROUTING_ID reads back until it is set again.
    last_generated: Option<Bytes>,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            peers: PeerSet::default(),
            by_id: RoutingIds::new(),
            fq: FairQueue::default(),
            outbound: Outbound::Idle,
            pending: None,
            next_generated: fastrand::u32(..),
            last_generated: None,
        }
    }

    fn generate_id(&mut self) -> Bytes {
        loop {
            let n = self.next_generated;
            self.next_generated = n.wrapping_add(1);
            let mut id = Vec::with_capacity(5);
            id.push(0);
            id.extend_from_slice(&n.to_be_bytes());
            let id = Bytes::from(id);
            // After 2^32 connections the counter could meet a live id.
            if !self.by_id.contains_key(&id) {
                return id;
            }
        }
    }

    fn remove(&mut self, id: PipeId) {
        if let Some(rid) = self.peers.remove(id).and_then(|p| p.routing_id) {
            self.by_id.unmap(id, &rid);
        }
    }
}

impl Pattern for Stream {
    fn attach(&mut self, mut peer: Peer, _options: &Options) {
        let rid = match peer.assigned_id.take() {
            // libzmq asserts on a duplicate ZMQ_CONNECT_ROUTING_ID; the connection is refused
            // here instead (dropping its pipes closes it).
            Some(rid) if self.by_id.contains_key(&rid) => return,
            Some(rid) => rid,
            None => {
                let rid = self.generate_id();
                self.last_generated = Some(rid.clone());
                rid
            }
        };
        peer.routing_id = Some(rid.clone());
        self.by_id.insert(&rid, peer.id, peer.out.front_line());
        self.peers.push(peer);
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _options: &Options) {
        if let Some(p) = self.peers.get_mut(id) {
            p.metadata = metadata.properties();
        }
    }

    fn detach(&mut self, id: PipeId) {
        self.remove(id);
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn send(&mut self, frame: Bytes, more: bool, _options: &Options) -> SendResult {
        match self.outbound {
            Outbound::Idle => {
                if !more {
                    self.outbound = Outbound::Dropping;
                    return Ok(());
                }
                let Some(peer) = self
                    .by_id
                    .get(&frame)
                    .and_then(|r| Some(&self.peers[self.peers.route(r)?]))
                else {
                    return Err((Error::HostUnreachable, frame));
                };
                if !peer.out.can_write() {
                    return Err((Error::Again, frame));
                }
                self.outbound = Outbound::To(peer.id);
                Ok(())
            }
            Outbound::To(id) => {
                self.outbound = Outbound::Idle;
                if frame.is_empty() {
                    // Dropping the pipes makes the engine write what is queued, then close.
                    self.remove(id);
                    return Ok(());
                }
                if let Some(p) = self.peers.get_mut(id)
                    && p.out.try_write(frame, false).is_ok()
                {
                    p.out.flush();
                }
                Ok(())
            }
            Outbound::Dropping => {
                self.outbound = Outbound::Idle;
                Ok(())
            }
        }
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if let Some(mut msg) = self.pending.take() {
            *metadata = msg.metadata.take();
            return Ok(msg);
        }
        let r = self.fq.recv(&mut self.peers, |_| true);
        self.peers.forget_departed(&mut self.by_id);
        let r = r.ok_or(Error::Again)?;
        let peer = &self.peers[r.index];
        note_metadata(metadata, &peer.metadata);
        self.pending = Some(Msg {
            data: r.frame,
            more: false,
            metadata: metadata.clone(),
        });
        Ok(Msg {
            data: peer.routing_id.clone().unwrap_or_default(),
            more: true,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        if self.pending.is_some() {
            return true;
        }
        let has = self.fq.has_in(&mut self.peers, |_| true);
        self.peers.forget_departed(&mut self.by_id);
        has
    }

    fn has_out(&mut self) -> bool {
        // As libzmq: whether a send succeeds depends on the peer it names.
        true
    }

    fn set_option(&mut self, option: i32, _value: &[u8]) -> Option<Result<()>> {
        if option == option::ZMQ_ROUTING_ID {
            self.last_generated = None;
        }
        None
    }

    fn get_option(&self, option: i32, out: &mut [u8]) -> Option<Result<usize>> {
        match (option, &self.last_generated) {
            (option::ZMQ_ROUTING_ID, Some(rid)) => Some(option::put(out, rid)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::{pipe_pair, SessionPipes};
    use crate::io::signaler::Signaler;
    use ferromq_pipe::Read;
    use std::sync::Arc;

    fn attach(s: &mut Stream, id: u64, assigned: Option<&'static [u8]>) -> SessionPipes {
        let sig = Arc::new(Signaler::new().unwrap());
        let (mut peer, far) = pipe_pair(id, sig, 2, 0);
        peer.assigned_id = assigned.map(Bytes::from_static);
        s.attach(peer, &Options::default());
        far
    }

    fn rid_of(s: &Stream, id: PipeId) -> Bytes {
        let p = s.peers.iter().find(|p| p.id == id).unwrap();
        p.routing_id.clone().unwrap()
    }

    fn read(far: &mut SessionPipes) -> Read<Bytes> {
        far.from_socket.read()
    }

    #[test]
    fn chunks_arrive_behind_the_routing_id() {
        let o = Options::default();
        let mut s = Stream::new();
        let mut far = attach(&mut s, 1, None);
        let rid = rid_of(&s, 1);
        assert_eq!((rid.len(), rid[0]), (5, 0));
        for chunk in [&b""[..], b"GET / HTTP/1.0\r\n"] {
            far.to_socket
                .try_write(Bytes::copy_from_slice(chunk), false)
                .unwrap();
        }
        far.to_socket.flush();
        for chunk in [&b""[..], b"GET / HTTP/1.0\r\n"] {
            let id = s.recv().unwrap();
            assert_eq!((&id.data, id.more), (&rid, true));
            let body = s.recv().unwrap();
            assert_eq!((&body.data[..], body.more), (chunk, false));
        }
        assert_eq!(s.recv(), Err(Error::Again));
        s.send(rid.clone(), true, &o).unwrap();
        s.send(Bytes::from_static(b"reply"), true, &o).unwrap();
        assert_eq!(
            read(&mut far),
            Read::Item {
                item: Bytes::from_static(b"reply"),
                more: false
            }
        );
        // The SNDMORE on the data frame was ignored: the next frame names a peer again.
        let e = s.send(Bytes::from_static(b"x"), true, &o).unwrap_err();
        assert_eq!(e.0, Error::HostUnreachable);
    }

    #[test]
    fn an_empty_frame_closes_after_what_was_sent() {
        let o = Options::default();
        let mut s = Stream::new();
        let mut far = attach(&mut s, 1, None);
        let rid = rid_of(&s, 1);
        s.send(rid.clone(), true, &o).unwrap();
        s.send(Bytes::from_static(b"bye"), false, &o).unwrap();
        s.send(rid.clone(), true, &o).unwrap();
        s.send(Bytes::new(), false, &o).unwrap();
        assert!(matches!(read(&mut far), Read::Item { item, .. } if &item[..] == b"bye"));
        assert_eq!(read(&mut far), Read::Closed);
        let e = s.send(rid, true, &o).unwrap_err();
        assert_eq!(e.0, Error::HostUnreachable);
    }

    #[test]
    fn a_routing_id_without_sndmore_swallows_the_next_frame() {
        let o = Options::default();
        let mut s = Stream::new();
        let mut far = attach(&mut s, 1, None);
        let rid = rid_of(&s, 1);
        s.send(rid.clone(), false, &o).unwrap();
        s.send(rid.clone(), true, &o).unwrap();
        s.send(rid.clone(), true, &o).unwrap();
        s.send(Bytes::from_static(b"data"), false, &o).unwrap();
        assert!(matches!(read(&mut far), Read::Item { item, .. } if &item[..] == b"data"));
        assert_eq!(read(&mut far), Read::Empty);
    }

    #[test]
    fn full_peer_is_again_and_unknown_is_unreachable() {
        let o = Options::default();
        let mut s = Stream::new();
        let _far = attach(&mut s, 1, None);
        let rid = rid_of(&s, 1);
        for _ in 0..2 {
            s.send(rid.clone(), true, &o).unwrap();
            s.send(Bytes::from_static(b"x"), false, &o).unwrap();
        }
        assert_eq!(s.send(rid, true, &o).unwrap_err().0, Error::Again);
        let e = s.send(Bytes::from_static(b"nobody"), true, &o).unwrap_err();
        assert_eq!(e.0, Error::HostUnreachable);
    }

    #[test]
    fn connect_routing_id_names_the_peer_and_generated_ids_read_back() {
        let mut s = Stream::new();
        let _a = attach(&mut s, 1, Some(b"conn"));
        assert_eq!(&rid_of(&s, 1)[..], b"conn");
        let mut out = [0u8; 256];
        assert!(s.get_option(option::ZMQ_ROUTING_ID, &mut out).is_none());
        let _b = attach(&mut s, 2, None);
        let n = s
            .get_option(option::ZMQ_ROUTING_ID, &mut out)
            .unwrap()
            .unwrap();
        assert_eq!(&out[..n], &rid_of(&s, 2)[..]);
        // A duplicate is refused.
        let mut dup = attach(&mut s, 3, Some(b"conn"));
        assert_eq!(s.peers.len(), 2);
        assert_eq!(dup.from_socket.read(), Read::Closed);
        assert!(s.set_option(option::ZMQ_ROUTING_ID, b"mine").is_none());
        assert!(s.get_option(option::ZMQ_ROUTING_ID, &mut out).is_none());
    }

    #[test]
    fn index_follows_peers_that_leave() {
        let o = Options::default();
        let mut s = Stream::new();
        let mut fars: Vec<SessionPipes> = (0..4).map(|i| attach(&mut s, i, None)).collect();
        let rids: Vec<Bytes> = (0..4).map(|i| rid_of(&s, i)).collect();
        s.detach(0);
        drop(fars.remove(0));
        // The fair queue drops peer 1 once its far end is closed and drained.
        drop(fars.remove(0));
        assert_eq!(s.recv(), Err(Error::Again));
        assert_eq!(s.peers.len(), 2);
        for (k, far) in fars.iter_mut().enumerate() {
            s.send(rids[k + 2].clone(), true, &o).unwrap();
            s.send(Bytes::from(vec![k as u8 + 1]), false, &o).unwrap();
            assert!(matches!(read(far), Read::Item { item, .. } if item[..] == [k as u8 + 1]));
        }
    }
}
