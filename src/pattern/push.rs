//! PUSH (RFC 30, libzmq src/push.cpp): load-balances to peers with room; blocks when there
//! is none, never drops; cannot receive.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::lb::LoadBalancer;
use crate::pattern::peer_set::PeerSet;
use crate::pattern::{Pattern, PeerMetadata, SendResult};

#[derive(Debug, Default)]
pub(crate) struct Push {
    peers: PeerSet,
    lb: LoadBalancer,
}

impl Pattern for Push {
    fn attach(&mut self, peer: Peer, _: &Options) {
        self.peers.push(peer);
    }

    fn identify(&mut self, _: PipeId, _: PeerMetadata, _: &Options) {}

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
        self.lb.send(&mut self.peers, frame, more, true)
    }

    fn recv_frame(&mut self, _: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        Err(Error::NotSup)
    }

    fn has_in(&mut self) -> bool {
        false
    }

    fn has_out(&mut self) -> bool {
        self.lb.has_out(&mut self.peers, true)
    }
}
