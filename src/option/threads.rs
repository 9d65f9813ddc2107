//! The context options for ferromq's own threads (`zmq_ctx_set` ZMQ_THREAD_SCHED_POLICY,
//! ZMQ_THREAD_PRIORITY, ZMQ_THREAD_AFFINITY_CPU_ADD/REMOVE, ZMQ_THREAD_NAME_PREFIX), applied
//! by each thread to itself when it starts, as libzmq's thread.cpp
//! (`applySchedulingParameters`, `applyThreadName`) and ctx.cpp (`start_thread`'s names) do.

/// How a context's threads are scheduled, pinned and named.
///
/// ```
/// let mut threads = ferromq::option::ThreadOptions::default();
/// threads.affinity.push(0);
/// threads.name_prefix = "app".into();
/// assert_eq!(threads.io_thread_name(0), "app/ZMQbg/IO/0");
/// let ctx = ferromq::Context::with_thread_options(1, threads);
/// # drop(ctx);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadOptions {
    /// A `SCHED_*` policy, -1 (ZMQ_THREAD_SCHED_POLICY_DFLT) to keep the thread's own.
    pub sched_policy: i32,
    /// The static priority for SCHED_FIFO/SCHED_RR; with another policy any value other
    /// than -1 (ZMQ_THREAD_PRIORITY_DFLT) asks for the highest one (nice -20), as libzmq.
    pub priority: i32,
    /// The CPUs the threads may run on; empty keeps the process's affinity.
    pub affinity: Vec<i32>,
    /// Put before libzmq's names ("<prefix>/ZMQbg/IO/0").
    pub name_prefix: String,
}

impl Default for ThreadOptions {
    fn default() -> Self {
        ThreadOptions {
            sched_policy: -1,
            priority: -1,
            affinity: Vec::new(),
            name_prefix: String::new(),
        }
    }
}

impl ThreadOptions {
    /// The name of I/O thread `index`, as libzmq's ctx.cpp makes it: "ZMQbg/IO/<index>", after
    /// "<prefix>/" when there is a prefix, cut to the 15 bytes a Linux thread name holds.
    ///
    /// ```
    /// let threads = ferromq::option::ThreadOptions {
    ///     name_prefix: "worker".into(),
    ///     ..Default::default()
    /// };
    /// assert_eq!(threads.io_thread_name(2), "worker/ZMQbg/IO");
    /// ```
    pub fn io_thread_name(&self, index: usize) -> String {
        let mut name = if self.name_prefix.is_empty() {
            format!("ZMQbg/IO/{index}")
        } else {
            format!("{}/ZMQbg/IO/{index}", self.name_prefix)
        };
        let mut end = name.len().min(15);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
        name
    }

    /// Names the calling thread (the OS name, /proc/self/task/<tid>/comm). Failures are
    /// ignored, as libzmq's `applyThreadName` ignores them: the name is cosmetic.
    pub(crate) fn name_current_thread(name: &str) {
        if let Ok(name) = std::ffi::CString::new(name) {
            // SAFETY: a NUL-terminated string of at most 15 bytes plus NUL (io_thread_name
            // cuts it), for the calling thread.
            unsafe {
                libc::pthread_setname_np(libc::pthread_self(), name.as_ptr());
            }
        }
    }

    /// Applies the scheduling policy, priority and affinity to the calling thread. libzmq
    /// aborts when one is refused (EPERM without CAP_SYS_NICE, EINVAL for a CPU the machine
    /// lacks); ferromq keeps the thread as it is then, which is all the caller could want.
    pub(crate) fn apply_scheduling(&self) {
        // SAFETY: pthread_self is always valid; `param` and `set` are locals initialised
        // before use; the calls only change the calling thread.
        unsafe {
            let me = libc::pthread_self();
            let mut policy = 0;
            let mut param: libc::sched_param = std::mem::zeroed();
            if libc::pthread_getschedparam(me, &mut policy, &mut param) == 0 {
                if self.sched_policy != -1 {
                    policy = self.sched_policy;
                }
                let nice = policy != libc::SCHED_FIFO && policy != libc::SCHED_RR;
                if self.priority != -1 {
                    param.sched_priority = if nice { 0 } else { self.priority };
                }
                if libc::pthread_setschedparam(me, policy, &param) == 0
                    && nice
                    && self.priority != -1
                {
                    libc::nice(-20);
                }
            }
            if !self.affinity.is_empty() {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &cpu in &self.affinity {
                    if let Ok(cpu) = usize::try_from(cpu)
                        && cpu < libc::CPU_SETSIZE as usize
                    {
                        libc::CPU_SET(cpu, &mut set);
                    }
                }
                libc::pthread_setaffinity_np(me, std::mem::size_of_val(&set), &set);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_libzmqs_cut_to_fifteen_bytes() {
        let mut t = ThreadOptions::default();
        assert_eq!(t.io_thread_name(0), "ZMQbg/IO/0");
        t.name_prefix = "7".into();
        assert_eq!(t.io_thread_name(1), "7/ZMQbg/IO/1");
        t.name_prefix = "longprefix".into();
        assert_eq!(t.io_thread_name(0), "longprefix/ZMQb");
    }

    #[test]
    fn affinity_is_applied_to_the_calling_thread() {
        let t = ThreadOptions {
            affinity: vec![0],
            ..ThreadOptions::default()
        };
        let cpus = std::thread::spawn(move || {
            t.apply_scheduling();
            // SAFETY: a local set, filled by the call for the calling thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set);
                (0..libc::CPU_SETSIZE as usize)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect::<Vec<_>>()
            }
        })
        .join()
        .unwrap();
        assert_eq!(cpus, vec![0]);
    }
}
