//! Process CPU time and peak memory, from `getrusage`: the benchmark's words per CPU-second and
//! the memory target are measured with these.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// user + system CPU seconds of the whole process (all threads) so far.
    pub cpu_seconds: f64,
    /// Peak resident set size of the process so far, in bytes.
    pub peak_rss_bytes: u64,
}

pub fn now() -> Usage {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0;
    if !ok {
        return Usage::default();
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Usage {
        cpu_seconds: secs(ru.ru_utime) + secs(ru.ru_stime),
        peak_rss_bytes: ru.ru_maxrss as u64 * 1024,
    }
}
