//! PAIR (RFC 31, libzmq src/pair.cpp): exactly one peer; a second one is refused (its pipes
//! dropped, so its connection closes). Blocks when the peer is absent or full, never drops.

use std::sync::Arc;

use bytes::Bytes;
use ferromq_pipe::Read;
use ferromq_zmtp::Metadata;

use crate::error::{Error, Result};
use crate::io::peer::{Peer, PipeId};
use crate::msg::Msg;
use crate::option::Options;
use crate::pattern::{note_metadata, Pattern, PeerMetadata, SendResult};

#[derive(Debug, Default)]
pub(crate) struct Pair {
    peer: Option<Peer>,
}

impl Pattern for Pair {
    fn attach(&mut self, peer: Peer, _: &Options) {
        if self.peer.is_none() {
            self.peer = Some(peer);
        }
    }

    fn identify(&mut self, id: PipeId, metadata: PeerMetadata, _: &Options) {
        if let Some(p) = self.peer.as_mut().filter(|p| p.id == id) {
            p.metadata = metadata.properties();
        }
    }

    fn detach(&mut self, id: PipeId) {
        if self.peer.as_ref().is_some_and(|p| p.id == id) {
            self.peer = None;
        }
    }

    /// One peer: there is no round robin to put it back into.
    fn activate(&mut self, _: PipeId) {}

    fn send(&mut self, frame: Bytes, more: bool, _: &Options) -> SendResult {
        let Some(p) = self.peer.as_mut() else {
            return Err((Error::Again, frame));
        };
        if p.out.is_closed() {
            return Err((Error::Again, frame));
        }
        match p.out.try_write(frame, more) {
            Ok(()) => {
                if !more {
                    p.out.flush();
                }
                Ok(())
            }
            Err(back) => Err((Error::Again, back)),
        }
    }

    fn recv_frame(&mut self, metadata: &mut Option<Arc<Metadata>>) -> Result<Msg> {
        let Some(p) = self.peer.as_mut() else {
            return Err(Error::Again);
        };
        match p.inp.read() {
            Read::Item { item, more } => {
                note_metadata(metadata, &p.metadata);
                Ok(Msg {
                    data: item,
                    more,
                    metadata: None,
                })
            }
            Read::Empty => Err(Error::Again),
            Read::Closed => {
                self.peer = None;
                Err(Error::Again)
            }
        }
    }

    fn has_in(&mut self) -> bool {
        self.peer.as_mut().is_some_and(|p| p.inp.has_message())
    }

    fn has_out(&mut self) -> bool {
        self.peer
            .as_ref()
            .is_some_and(|p| !p.out.is_closed() && p.out.can_write())
    }
}
