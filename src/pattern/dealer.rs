//! DEALER (libzmq src/dealer.cpp): load-balances outgoing messages, fair-queues incoming
//! ones, changes no envelopes.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::fq::FairQueue;
use crate::pattern::lb::LoadBalancer;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::{note_metadata, set_metadata, Pattern, PeerMetadata, SendResult};

/// Laid out from a line boundary, the peer set first: its first line holds all that a
/// receive reads here (the fair queue's state among it), so that a receive on a DEALER whose
/// state has gone cold (one of a thousand drained in turn, issue 15) reads one line.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Dealer {
    peers: PeerSet,
    lb: LoadBalancer,
    fq: FairQueue,
}

impl Pattern for Dealer {
    fn attach(&mut self, peer: Peer, _: &Options) {
        self.peers.push(peer);
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        set_metadata(&mut self.peers, id, metadata);
    }

    fn detach(&mut self, id: PipeId) {
        self.peers.remove(id);
    }

    fn activate(&mut self, id: PipeId) {
        self.peers.activate(id);
    }

    fn hwm_changed(&mut self) {
        self.peers.activate_all_writers();
    }

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        self.lb.send(&mut self.peers, frame, more, false)
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        let r = self
            .fq
            .recv(&mut self.peers, |_| true)
            .ok_or(Error::Again)?;
        note_metadata(metadata, &self.peers[r.index].metadata);
        Ok(Msg {
            data: r.frame,
            more: r.more,
            metadata: None,
        })
    }

    fn has_in(&mut self) -> bool {
        self.fq.has_in(&mut self.peers, |_| true)
    }

    fn has_out(&mut self) -> bool {
        self.lb.has_out(&mut self.peers, false)
    }
}
