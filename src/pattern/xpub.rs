//! XPUB and PUB (RFC 29, libzmq src/xpub.cpp, src/pub.cpp, src/dist.cpp): a message goes to
//! every peer subscribed to a prefix of its first frame, and to no one else.
//!
//! ```text
//!   peer pipes in ──> subscriptions (0x01/0x00 + topic; the engine turns ZMTP 3.1
//!                     SUBSCRIBE/CANCEL commands into the same form)
//!                     ├─> MultiTrie<PipeId>            (who gets what)
//!                     └─> pending notices for the app   (XPUB only)
//!   send(first frame) ──> for_each_match ──> matched peers ──> each frame to each of them
//! ```
//!
//! A peer whose pipe is full (SNDHWM) misses the whole message (dropped, never blocking),
//! unless XPUB_NODROP, where the send waits (`Again`) until every matching peer has room.
//! A subscription is a set per (prefix, peer), as libzmq's `mtrie_t`: the SUB side counts
//! duplicates and sends only the last cancel, so counting here as well would keep a
//! cancelled prefix alive.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use ferromq_pipe::Read;
use ferromq_trie::MultiTrie;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::{
    int_value, Options, ZMQ_INVERT_MATCHING, ZMQ_SUBSCRIBE, ZMQ_UNSUBSCRIBE, ZMQ_XPUB_MANUAL,
    ZMQ_XPUB_NODROP, ZMQ_XPUB_VERBOSE, ZMQ_XPUB_VERBOSER, ZMQ_XPUB_WELCOME_MSG,
};
use crate::pattern::peer_set::{PeerKey, PeerSet};
use crate::pattern::{Lent, OutFrame, Pattern, PeerMetadata, SendResult};

/// PUB keeps subscriptions to itself; XPUB hands them (and upstream messages) to the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Pub,
    Xpub,
}

/// Something for the application's next `recv`.
#[derive(Debug)]
struct Pending {
    data: Bytes,
    more: bool,
    metadata: Option<Arc<Metadata>>,
    /// XPUB_MANUAL: the peer a following ZMQ_SUBSCRIBE applies to (`Some(None)`: none).
    last_pipe: Option<Option<PipeId>>,
}

/// How removing one subscription went (libzmq `mtrie_t::rm_result`).
#[derive(Debug, PartialEq, Eq)]
enum Removed {
    NotFound,
    LastValue,
    ValuesRemain,
}

pub(crate) struct Xpub {
    role: Role,
    peers: PeerSet,
    /// Subscribers by their stable peer key, so a match leads to the peer by an index.
    trie: MultiTrie<PeerKey>,
    /// Each peer's prefixes (the set semantics of libzmq's mtrie; the trie itself counts).
    held: HashMap<PipeId, HashSet<Bytes>>,
    /// XPUB_MANUAL: what each peer asked for, to cancel upstream when it leaves.
    manual_held: HashMap<PipeId, HashSet<Bytes>>,
    /// Peers (keys) the message being sent goes to.
    matched: Vec<PeerKey>,
    more_out: bool,
    pending: VecDeque<Pending>,
    last_pipe: Option<PipeId>,
    verbose_subs: bool,
    verbose_unsubs: bool,
    manual: bool,
    lossy: bool,
    invert: bool,
    welcome: Option<Bytes>,
}

impl std::fmt::Debug for Xpub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Xpub")
            .field("role", &self.role)
            .field("peers", &self.peers.len())
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

fn notice(subscribe: bool, topic: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(topic.len() + 1);
    b.put_u8(u8::from(subscribe));
    b.put_slice(topic);
    b.freeze()
}

impl Xpub {
    pub(crate) fn new(role: Role) -> Xpub {
        Xpub {
            role,
            peers: PeerSet::default(),
            trie: MultiTrie::new(),
            held: HashMap::new(),
            manual_held: HashMap::new(),
            matched: Vec::new(),
            more_out: false,
            pending: VecDeque::new(),
            last_pipe: None,
            verbose_subs: false,
            verbose_unsubs: false,
            manual: false,
            lossy: true,
            invert: false,
            welcome: None,
        }
    }

