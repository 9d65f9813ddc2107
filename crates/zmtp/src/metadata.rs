//! Connection metadata: the property list carried by READY (and by PLAIN/CURVE INITIATE).
//!
//! Wire form (RFC 37 §Connection metadata), repeated until the body ends:
//! `name_len (1) | name (1..255 of [A-Za-z0-9-_.+]) | value_len (u32 BE, <= 2^31-1) | value`.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::MetadataError;

/// Ordered connection properties, as the peer (and a ZAP handler) sent them.
///
/// Values are zero-copy slices of the received command body.
///
/// # Names and case
///
/// RFC 23 and RFC 37 (ZMTP 3.0 and 3.1) both say "The case (upper or lower) of names SHALL
/// NOT be significant" (the NULL mechanism) and "Metadata names SHALL be case-insensitive"
/// (§Connection Metadata). libzmq 4.3.4, the peer ferromq is measured against, does not do
/// so: it keeps the properties in a `std::map` keyed by the exact name and looks names up
/// exactly (`metadata_t::get`), so `x-tag` and `X-Tag` are two properties, and it judges only
/// a property named exactly `Socket-Type` or `Identity` (`mechanism_t::parse_metadata`).
/// [`get`](Self::get) follows libzmq, so that the Rust API and `zmq_msg_gets` find the same
/// value for the same name; [`get_ignore_case`](Self::get_ignore_case) is the RFC's reading,
/// for code that means it (the handshake's Socket-Type check, see `null::accept_metadata`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    properties: Vec<(String, Bytes)>,
}

/// RFC 37: `name-char = ALPHA | DIGIT | "-" | "_" | "." | "+"`.
fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+')
}

/// Checks a property name against the RFC 37 grammar.
pub(crate) fn validate_name(name: &[u8]) -> Result<(), MetadataError> {
    if name.is_empty() || name.len() > 255 || !name.iter().copied().all(is_name_char) {
        return Err(MetadataError::InvalidName {
            name: Bytes::copy_from_slice(name),
        });
    }
    Ok(())
}

/// RFC 37: `value-length = 4OCTET`, "the value length SHALL NOT exceed 2^31-1".
const VALUE_MAX: usize = i32::MAX as usize;

