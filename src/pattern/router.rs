//! ROUTER (libzmq src/router.cpp): every received message is prefixed with the routing id of
//! the peer it came from; a sent message's first frame names the peer it goes to.
//!
//! A peer's routing id is, in order: the ZMQ_CONNECT_ROUTING_ID given when this socket
//! connected to it, the Identity the peer announced in its READY, or a generated 5-byte id
//! `[0x00, u32 BE]` counting up from a random start (a leading 0 byte can never collide with
//! an announced Identity, which may not start with 0). Peers are readable only once
//! identified. Unroutable messages are dropped, or refused with `EHOSTUNREACH` under
//! ROUTER_MANDATORY (a full peer is then `EAGAIN`). A second peer announcing an id in use
//! is refused, unless ROUTER_HANDOVER, which gives the new peer the id and the old one a
//! generated id.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::fq::FairQueue;
use crate::pattern::{Pattern, SendResult};
use crate::peer::{Peer, PipeId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outbound {
    /// The next frame is a routing id.
    Idle,
    /// The rest of the message goes to this peer.
    To(PipeId),
    /// The rest of the message is discarded.
    Dropping,
}

#[derive(Debug)]
pub(crate) struct Router {
    peers: Vec<Peer>,
    by_id: HashMap<Bytes, PipeId>,
    fq: FairQueue,
    outbound: Outbound,
    /// A received body frame waiting behind the routing id frame just returned.
    pending: Option<Msg>,
    /// The last frame returned had MORE set: the next one is not a message start.
    receiving_more: bool,
    next_generated: u32,
}

impl Router {
    pub(crate) fn new() -> Router {
        Router {
            peers: Vec::new(),
            by_id: HashMap::new(),
            fq: FairQueue::default(),
            outbound: Outbound::Idle,
            pending: None,
            receiving_more: false,
            next_generated: fastrand::u32(..),
        }
    }

    fn generate_id(&mut self) -> Bytes {
        let n = self.next_generated;
        self.next_generated = n.wrapping_add(1);
        let mut id = Vec::with_capacity(5);
        id.push(0);
        id.extend_from_slice(&n.to_be_bytes());
        Bytes::from(id)
    }

    /// Gives the peer `index` the routing id `rid`, applying ROUTER_HANDOVER.
    fn assign(&mut self, index: usize, rid: Bytes, options: &Options) {
        if let Some(&holder) = self.by_id.get(&rid) {
            if holder == self.peers[index].id {
                return;
            }
            if !options.router_handover {
                // Refused: dropping the pipes closes that connection.
                self.peers.remove(index);
                return;
            }
            let fresh = self.generate_id();
            if let Some(old) = self.peers.iter_mut().find(|p| p.id == holder) {
                old.routing_id = Some(fresh.clone());
            }
            self.by_id.insert(fresh, holder);
        }
        let peer = &mut self.peers[index];
        if let Some(previous) = peer.routing_id.replace(rid.clone()) {
            self.by_id.remove(&previous);
        }
        self.by_id.insert(rid, peer.id);
    }

    fn forget(&mut self, id: PipeId) {
        if let Some(p) = self.peers.iter().find(|p| p.id == id) {
            if let Some(rid) = &p.routing_id {
                if self.by_id.get(rid) == Some(&id) {
                    self.by_id.remove(rid);
                }
            }
        }
        self.peers.retain(|p| p.id != id);
    }

    /// Drops map entries of peers the fair queue removed (their far end closed).
    fn prune(&mut self) {
        if self.by_id.len() > self.peers.len() {
            let live: std::collections::HashSet<PipeId> = self.peers.iter().map(|p| p.id).collect();
            self.by_id.retain(|_, id| live.contains(id));
        }
    }
}

impl Pattern for Router {
    fn attach(&mut self, peer: Peer, options: &Options) {
        let assigned = peer.assigned_id.clone();
        self.peers.push(peer);
        if let Some(rid) = assigned {
            let index = self.peers.len() - 1;
            self.assign(index, rid, options);
        }
    }

    fn identify(&mut self, id: PipeId, metadata: Arc<Metadata>, options: &Options) {
        let Some(index) = self.peers.iter().position(|p| p.id == id) else {
            return;
        };
        let announced = metadata.get("Identity").filter(|v| !v.is_empty()).cloned();
        let peer = &mut self.peers[index];
        peer.metadata = Some(metadata);
        if peer.assigned_id.is_some() {
            return;
        }
        let rid = match announced {
            Some(rid) => rid,
            // A reconnect of a peer without an Identity keeps the id it had.
            None if peer.routing_id.is_some() => return,
            None => self.generate_id(),
        };
        self.assign(index, rid, options);
    }

    fn detach(&mut self, id: PipeId) {
        self.forget(id);
    }

    fn send(&mut self, frame: Bytes, more: bool, options: &Options) -> SendResult {
        match self.outbound {
            Outbound::Idle => {
                if !more {
                    // A lone routing id frame carries nothing: libzmq drops it.
                    return Ok(());
                }
                let target = self
                    .by_id
                    .get(&frame)
                    .and_then(|id| self.peers.iter().find(|p| p.id == *id));
                match target {
                    Some(p) if !p.out.is_closed() => {
                        if p.out.can_write() {
                            self.outbound = Outbound::To(p.id);
                        } else if options.router_mandatory {
                            return Err((Error::Again, frame));
                        } else {
                            self.outbound = Outbound::Dropping;
                        }
                    }
                    _ if options.router_mandatory => {
                        return Err((Error::HostUnreachable, frame));
                    }
                    _ => self.outbound = Outbound::Dropping,
                }
                Ok(())
            }
            Outbound::To(id) => {
                if let Some(p) = self.peers.iter_mut().find(|p| p.id == id) {
                    let _ = p.out.try_write(frame, more);
                    if !more {
                        p.out.flush();
                    }
                }
                if !more {
                    self.outbound = Outbound::Idle;
                }
                Ok(())
            }
            Outbound::Dropping => {
                if !more {
                    self.outbound = Outbound::Idle;
                }
                Ok(())
            }
        }
    }

    fn recv(&mut self) -> Result<Msg> {
        if let Some(msg) = self.pending.take() {
            self.receiving_more = msg.more;
            return Ok(msg);
        }
        let r = self
            .fq
            .recv(&mut self.peers, |p| p.routing_id.is_some())
            .ok_or(Error::Again);
        self.prune();
        let r = r?;
        let peer = &self.peers[r.index];
        let body = Msg {
            data: r.frame,
            more: r.more,
            metadata: peer.metadata.clone(),
        };
        if self.receiving_more {
            self.receiving_more = body.more;
            return Ok(body);
        }
        let rid = peer.routing_id.clone().unwrap_or_default();
        let metadata = body.metadata.clone();
        self.pending = Some(body);
        self.receiving_more = true;
        Ok(Msg {
            data: rid,
            more: true,
            metadata,
        })
    }

    fn has_in(&mut self) -> bool {
        self.pending.is_some() || self.fq.has_in(&mut self.peers, |p| p.routing_id.is_some())
    }

    fn has_out(&mut self) -> bool {
        // A ROUTER never blocks on send.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer::{pipe_pair, SessionPipes};
    use crate::signaler::Signaler;
    use ferromq_pipe::Read;

    fn meta(identity: &[u8]) -> Arc<Metadata> {
        let mut m = Metadata::new();
        let _ = m.insert("Identity", Bytes::copy_from_slice(identity));
        Arc::new(m)
    }

    fn attach(r: &mut Router, id: u64, o: &Options) -> SessionPipes {
        let sig = Arc::new(Signaler::new().unwrap());
        let (peer, far) = pipe_pair(id, sig, 0, 0);
        r.attach(peer, o);
        far
    }

    #[test]
    fn prefixes_identity_and_routes_replies() {
        let o = Options::default();
        let mut r = Router::new();
        let mut far = attach(&mut r, 1, &o);
        r.identify(1, meta(b"A"), &o);
        far.to_socket
            .try_write(Bytes::from_static(b"hi"), false)
            .unwrap();
        far.to_socket.flush();
        let id = r.recv().unwrap();
        assert_eq!((&id.data[..], id.more), (&b"A"[..], true));
        let body = r.recv().unwrap();
        assert_eq!((&body.data[..], body.more), (&b"hi"[..], false));
        assert_eq!(r.recv(), Err(Error::Again));
        r.send(Bytes::from_static(b"A"), true, &o).unwrap();
        r.send(Bytes::from_static(b"back"), false, &o).unwrap();
        assert!(
            matches!(far.from_socket.read(), Read::Item { item, more: false } if &item[..] == b"back")
        );
    }

    #[test]
    fn generated_ids_are_five_bytes_with_a_zero() {
        let o = Options::default();
        let mut r = Router::new();
        let _far = attach(&mut r, 1, &o);
        r.identify(1, meta(b""), &o);
        let rid = r.peers[0].routing_id.clone().unwrap();
        assert_eq!(rid.len(), 5);
        assert_eq!(rid[0], 0);
    }

    #[test]
    fn mandatory_refuses_unknown_ids() {
        let mut o = Options::default();
        let mut r = Router::new();
        r.send(Bytes::from_static(b"nobody"), true, &o).unwrap();
        r.send(Bytes::from_static(b"x"), false, &o).unwrap();
        o.router_mandatory = true;
        let e = r.send(Bytes::from_static(b"nobody"), true, &o).unwrap_err();
        assert_eq!(e.0, Error::HostUnreachable);
    }

    #[test]
    fn duplicate_identity_refused_or_handed_over() {
        let mut o = Options::default();
        let mut r = Router::new();
        let _a = attach(&mut r, 1, &o);
        r.identify(1, meta(b"X"), &o);
        let _b = attach(&mut r, 2, &o);
        r.identify(2, meta(b"X"), &o);
        assert_eq!(r.peers.len(), 1);
        o.router_handover = true;
        let _c = attach(&mut r, 3, &o);
        r.identify(3, meta(b"X"), &o);
        assert_eq!(r.by_id.get(&Bytes::from_static(b"X")), Some(&3));
        assert_eq!(r.peers.len(), 2);
    }
}
