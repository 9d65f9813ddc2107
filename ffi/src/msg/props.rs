//! The C strings `zmq_msg_gets` returns: the peer's handshake metadata, NUL-terminated.
//!
//! libzmq returns `const char *` into metadata the message owns; the runtime's metadata values
//! are `Bytes` without a terminator, so the first lookup on a message builds this table once
//! and the message keeps it until it is closed.

use ferromq::Metadata;

/// libzmq names the routing id `Routing-Id` for `zmq_msg_gets`; on the wire (ZMTP 3.0 READY)
/// the property is `Identity`. Either name finds it.
const ROUTING_ID: &str = "Routing-Id";
const IDENTITY: &str = "Identity";

/// Property names and their NUL-terminated values.
#[derive(Debug)]
pub struct Props {
    entries: Vec<(String, Box<[u8]>)>,
}

impl Props {
    /// The table for one connection's metadata.
    pub fn new(metadata: &Metadata) -> Self {
        let entries = metadata
            .iter()
            .map(|(name, value)| {
                let mut text = Vec::with_capacity(value.len() + 1);
                text.extend_from_slice(value);
                text.push(0);
                (name.to_owned(), text.into_boxed_slice())
            })
            .collect();
        Self { entries }
    }

    fn find(&self, name: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &v[..])
    }

    /// The value of `name` (case-insensitive, as ZMTP property names are), NUL-terminated.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.find(name).or_else(|| {
            if name.eq_ignore_ascii_case(ROUTING_ID) {
                self.find(IDENTITY)
            } else if name.eq_ignore_ascii_case(IDENTITY) {
                self.find(ROUTING_ID)
            } else {
                None
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_nul_terminated_and_routing_id_aliases_identity() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", &b"DEALER"[..]).unwrap();
        m.insert("Identity", &b"peer-1"[..]).unwrap();
        let p = Props::new(&m);
        assert_eq!(p.get("Socket-Type"), Some(&b"DEALER\0"[..]));
        assert_eq!(p.get("socket-type"), Some(&b"DEALER\0"[..]));
        assert_eq!(p.get("Routing-Id"), Some(&b"peer-1\0"[..]));
        assert_eq!(p.get("Peer-Address"), None);
    }
}