impl Metadata {
    /// An empty property list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a property. Refuses a name outside the RFC 37 grammar or a value longer than
    /// 2^31-1 bytes, so that what we encode is always decodable by a peer.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        value: impl Into<Bytes>,
    ) -> Result<(), MetadataError> {
        let name = name.into();
        let value = value.into();
        validate_name(name.as_bytes())?;
        if value.len() > VALUE_MAX {
            return Err(MetadataError::ValueTooLong { len: u32::MAX });
        }
        self.properties.push((name, value));
        Ok(())
    }

    /// The first value whose name is exactly `name`, as libzmq's `metadata_t::get` finds it
    /// (its map keeps the first insertion of a name). Case matters here: see the type's docs.
    pub fn get(&self, name: &str) -> Option<&Bytes> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The first value whose name matches `name` ignoring ASCII case, as RFC 37 reads names
    /// ("Metadata names SHALL be case-insensitive"). Not what libzmq or `zmq_msg_gets` does.
    pub fn get_ignore_case(&self, name: &str) -> Option<&Bytes> {
        self.properties
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Properties in wire order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Bytes)> {
        self.properties.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.properties.len()
    }

    /// Whether there are no properties.
    pub fn is_empty(&self) -> bool {
        self.properties.is_empty()
    }

    /// Parses a property list that fills `body` exactly. Values are slices of `body`.
    pub fn decode(body: Bytes) -> Result<Self, MetadataError> {
        let mut properties = Vec::new();
        let mut pos = 0;
        while pos < body.len() {
            let name_len = usize::from(body[pos]);
            pos += 1;
            let name = body
                .get(pos..pos + name_len)
                .ok_or(MetadataError::Truncated)?;
            validate_name(name)?;
            // validate_name admits ASCII only, so this is valid UTF-8.
            let name: String = name.iter().map(|&b| char::from(b)).collect();
            pos += name_len;
            let len_bytes: [u8; 4] = body
                .get(pos..pos + 4)
                .and_then(|s| s.try_into().ok())
                .ok_or(MetadataError::Truncated)?;
            pos += 4;
            let value_len = u32::from_be_bytes(len_bytes);
            let len = usize::try_from(value_len)
                .ok()
                .filter(|&l| l <= VALUE_MAX)
                .ok_or(MetadataError::ValueTooLong { len: value_len })?;
            if body.len() - pos < len {
                return Err(MetadataError::Truncated);
            }
            properties.push((name, body.slice(pos..pos + len)));
            pos += len;
        }
        Ok(Self { properties })
    }

    /// Appends the wire form to `out`.
    pub fn encode(&self, out: &mut BytesMut) {
        out.reserve(self.encoded_len());
        for (name, value) in &self.properties {
            // insert() guarantees 1..=255 bytes and a value length <= i32::MAX.
            out.put_u8(u8::try_from(name.len()).unwrap_or(u8::MAX));
            out.put_slice(name.as_bytes());
            out.put_u32(u32::try_from(value.len()).unwrap_or(u32::MAX));
            out.put_slice(value);
        }
    }

    /// Length of the wire form.
    pub fn encoded_len(&self) -> usize {
        self.properties
            .iter()
            .map(|(n, v)| 1 + n.len() + 4 + v.len())
            .sum()
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a str, &'a Bytes);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a Bytes)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc_vector() {
        let mut m = Metadata::new();
        m.insert("Socket-Type", Bytes::from_static(b"DEALER"))
            .unwrap();
        m.insert("Identity", Bytes::new()).unwrap();
        let mut out = BytesMut::new();
        m.encode(&mut out);
        assert_eq!(
            &out[..],
            b"\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x00"
        );
        assert_eq!(m.encoded_len(), out.len());
        let back = Metadata::decode(out.freeze()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.get("Socket-Type").unwrap(), &b"DEALER"[..]);
        assert_eq!(back.get("Identity").unwrap(), &b""[..]);
        assert!(back.get("Resource").is_none());
        assert_eq!(back.iter().count(), 2);
    }

    /// libzmq's lookup: exact names, the first of a repeated name; the RFC's ignores case.
    #[test]
    fn lookups_are_exact_the_first_insertion_wins() {
        let mut m = Metadata::new();
        for (name, value) in [("x-tag", "lower"), ("X-Tag", "upper"), ("X-Tag", "second")] {
            m.insert(name, value.as_bytes().to_vec()).unwrap();
        }
        assert_eq!(m.get("x-tag").unwrap(), &b"lower"[..]);
        assert_eq!(m.get("X-Tag").unwrap(), &b"upper"[..]);
        assert!(m.get("X-TAG").is_none());
        assert_eq!(m.get_ignore_case("X-TAG").unwrap(), &b"lower"[..]);
        assert!(m.get_ignore_case("X-Tags").is_none());
    }

    #[test]
    fn empty_list() {
        let m = Metadata::decode(Bytes::new()).unwrap();
        assert!(m.is_empty());
    }

    #[test]
    fn refuses_bad_input() {
        let d = |b: &'static [u8]| Metadata::decode(Bytes::from_static(b));
        assert_eq!(d(b"\x05"), Err(MetadataError::Truncated));
        assert_eq!(d(b"\x01A"), Err(MetadataError::Truncated));
        assert_eq!(d(b"\x01A\x00\x00\x00"), Err(MetadataError::Truncated));
        assert_eq!(d(b"\x01A\x00\x00\x00\x02x"), Err(MetadataError::Truncated));
        assert!(matches!(
            d(b"\x00\x00\x00\x00\x00"),
            Err(MetadataError::InvalidName { .. })
        ));
        assert!(matches!(
            d(b"\x01 \x00\x00\x00\x00"),
            Err(MetadataError::InvalidName { .. })
        ));
        assert_eq!(
            d(b"\x01A\x80\x00\x00\x00"),
            Err(MetadataError::ValueTooLong { len: 0x8000_0000 })
        );
        assert_eq!(
            d(b"\x01A\x00\x00\x00\x01x").unwrap().get("A").unwrap(),
            &b"x"[..]
        );
        let mut m = Metadata::new();
        assert!(m.insert("", Bytes::new()).is_err());
        assert!(m.insert("a b", Bytes::new()).is_err());
        assert!(m.insert("x".repeat(256), Bytes::new()).is_err());
        assert!(m.insert("x".repeat(255), Bytes::new()).is_ok());
        assert!(m.insert("X-a.b_c+1", Bytes::new()).is_ok());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Metadata::decode(Bytes::from(data));
        }

        #[test]
        fn round_trip(props in proptest::collection::vec(
            ("[A-Za-z0-9._+-]{1,20}", proptest::collection::vec(any::<u8>(), 0..40)), 0..6)) {
            let mut m = Metadata::new();
            for (n, v) in &props {
                m.insert(n.clone(), Bytes::from(v.clone())).unwrap();
            }
            let mut out = BytesMut::new();
            m.encode(&mut out);
            prop_assert_eq!(out.len(), m.encoded_len());
            prop_assert_eq!(Metadata::decode(out.freeze()).unwrap(), m);
        }
    }
}
