//! `zmq_timers_*`: a timer set a C program drives from its own poll loop.
//!
//! The schedule ([`Schedule`]) is plain data with the clock passed in, so its rules are tested
//! without sleeping; the exports add a monotonic clock and libzmq's handle checks. A handler may
//! call back into the same timer set (cancel itself, add another timer): no Rust borrow of the
//! set is held while a handler runs.

use core::ffi::{c_int, c_long, c_void};
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use crate::boundary::{guard, non_null, Errno};
use crate::errno::{EFAULT, EINVAL};

/// libzmq's `zmq_timer_fn`.
pub type Handler = unsafe extern "C" fn(timer_id: c_int, arg: *mut c_void);

#[derive(Debug, Clone, Copy)]
struct Timer {
    id: c_int,
    interval: u64,
    handler: Handler,
    arg: *mut c_void,
}

/// Position in the schedule: due time, then insertion order among equal due times (libzmq's
/// multimap order).
type Key = (u64, u64);

/// Timers ordered by due time, and the ids cancelled but not yet purged (libzmq purges lazily).
#[derive(Debug, Default)]
pub struct Schedule {
    timers: BTreeMap<Key, Timer>,
    cancelled: HashSet<c_int>,
    last_id: c_int,
    seq: u64,
}

impl Schedule {
    fn insert(&mut self, due: u64, timer: Timer) {
        self.seq += 1;
        self.timers.insert((due, self.seq), timer);
    }

    fn key_of(&self, id: c_int) -> Option<Key> {
        self.timers
            .iter()
            .find(|(_, t)| t.id == id)
            .map(|(k, _)| *k)
    }

    /// Adds a timer due `interval` ms after `now`; returns its id (1, 2, ...).
    pub fn add(&mut self, now: u64, interval: u64, handler: Handler, arg: *mut c_void) -> c_int {
        self.last_id = self.last_id.wrapping_add(1);
        let timer = Timer {
            id: self.last_id,
            interval,
            handler,
            arg,
        };
        self.insert(now.saturating_add(interval), timer);
        timer.id
    }

    /// Cancels a scheduled timer; `EINVAL` if unknown or already cancelled.
    pub fn cancel(&mut self, id: c_int) -> Result<(), Errno> {
        if self.key_of(id).is_none() || !self.cancelled.insert(id) {
            return Err(Errno(EINVAL));
        }
        Ok(())
    }

    /// Changes a timer's interval and restarts it from `now`.
    pub fn set_interval(&mut self, now: u64, id: c_int, interval: u64) -> Result<(), Errno> {
        let key = self.key_of(id).ok_or(Errno(EINVAL))?;
        let mut timer = self.timers.remove(&key).ok_or(Errno(EINVAL))?;
        timer.interval = interval;
        self.insert(now.saturating_add(interval), timer);
        Ok(())
    }

    /// Restarts a timer's interval from `now`.
    pub fn reset(&mut self, now: u64, id: c_int) -> Result<(), Errno> {
        let key = self.key_of(id).ok_or(Errno(EINVAL))?;
        let timer = self.timers.remove(&key).ok_or(Errno(EINVAL))?;
        self.insert(now.saturating_add(timer.interval), timer);
        Ok(())
    }

    /// Milliseconds until the next live timer is due (0 if overdue), -1 if none; purges the
    /// cancelled timers in front of it.
    pub fn timeout(&mut self, now: u64) -> c_long {
        while let Some((&key, timer)) = self.timers.first_key_value() {
            if self.cancelled.remove(&timer.id) {
                self.timers.remove(&key);
                continue;
            }
            return c_long::try_from(key.0.saturating_sub(now)).unwrap_or(c_long::MAX);
        }
        -1
    }

    /// The next live timer after `after` that is due at `now` and was scheduled before this
    /// round began (`seq <= round`: a timer re-armed with interval 0 waits for the next round),
    /// purging cancelled timers met on the way.
    fn next_due(&mut self, now: u64, round: u64, after: Option<Key>) -> Option<(Key, Timer)> {
        let mut from = after.map_or((0, 0), |(due, seq)| (due, seq + 1));
        loop {
            let (&key, &timer) = self.timers.range(from..).next()?;
            from = (key.0, key.1 + 1);
            if self.cancelled.remove(&timer.id) {
                self.timers.remove(&key);
                continue;
            }
            if key.0 > now {
                return None;
            }
            if key.1 <= round {
                return Some((key, timer));
            }
        }
    }

    /// After a handler ran: reschedule the timer `interval` after `now`, unless the handler
    /// already moved or cancelled it.
    fn rearm(&mut self, now: u64, key: Key) {
        if let Some(timer) = self.timers.remove(&key) {
            if self.cancelled.remove(&timer.id) {
                return;
            }
            self.insert(now.saturating_add(timer.interval), timer);
        }
    }
}

