//! XSUB and SUB (RFC 29, libzmq src/xsub.cpp, src/sub.cpp): fair-queued receive, and
//! subscriptions sent upstream to every publisher.
//!
//! ```text
//!   subscribe "A" ──> SubscriptionTrie (counted) ──> 0x01 A to every connected peer
//!   unsubscribe "A" ─> last one? ──────────────────> 0x00 A to every connected peer
//!   peer handshake done (connect or reconnect) ────> every subscribed prefix, once
//! ```
//!
//! As libzmq 4.3.5, every subscribe goes upstream (the publisher de-duplicates) but only
//! the last unsubscribe does. Subscriptions travel in the pipes as 0x01/0x00 + topic; the
//! engine of a SUB socket writes them as ZMTP 3.1 SUBSCRIBE/CANCEL commands to 3.1 peers.
//!
//! A peer gets subscriptions only once its handshake is done: it then receives the whole
//! set, so a subscription made while connecting is not sent twice. SUB filters what it
//! receives (INVERT_MATCHING flips it); XSUB does not, as libzmq's XSUB does not.

use std::collections::HashSet;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use ferromq_trie::SubscriptionTrie;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::{int_value, Options, ZMQ_INVERT_MATCHING, ZMQ_SUBSCRIBE, ZMQ_UNSUBSCRIBE};
use crate::pattern::fq::FairQueue;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::{note_metadata, Pattern, PeerMetadata, SendResult};

/// SUB subscribes through options and filters; XSUB sends subscriptions as messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Sub,
    Xsub,
}

/// Where the frames of the message being sent go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outgoing {
    /// Between messages.
    Idle,
    /// A subscription or cancel: peers that finished their handshake (the others get the
    /// whole set when they do).
    Connected,
    /// An upstream user message: every peer, queued while connecting.
    All,
    /// A cancel of nothing subscribed: swallowed.
    Dropped,
}

pub(crate) struct Xsub {
    role: Role,
    peers: PeerSet,
    connected: HashSet<PipeId>,
    subscriptions: SubscriptionTrie,
    fq: FairQueue,
    /// A message is being delivered: its later frames pass unfiltered.
    more_in: bool,
    /// A matching first frame found by `has_in`, delivered by the next `recv`.
    prefetched: Option<Msg>,
    outgoing: Outgoing,
    invert: bool,
}

impl std::fmt::Debug for Xsub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Xsub")
            .field("role", &self.role)
            .field("peers", &self.peers.len())
            .finish_non_exhaustive()
    }
}

fn marked(subscribe: bool, topic: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(topic.len() + 1);
    b.put_u8(u8::from(subscribe));
    b.put_slice(topic);
    b.freeze()
}

impl Xsub {
    pub(crate) fn new(role: Role) -> Xsub {
        Xsub {
            role,
            peers: PeerSet::default(),
            connected: HashSet::new(),
            subscriptions: SubscriptionTrie::new(),
            fq: FairQueue::default(),
            more_in: false,
            prefetched: None,
            outgoing: Outgoing::Idle,
            invert: false,
        }
    }

    fn accepts(&self, data: &[u8]) -> bool {
        self.role == Role::Xsub || (self.subscriptions.matches(data) != self.invert)
    }

    /// The next frame of a message the filter lets through; its metadata goes to `metadata`
    /// (see [`Pattern::recv_frame`]).
    fn next_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Option<Msg> {
        loop {
            let r = self.fq.recv(&mut self.peers, |_| true)?;
            if self.more_in || self.accepts(&r.frame) {
                self.more_in = r.more;
                note_metadata(metadata, &self.peers[r.index].metadata);
                return Some(Msg {
                    data: r.frame,
                    more: r.more,
                    metadata: None,
                });
            }
            // Not subscribed: skip the rest of the message (all of it is in the pipe).
            let mut more = r.more;
            while more {
                more = self
                    .fq
                    .recv(&mut self.peers, |_| true)
                    .is_some_and(|r| r.more);
            }
        }
    }

