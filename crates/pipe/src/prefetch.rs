//! A hint that starts loading a cache line before the code that needs it gets there. With
//! many peers, the state of the one a message goes to is cold, and a send is a chain of loads
//! each waiting for the one before (routing entry, writer, front line, slot); a prefetch issued
//! as soon as an address is known takes a link out of the chain (issue 15).

/// Starts loading the cache line holding `addr` into the caches. Any address will do: a
/// prefetch never faults and nothing the program observes changes, so a stale or dangling
/// address costs at most a useless load. Does nothing off x86-64 and under loom and miri.
#[inline]
pub fn prefetch(addr: usize) {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `prefetch` reads nothing the program can observe and never faults, whatever
        // the address; SSE, which it needs, is part of x86-64's baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::without_provenance::<i8>(addr)) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
    let _ = addr;
}