const TAG: u32 = 0xCAFE_DADA;

/// What a `zmq_timers_new` handle points to.
#[derive(Debug)]
struct Timers {
    tag: u32,
    epoch: Instant,
    schedule: Schedule,
}

impl Timers {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// Runs `f` on the timer set behind `handle`, with a borrow that ends when `f` returns.
///
/// # Safety
/// `handle` is NULL or a live handle from [`zmq_timers_new`], and no other borrow of it is live
/// (handlers run outside any call to this function).
unsafe fn with<R>(
    handle: *mut c_void,
    f: impl FnOnce(&mut Timers) -> Result<R, Errno>,
) -> Result<R, Errno> {
    let timers = non_null(handle)?.cast::<Timers>();
    // SAFETY: a live handle points to the Box<Timers> from zmq_timers_new; the borrow is
    // exclusive for the duration of `f` per the contract.
    let timers = unsafe { &mut *timers.as_ptr() };
    if timers.tag != TAG {
        return Err(Errno(EFAULT));
    }
    f(timers)
}

/// A new, empty timer set.
#[no_mangle]
pub extern "C" fn zmq_timers_new() -> *mut c_void {
    guard(|| {
        let timers = Timers {
            tag: TAG,
            epoch: Instant::now(),
            schedule: Schedule::default(),
        };
        Ok(Box::into_raw(Box::new(timers)).cast())
    })
}

/// Frees the set `*timers_p` and sets `*timers_p` to NULL.
///
/// # Safety
/// `timers_p` is NULL or points to NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_destroy(timers_p: *mut *mut c_void) -> c_int {
    guard(|| {
        let slot = non_null(timers_p)?;
        // SAFETY: the caller's slot is readable.
        let handle = unsafe { slot.as_ptr().read() };
        // SAFETY: forwarded caller contract; validates the handle and its tag.
        unsafe { with(handle, |_| Ok(())) }?;
        // SAFETY: a validated handle is the Box<Timers> leaked by zmq_timers_new, freed once;
        // the slot is writable per the contract.
        unsafe {
            let mut timers = Box::from_raw(handle.cast::<Timers>());
            timers.tag = 0;
            drop(timers);
            slot.as_ptr().write(core::ptr::null_mut());
        }
        Ok(0)
    })
}

/// Adds a timer calling `handler(id, arg)` every `interval` ms; returns its id.
///
/// # Safety
/// `timers` is NULL or a live handle; `handler(id, arg)` is safe to call from
/// `zmq_timers_execute`.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_add(
    timers: *mut c_void,
    interval: usize,
    handler: Option<unsafe extern "C" fn(timer_id: c_int, arg: *mut c_void)>,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe {
        with(timers, |t| {
            let handler = handler.ok_or(Errno(EFAULT))?;
            let now = t.now();
            Ok(t.schedule.add(now, interval as u64, handler, arg))
        })
    })
}

/// Cancels a timer; `EINVAL` if unknown or already cancelled.
///
/// # Safety
/// `timers` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_cancel(timers: *mut c_void, timer_id: c_int) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { with(timers, |t| t.schedule.cancel(timer_id).map(|()| 0)) })
}

/// Sets a timer's interval and restarts it.
///
/// # Safety
/// `timers` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_set_interval(
    timers: *mut c_void,
    timer_id: c_int,
    interval: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe {
        with(timers, |t| {
            let now = t.now();
            t.schedule
                .set_interval(now, timer_id, interval as u64)
                .map(|()| 0)
        })
    })
}

/// Restarts a timer's interval from now.
///
/// # Safety
/// `timers` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_reset(timers: *mut c_void, timer_id: c_int) -> c_int {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe {
        with(timers, |t| {
            let now = t.now();
            t.schedule.reset(now, timer_id).map(|()| 0)
        })
    })
}

/// Milliseconds until the next timer is due (for `zmq_poll`'s timeout), -1 if none.
///
/// # Safety
/// `timers` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_timeout(timers: *mut c_void) -> c_long {
    // SAFETY: forwarded caller contract.
    guard(|| unsafe {
        with(timers, |t| {
            let now = t.now();
            Ok(t.schedule.timeout(now))
        })
    })
}

