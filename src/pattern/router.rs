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

use std::sync::Arc;

use bytes::Bytes;
use ferromq_pipe::Writer;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::fq::FairQueue;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::routing_ids::RoutingIds;
use crate::pattern::{note_metadata, Lent, OutFrame, Pattern, PeerMetadata, SendResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outbound {
    /// The next frame is a routing id.
    Idle,
    /// The rest of the message goes to the pipe `id`, at `slot` when the peer set's move
    /// count was `moves` (commands processed between two frames may attach or detach peers
    /// and move slots, so a changed count sends the slot to be checked against the pipe).
    To { slot: usize, id: PipeId, moves: u64 },
    /// The rest of the message is discarded.
    Dropping,
}

#[derive(Debug)]
pub(crate) struct Router {
    peers: PeerSet,
    /// Routing id -> its peer's pipe, so a send finds its peer in O(1) whatever the number
    /// of peers (the pipe's slot is the peer set's O(1) lookup). Every identified peer has
    /// exactly one entry; a peer that leaves takes its entry with it (`forget`, and the
    /// peer set's departed list for peers the fair queue found closed).
    by_id: RoutingIds,
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
            peers: PeerSet::default(),
            by_id: RoutingIds::new(),
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

    /// Gives the peer `id` the routing id `rid`, applying ROUTER_HANDOVER; the peer becomes
    /// readable once it has one.
    fn assign(&mut self, id: PipeId, rid: Bytes, options: &Options) {
        if let Some(holder) = self.by_id.get(&rid).map(|r| r.id) {
            if holder == id {
                return;
            }
            if !options.router_handover {
                // Refused: dropping the pipes closes that connection.
                self.forget(id);
                return;
            }
            let fresh = self.generate_id();
            if let Some(old) = self.peers.get_mut(holder) {
                old.routing_id = Some(fresh.clone());
                self.by_id.insert(&fresh, holder, old.out.front_line());
            }
        }
        let Some(peer) = self.peers.get_mut(id) else {
            return;
        };
        let front_line = peer.out.front_line();
        if let Some(previous) = peer.routing_id.replace(rid.clone()) {
            self.by_id.unmap(id, &previous);
        }
        self.by_id.insert(&rid, id, front_line);
        self.peers.activate_reader(id);
    }

    /// Removes a peer (dropping its pipes closes the connection) and its routing id.
    fn forget(&mut self, id: PipeId) {
        if let Some(rid) = self.peers.remove(id).and_then(|p| p.routing_id) {
            self.by_id.unmap(id, &rid);
        }
    }
}

impl Pattern for Router {
    fn attach(&mut self, peer: Peer, options: &Options) {
        let assigned = peer.assigned_id.clone();
        let id = peer.id;
        let slot = self.peers.push(peer);
        // Readable once identified (`assign`).
        self.peers.readers.remove(slot);
        if let Some(rid) = assigned {
            self.assign(id, rid, options);
        }
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, options: &Options) {
        let announced = metadata.routing_id.clone().filter(|v| !v.is_empty());
        let Some(peer) = self.peers.get_mut(id) else {
            return;
        };
        peer.metadata = metadata.properties();
        if peer.assigned_id.is_some() {
            return;
        }
        let rid = match announced {
            Some(rid) => rid,
            // A reconnect of a peer without an Identity keeps the id it had.
            None if peer.routing_id.is_some() => return,
            None => self.generate_id(),
        };
        self.assign(id, rid, options);
    }

    fn detach(&mut self, id: PipeId) {
        self.forget(id);
    }

    fn activate(&mut self, id: PipeId) {
        if let Some(slot) = self.peers.slot(id) {
            // Unidentified peers stay out of the readers until `assign`.
            if self.peers[slot].routing_id.is_some() {
                self.peers.readers.insert(slot);
            }
            self.peers.writers.insert(slot);
        }
    }

    fn send(&mut self, frame: Bytes, more: bool, options: &Options) -> SendResult {
        self.send_frame(frame, more, options)
    }

    fn send_lent(&mut self, frame: Lent<'_>, more: bool, options: &Options) -> SendResult {
        self.send_frame(frame, more, options)
            .map_err(|(e, frame)| (e, frame.into_bytes()))
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if let Some(mut msg) = self.pending.take() {
            self.receiving_more = msg.more;
            // The body's own count, taken with its routing id frame: its peer may have left
            // since.
            *metadata = msg.metadata.take();
            return Ok(msg);
        }
        let r = self.fq.recv(&mut self.peers, |p| p.routing_id.is_some());
        self.peers.forget_departed(&mut self.by_id);
        let r = r.ok_or(Error::Again)?;
        let peer = &self.peers[r.index];
        note_metadata(metadata, &peer.metadata);
        if self.receiving_more {
            self.receiving_more = r.more;
            return Ok(Msg {
                data: r.frame,
                more: r.more,
                metadata: None,
            });
        }
        let rid = peer.routing_id.clone().unwrap_or_default();
        self.pending = Some(Msg {
            data: r.frame,
            more: r.more,
            metadata: metadata.clone(),
        });
        self.receiving_more = true;
        Ok(Msg {
            data: rid,
            more: true,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        if self.pending.is_some() {
            return true;
        }
        let has = self.fq.has_in(&mut self.peers, |p| p.routing_id.is_some());
        self.peers.forget_departed(&mut self.by_id);
        has
    }

    fn has_out(&mut self) -> bool {
        // A ROUTER never blocks on send.
        true
    }
}

impl Router {
    /// [`Pattern::send`] of either kind of frame: a routing id is only looked up, so a lent
    /// one is never copied, nor is a frame for a peer that is gone.
    fn send_frame<F: OutFrame>(
        &mut self,
        frame: F,
        more: bool,
        options: &Options,
    ) -> std::result::Result<(), (Error, F)> {
        match self.outbound {
            Outbound::Idle => {
                if !more {
                    // A lone routing id frame carries nothing: libzmq drops it.
                    return Ok(());
                }
                // The route gives the slot and the pipe id without reading the peer, whose
                // writer is then the only line of it this message touches.
                let target = self.by_id.get(frame.bytes()).and_then(|r| {
                    // The writer's state, its front line and the slot it writes load side by
                    // side (all three addresses come from the entry), where reading the writer
                    // first would put the other two behind it.
                    ferromq_pipe::prefetch(r.front_line);
                    Writer::<Bytes>::prefetch_slot(r.next_slot.get());
                    let slot = self.peers.route(r)?;
                    Some((slot, r, &self.peers[slot]))
                });
                match target {
                    Some((slot, route, p)) if !p.out.is_closed() => {
                        if p.out.can_write() {
                            // For the next message to this peer, if this one is one frame.
                            route.next_slot.set(p.out.slot_after_next());
                            let id = route.id;
                            let moves = self.peers.moves();
                            self.outbound = Outbound::To { slot, id, moves };
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
            Outbound::To { slot, id, moves } => {
                match self.peers.still(slot, id, moves) {
                    Some(at) => {
                        let p = &mut self.peers[at];
                        let _ = p.out.try_write(frame.into_bytes(), more);
                        if !more {
                            p.out.flush();
                        }
                        let moves = self.peers.moves();
                        self.outbound = Outbound::To {
                            slot: at,
                            id,
                            moves,
                        };
                    }
                    // The peer left mid-message: the rest is discarded.
                    None => self.outbound = Outbound::Dropping,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::SessionPipes;
    use crate::io::send_buffers::{copies_nothing, SendBuffers};
    use crate::pattern::peer_set::testing::Wakes;
    use ferromq_pipe::Read;
    use ferromq_zmtp::Metadata;
    use std::collections::HashSet;
    use std::sync::Arc;

    thread_local! {
        static WAKES: Wakes = Wakes::new();
    }

    /// What a tcp peer announcing `identity` tells the ROUTER.
    /// What a peer announcing `identity` sends.
    fn announced(identity: &[u8]) -> Arc<Metadata> {
        let mut m = Metadata::new();
        let _ = m.insert("Identity", Bytes::copy_from_slice(identity));
        Arc::new(m)
    }

    fn meta(identity: &[u8]) -> PeerMetadata {
        PeerMetadata::of_connection(announced(identity), Some(Bytes::copy_from_slice(identity)))
    }

    fn attach(r: &mut Router, id: u64, o: &Options) -> SessionPipes {
        let (peer, far) = WAKES.with(|w| w.pipes(id, 0, 0));
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
    fn tcp_messages_carry_the_peers_metadata_and_inproc_ones_none() {
        let o = Options::default();
        let mut r = Router::new();
        let mut tcp = attach(&mut r, 1, &o);
        r.identify(1, meta(b"T"), &o);
        let mut inproc = attach(&mut r, 2, &o);
        r.identify(
            2,
            PeerMetadata::of_inproc(announced(b"I"), Some(Bytes::from_static(b"I"))),
            &o,
        );
        for far in [&mut tcp, &mut inproc] {
            far.to_socket
                .try_write(Bytes::from_static(b"x"), false)
                .unwrap();
            far.to_socket.flush();
        }
        let mut seen = Vec::new();
        for _ in 0..2 {
            let id = r.recv().unwrap();
            let body = r.recv().unwrap();
            assert_eq!(id.metadata.is_some(), body.metadata.is_some());
            seen.push((id.data, body.metadata.is_some()));
        }
        seen.sort();
        // The inproc peer's Identity names it all the same.
        assert_eq!(
            seen,
            [
                (Bytes::from_static(b"I"), false),
                (Bytes::from_static(b"T"), true)
            ]
        );
    }

    /// The routing id, not the first `Identity` a lookup finds: with a ZAP handler that names
    /// one, libzmq's ROUTER takes the one it parsed last (under PLAIN, the client's) while
    /// `zmq_msg_gets` finds the handler's.
    #[test]
    fn the_routing_id_names_the_peer_not_the_first_identity() {
        let o = Options::default();
        let mut r = Router::new();
        let mut far = attach(&mut r, 1, &o);
        let mut props = Metadata::new();
        let _ = props.insert("Identity", Bytes::from_static(b"from-zap"));
        let _ = props.insert("Identity", Bytes::from_static(b"client"));
        r.identify(
            1,
            PeerMetadata::of_connection(Arc::new(props), Some(Bytes::from_static(b"client"))),
            &o,
        );
        far.to_socket
            .try_write(Bytes::from_static(b"hi"), false)
            .unwrap();
        far.to_socket.flush();
        let id = r.recv().unwrap();
        assert_eq!(&id.data[..], b"client");
        let body = r.recv().unwrap();
        let gets = body
            .metadata
            .as_ref()
            .and_then(|m| m.get("Identity").cloned());
        assert_eq!(gets.as_deref(), Some(&b"from-zap"[..]));
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
        assert_eq!(r.by_id.get(b"X").map(|route| route.id), Some(3));
        assert_eq!(r.peers.len(), 2);
        assert_map_matches_peers(&r);
    }

    /// Every identified peer has one entry, and every entry points at the peer holding it.
    fn assert_map_matches_peers(r: &Router) {
        let identified = r.peers.iter().filter(|p| p.routing_id.is_some()).count();
        assert_eq!(r.by_id.len(), identified);
        for (rid, route) in r.by_id.iter() {
            assert_eq!(
                r.peers.get(route.id).unwrap().routing_id.as_deref(),
                Some(rid)
            );
        }
    }

    fn name(i: u64) -> Bytes {
        Bytes::from(format!("peer-{i}"))
    }

    /// Sends `[name(i), "to-<i>"]` and checks that exactly that far end got it.
    fn route_to(r: &mut Router, fars: &mut [(u64, SessionPipes)], i: u64, o: &Options) {
        r.send(name(i), true, o).unwrap();
        r.send(Bytes::from(format!("to-{i}")), false, o).unwrap();
        for (j, far) in fars.iter_mut() {
            let got = far.from_socket.read();
            if *j == i {
                let want = format!("to-{i}");
                assert!(
                    matches!(&got, Read::Item { item, more: false } if item[..] == *want.as_bytes()),
                    "peer {i} got {got:?}"
                );
            } else {
                assert!(matches!(got, Read::Empty), "peer {j} got {i}'s message");
            }
        }
    }

    fn attach_named(r: &mut Router, pipe: u64, i: u64, o: &Options) -> (u64, SessionPipes) {
        let far = attach(r, pipe, o);
        r.identify(pipe, meta(&name(i)), o);
        (i, far)
    }

    fn lend(
        r: &mut Router,
        data: &[u8],
        more: bool,
        b: &mut SendBuffers,
        o: &Options,
    ) -> SendResult {
        r.send_lent(Lent { data, buffers: b }, more, o)
    }

    /// A lent routing id is only looked up, and a lent body for a peer that is not there is
    /// dropped: neither is copied into the send buffers. A body that goes out is copied, and a
    /// refused id comes back copied.
    #[test]
    fn lent_frames_are_copied_only_when_kept() {
        let mandatory = Options {
            router_mandatory: true,
            ..Options::default()
        };
        let o = Options::default();
        let mut r = Router::new();
        let mut far = attach(&mut r, 1, &mandatory);
        r.identify(1, meta(b"A"), &mandatory);
        let mut buffers = SendBuffers::default();
        assert!(
            copies_nothing(&mut buffers, |b| lend(&mut r, b"A", true, b, &mandatory)
                .unwrap()),
            "id not copied"
        );
        lend(&mut r, b"body", false, &mut buffers, &mandatory).unwrap();
        assert!(
            matches!(far.from_socket.read(), Read::Item { item, more: false } if &item[..] == b"body")
        );
        let e = lend(&mut r, b"B", true, &mut buffers, &mandatory).unwrap_err();
        assert_eq!((e.0, &e.1[..]), (Error::HostUnreachable, &b"B"[..]));

        lend(&mut r, b"B", true, &mut buffers, &o).unwrap();
        assert!(
            copies_nothing(&mut buffers, |b| lend(&mut r, b"dropped", false, b, &o)
                .unwrap()),
            "body not copied"
        );
        assert_eq!(far.from_socket.read(), Read::Empty);
    }

    #[test]
    fn map_follows_detach_and_reattach() {
        let o = Options {
            router_mandatory: true,
            ..Options::default()
        };
        let mut r = Router::new();
        let mut fars: Vec<(u64, SessionPipes)> =
            (0..100).map(|i| attach_named(&mut r, i, i, &o)).collect();
        for i in (0..100).step_by(3) {
            r.detach(i);
        }
        fars.retain(|(i, _)| i % 3 != 0);
        assert_eq!(r.peers.len(), 66);
        assert_map_matches_peers(&r);
        for i in 0..100 {
            if i % 3 == 0 {
                let e = r.send(name(i), true, &o).unwrap_err();
                assert_eq!(e.0, Error::HostUnreachable);
            } else {
                route_to(&mut r, &mut fars, i, &o);
            }
        }
        // The same identities come back on new pipes, at the end of `peers`.
        for i in (0..100).step_by(3) {
            fars.push(attach_named(&mut r, 1000 + i, i, &o));
        }
        assert_map_matches_peers(&r);
        for i in 0..100 {
            route_to(&mut r, &mut fars, i, &o);
        }
    }

    #[test]
    fn map_follows_peers_the_fair_queue_drops() {
        let o = Options::default();
        let mut r = Router::new();
        let mut fars: Vec<(u64, SessionPipes)> =
            (0..30).map(|i| attach_named(&mut r, i, i, &o)).collect();
        // Closing the far ends of every third: the fair queue drops them on its next pass.
        fars.retain(|(i, _)| i % 3 != 1);
        WAKES.with(|w| w.deliver_to(&mut r));
        assert_eq!(r.recv(), Err(Error::Again));
        assert_eq!(r.peers.len(), 20);
        assert_map_matches_peers(&r);
        for i in (0..30).filter(|i| i % 3 != 1) {
            route_to(&mut r, &mut fars, i, &o);
        }
    }

    #[test]
    fn refused_duplicate_keeps_later_peers_routable() {
        let o = Options::default();
        let mut r = Router::new();
        let mut fars = vec![attach_named(&mut r, 0, 0, &o)];
        // Pipe 1 claims peer-0's id and is refused while peers 2.. are already attached.
        let _dup = attach(&mut r, 1, &o);
        fars.extend((2..6).map(|i| attach_named(&mut r, i, i, &o)));
        r.identify(1, meta(&name(0)), &o);
        assert_eq!(r.peers.len(), 5);
        assert_map_matches_peers(&r);
        for i in [0, 2, 3, 4, 5] {
            route_to(&mut r, &mut fars, i, &o);
        }
    }

    #[test]
    fn message_follows_its_peer_when_an_earlier_one_leaves_between_frames() {
        let o = Options::default();
        let mut r = Router::new();
        let mut fars: Vec<(u64, SessionPipes)> =
            (0..3).map(|i| attach_named(&mut r, i, i, &o)).collect();
        r.send(name(2), true, &o).unwrap();
        r.detach(0);
        fars.remove(0);
        r.send(Bytes::from_static(b"a"), true, &o).unwrap();
        r.send(Bytes::from_static(b"b"), false, &o).unwrap();
        let far = &mut fars[1].1;
        assert!(
            matches!(far.from_socket.read(), Read::Item { item, more: true } if &item[..] == b"a")
        );
        assert!(
            matches!(far.from_socket.read(), Read::Item { item, more: false } if &item[..] == b"b")
        );
        // The peer itself leaving mid-message drops the rest.
        r.send(name(1), true, &o).unwrap();
        r.detach(1);
        r.send(Bytes::from_static(b"lost"), false, &o).unwrap();
        assert_eq!(r.outbound, Outbound::Idle);
        route_to(&mut r, &mut fars[1..], 2, &o);
    }

    mod churn {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Attach,
            Send {
                peer: usize,
                count: usize,
            },
            Close {
                peer: usize,
            },
            Detach {
                peer: usize,
            },
            Recv {
                count: usize,
            },
            /// The ROUTER sends to an open peer (its slot may have moved since the route
            /// last led there) or, with `gone`, to the id of a peer that left.
            Reply {
                peer: usize,
                gone: bool,
            },
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                2 => Just(Op::Attach),
                4 => (0usize..32, 1usize..5).prop_map(|(peer, count)| Op::Send { peer, count }),
                1 => (0usize..32).prop_map(|peer| Op::Close { peer }),
                1 => (0usize..32).prop_map(|peer| Op::Detach { peer }),
                3 => (1usize..20).prop_map(|count| Op::Recv { count }),
                3 => (0usize..32, proptest::bool::weighted(0.2))
                    .prop_map(|(peer, gone)| Op::Reply { peer, gone }),
            ]
        }

        /// Receives one message: (routing id, body).
        fn recv_one(r: &mut Router) -> Option<(Bytes, Bytes)> {
            let id = r.recv().ok()?;
            assert!(id.more);
            let body = r.recv().unwrap();
            assert!(!body.more);
            Some((id.data, body.data))
        }

        proptest! {
            /// Peers attach, send, close their far end or are detached while messages flow:
            /// every message of a peer that was not detached arrives once and in order, and
            /// once all is read no closed or detached peer is left in the peer set, the active
            /// sets or the routing-id map. Replies reach exactly the peer they name, however
            /// the slots moved in between; a reply to a detached peer's id is unroutable.
            #[test]
            fn peers_coming_and_going_lose_nothing_and_leave_nothing(
                ops in proptest::collection::vec(op(), 1..150),
            ) {
                let o = Options {
                    router_mandatory: true,
                    ..Options::default()
                };
                let mut replies = 0u64;
                let mut r = Router::new();
                // Open peers: (name index, far end); sent and read counts by name index.
                let mut open: Vec<(u64, SessionPipes)> = Vec::new();
                let mut detached: HashSet<u64> = HashSet::new();
                let mut sent: Vec<usize> = Vec::new();
                let mut read: Vec<usize> = Vec::new();
                let on_recv = |(rid, body): (Bytes, Bytes), read: &mut Vec<usize>| {
                    let i: usize = std::str::from_utf8(&rid[5..]).unwrap().parse().unwrap();
                    assert_eq!(body, Bytes::from(format!("{i}:{}", read[i])), "order of peer {i}");
                    read[i] += 1;
                };
                for op in ops {
                    WAKES.with(|w| w.deliver_to(&mut r));
                    match op {
                        Op::Attach => {
                            let i = sent.len() as u64;
                            open.push(attach_named(&mut r, i, i, &o));
                            sent.push(0);
                            read.push(0);
                        }
                        Op::Send { peer, count } if !open.is_empty() => {
                            let k = peer % open.len();
                            let (i, far) = &mut open[k];
                            for _ in 0..count {
                                let body = format!("{i}:{}", sent[*i as usize]);
                                far.to_socket.try_write(Bytes::from(body), false).unwrap();
                                sent[*i as usize] += 1;
                            }
                            far.to_socket.flush();
                        }
                        Op::Close { peer } if !open.is_empty() => {
                            open.swap_remove(peer % open.len());
                        }
                        Op::Detach { peer } if !open.is_empty() => {
                            let (i, _far) = open.swap_remove(peer % open.len());
                            r.detach(i);
                            detached.insert(i);
                        }
                        Op::Recv { count } => {
                            for _ in 0..count {
                                match recv_one(&mut r) {
                                    Some(m) => on_recv(m, &mut read),
                                    None => break,
                                }
                            }
                        }
                        Op::Reply { gone: true, peer } if !detached.is_empty() => {
                            let mut ids: Vec<u64> = detached.iter().copied().collect();
                            ids.sort_unstable();
                            let rid = name(ids[peer % ids.len()]);
                            prop_assert_eq!(
                                r.send(rid, true, &o).map_err(|(e, _)| e),
                                Err(Error::HostUnreachable)
                            );
                        }
                        Op::Reply { gone: false, peer } if !open.is_empty() => {
                            let k = peer % open.len();
                            let body = Bytes::from(format!("reply {replies}"));
                            replies += 1;
                            r.send(name(open[k].0), true, &o).unwrap();
                            r.send(body.clone(), false, &o).unwrap();
                            let (_, far) = &mut open[k];
                            prop_assert_eq!(
                                far.from_socket.read(),
                                Read::Item { item: body, more: false }
                            );
                        }
                        _ => {}
                    }
                }
                WAKES.with(|w| w.deliver_to(&mut r));
                while let Some(m) = recv_one(&mut r) {
                    on_recv(m, &mut read);
                }
                for (i, (&s, &got)) in sent.iter().zip(&read).enumerate() {
                    if !detached.contains(&(i as u64)) {
                        prop_assert_eq!(got, s, "peer {} lost messages", i);
                    }
                }
                // Every reply was read by the peer it named, so no far end holds one.
                for (i, far) in &mut open {
                    prop_assert_eq!(far.from_socket.read(), Read::Empty, "peer {} got a stray reply", i);
                }
                let alive: HashSet<u64> = open.iter().map(|(i, _)| *i).collect();
                let present: HashSet<u64> = r.peers.iter().map(|p| p.id).collect();
                prop_assert_eq!(&present, &alive);
                prop_assert_eq!(r.by_id.len(), alive.len());
                assert_map_matches_peers(&r);
            }
        }
    }
}
