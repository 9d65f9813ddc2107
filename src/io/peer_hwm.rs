//! A socket's handles on its peers' pipe HWMs, so that ZMQ_SNDHWM and ZMQ_RCVHWM set after
//! connect reach the pipes that already exist, as libzmq's `update_pipe_options` makes them.
//!
//! An inproc pipe joins two sockets, and libzmq gives it the sum of the sender's SNDHWM and
//! the receiver's RCVHWM (unlimited if either is 0). The other socket's share is its "boost"
//! here, as in libzmq's `pipe_t::set_hwms_boost`; a connect made before the bind has no boost
//! until the binder arrives and adds its own.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use ferromq_pipe::Hwm;

/// The other inproc socket's share of each direction's HWM; -1 before it is known (a connect
/// before the bind) and for tcp and ipc peers, which have none.
#[derive(Debug)]
pub(crate) struct Boost {
    /// Added to our SNDHWM: the other socket's RCVHWM.
    out: AtomicI32,
    /// Added to our RCVHWM: the other socket's SNDHWM.
    inp: AtomicI32,
}

impl Boost {
    /// A boost not known yet (connect before bind).
    pub(crate) fn unknown() -> Arc<Boost> {
        Arc::new(Boost {
            out: AtomicI32::new(-1),
            inp: AtomicI32::new(-1),
        })
    }

    /// The other socket's (SNDHWM, RCVHWM).
    pub(crate) fn of(other_sndhwm: i32, other_rcvhwm: i32) -> Arc<Boost> {
        let b = Boost::unknown();
        b.set(other_sndhwm, other_rcvhwm);
        b
    }

    /// Records the other socket's (SNDHWM, RCVHWM) once it is known.
    pub(crate) fn set(&self, other_sndhwm: i32, other_rcvhwm: i32) {
        self.out.store(other_rcvhwm, Ordering::Relaxed);
        self.inp.store(other_sndhwm, Ordering::Relaxed);
    }
}

/// libzmq's `pipe_t::set_hwms` for one direction: our HWM plus the boost; unlimited (0) when
/// ours is 0 or the other socket's share is 0.
pub(crate) fn effective(own: i32, boost: i32) -> usize {
    if own <= 0 || boost == 0 {
        return 0;
    }
    usize::try_from(own)
        .unwrap_or(0)
        .saturating_add(usize::try_from(boost.max(0)).unwrap_or(0))
}

/// The HWM handles of one peer's two pipes (`None` for a conflating direction).
#[derive(Debug, Clone)]
pub(crate) struct PeerHwms {
    pub(crate) out: Option<Hwm>,
    pub(crate) inp: Option<Hwm>,
    pub(crate) boost: Option<Arc<Boost>>,
}

impl PeerHwms {
    /// Applies the socket's HWMs to both pipes.
    pub(crate) fn apply(&self, sndhwm: i32, rcvhwm: i32) {
        let (out_boost, in_boost) = match &self.boost {
            Some(b) => (b.out.load(Ordering::Relaxed), b.inp.load(Ordering::Relaxed)),
            None => (-1, -1),
        };
        if let Some(out) = &self.out {
            out.set(effective(sndhwm, out_boost));
        }
        if let Some(inp) = &self.inp {
            inp.set(effective(rcvhwm, in_boost));
        }
    }

    /// Whether both pipes are gone (the peer left), so the handles steer nothing.
    fn is_orphan(&self) -> bool {
        [&self.out, &self.inp]
            .into_iter()
            .all(|h| h.as_ref().is_none_or(Hwm::is_orphan))
    }
}

/// Every live peer's handles, kept by the socket's core.
#[derive(Debug, Default)]
pub(crate) struct HwmRegistry {
    peers: Vec<PeerHwms>,
}

impl HwmRegistry {
    /// Remembers a new peer's handles, forgetting peers that have left meanwhile (so the list
    /// stays as long as the live peers plus those gone since the last attach).
    pub(crate) fn add(&mut self, hwms: PeerHwms) {
        self.peers.retain(|p| !p.is_orphan());
        self.peers.push(hwms);
    }

    /// ZMQ_SNDHWM / ZMQ_RCVHWM changed: every existing pipe takes the new values.
    pub(crate) fn apply(&mut self, sndhwm: i32, rcvhwm: i32) {
        self.peers.retain(|p| !p.is_orphan());
        for p in &self.peers {
            p.apply(sndhwm, rcvhwm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_follows_libzmq_set_hwms() {
        assert_eq!(effective(10, -1), 10, "tcp: no boost");
        assert_eq!(effective(10, 20), 30, "inproc: the sum");
        assert_eq!(effective(0, 20), 0, "ours unlimited");
        assert_eq!(effective(10, 0), 0, "theirs unlimited");
        assert_eq!(effective(-5, 20), 0);
    }
}