    fn add(&mut self, topic: &Bytes, pid: PipeId) -> bool {
        let Some(key) = self.peers.slot(pid).map(|s| self.peers.key(s)) else {
            return false;
        };
        if self.held.entry(pid).or_default().insert(topic.clone()) {
            self.trie.add(topic, key)
        } else {
            false
        }
    }

    fn rm(&mut self, topic: &[u8], pid: PipeId) -> Removed {
        let Some(key) = self.peers.slot(pid).map(|s| self.peers.key(s)) else {
            return Removed::NotFound;
        };
        let Some(set) = self.held.get_mut(&pid) else {
            return Removed::NotFound;
        };
        if !set.remove(topic) {
            return Removed::NotFound;
        }
        if self.trie.remove(topic, key) {
            Removed::LastValue
        } else {
            Removed::ValuesRemain
        }
    }

    /// Reads the inbound pipes of the peers that woke the socket (the readers): subscriptions,
    /// cancels, and (XPUB) upstream messages. A peer leaves the readers once its pipe is
    /// empty, so a send costs nothing per idle peer.
    fn process_inbound(&mut self) {
        while let Some(slot) = self.peers.readers.current() {
            match self.peers[slot].inp.read() {
                Read::Item { item, more } => {
                    let pid = self.peers[slot].id;
                    let metadata = self.peers[slot].metadata.clone();
                    self.handle_upstream(pid, item, more, metadata);
                }
                Read::Empty => self.peers.readers.remove(slot),
                Read::Closed => {
                    let pid = self.peers[slot].id;
                    self.remove_peer(pid);
                }
            }
        }
    }

    /// One frame from a peer. As libzmq (without ONLY_FIRST_SUBSCRIBE), every frame whose
    /// first byte is 0 or 1 is a cancel or a subscription.
    fn handle_upstream(
        &mut self,
        pid: PipeId,
        frame: Bytes,
        more: bool,
        metadata: Option<Arc<Metadata>>,
    ) {
        let subscribe = match frame.first() {
            Some(1) => true,
            Some(0) => false,
            _ => {
                if self.role == Role::Xpub {
                    self.pending.push_back(Pending {
                        data: frame,
                        more,
                        metadata,
                        last_pipe: None,
                    });
                }
                return;
            }
        };
        let topic = frame.slice(1..);
        let notify = if self.manual {
            let set = self.manual_held.entry(pid).or_default();
            if subscribe {
                set.insert(topic.clone());
            } else {
                set.remove(&topic);
            }
            true
        } else if subscribe {
            self.add(&topic, pid) || self.verbose_subs
        } else {
            self.rm(&topic, pid) != Removed::ValuesRemain || self.verbose_unsubs
        };
        if notify && self.role == Role::Xpub {
            self.pending.push_back(Pending {
                data: frame,
                more: false,
                metadata,
                last_pipe: self.manual.then_some(Some(pid)),
            });
        }
    }

    /// A peer left: drop its subscriptions and tell the app which prefixes nobody wants now.
    fn remove_peer(&mut self, pid: PipeId) {
        let Some(slot) = self.peers.slot(pid) else {
            return;
        };
        // The key is free for the next peer once the trie and `matched` no longer hold it.
        let key = self.peers.key(slot);
        drop(self.peers.remove_slot(slot));
        self.matched.retain(|&m| m != key);
        let held = self.held.remove(&pid).unwrap_or_default();
        let mut cancels: Vec<Bytes> = Vec::new();
        if self.manual {
            cancels.extend(self.manual_held.remove(&pid).unwrap_or_default());
            self.trie.remove_peer(key, |_| {});
            if self.last_pipe == Some(pid) {
                self.last_pipe = None;
            }
        } else if self.verbose_unsubs {
            cancels.extend(held);
            self.trie.remove_peer(key, |_| {});
        } else {
            self.trie
                .remove_peer(key, |prefix| cancels.push(Bytes::copy_from_slice(prefix)));
        }
        if self.role == Role::Xpub {
            for topic in cancels {
                self.pending.push_back(Pending {
                    data: notice(false, &topic),
                    more: false,
                    metadata: None,
                    last_pipe: self.manual.then_some(None),
                });
            }
        }
    }

