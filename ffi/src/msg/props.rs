//! The C strings `zmq_msg_gets` returns: the peer's handshake metadata, NUL-terminated.
//!
//! libzmq returns `const char *` into metadata the message owns; the runtime's metadata values
//! are `Bytes` without a terminator, so the first lookup on a message builds this table once
//! and the message keeps it until it is closed.

use ferromq::Metadata;

/// `zmq_msg_gets`'s one alias, libzmq's `metadata_t::get`: a lookup of `Identity` that finds
/// nothing tries `Routing-Id` (ZMQ_MSG_PROPERTY_ROUTING_ID). Not the other way round: the
/// property a peer's READY carries is `Identity`, and `Routing-Id` does not find it.
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
            .find(|(n, _)| n == name)
            .map(|(_, v)| &v[..])
    }

    /// The value of `name`, NUL-terminated, as libzmq's `zmq_msg_gets` finds it: the exact
    /// name (case matters, whatever RFC 37 says; see `ferromq::Metadata`), the first of a
    /// repeated one, and `Identity` falling back to `Routing-Id`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.find(name).or_else(|| {
            if name == IDENTITY {
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
    fn values_are_nul_terminated_names_exact_identity_aliases_routing_id() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", &b"DEALER"[..]).unwrap();
        m.insert("Identity", &b"peer-1"[..]).unwrap();
        m.insert("x-tag", &b"lower"[..]).unwrap();
        m.insert("X-Tag", &b"upper"[..]).unwrap();
        let p = Props::new(&m);
        assert_eq!(p.get("Socket-Type"), Some(&b"DEALER\0"[..]));
        assert_eq!(p.get("socket-type"), None);
        assert_eq!(p.get("X-Tag"), Some(&b"upper\0"[..]));
        assert_eq!(p.get("x-tag"), Some(&b"lower\0"[..]));
        assert_eq!(p.get("Routing-Id"), None);
        assert_eq!(p.get("Peer-Address"), None);

        let mut m = Metadata::new();
        m.insert("Routing-Id", &b"rid"[..]).unwrap();
        let p = Props::new(&m);
        assert_eq!(p.get("Identity"), Some(&b"rid\0"[..]));
        assert_eq!(p.get("identity"), None);
    }
}
