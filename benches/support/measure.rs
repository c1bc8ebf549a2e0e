//! What every benchmark reports besides wall time, read from /proc: the machine is shared, so
//! CPU seconds say more than wall time, and peak RSS is a goal of its own.

/// User + system CPU seconds this process has used so far (`/proc/self/stat`, ticks of 1/100 s).
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of the file (utime, stime) are 11 and 12 after the command name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Peak resident memory of this process in KiB (`VmHWM` in `/proc/self/status`).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Bytes of every file below `p` (the input size a throughput figure divides by).
#[allow(dead_code)] // not every bench that includes this file measures a folder
pub fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
