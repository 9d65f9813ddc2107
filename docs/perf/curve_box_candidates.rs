//! One-off measurement for docs/performance.md ("CURVE crypto", issue 16): one seal plus one open
//! in place with a precomputed key (`crypto_box_beforenm` / `_afternm`), the three candidates
//! interleaved in one process, median of 7 rounds; or, with `IMPL LEN ITERS` arguments, one
//! candidate alone (for `valgrind --tool=callgrind`, less a run with ITERS = 0).
//! Not built by the workspace. To run: `cargo new boxbench`, this file as src/main.rs, and
//!
//! ```toml
//! cb09 = { package = "crypto_box", version = "0.9", default-features = false, features = ["salsa20"] }
//! dryoc = { version = "2", default-features = false, features = ["std"] }
//! libsodium-sys-stable = "1.24"   # SODIUM_USE_PKG_CONFIG=1 links Debian's libsodium 1.0.18
//! ```
//!
//! then `SODIUM_USE_PKG_CONFIG=1 cargo run --release`.
use std::hint::black_box;
use std::time::Instant;

use cb09::aead::AeadInPlace;
use cb09::{SalsaBox, SecretKey};

fn med(mut v: Vec<f64>) -> f64 { v.sort_by(|a, b| a.partial_cmp(b).unwrap()); v[v.len() / 2] }

fn main() {
    unsafe { assert!(libsodium_sys::sodium_init() >= 0) };
    let a = [1u8; 32];
    let b = [2u8; 32];
    let pa = SecretKey::from_bytes(a).public_key();
    let sb = SecretKey::from_bytes(b);
    let rc = SalsaBox::new(&pa, &sb);
    let dk = dryoc::classic::crypto_box::crypto_box_beforenm(pa.as_bytes(), &b).unwrap();
    let mut sk = [0u8; 32];
    unsafe { libsodium_sys::crypto_box_beforenm(sk.as_mut_ptr(), pa.as_bytes().as_ptr(), b.as_ptr()) };
    assert_eq!(sk, dk);
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 {
        let len: usize = args[2].parse().unwrap();
        let iters: usize = args[3].parse().unwrap();
        let mut buf = vec![0u8; len];
        let mut nonce = [0u8; 24];
        for i in 0..iters {
            nonce[0] = i as u8;
            match args[1].as_str() {
                "rc" => {
                    let tag = rc.encrypt_in_place_detached((&nonce).into(), b"", &mut buf).unwrap();
                    rc.decrypt_in_place_detached((&nonce).into(), b"", &mut buf, &tag).unwrap();
                }
                "dryoc" => {
                    let mut mac = [0u8; 16];
                    dryoc::classic::crypto_box::crypto_box_detached_afternm_inplace(&mut buf, &mut mac, &nonce, &dk);
                    dryoc::classic::crypto_box::crypto_box_open_detached_afternm_inplace(&mut buf, &mac, &nonce, &dk).unwrap();
                }
                _ => unsafe {
                    let mut mac = [0u8; 16];
                    libsodium_sys::crypto_box_detached_afternm(buf.as_mut_ptr(), mac.as_mut_ptr(), buf.as_ptr(), len as u64, nonce.as_ptr(), sk.as_ptr());
                    assert_eq!(libsodium_sys::crypto_box_open_detached_afternm(buf.as_mut_ptr(), buf.as_ptr(), mac.as_ptr(), len as u64, nonce.as_ptr(), sk.as_ptr()), 0);
                },
            }
        }
        black_box(&buf);
        return;
    }
    let reps = 7;
    for &len in &[64usize, 1024, 65536] {
        let iters: usize = match len { 64 => 200_000, 1024 => 50_000, _ => 1_500 };
        let mut buf = vec![0u8; len];
        let mut nonce = [0u8; 24];
        let (mut t_rc, mut t_dr, mut t_so) = (vec![], vec![], vec![]);
        for _ in 0..reps {
            // RustCrypto crypto_box 0.9, in place
            let t = Instant::now();
            for i in 0..iters {
                nonce[0] = i as u8;
                let tag = rc.encrypt_in_place_detached((&nonce).into(), b"", &mut buf).unwrap();
                rc.decrypt_in_place_detached((&nonce).into(), b"", &mut buf, &tag).unwrap();
            }
            t_rc.push(t.elapsed().as_secs_f64() / iters as f64);
            black_box(&buf);
            // dryoc, in place
            let t = Instant::now();
            for i in 0..iters {
                nonce[0] = i as u8;
                let mut mac = [0u8; 16];
                dryoc::classic::crypto_box::crypto_box_detached_afternm_inplace(&mut buf, &mut mac, &nonce, &dk);
                dryoc::classic::crypto_box::crypto_box_open_detached_afternm_inplace(&mut buf, &mac, &nonce, &dk).unwrap();
            }
            t_dr.push(t.elapsed().as_secs_f64() / iters as f64);
            black_box(&buf);
            // libsodium (Debian 1.0.18), in place
            let t = Instant::now();
            for i in 0..iters {
                nonce[0] = i as u8;
                let mut mac = [0u8; 16];
                unsafe {
                    libsodium_sys::crypto_box_detached_afternm(buf.as_mut_ptr(), mac.as_mut_ptr(), buf.as_ptr(), len as u64, nonce.as_ptr(), sk.as_ptr());
                    assert_eq!(libsodium_sys::crypto_box_open_detached_afternm(buf.as_mut_ptr(), buf.as_ptr(), mac.as_ptr(), len as u64, nonce.as_ptr(), sk.as_ptr()), 0);
                }
            }
            t_so.push(t.elapsed().as_secs_f64() / iters as f64);
            black_box(&buf);
        }
        let (r, d, s) = (med(t_rc.clone()), med(t_dr.clone()), med(t_so.clone()));
        let spread = |v: &Vec<f64>| { let mut v = v.clone(); v.sort_by(|a, b| a.partial_cmp(b).unwrap()); (v[v.len()-1] - v[0]) / v[v.len()/2] * 100.0 };
        println!("{len:>6} B  seal+open median of {reps}: crypto_box0.9 {:.2} us ({:.0}%)  dryoc2 {:.2} us ({:.0}%)  libsodium {:.2} us ({:.0}%)",
            r * 1e6, spread(&t_rc), d * 1e6, spread(&t_dr), s * 1e6, spread(&t_so));
    }
}
