//! Retry policy: bounded attempts, exponential backoff with jitter, and `Retry-After` honoured
//! (seconds or an HTTP date) but capped so a hostile or confused registry cannot park a CI job.
//!
//! Defaults follow crane and oras: a handful of attempts starting below a second. Tests use
//! [`RetryPolicy::fast`] so fault tests stay quick.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often and how patiently to retry temporary failures.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts including the first one (1 means no retry). Default 5, like oras.
    pub max_attempts: u32,
    /// Delay before the first retry. Default 500 ms.
    pub base_delay: Duration,
    /// Upper bound of the exponential delay. Default 10 s.
    pub max_delay: Duration,
    /// Upper bound for a registry's `Retry-After`. Default 60 s.
    pub retry_after_cap: Duration,
    /// Fraction of random spread added to each delay so parallel clients do not retry in step.
    /// Default 0.2.
    pub jitter: f64,
    /// Retry a connection refused by a loopback address or an explicit port too. Off by
    /// default (nothing listens there, and five attempts only delay the message); on when the
    /// user sets the attempts (`--retries`), e.g. for a registry that is still starting.
    pub retry_refused: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
            retry_after_cap: Duration::from_secs(60),
            jitter: 0.2,
            retry_refused: false,
        }
    }
}

impl RetryPolicy {
    /// A policy for tests: same attempts, millisecond delays, `Retry-After` still honoured up to
    /// 5 s so tests can prove it is read.
    pub fn fast() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            retry_after_cap: Duration::from_secs(5),
            jitter: 0.2,
            retry_refused: false,
        }
    }

    /// A policy that never retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The delay before retry number `retry` (1 for the first retry). A `Retry-After` from the
    /// registry wins over the computed backoff, capped at `retry_after_cap`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(ra) = retry_after {
            return ra.min(self.retry_after_cap);
        }
        let exp = 2u32.saturating_pow(retry.saturating_sub(1));
        let base = self.base_delay.saturating_mul(exp).min(self.max_delay);
        let spread = base.as_secs_f64() * self.jitter * random_unit();
        base + Duration::try_from_secs_f64(spread).unwrap_or_default()
    }
}

/// Says on standard error what is retried, why and when, then waits: one line per retry, so an
/// unreachable registry is never silent (`attempt` is the attempt that just failed, 1-based).
/// Returns the delay waited.
pub fn wait_before_retry(
    policy: &RetryPolicy,
    what: &str,
    why: &str,
    attempt: u32,
    max_attempts: u32,
    retry_after: Option<Duration>,
) -> Duration {
    let delay = policy.delay(attempt, retry_after);
    eprintln!("{}", retry_notice(what, why, attempt, max_attempts, delay));
    std::thread::sleep(delay);
    delay
}

/// The cause a retry notice gives for `error`: its text with its causes, without the
/// `what: ` the notice already names (an empty `what` strips nothing). The one place a registry error becomes text inside the
/// library: the notice is a line on stderr while the operation goes on, not an error that
/// travels.
pub fn why(error: &dyn std::error::Error, what: &str) -> String {
    let why = crate::errors::error_chain(error);
    match why.strip_prefix(&format!("{what}: ")) {
        Some(rest) if !what.is_empty() => rest.to_string(),
        _ => why,
    }
}

/// The line [`wait_before_retry`] prints.
fn retry_notice(what: &str, why: &str, attempt: u32, max_attempts: u32, delay: Duration) -> String {
    format!(
        "warning: {what} failed: {why}; retrying in {:.1} s (attempt {} of {max_attempts})",
        delay.as_secs_f64(),
        attempt + 1
    )
}

/// A number in [0, 1) from the clock and a counter: enough spread for jitter, no RNG crate.
fn random_unit() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses a `Retry-After` value: delay seconds, or an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`) turned into a delay from `now` (a date in the past gives zero).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = parse_http_date(value)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

fn parse_http_date(s: &str) -> Option<SystemTime> {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    let rest = s.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    if parts.len() != 5 || parts[4] != "GMT" {
        return None;
    }
    let day: u32 = parts[0].parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == parts[1])? as u32
        + 1;
    let year: i64 = parts[2].parse().ok()?;
    let hms: Vec<u64> = parts[3]
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if hms.len() != 3
        || hms[0] > 23
        || hms[1] > 59
        || hms[2] > 60
        || !(1..=31).contains(&day)
        || !(1970..=9999).contains(&year)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days.checked_mul(86_400)? + (hms[0] * 3600 + hms[1] * 60 + hms[2]) as i64;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_notice_says_what_why_and_when() {
        assert_eq!(
            retry_notice(
                "GET http://h/x/manifests/1",
                "connection refused",
                1,
                5,
                Duration::from_millis(520)
            ),
            "warning: GET http://h/x/manifests/1 failed: connection refused; retrying in 0.5 s (attempt 2 of 5)"
        );
    }

    #[test]
    fn retry_after_seconds_and_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let p = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        assert_eq!(p.delay(1, None), Duration::from_millis(500));
        assert_eq!(p.delay(2, None), Duration::from_millis(1000));
        assert_eq!(p.delay(10, None), Duration::from_secs(10));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(60)
        );
        let j = RetryPolicy::default();
        for _ in 0..100 {
            let d = j.delay(1, None);
            assert!(
                d >= Duration::from_millis(500) && d <= Duration::from_millis(600),
                "{d:?}"
            );
        }
    }
}
