//! `inproc://`: pipes straight between two sockets of one context, no I/O thread. A
//! connect before the bind creates the pipes at once (so sends queue) and parks the far ends
//! in the registry until the name is bound, as libzmq 4.x does. Like libzmq, inproc does not
//! check that the two socket types fit (only a ZMTP handshake does): libzmq's own
//! test_inproc_connect connects PAIR sockets to a PULL and expects the messages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use ferromq_zmtp::{Metadata, SocketType};

use crate::error::{Error, Result};
use crate::io::peer::{
    conflate_flows, inproc_hwm, peer_pipes, pipe_pair, Peer, PipeId, SessionPipes,
};
use crate::io::peer_hwm::{effective, Boost};
use crate::pattern::mailbox::{Mailbox, SocketCommand};
use crate::pattern::PeerMetadata;

/// What a socket publishes about itself to inproc peers.
#[derive(Debug, Clone)]
pub(crate) struct InprocSide {
    pub socket_id: u64,
    pub mailbox: Mailbox,
    pub kind: SocketType,
    pub sndhwm: i32,
    pub rcvhwm: i32,
    /// ZMQ_CONFLATE as set (whether the type honours it is decided at connect).
    pub conflate: bool,
    pub routing_id: Bytes,
    pub connect_routing_id: Option<Bytes>,
}

impl InprocSide {
    /// The metadata a ZMTP peer would have announced, for the patterns (a ROUTER reads the
    /// Identity); the messages carry none, as in libzmq.
    fn metadata(&self) -> PeerMetadata {
        let mut m = Metadata::new();
        let _ = m.insert(
            "Socket-Type",
            Bytes::from_static(self.kind.name().as_bytes()),
        );
        if !self.routing_id.is_empty() {
            let _ = m.insert("Identity", self.routing_id.clone());
        }
        let routing_id = (!self.routing_id.is_empty()).then(|| self.routing_id.clone());
        PeerMetadata::of_inproc(Arc::new(m), routing_id)
    }
}

#[derive(Debug)]
struct Parked {
    far: SessionPipes,
    connector: InprocSide,
    far_id: PipeId,
    /// The connector's record of the binder's HWM share, filled in at the bind.
    boost: Arc<Boost>,
}

#[derive(Debug)]
enum Entry {
    Bound(InprocSide),
    Pending(Vec<Parked>),
}

/// A context's inproc names.
#[derive(Debug, Default)]
pub(crate) struct InprocRegistry {
    names: Mutex<HashMap<String, Entry>>,
}

/// A pipe's HWM as the i32 share libzmq's sums take.
fn share(hwm: usize) -> i32 {
    i32::try_from(hwm).unwrap_or(i32::MAX)
}

/// Connects the pipes' far ends to the binder.
fn join(binder: &InprocSide, connector: &InprocSide, far: SessionPipes, far_id: PipeId) {
    let boost = Boost::of(connector.sndhwm, connector.rcvhwm);
    let (mut peer, wake): (Peer, _) = far.into_peer(far_id, boost);
    peer.assigned_id = None;
    wake.install(binder.mailbox.peer_wake(far_id));
    if binder.mailbox.send(SocketCommand::Attach(Box::new(peer))) {
        binder.mailbox.send(SocketCommand::Identify {
            id: far_id,
            metadata: connector.metadata(),
        });
    }
}

impl InprocRegistry {
    /// Binds `name`; attaches connectors that were waiting for it.
    pub(crate) fn bind(&self, name: &str, binder: InprocSide) -> Result<()> {
        let mut names = self.names.lock().map_err(|_| Error::Fault)?;
        let parked = match names.remove(name) {
            Some(Entry::Bound(b)) => {
                names.insert(name.to_owned(), Entry::Bound(b));
                return Err(Error::AddrInUse);
            }
            Some(Entry::Pending(p)) => p,
            None => Vec::new(),
        };
        names.insert(name.to_owned(), Entry::Bound(binder.clone()));
        drop(names);
        for p in parked {
            p.connector.mailbox.send(SocketCommand::Identify {
                id: p.far_id - 1,
                metadata: binder.metadata(),
            });
            // As libzmq's connect_inproc_sockets: the binder's HWMs join the connector's on
            // pipes made before it existed. Each pipe holds the connector's own share now
            // (its current value, should it have changed since the connect).
            p.boost.set(binder.sndhwm, binder.rcvhwm);
            if let Some(h) = p.far.from_socket.hwm() {
                h.set(effective(share(h.get()), binder.rcvhwm));
            }
            if let Some(h) = p.far.to_socket.hwm() {
                h.set(effective(share(h.get()), binder.sndhwm));
            }
            join(&binder, &p.connector, p.far, p.far_id);
        }
        Ok(())
    }

    /// Whether a socket is bound at `name` (the ZAP handler's presence decides a PLAIN
    /// handshake).
    pub(crate) fn is_bound(&self, name: &str) -> bool {
        self.names
            .lock()
            .is_ok_and(|names| matches!(names.get(name), Some(Entry::Bound(_))))
    }

    /// The id of the socket bound at `name`, if any (the ZAP client's link follows it).
    pub(crate) fn bound_socket(&self, name: &str) -> Option<u64> {
        match self.names.lock().ok()?.get(name) {
            Some(Entry::Bound(b)) => Some(b.socket_id),
            _ => None,
        }
    }

    /// Removes the name if `socket_id` holds it.
    pub(crate) fn unbind(&self, name: &str, socket_id: u64) -> Result<()> {
        let mut names = self.names.lock().map_err(|_| Error::Fault)?;
        match names.get(name) {
            Some(Entry::Bound(b)) if b.socket_id == socket_id => {
                names.remove(name);
                Ok(())
            }
            _ => Err(Error::NoEnt),
        }
    }