    /// Writes one frame to the peers `outgoing` names.
    fn distribute(&mut self, frame: Bytes, more: bool) {
        let only_connected = self.outgoing == Outgoing::Connected;
        for p in self.peers.iter_mut() {
            if only_connected && !self.connected.contains(&p.id) {
                continue;
            }
            // A full pipe loses the message, as libzmq's dist does.
            if p.out.try_write(frame.clone(), more).is_ok() && !more {
                p.out.flush();
            }
        }
    }

    /// libzmq `xsub_t::xsend`: classify the message by its first frame, keep the trie.
    fn send_frame(&mut self, frame: Bytes, more: bool) {
        if self.outgoing == Outgoing::Idle {
            self.outgoing = match frame.first() {
                Some(1) => {
                    self.subscriptions.add(&frame[1..]);
                    Outgoing::Connected
                }
                Some(0) => {
                    if self.subscriptions.remove(&frame[1..]) {
                        Outgoing::Connected
                    } else {
                        Outgoing::Dropped
                    }
                }
                _ => Outgoing::All,
            };
        }
        if self.outgoing != Outgoing::Dropped {
            self.distribute(frame, more);
        }
        if !more {
            self.outgoing = Outgoing::Idle;
        }
    }
}

impl Pattern for Xsub {
    fn attach(&mut self, peer: Peer, _: &Options) {
        self.peers.push(peer);
    }

