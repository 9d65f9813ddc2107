//! CURVE key helpers, as libzmq built with libsodium has them: Z85 text of 40 characters plus
//! a NUL for each key, keys from the OS's randomness (the codec and the keys are
//! ferromq-zmtp's).

use core::ffi::{c_char, c_int, CStr};

use ferromq::z85;
use ferromq::CurveKeyPair as KeyPair;

use crate::boundary::{guard, non_null, non_null_const, Errno};
use crate::errno::{EFAULT, EINVAL};

/// Writes `key` as Z85 text with its NUL into `dest` (41 bytes).
///
/// # Safety
/// `dest` is valid for 41 bytes.
unsafe fn put_z85(dest: *mut c_char, key: &[u8; 32]) -> Result<(), Errno> {
    let dest = non_null(dest)?;
    let mut text = z85::encode(key).ok_or(Errno(EINVAL))?;
    text.push(0);
    // SAFETY: the caller's contract sizes dest for 41 bytes; `text` is 41 bytes of our own.
    unsafe { core::ptr::copy_nonoverlapping(text.as_ptr(), dest.as_ptr().cast::<u8>(), 41) };
    Ok(())
}

/// Generates a new key pair and writes both keys as 40-character Z85 strings (41 bytes each
/// with the NUL); 0, or -1 with `EFAULT` for a NULL buffer (`EINVAL` if the OS gave no
/// randomness).
///
/// # Safety
/// Both buffers are valid for 41 bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_keypair(
    z85_public_key: *mut c_char,
    z85_secret_key: *mut c_char,
) -> c_int {
    guard(|| {
        non_null(z85_public_key)?;
        non_null(z85_secret_key)?;
        let pair = KeyPair::generate().ok_or(Errno(EINVAL))?;
        let secret = zeroize::Zeroizing::new(pair.secret_bytes());
        // SAFETY: both buffers are valid for 41 bytes per the contract.
        unsafe {
            put_z85(z85_public_key, &pair.public)?;
            put_z85(z85_secret_key, &secret)?;
        }
        Ok(0)
    })
}

/// Derives the public key of a Z85 secret key (40 characters); 0, or -1 with `EINVAL` for
/// text that is not a 32-byte Z85 key.
///
/// # Safety
/// `z85_public_key` is valid for 41 bytes; `z85_secret_key` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_public(
    z85_public_key: *mut c_char,
    z85_secret_key: *const c_char,
) -> c_int {
    guard(|| {
        let secret = non_null_const(z85_secret_key).map_err(|_| Errno(EFAULT))?;
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let text = unsafe { CStr::from_ptr(secret.as_ptr()) }.to_bytes();
        let bytes = zeroize::Zeroizing::new(z85::decode(text).ok_or(Errno(EINVAL))?);
        let secret: [u8; 32] = bytes.as_slice().try_into().map_err(|_| Errno(EINVAL))?;
        let pair = KeyPair::from_secret(secret);
        // SAFETY: the contract sizes the public key buffer for 41 bytes.
        unsafe { put_z85(z85_public_key, &pair.public)? };
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;

    /// The key pair of libzmq's zmq_curve man page (doc/zmq_curve.txt): the secret key's
    /// public key is the one printed beside it.
    #[test]
    fn keypair_and_public_as_libzmq() {
        let mut public = [0 as c_char; 41];
        let mut secret = [0 as c_char; 41];
        // SAFETY: 41-byte buffers, NUL-terminated inputs.
        unsafe {
            assert_eq!(
                zmq_curve_keypair(public.as_mut_ptr(), secret.as_mut_ptr()),
                0
            );
            let mut derived = [0 as c_char; 41];
            assert_eq!(zmq_curve_public(derived.as_mut_ptr(), secret.as_ptr()), 0);
            assert_eq!(derived, public);
            assert_eq!(CStr::from_ptr(public.as_ptr()).to_bytes().len(), 40);
            assert_eq!(
                zmq_curve_public(
                    derived.as_mut_ptr(),
                    c"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs".as_ptr()
                ),
                0
            );
            assert_eq!(
                CStr::from_ptr(derived.as_ptr()).to_bytes(),
                b"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
            );
            assert_eq!(
                zmq_curve_public(derived.as_mut_ptr(), c"short".as_ptr()),
                -1
            );
            assert_eq!(errno(), EINVAL);
            assert_eq!(
                zmq_curve_keypair(core::ptr::null_mut(), secret.as_mut_ptr()),
                -1
            );
            assert_eq!(errno(), EFAULT);
        }
    }
}