    /// Connects; returns the connector's own peer, and the binder's metadata if it is bound
    /// already. `ids` gives two consecutive pipe ids: `ids` for the connector's end and
    /// `ids + 1` for the binder's.
    pub(crate) fn connect(
        &self,
        name: &str,
        connector: InprocSide,
        ids: PipeId,
    ) -> Result<(Peer, Option<PeerMetadata>)> {
        let mut names = self.names.lock().map_err(|_| Error::Fault)?;
        let binder = match names.get(name) {
            Some(Entry::Bound(b)) => Some(b.clone()),
            _ => None,
        };
        let (out_hwm, in_hwm) = match &binder {
            Some(b) => (
                inproc_hwm(connector.sndhwm, b.rcvhwm),
                inproc_hwm(b.sndhwm, connector.rcvhwm),
            ),
            None => (
                usize::try_from(connector.sndhwm).unwrap_or(0),
                usize::try_from(connector.rcvhwm).unwrap_or(0),
            ),
        };
        // As in libzmq, the connecting socket's ZMQ_CONFLATE decides for both sides.
        let signal = connector.mailbox.peer_wake(ids);
        let (mut peer, far) = match connector.conflate.then(|| conflate_flows(connector.kind)) {
            Some(Some((out_flow, in_flow))) => peer_pipes(ids, signal, out_flow, in_flow),
            _ => pipe_pair(ids, signal, out_hwm, in_hwm),
        };
        peer.assigned_id = connector.connect_routing_id.clone();
        let mut metadata = None;
        match binder {
            Some(b) => {
                drop(names);
                peer.hwms.boost = Some(Boost::of(b.sndhwm, b.rcvhwm));
                metadata = Some(b.metadata());
                join(&b, &connector, far, ids + 1);
            }
            None => {
                let boost = Boost::unknown();
                peer.hwms.boost = Some(Arc::clone(&boost));
                let parked = Parked {
                    far,
                    connector,
                    far_id: ids + 1,
                    boost,
                };
                match names
                    .entry(name.to_owned())
                    .or_insert_with(|| Entry::Pending(Vec::new()))
                {
                    Entry::Pending(list) => list.push(parked),
                    Entry::Bound(_) => return Err(Error::Fault),
                }
            }
        }
        Ok((peer, metadata))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Context, RecvFlags, SendFlags, SocketType};

    /// Socket types are not matched over inproc, as in libzmq: PAIR sockets that connect to a
    /// PULL before and after its bind both deliver (libzmq's test_inproc_connect relies on it).
    #[test]
    fn inproc_does_not_match_socket_types() {
        let ctx = Context::new();
        let mut early = ctx.socket(SocketType::Pair).unwrap();
        early.connect("inproc://unit-any-types").unwrap();
        early.send("early", SendFlags::empty()).unwrap();
        let mut pull = ctx.socket(SocketType::Pull).unwrap();
        pull.set_rcvtimeo(5000).unwrap();
        pull.bind("inproc://unit-any-types").unwrap();
        let mut late = ctx.socket(SocketType::Pair).unwrap();
        late.connect("inproc://unit-any-types").unwrap();
        late.send("late", SendFlags::empty()).unwrap();
        let mut got = Vec::new();
        for _ in 0..2 {
            got.push(pull.recv(RecvFlags::empty()).unwrap().as_slice().to_vec());
        }
        got.sort();
        assert_eq!(got, [b"early".to_vec(), b"late".to_vec()]);
    }

    /// A ROUTER learns an inproc DEALER's routing id from what `InprocSide::metadata`
    /// announces, whether the DEALER connected after the bind or before it (the parked
    /// path), but the messages carry no metadata, as in libzmq; a tcp peer's do.
    #[test]
    fn router_learns_inproc_ids_and_messages_carry_metadata_over_tcp_only() {
        let ctx = Context::new();
        let mut router = ctx.socket(SocketType::Router).unwrap();
        router.set_rcvtimeo(5000).unwrap();
        let mut early = ctx.socket(SocketType::Dealer).unwrap();
        early.set_routing_id(b"early").unwrap();
        early.connect("inproc://unit-router-ids").unwrap();
        router.bind("inproc://unit-router-ids").unwrap();
        router.bind("tcp://127.0.0.1:*").unwrap();
        let tcp = router.last_endpoint().unwrap();
        let mut late = ctx.socket(SocketType::Dealer).unwrap();
        late.set_routing_id(b"late").unwrap();
        late.connect("inproc://unit-router-ids").unwrap();
        let mut remote = ctx.socket(SocketType::Dealer).unwrap();
        remote.set_routing_id(b"remote").unwrap();
        remote.connect(&tcp).unwrap();
        for d in [&mut early, &mut late, &mut remote] {
            d.send("hi", SendFlags::empty()).unwrap();
        }
        let mut seen = Vec::new();
        for _ in 0..3 {
            let m = router.recv_multipart(RecvFlags::empty()).unwrap();
            let kind = m.metadata().and_then(|p| p.get("Socket-Type").cloned());
            seen.push((m[0].clone(), kind));
        }
        seen.sort();
        let dealer = Some(bytes::Bytes::from_static(b"DEALER"));
        assert_eq!(
            seen,
            [
                (bytes::Bytes::from_static(b"early"), None),
                (bytes::Bytes::from_static(b"late"), None),
                (bytes::Bytes::from_static(b"remote"), dealer),
            ]
        );
    }
}