    /// Chooses the peers for a new message.
    fn match_peers(&mut self, data: &[u8]) {
        self.matched.clear();
        let matched = &mut self.matched;
        self.trie.for_each_match(data, |key| matched.push(key));
        if self.invert {
            let hit: HashSet<PeerKey> = self.matched.drain(..).collect();
            let peers = &self.peers;
            self.matched.extend(
                (0..peers.len())
                    .map(|slot| peers.key(slot))
                    .filter(|key| !hit.contains(key)),
            );
        }
    }

    /// [`Pattern::send`] of either kind of frame: one that no peer takes is not made.
    fn send_frame<F: OutFrame>(
        &mut self,
        frame: F,
        more: bool,
    ) -> std::result::Result<(), (Error, F)> {
        if !self.more_out {
            self.process_inbound();
            self.match_peers(frame.bytes());
            if !self.lossy {
                let full = self.matched.iter().any(|&key| {
                    self.peers.slot_by_key(key).is_some_and(|slot| {
                        let p = &self.peers[slot];
                        !p.out.is_closed() && !p.out.can_write()
                    })
                });
                if full {
                    self.matched.clear();
                    return Err((Error::Again, frame));
                }
            }
        }
        if !self.matched.is_empty() {
            self.write_matched(frame.into_bytes(), more);
        }
        self.more_out = more;
        Ok(())
    }

    fn write_matched(&mut self, mut frame: Bytes, more: bool) {
        // The last matched peer takes the frame itself: with one subscriber (the common
        // case) that saves the clone, which for a `Vec`-backed `Bytes` is an allocation.
        let last = self.matched.len().saturating_sub(1);
        let mut kept = 0;
        for k in 0..self.matched.len() {
            let key = self.matched[k];
            let Some(i) = self.peers.slot_by_key(key) else {
                continue;
            };
            let data = if k == last {
                std::mem::take(&mut frame)
            } else {
                frame.clone()
            };
            let p = &mut self.peers[i];
            // A refused first frame drops the whole message for this peer only.
            if p.out.try_write(data, more).is_ok() {
                if !more {
                    p.out.flush();
                }
                self.matched[kept] = key;
                kept += 1;
            }
        }
        self.matched.truncate(kept);
        if !more {
            self.matched.clear();
        }
    }
}

fn flag(value: &[u8]) -> Result<bool> {
    Ok(int_value(value)? != 0)
}

impl Pattern for Xpub {
    fn attach(&mut self, mut peer: Peer, _: &Options) {
        if let Some(w) = &self.welcome
            && peer.out.try_write(w.clone(), false).is_ok()
        {
            peer.out.flush();
        }
        self.peers.push(peer);
        self.process_inbound();
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        if let Some(p) = self.peers.get_mut(id) {
            p.metadata = metadata.properties();
        }
    }

    fn detach(&mut self, id: PipeId) {
        self.remove_peer(id);
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        self.send_frame(frame, more)
    }