    /// The handshake with this peer completed (first connection or reconnection): send it
    /// every subscription, as libzmq's `xattach_pipe` / `xhiccuped`.
    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        let Some(p) = self.peers.get_mut(id) else {
            return;
        };
        p.metadata = metadata.properties();
        self.connected.insert(id);
        for topic in self.subscriptions.iter() {
            let _ = p.out.try_write(marked(true, &topic), false);
        }
        p.out.flush();
    }

    fn detach(&mut self, id: PipeId) {
        self.peers.remove(id);
        self.connected.remove(&id);
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        if self.role == Role::Sub {
            return Err((Error::NotSup, frame));
        }
        self.send_frame(frame, more);
        Ok(())
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        if let Some(mut m) = self.prefetched.take() {
            *metadata = m.metadata.take();
            return Ok(m);
        }
        self.next_frame(metadata).ok_or(Error::Again)
    }

    fn has_in(&mut self) -> bool {
        if self.more_in || self.prefetched.is_some() {
            return true;
        }
        // A frame kept for a later `recv_frame` keeps its own metadata: its peer may leave
        // first.
        let mut metadata = None;
        self.prefetched = self.next_frame(&mut metadata).map(|mut m| {
            m.metadata = metadata;
            m
        });
        self.prefetched.is_some()
    }

    fn has_out(&mut self) -> bool {
        self.role == Role::Xsub
    }

    fn set_option(&mut self, option: i32, value: &[u8]) -> Option<Result<()>> {
        match option {
            ZMQ_SUBSCRIBE | ZMQ_UNSUBSCRIBE if self.role == Role::Sub => {
                self.send_frame(marked(option == ZMQ_SUBSCRIBE, value), false);
                Some(Ok(()))
            }
            ZMQ_INVERT_MATCHING => Some(int_value(value).map(|v| self.invert = v != 0)),
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
    use ferromq_zmtp::Metadata;
    use std::sync::Arc;

    thread_local! {
        static WAKES: Wakes = Wakes::new();
    }

    fn with_peer(role: Role, identify: bool) -> (Xsub, SessionPipes) {
        let mut x = Xsub::new(role);
        let (p, f) = WAKES.with(|w| w.pipes(1, 0, 0));
        x.attach(p, &Options::default());
        if identify {
            x.identify(
                1,
                PeerMetadata::of_connection(Arc::new(Metadata::new()), None),
                &Options::default(),
            );
        }
        (x, f)
    }

    fn drain(f: &mut SessionPipes) -> Vec<Bytes> {
        let mut out = vec![];
        while let Read::Item { item, .. } = f.from_socket.read() {
            out.push(item);
        }
        out
    }

    /// The peer sends a message; the socket learns which peer woke it, as it would.
    fn publish(x: &mut Xsub, f: &mut SessionPipes, frames: &[&'static [u8]]) {
        for (i, fr) in frames.iter().enumerate() {
            f.to_socket
                .try_write(Bytes::from_static(fr), i + 1 < frames.len())
                .unwrap();
        }
        f.to_socket.flush();
        WAKES.with(|w| w.deliver_to(x));
    }

    fn sub(x: &mut Xsub, topic: &[u8]) {
        x.set_option(ZMQ_SUBSCRIBE, topic).unwrap().unwrap();
    }

    fn unsub(x: &mut Xsub, topic: &[u8]) {
        x.set_option(ZMQ_UNSUBSCRIBE, topic).unwrap().unwrap();
    }

    #[test]
    fn subscriptions_wait_for_the_handshake_then_go_once() {
        let (mut x, mut f) = with_peer(Role::Sub, false);
        sub(&mut x, b"A");
        sub(&mut x, b"A");
        assert!(drain(&mut f).is_empty());
        x.identify(
            1,
            PeerMetadata::of_connection(Arc::new(Metadata::new()), None),
            &Options::default(),
        );
        assert_eq!(drain(&mut f), vec![Bytes::from_static(b"\x01A")]);
        // Reconnect: the whole set again.
        x.identify(
            1,
            PeerMetadata::of_connection(Arc::new(Metadata::new()), None),
            &Options::default(),
        );
        assert_eq!(drain(&mut f).len(), 1);
    }

    #[test]
    fn counted_subscribe_every_time_cancel_the_last() {
        let (mut x, mut f) = with_peer(Role::Sub, true);
        sub(&mut x, b"A");
        sub(&mut x, b"A");
        unsub(&mut x, b"A");
        unsub(&mut x, b"B");
        assert_eq!(drain(&mut f).len(), 2);
        unsub(&mut x, b"A");
        assert_eq!(drain(&mut f), vec![Bytes::from_static(b"\x00A")]);
    }

    #[test]
    fn sub_filters_whole_messages_and_inverts() {
        let (mut x, mut f) = with_peer(Role::Sub, true);
        sub(&mut x, b"A");
        publish(&mut x, &mut f, &[b"B", b"tail"]);
        publish(&mut x, &mut f, &[b"A1", b"tail"]);
        assert!(x.has_in());
        assert_eq!(x.recv().unwrap().as_slice(), b"A1");
        assert_eq!(x.recv().unwrap().as_slice(), b"tail");
        assert_eq!(x.recv(), Err(Error::Again));
        x.set_option(ZMQ_INVERT_MATCHING, &1i32.to_ne_bytes())
            .unwrap()
            .unwrap();
        publish(&mut x, &mut f, &[b"A2"]);
        publish(&mut x, &mut f, &[b"B2"]);
        assert_eq!(x.recv().unwrap().as_slice(), b"B2");
        assert_eq!(
            x.send(Bytes::new(), false, &Options::default())
                .unwrap_err()
                .0,
            Error::NotSup
        );
    }

    #[test]
    fn xsub_sends_subscriptions_and_user_messages_and_does_not_filter() {
        let (mut x, mut f) = with_peer(Role::Xsub, true);
        assert!(x.set_option(ZMQ_SUBSCRIBE, b"A").is_none());
        x.send(Bytes::from_static(b"\x01A"), false, &Options::default())
            .unwrap();
        x.send(Bytes::from_static(b"\x00Z"), false, &Options::default())
            .unwrap();
        x.send(Bytes::from_static(b"up"), false, &Options::default())
            .unwrap();
        assert_eq!(
            drain(&mut f),
            vec![Bytes::from_static(b"\x01A"), Bytes::from_static(b"up")]
        );
        publish(&mut x, &mut f, &[b"B"]);
        assert_eq!(x.recv().unwrap().as_slice(), b"B");
    }
}
