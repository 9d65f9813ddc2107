//! Bytes that are wiped when dropped: a PLAIN username and password, which the options hold
//! for the socket's life and copy into every connection's handshake. `Bytes` cannot be wiped
//! (it is shared and immutable), so each holder owns its copy and zeroizes it on drop, as the
//! CURVE keys are.

use zeroize::Zeroizing;

/// Owned bytes, zeroized on drop; [`std::fmt::Debug`] shows the length only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Zeroizing<Vec<u8>>);

impl Secret {
    /// A wiped-on-drop copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Secret {
        Secret(Zeroizing::new(bytes.to_vec()))
    }
}

impl From<&[u8]> for Secret {
    fn from(bytes: &[u8]) -> Secret {
        Secret::new(bytes)
    }
}

impl<const N: usize> From<&[u8; N]> for Secret {
    fn from(bytes: &[u8; N]) -> Secret {
        Secret::new(bytes)
    }
}

/// Takes the vector as it is (its whole capacity is wiped on drop).
impl From<Vec<u8>> for Secret {
    fn from(bytes: Vec<u8>) -> Secret {
        Secret(Zeroizing::new(bytes))
    }
}

impl std::ops::Deref for Secret {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_its_bytes_and_never_prints_them() {
        let s = Secret::from(b"hunter2");
        assert_eq!(&s[..], b"hunter2");
        assert_eq!(s.clone(), Secret::new(b"hunter2"));
        assert_eq!(format!("{s:?}"), "Secret(7 bytes)");
        assert_eq!(Secret::from(vec![1, 2]).len(), 2);
        assert!(Secret::default().is_empty());
    }
}
