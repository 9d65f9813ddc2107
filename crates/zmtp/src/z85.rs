//! Z85 (ZeroMQ RFC 32): binary to printable text, 4 bytes to 5 characters, as libzmq checks
//! it: lengths a multiple of 4 (encode) or of 5 and at least 5 (decode), no padding, only the
//! alphabet's characters, each group at most 0xFFFFFFFF. Used by the CURVE key options (40
//! characters for 32 bytes) and by `zmq_z85_encode`/`zmq_z85_decode` in ffi/.

const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Character value by `char - 32`, 0xFF where the character is not in the alphabet.
const DECODER: [u8; 96] = {
    let mut table = [0xFF_u8; 96];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[(ALPHABET[i] - 32) as usize] = i as u8;
        i += 1;
    }
    table
};

/// Encodes `data`, whose length must be a multiple of 4.
pub fn encode(data: &[u8]) -> Option<Vec<u8>> {
    if !data.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 5);
    for chunk in data.chunks_exact(4) {
        let mut value = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        out.extend_from_slice(&digits);
    }
    Some(out)
}

/// Decodes Z85 text: at least 5 characters, a multiple of 5, only alphabet characters, each
/// group at most 0xFFFFFFFF (libzmq's rules).
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() < 5 || !text.len().is_multiple_of(5) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 5 * 4);
    for group in text.chunks_exact(5) {
        let mut value: u32 = 0;
        for &c in group {
            let digit = *DECODER.get(usize::from(c.wrapping_sub(32)))?;
            if digit == 0xFF {
                return None;
            }
            value = value.checked_mul(85)?.checked_add(u32::from(digit))?;
        }
        out.extend_from_slice(&value.to_be_bytes());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const RFC32_BINARY: [u8; 8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];

    #[test]
    fn rfc32_vector() {
        assert_eq!(encode(&RFC32_BINARY).unwrap(), b"HelloWorld");
        assert_eq!(decode(b"HelloWorld").unwrap(), RFC32_BINARY);
    }

    #[test]
    fn libzmq_rejections() {
        assert_eq!(encode(&[1, 2, 3]), None);
        assert_eq!(encode(&[]).unwrap(), b"");
        assert_eq!(decode(b""), None, "libzmq wants at least 5 characters");
        assert_eq!(decode(b"Hell"), None);
        assert_eq!(decode(b"Hello~"), None);
        assert_eq!(decode(b"Hell\""), None, "'\"' is not in the alphabet");
        assert_eq!(decode(b"Hell\x01"), None, "below the printable range");
        assert_eq!(decode(b"Hell\xC3"), None, "above the table");
        assert_eq!(decode(b"%nSc0").unwrap(), [0xFF; 4], "largest group");
        assert_eq!(decode(b"%nSc1"), None, "group above 0xFFFFFFFF");
        assert_eq!(decode(b"#####"), None, "overflows in the multiply");
    }

    proptest! {
        #[test]
        fn round_trip(words in proptest::collection::vec(any::<[u8; 4]>(), 1..64)) {
            let data: Vec<u8> = words.concat();
            let text = encode(&data).unwrap();
            prop_assert_eq!(text.len(), data.len() / 4 * 5);
            prop_assert_eq!(decode(&text).unwrap(), data);
        }

        #[test]
        fn decode_never_panics(text in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Some(bytes) = decode(&text) {
                prop_assert_eq!(encode(&bytes).unwrap(), text);
            }
        }
    }
}
