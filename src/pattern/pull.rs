//! PULL (RFC 30, libzmq src/pull.cpp): fair-queues messages from its peers; cannot send.

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
pub(crate) struct Pull {
    peers: PeerSet,
    fq: FairQueue,
}

impl Pattern for Pull {
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

    fn send(&mut self, frame: Bytes, _: bool, _: &Options) -> SendResult {
        Err((Error::NotSup, frame))
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
        false
    }
}