    fn send_lent(&mut self, frame: Lent<'_>, more: bool, _: &Options) -> SendResult {
        self.send_frame(frame, more)
            .map_err(|(e, frame)| (e, frame.into_bytes()))
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if self.role == Role::Pub {
            return Err(Error::NotSup);
        }
        self.process_inbound();
        let p = self.pending.pop_front().ok_or(Error::Again)?;
        if let Some(last) = p.last_pipe {
            self.last_pipe = last;
        }
        *metadata = p.metadata;
        Ok(Msg {
            data: p.data,
            more: p.more,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        if self.role == Role::Pub {
            return false;
        }
        self.process_inbound();
        !self.pending.is_empty()
    }

    fn has_out(&mut self) -> bool {
        true
    }

    fn set_option(&mut self, option: i32, value: &[u8]) -> Option<Result<()>> {
        let r = match option {
            ZMQ_XPUB_VERBOSE => flag(value).map(|on| {
                self.verbose_subs = on;
                self.verbose_unsubs = false;
            }),
            ZMQ_XPUB_VERBOSER => flag(value).map(|on| {
                self.verbose_subs = on;
                self.verbose_unsubs = on;
            }),
            ZMQ_XPUB_NODROP => flag(value).map(|on| self.lossy = !on),
            ZMQ_XPUB_MANUAL => flag(value).map(|on| self.manual = on),
            ZMQ_INVERT_MATCHING => int_value(value).map(|v| self.invert = v != 0),
            ZMQ_XPUB_WELCOME_MSG => {
                self.welcome = (!value.is_empty()).then(|| Bytes::copy_from_slice(value));
                Ok(())
            }
            ZMQ_SUBSCRIBE | ZMQ_UNSUBSCRIBE if self.manual => {
                if let Some(pid) = self.last_pipe {
                    let topic = Bytes::copy_from_slice(value);
                    if option == ZMQ_SUBSCRIBE {
                        self.add(&topic, pid);
                    } else {
                        self.rm(&topic, pid);
                    }
                }
                Ok(())
            }
            _ => return None,
        };
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::peer::SessionPipes;
    use crate::io::send_buffers::{copies_nothing, SendBuffers};
    use crate::pattern::peer_set::testing::Wakes;

    thread_local! {
        static WAKES: Wakes = Wakes::new();
    }

    fn xpub_with(n: u64, hwm: usize, role: Role) -> (Xpub, Vec<SessionPipes>) {
        let mut x = Xpub::new(role);
        let mut far = vec![];
        for i in 0..n {
            let (p, f) = WAKES.with(|w| w.pipes(i, hwm, hwm));
            x.attach(p, &Options::default());
            far.push(f);
        }
        (x, far)
    }

    /// A peer sends a frame; the socket learns which peer woke it, as it would.
    fn upstream(x: &mut Xpub, f: &mut SessionPipes, frame: &'static [u8]) {
        f.to_socket
            .try_write(Bytes::from_static(frame), false)
            .unwrap();
        f.to_socket.flush();
        WAKES.with(|w| w.deliver_to(x));
    }

    fn drain(f: &mut SessionPipes) -> Vec<Bytes> {
        let mut out = vec![];
        while let Read::Item { item, .. } = f.from_socket.read() {
            out.push(item);
        }
        out
    }

    fn send(x: &mut Xpub, m: &'static [u8]) {
        x.send(Bytes::from_static(m), false, &Options::default())
            .unwrap();
    }

    /// A lent frame that no subscriber takes is not copied into the send buffers; one that a
    /// subscriber takes is (it lands right after the last copy).
    #[test]
    fn lent_frames_are_copied_only_when_someone_subscribed() {
        let (mut x, mut far) = xpub_with(1, 0, Role::Pub);
        upstream(&mut x, &mut far[0], b"\x01A");
        let mut buffers = SendBuffers::default();
        let o = Options::default();
        let lend = |x: &mut Xpub, data: &[u8], more: bool, buffers: &mut SendBuffers| {
            x.send_lent(Lent { data, buffers }, more, &o)
        };
        let unmatched = copies_nothing(&mut buffers, |b| {
            lend(&mut x, b"Banana", true, b).unwrap();
            lend(&mut x, b"tail", false, b).unwrap();
        });
        assert!(unmatched, "not copied");
        assert!(drain(&mut far[0]).is_empty());
        let next = buffers.copy(b"next");
        lend(&mut x, b"Apple", false, &mut buffers).unwrap();
        let got = drain(&mut far[0]);
        assert_eq!(got, vec![Bytes::from_static(b"Apple")]);
        assert_eq!(
            got[0].as_ptr() as usize,
            next.as_ptr() as usize + 4,
            "copied"
        );
    }

    #[test]
    fn filters_by_prefix_per_peer() {
        let (mut x, mut far) = xpub_with(2, 0, Role::Pub);
        upstream(&mut x, &mut far[0], b"\x01A");
        upstream(&mut x, &mut far[1], b"\x01");
        send(&mut x, b"Apple");
        send(&mut x, b"Banana");
        assert_eq!(drain(&mut far[0]), vec![Bytes::from_static(b"Apple")]);
        assert_eq!(drain(&mut far[1]).len(), 2);
        upstream(&mut x, &mut far[0], b"\x00A");
        send(&mut x, b"Avocado");
        assert!(drain(&mut far[0]).is_empty());
        assert_eq!(x.recv(), Err(Error::NotSup));
    }

    #[test]
    fn duplicate_subscriptions_from_one_peer_are_a_set() {
        let (mut x, mut far) = xpub_with(1, 0, Role::Xpub);
        upstream(&mut x, &mut far[0], b"\x01A");
        upstream(&mut x, &mut far[0], b"\x01A");
        upstream(&mut x, &mut far[0], b"\x00A");
        let got: Vec<Bytes> = std::iter::from_fn(|| x.recv().ok())
            .map(|m| m.data)
            .collect();
        assert_eq!(
            got,
            vec![Bytes::from_static(b"\x01A"), Bytes::from_static(b"\x00A")]
        );
        send(&mut x, b"A1");
        assert!(drain(&mut far[0]).is_empty());
    }

    #[test]
    fn verbose_and_verboser() {
        let (mut x, mut far) = xpub_with(2, 0, Role::Xpub);
        x.set_option(ZMQ_XPUB_VERBOSE, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        // One at a time: the socket reads its peers in turn.
        for (peer, frame) in [(0, b"\x01T"), (1, b"\x01T"), (0, b"\x00T")] {
            upstream(&mut x, &mut far[peer], frame);
            x.process_inbound();
        }
        let got: Vec<Bytes> = std::iter::from_fn(|| x.recv().ok())
            .map(|m| m.data)
            .collect();
        // The cancel is not the last one: only VERBOSER would show it.
        assert_eq!(got.len(), 2);
        x.set_option(ZMQ_XPUB_VERBOSER, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        upstream(&mut x, &mut far[0], b"\x01T");
        upstream(&mut x, &mut far[0], b"\x00T");
        assert_eq!(std::iter::from_fn(|| x.recv().ok()).count(), 2);
    }

    #[test]
    fn departing_peer_cancels_what_only_it_wanted() {
        let (mut x, mut far) = xpub_with(2, 0, Role::Xpub);
        upstream(&mut x, &mut far[0], b"\x01A");
        upstream(&mut x, &mut far[0], b"\x01B");
        upstream(&mut x, &mut far[1], b"\x01B");
        assert_eq!(std::iter::from_fn(|| x.recv().ok()).count(), 2);
        x.detach(0);
        let got: Vec<Bytes> = std::iter::from_fn(|| x.recv().ok())
            .map(|m| m.data)
            .collect();
        assert_eq!(got, vec![Bytes::from_static(b"\x00A")]);
    }

    #[test]
    fn a_peer_taking_a_departed_peers_key_gets_none_of_its_subscriptions() {
        let (mut x, mut far) = xpub_with(2, 0, Role::Pub);
        upstream(&mut x, &mut far[0], b"\x01A");
        upstream(&mut x, &mut far[1], b"\x01B");
        // Mid-message departure: the rest of the message must not go to the key's next owner.
        x.send(Bytes::from_static(b"A1"), true, &Options::default())
            .unwrap();
        let departed_key = x.peers.slot(0).map(|s| x.peers.key(s));
        x.detach(0);
        let (p, mut newcomer) = WAKES.with(|w| w.pipes(7, 0, 0));
        x.attach(p, &Options::default());
        assert_eq!(x.peers.slot(7).map(|s| x.peers.key(s)), departed_key);
        send(&mut x, b"A2");
        send(&mut x, b"A3");
        send(&mut x, b"B1");
        assert!(drain(&mut newcomer).is_empty());
        assert_eq!(drain(&mut far[1]), vec![Bytes::from_static(b"B1")]);
        upstream(&mut x, &mut newcomer, b"\x01A");
        send(&mut x, b"A4");
        assert_eq!(drain(&mut newcomer), vec![Bytes::from_static(b"A4")]);
    }

    #[test]
    fn hwm_drops_whole_messages_and_nodrop_refuses() {
        let (mut x, mut far) = xpub_with(1, 2, Role::Pub);
        upstream(&mut x, &mut far[0], b"\x01");
        for _ in 0..5 {
            x.send(Bytes::from_static(b"a"), true, &Options::default())
                .unwrap();
            send(&mut x, b"b");
        }
        assert_eq!(
            drain(&mut far[0]).len(),
            4,
            "two whole messages, the rest dropped"
        );
        x.set_option(ZMQ_XPUB_NODROP, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        send(&mut x, b"1");
        send(&mut x, b"2");
        let refused = x.send(Bytes::from_static(b"3"), false, &Options::default());
        assert_eq!(refused.unwrap_err().0, Error::Again);
    }

    #[test]
    fn manual_mode_subscribes_the_last_pipe() {
        let (mut x, mut far) = xpub_with(2, 0, Role::Xpub);
        x.set_option(ZMQ_XPUB_MANUAL, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        upstream(&mut x, &mut far[1], b"\x01x");
        assert_eq!(x.recv().unwrap().as_slice(), b"\x01x");
        x.set_option(ZMQ_SUBSCRIBE, b"y").unwrap().unwrap();
        send(&mut x, b"x1");
        send(&mut x, b"y1");
        assert_eq!(drain(&mut far[1]), vec![Bytes::from_static(b"y1")]);
        assert!(drain(&mut far[0]).is_empty());
    }

    #[test]
    fn welcome_and_invert() {
        let mut x = Xpub::new(Role::Xpub);
        x.set_option(ZMQ_XPUB_WELCOME_MSG, b"hi").unwrap().unwrap();
        x.set_option(ZMQ_INVERT_MATCHING, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        let (p, mut f) = WAKES.with(|w| w.pipes(9, 0, 0));
        x.attach(p, &Options::default());
        upstream(&mut x, &mut f, b"\x01A");
        send(&mut x, b"A1");
        send(&mut x, b"B1");
        assert_eq!(
            drain(&mut f),
            vec![Bytes::from_static(b"hi"), Bytes::from_static(b"B1")]
        );
        assert!(x.set_option(ZMQ_SUBSCRIBE, b"z").is_none());
    }

    #[test]
    fn upstream_user_messages_reach_the_xpub_app() {
        let (mut x, mut far) = xpub_with(1, 0, Role::Xpub);
        far[0]
            .to_socket
            .try_write(Bytes::from_static(b"hello"), true)
            .unwrap();
        far[0]
            .to_socket
            .try_write(Bytes::from_static(b"world"), false)
            .unwrap();
        far[0].to_socket.flush();
        WAKES.with(|w| w.deliver_to(&mut x));
        assert!(x.has_in());
        assert!(x.recv().unwrap().more);
        assert!(!x.recv().unwrap().more);
    }
}
