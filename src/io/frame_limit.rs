//! The largest inbound frame the process accepts when ZMQ_MAXMSGSIZE sets no smaller limit.
//!
//! libzmq has no explicit limit with MAXMSGSIZE -1: it allocates the size a frame header
//! announces and closes the connection when that allocation fails, so a header announcing
//! 2^62 bytes is refused at once. ferromq reads a large body into one buffer reserved when the
//! header arrives, so it needs the same refusal before the reservation, stated as a rule
//! rather than left to the allocator: a frame larger than the machine's RAM plus swap is
//! refused at its header. That is the most a single allocation can get under Linux's default
//! (heuristic) overcommit, i.e. exactly the sizes whose allocation would fail in libzmq too.
//! Below the limit, memory is committed only as the body's bytes actually arrive.

use std::sync::OnceLock;

/// RAM plus swap, read once (what one allocation can get at most).
fn holdable() -> u64 {
    static HOLDABLE: OnceLock<u64> = OnceLock::new();
    *HOLDABLE.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            let info = rustix::system::sysinfo();
            let unit = u64::from(info.mem_unit.max(1));
            // `__kernel_ulong_t` is 32 bits on 32-bit targets.
            #[allow(clippy::useless_conversion)]
            let pages = u64::from(info.totalram).saturating_add(u64::from(info.totalswap));
            pages.saturating_mul(unit)
        }
        #[cfg(not(target_os = "linux"))]
        {
            u64::try_from(isize::MAX).unwrap_or(u64::MAX)
        }
    })
}

/// The limit a connection's frame decoder applies: MAXMSGSIZE when set, and never more than
/// the process could hold.
pub(crate) fn inbound_frame_limit(max_msg_size: Option<u64>) -> u64 {
    max_msg_size.map_or(holdable(), |m| m.min(holdable()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2_pow_62_frame_is_beyond_any_machine_and_maxmsgsize_still_wins() {
        let limit = inbound_frame_limit(None);
        assert!(
            limit > 64 * 1024 * 1024,
            "limit {limit} is implausibly small"
        );
        assert!(limit < 1 << 62);
        assert_eq!(inbound_frame_limit(Some(100)), 100);
        assert_eq!(inbound_frame_limit(Some(u64::MAX)), limit);
    }
}
