//! CURVE key helpers. ferromq has no CURVE mechanism (`zmq_has("curve")` is 0), so, as libzmq
//! built without libsodium/tweetnacl does, both report `ENOTSUP`.

use core::ffi::{c_char, c_int};

use crate::boundary::{guard, Errno};
use crate::errno::ENOTSUP;

/// Would generate a Z85 key pair; CURVE is not built: -1, `ENOTSUP`.
#[no_mangle]
pub extern "C" fn zmq_curve_keypair(
    _z85_public_key: *mut c_char,
    _z85_secret_key: *mut c_char,
) -> c_int {
    guard(|| Err(Errno(ENOTSUP)))
}

/// Would derive a Z85 public key; CURVE is not built: -1, `ENOTSUP`.
#[no_mangle]
pub extern "C" fn zmq_curve_public(
    _z85_public_key: *mut c_char,
    _z85_secret_key: *const c_char,
) -> c_int {
    guard(|| Err(Errno(ENOTSUP)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;

    #[test]
    fn not_supported() {
        let mut a = [0 as c_char; 41];
        let mut b = [0 as c_char; 41];
        assert_eq!(zmq_curve_keypair(a.as_mut_ptr(), b.as_mut_ptr()), -1);
        assert_eq!(errno(), ENOTSUP);
        assert_eq!(zmq_curve_public(a.as_mut_ptr(), b.as_ptr()), -1);
        assert_eq!(errno(), ENOTSUP);
    }
}
