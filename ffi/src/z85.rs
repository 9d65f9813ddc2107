//! Z85 (ZeroMQ RFC 32): binary to printable text, 4 bytes to 5 characters.
//!
//! The codec is ferromq-zmtp's (`ferromq::z85`); the two exports only add libzmq's C conventions (the caller
//! sizes `dest`, the encoder appends a NUL, bad input is NULL + `EINVAL`). Decoding validates
//! the whole string before writing anything, where libzmq may leave a partial result behind.

use core::ffi::{c_char, CStr};

use crate::boundary::{guard, non_null, non_null_const, Errno};
use crate::errno::{EFAULT, EINVAL};

use ferromq::z85::{decode, encode};

/// Encodes `size` bytes (a multiple of 4) of `data` into `dest` as `size * 5 / 4` characters
/// plus a NUL; returns `dest`, or NULL with `EINVAL` for a bad size.
///
/// # Safety
/// `dest` is valid for `size * 5 / 4 + 1` bytes; `data` for `size` bytes (or NULL when 0).
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_encode(
    dest: *mut c_char,
    data: *const u8,
    size: usize,
) -> *mut c_char {
    guard(|| {
        // libzmq checks the size before it touches either pointer: a bad size is EINVAL even
        // with NULL buffers.
        if !size.is_multiple_of(4) {
            return Err(Errno(EINVAL));
        }
        let dest = non_null(dest)?;
        let input: &[u8] = if size == 0 {
            &[]
        } else {
            // SAFETY: non-NULL and valid for `size` bytes per the contract.
            unsafe { core::slice::from_raw_parts(non_null_const(data)?.as_ptr(), size) }
        };
        let text = encode(input).ok_or(Errno(EINVAL))?;
        // SAFETY: the contract sizes dest for the text and its NUL; the regions cannot overlap
        // with our freshly allocated `text`.
        unsafe {
            let out = dest.as_ptr().cast::<u8>();
            core::ptr::copy_nonoverlapping(text.as_ptr(), out, text.len());
            out.add(text.len()).write(0);
        }
        Ok(dest.as_ptr())
    })
}

/// Decodes the NUL-terminated Z85 `string` into `dest` (`strlen * 4 / 5` bytes); returns `dest`,
/// or NULL with `EINVAL` for invalid text.
///
/// # Safety
/// `string` is NUL-terminated; `dest` is valid for `strlen(string) * 4 / 5` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8 {
    guard(|| {
        let string = non_null_const(string).map_err(|_| Errno(EFAULT))?;
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let text = unsafe { CStr::from_ptr(string.as_ptr()) }.to_bytes();
        let bytes = decode(text).ok_or(Errno(EINVAL))?;
        let dest = non_null(dest)?;
        // SAFETY: the contract sizes dest for the decoded bytes.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), dest.as_ptr(), bytes.len()) };
        Ok(dest.as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;

    const RFC32_BINARY: [u8; 8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];

    #[test]
    fn c_exports() {
        let mut text = [0x55 as c_char; 11];
        let mut bin = [0u8; 8];
        // SAFETY: buffers sized as the contracts require.
        unsafe {
            let p = zmq_z85_encode(text.as_mut_ptr(), RFC32_BINARY.as_ptr(), 8);
            assert_eq!(p, text.as_mut_ptr());
            assert_eq!(CStr::from_ptr(p).to_bytes(), b"HelloWorld");
            let q = zmq_z85_decode(bin.as_mut_ptr(), p);
            assert_eq!(q, bin.as_mut_ptr());
            assert_eq!(bin, RFC32_BINARY);
            assert!(zmq_z85_encode(text.as_mut_ptr(), RFC32_BINARY.as_ptr(), 7).is_null());
            assert_eq!(errno(), EINVAL);
            assert!(zmq_z85_decode(bin.as_mut_ptr(), c"Hello!".as_ptr()).is_null());
            assert_eq!(errno(), EINVAL);
            assert!(zmq_z85_decode(bin.as_mut_ptr(), core::ptr::null()).is_null());
            assert_eq!(errno(), EFAULT);
            assert!(zmq_z85_encode(core::ptr::null_mut(), core::ptr::null(), 3).is_null());
            assert_eq!(errno(), EINVAL, "size before pointers, as libzmq");
            assert!(zmq_z85_encode(text.as_mut_ptr(), core::ptr::null(), 4).is_null());
            assert_eq!(errno(), EFAULT);
            let p = zmq_z85_encode(text.as_mut_ptr(), core::ptr::null(), 0);
            assert_eq!(CStr::from_ptr(p).to_bytes(), b"");
        }
    }
}
