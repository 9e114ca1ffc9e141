//! What Linux says about this process: CPU time per group of threads (by name) and the
//! resident set. Both read `/proc`; elsewhere they read zero, and the report says so. And
//! [`pin_to_one_cpu`], for the latency measurement; [`room_for_files`], for the mass drop.
//!
//! Thread groups: actix names its arbiter threads `actix-rt|system:N|arbiter:M` (`comm`
//! keeps the first 15 bytes, `actix-rt|system`); the measurements name their own client
//! and rmcp threads ([`CLIENT_THREADS`], [`RMCP_THREADS`]).

use std::time::Duration;

/// The name of the measurement's client threads.
pub const CLIENT_THREADS: &str = "perf-client";
/// The name of the rmcp server's threads.
pub const RMCP_THREADS: &str = "perf-rmcp";
/// What actix arbiter threads' names start with (the SDK's sessions run there).
pub const ARBITER_THREADS: &str = "actix-rt";

/// Linux's `USER_HZ`, the unit of `/proc/*/stat` times: 100 on every architecture Rust
/// targets.
const TICKS_PER_SECOND: u64 = 100;

/// Keeps this thread, and every thread it starts from now on, on one CPU: the last one it
/// may run on. Returns that CPU.
///
/// For one-call-at-a-time latency (`super::latency`): on a virtual machine, a call whose
/// client and server threads sit on two vCPUs pays for waking an idle vCPU at each
/// hand-off, and whether they do is the scheduler's choice, run to run — measured here,
/// the server's median went between 28 and 150 µs from one run to the next, the echo's
/// not with it. On one CPU the server and its floor pay the same context switches.
pub fn pin_to_one_cpu() -> std::io::Result<usize> {
    use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
    use nix::unistd::Pid;
    let allowed = sched_getaffinity(Pid::from_raw(0)).map_err(std::io::Error::from)?;
    let cpu = (0..CpuSet::count())
        .rev()
        .find(|c| allowed.is_set(*c).unwrap_or(false))
        .ok_or_else(|| std::io::Error::other("this thread may run on no CPU"))?;
    let mut one = CpuSet::new();
    one.set(cpu).map_err(std::io::Error::from)?;
    sched_setaffinity(Pid::from_raw(0), &one).map_err(std::io::Error::from)?;
    Ok(cpu)
}

/// Makes room for `needed` open files in this process: raises the soft `RLIMIT_NOFILE`
/// to `needed` (and the hard one too where the process may, as root may, up to the
/// kernel's `fs.nr_open`). Returns the soft limit now in force; an error says why there
/// is not room enough (a non-root process whose hard limit is lower, say).
///
/// For the mass drop: each of its hosts holds four sockets in this process (the host's,
/// the proxy's two, the arcade's), so 10,000 hosts need 40,000 — past the 1,024 or
/// 20,000 a shell usually gives.
pub fn room_for_files(needed: u64) -> std::io::Result<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(std::io::Error::from)?;
    if soft >= needed {
        return Ok(soft);
    }
    if hard >= needed {
        setrlimit(Resource::RLIMIT_NOFILE, needed, hard).map_err(std::io::Error::from)?;
        return Ok(needed);
    }
    setrlimit(Resource::RLIMIT_NOFILE, needed, needed).map_err(|e| {
        std::io::Error::other(format!(
            "{needed} open files are needed; the limit is {soft} (hard {hard}) and raising it \
             failed: {e} (run as root, or raise `ulimit -Hn`)"
        ))
    })?;
    Ok(needed)
}

/// CPU time (user + system) used so far by this process's threads whose name starts with
/// `prefix`.
pub fn thread_cpu(prefix: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let ticks: u64 = tasks
        .flatten()
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            if !comm.trim_end().starts_with(prefix) {
                return None;
            }
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            stat_ticks(&stat)
        })
        .sum();
    Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)
}

/// CPU time (user + system) the calling thread has used, to the nanosecond (its
/// `CLOCK_THREAD_CPUTIME_ID`); zero where the clock cannot be read.
pub fn this_thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(Duration::ZERO, Duration::from)
}

/// The id of the calling thread (`/proc/thread-self` names it).
pub fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// CPU time (user + system) used so far by this process's thread `tid`.
pub fn tid_cpu(tid: u32) -> Duration {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
        .ok()
        .and_then(|s| stat_ticks(&s))
        .map_or(Duration::ZERO, |t| {
            Duration::from_millis(t * 1000 / TICKS_PER_SECOND)
        })
}

/// utime + stime from a `stat` line: fields 14 and 15, counted after the `comm` field,
/// which is parenthesised and may hold spaces.
fn stat_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The resident set of process `pid` (`self` for this one) now, in bytes.
pub fn rss_bytes(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_and_the_threads_it_starts_run_on_that_one_cpu() {
        use nix::sched::sched_getaffinity;
        use nix::unistd::Pid;
        // A thread of its own, so the test's other threads keep their CPUs.
        std::thread::spawn(|| {
            let cpu = pin_to_one_cpu().expect("pinned");
            let child = std::thread::spawn(|| sched_getaffinity(Pid::from_raw(0)).unwrap())
                .join()
                .unwrap();
            for set in [sched_getaffinity(Pid::from_raw(0)).unwrap(), child] {
                let on: Vec<usize> = (0..nix::sched::CpuSet::count())
                    .filter(|c| set.is_set(*c).unwrap())
                    .collect();
                assert_eq!(on, [cpu]);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn stat_times_are_read_past_a_comm_with_spaces() {
        let line = "42 (a) b c) S 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0";
        assert_eq!(stat_ticks(line), Some(280));
        assert_eq!(stat_ticks("garbage"), None);
    }

    #[test]
    fn this_thread_is_found_and_its_time_read_on_linux() {
        if std::path::Path::new("/proc/thread-self").exists() {
            let tid = current_tid().expect("this thread's id");
            // Busy until the kernel has charged this thread a tick (10 ms).
            let spin = std::time::Instant::now();
            while tid_cpu(tid) == Duration::ZERO {
                assert!(
                    spin.elapsed() < Duration::from_secs(10),
                    "no CPU time charged"
                );
                std::hint::black_box((0..1000u64).sum::<u64>());
            }
        }
    }

    #[test]
    fn this_process_has_a_resident_set_on_linux() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(rss_bytes("self").is_some_and(|b| b > 0));
        }
    }
}