/// Runs the handlers of every due timer and reschedules them.
///
/// # Safety
/// `timers` is NULL or a live handle; the handlers' contracts hold.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_execute(timers: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let (now, round) = unsafe { with(timers, |t| Ok((t.now(), t.schedule.seq))) }?;
        let mut after = None;
        loop {
            // SAFETY: each `with` borrow ends before the handler runs, so a handler may re-enter.
            let due = unsafe { with(timers, |t| Ok(t.schedule.next_due(now, round, after))) }?;
            let Some((key, timer)) = due else {
                return Ok(0);
            };
            // SAFETY: the caller vouched for its handler and argument.
            unsafe { (timer.handler)(timer.id, timer.arg) };
            // SAFETY: as above; the handler has returned.
            unsafe {
                with(timers, |t| {
                    t.schedule.rearm(now, key);
                    Ok(())
                })
            }?;
            after = Some(key);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::errno;
    use std::cell::RefCell;

    thread_local! {
        static FIRED: RefCell<Vec<c_int>> = const { RefCell::new(Vec::new()) };
    }

    unsafe extern "C" fn record(id: c_int, _arg: *mut c_void) {
        FIRED.with(|f| f.borrow_mut().push(id));
    }

    unsafe extern "C" fn cancel_self(id: c_int, arg: *mut c_void) {
        // SAFETY: the test passes the live timer set as arg.
        assert_eq!(unsafe { zmq_timers_cancel(arg, id) }, 0);
        FIRED.with(|f| f.borrow_mut().push(id));
    }

    fn fired() -> Vec<c_int> {
        FIRED.with(|f| std::mem::take(&mut *f.borrow_mut()))
    }

    fn run_due(s: &mut Schedule, now: u64) {
        let mut after = None;
        let round = s.seq;
        while let Some((key, timer)) = s.next_due(now, round, after) {
            // SAFETY: `record` ignores its argument.
            unsafe { (timer.handler)(timer.id, timer.arg) };
            s.rearm(now, key);
            after = Some(key);
        }
    }

    #[test]
    fn schedule_rules() {
        let mut s = Schedule::default();
        let null = core::ptr::null_mut();
        assert_eq!(s.timeout(0), -1);
        let a = s.add(0, 10, record, null);
        let b = s.add(0, 5, record, null);
        assert_eq!((a, b), (1, 2));
        assert_eq!(s.timeout(0), 5);
        assert_eq!(s.timeout(7), 0, "overdue");
        run_due(&mut s, 7);
        assert_eq!(fired(), [b]);
        assert_eq!(s.timeout(7), 3);
        run_due(&mut s, 12);
        assert_eq!(
            fired(),
            [a, b],
            "a due at 10 before b, re-armed for 7 + 5 = 12"
        );
        s.cancel(a).unwrap();
        assert_eq!(s.cancel(a), Err(Errno(EINVAL)), "already cancelled");
        assert_eq!(s.cancel(99), Err(Errno(EINVAL)));
        run_due(&mut s, 100);
        assert_eq!(fired(), [b]);
        s.set_interval(100, b, 50).unwrap();
        assert_eq!(s.timeout(100), 50);
        s.reset(120, b).unwrap();
        assert_eq!(s.timeout(120), 50);
        assert_eq!(
            s.reset(120, a),
            Err(Errno(EINVAL)),
            "cancelled timers are gone"
        );
    }

    #[test]
    fn zero_interval_fires_once_per_round() {
        let mut s = Schedule::default();
        let z = s.add(0, 0, record, core::ptr::null_mut());
        run_due(&mut s, 0);
        assert_eq!(fired(), [z]);
        run_due(&mut s, 0);
        assert_eq!(fired(), [z]);
    }

    #[test]
    fn exports_with_reentrant_cancel() {
        // SAFETY: the handle is live until destroyed; handlers' contracts hold.
        unsafe {
            let mut t = zmq_timers_new();
            let id = zmq_timers_add(t, 0, Some(cancel_self), t);
            assert_eq!(id, 1);
            let other = zmq_timers_add(t, 0, Some(record), core::ptr::null_mut());
            assert_eq!(zmq_timers_execute(t), 0);
            assert_eq!(fired(), [id, other]);
            assert_eq!(zmq_timers_execute(t), 0);
            assert_eq!(fired(), [other], "the self-cancelled timer stays cancelled");
            assert_eq!(zmq_timers_add(t, 1, None, core::ptr::null_mut()), -1);
            assert_eq!(errno(), EFAULT);
            assert_eq!(zmq_timers_cancel(t, 42), -1);
            assert_eq!(errno(), EINVAL);
            assert!(zmq_timers_timeout(t) >= 0);
            assert_eq!(zmq_timers_destroy(&mut t), 0);
            assert!(t.is_null());
            assert_eq!(zmq_timers_destroy(&mut t), -1);
            assert_eq!(errno(), EFAULT);
            assert_eq!(zmq_timers_timeout(core::ptr::null_mut()), -1);
        }
    }
}
