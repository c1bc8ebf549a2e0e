//! The `Range` header as catalogd answers it: Go's `net/http` `parseRange` and the verdicts
//! `serveContent` gives for its result, ported line for line so every form gets Go's status.
//! Numbers are Go's `strconv.ParseInt(s, 10, 64)`: a value past `i64::MAX` (such as
//! `bytes=5-18446744073709551615`) is a malformed header, answered `416` without
//! `Content-Range`, never an overflow.

/// What a `Range` header asks of a body of a given size, as Go's `serveContent` answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RangeAsk {
    /// `200` with the whole body: no header, no range in it (`bytes=`), every range ignored
    /// (their sizes add up past the body, Go's guard against abuse), or an empty body that no
    /// range overlaps. Several valid ranges also get the whole body here, where Go sends a
    /// `multipart/byteranges` answer: RFC 9110 allows a server to do so.
    Whole,
    /// `206` with bytes `start .. start + length` (Go's `httpRange`; `length` may be 0, as Go
    /// answers `bytes=-0`).
    Part {
        /// First byte sent.
        start: u64,
        /// Bytes sent.
        length: u64,
    },
    /// `416` with `Content-Range: bytes */SIZE` and Go's text `invalid range: failed to
    /// overlap`: every range starts at or past the end.
    NoOverlap,
    /// `416` with Go's text `invalid range`: the header is malformed.
    Invalid,
}

impl RangeAsk {
    /// The `Content-Range` of a partial answer exactly as Go writes it
    /// (`bytes START-(START+LENGTH-1)/SIZE`, which reads `bytes 100-99/100` for an empty
    /// suffix range).
    pub(super) fn content_range(start: u64, length: u64, size: u64) -> String {
        let last = i128::from(start) + i128::from(length) - 1;
        format!("bytes {start}-{last}/{size}")
    }
}

/// Go's `textproto.TrimString`: ASCII space, tab, CR and LF off both ends.
fn trim(s: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = s.iter().position(|b| !ws(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
    &s[start..end]
}

/// Go's `strconv.ParseInt(s, 10, 64)`: an optional sign, decimal digits, within `i64`.
fn parse_int(s: &[u8]) -> Option<i64> {
    std::str::from_utf8(s).ok()?.parse::<i64>().ok()
}

/// Go's `parseRange(header, size)` followed by `serveContent`'s handling of its result.
/// `header` is the raw `Range` value (`None`: no header, or one `If-Range` cancelled).
pub(super) fn ask(header: Option<&[u8]>, size: u64) -> RangeAsk {
    let Some(s) = header.filter(|h| !h.is_empty()) else {
        return RangeAsk::Whole;
    };
    // A body past i64::MAX bytes cannot exist here; Go's sizes are int64 too.
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let Some(spec) = s.strip_prefix(b"bytes=") else {
        return RangeAsk::Invalid;
    };
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    let mut no_overlap = false;
    for ra in spec.split(|b| *b == b',') {
        let ra = trim(ra);
        if ra.is_empty() {
            continue;
        }
        let Some(dash) = ra.iter().position(|b| *b == b'-') else {
            return RangeAsk::Invalid;
        };
        let (start, end) = (trim(&ra[..dash]), trim(&ra[dash + 1..]));
        let range = if start.is_empty() {
            // A suffix: the last N bytes, N a non-negative integer (RFC 7233 2.1).
            if end.is_empty() || end[0] == b'-' {
                return RangeAsk::Invalid;
            }
            let Some(n) = parse_int(end).filter(|n| *n >= 0) else {
                return RangeAsk::Invalid;
            };
            let first = size - n.min(size);
            (first, size - first)
        } else {
            let Some(first) = parse_int(start).filter(|i| *i >= 0) else {
                return RangeAsk::Invalid;
            };
            if first >= size {
                no_overlap = true;
                continue;
            }
            if end.is_empty() {
                (first, size - first)
            } else {
                let Some(last) = parse_int(end).filter(|i| *i >= first) else {
                    return RangeAsk::Invalid;
                };
                // first < size here, so neither the clamp nor the length can overflow.
                let last = last.min(size - 1);
                (first, last - first + 1)
            }
        };
        ranges.push(range);
    }
    if no_overlap && ranges.is_empty() {
        // Go ignores the range of an empty body rather than answer 416.
        return if size == 0 {
            RangeAsk::Whole
        } else {
            RangeAsk::NoOverlap
        };
    }
    // Go's sumRangesSize: lengths are each at most `size`, so a sum in i128 cannot overflow.
    let total: i128 = ranges.iter().map(|(_, l)| i128::from(*l)).sum();
    match ranges.as_slice() {
        [(start, length)] if total <= i128::from(size) => RangeAsk::Part {
            start: u64::try_from(*start).unwrap_or(0),
            length: u64::try_from(*length).unwrap_or(0),
        },
        _ => RangeAsk::Whole,
    }
}

/// Go's `checkIfRange` with no `ETag` (catalogd sets none): the range counts only when
/// `If-Range` is absent or is the HTTP date of the body's modification time, to the second.
/// An entity tag never matches, and neither does a value that is no date.
pub(super) fn if_range_holds(if_range: Option<&[u8]>, modified: std::time::SystemTime) -> bool {
    let Some(value) = if_range.filter(|v| !v.is_empty()) else {
        return true;
    };
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    let secs = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .ok()
    };
    match httpdate::parse_http_date(text) {
        Ok(date) => secs(date).is_some() && secs(date) == secs(modified),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(start: u64, length: u64) -> RangeAsk {
        RangeAsk::Part { start, length }
    }

    /// Each form with the answer Go's `parseRange` and `serveContent` give (read from
    /// `net/http/fs.go`) for a body of 100 bytes.
    #[test]
    fn every_form_gets_gos_answer() {
        let cases: &[(&str, RangeAsk)] = &[
            ("bytes=0-9", part(0, 10)),
            ("bytes=-10", part(90, 10)),
            ("bytes=95-", part(95, 5)),
            ("bytes=100-", RangeAsk::NoOverlap),
            ("bytes=5-18446744073709551615", RangeAsk::Invalid),
            ("bytes=5-9223372036854775807", part(5, 95)),
            ("bytes=5-9223372036854775808", RangeAsk::Invalid),
            ("bytes=18446744073709551615-", RangeAsk::Invalid),
            ("bytes=9223372036854775807-", RangeAsk::NoOverlap),
            ("bytes=-18446744073709551615", RangeAsk::Invalid),
            ("bytes=-9223372036854775807", part(0, 100)),
            ("bytes=-0", part(100, 0)),
            ("bytes=--5", RangeAsk::Invalid),
            ("bytes=+5-+9", part(5, 5)),
            ("bytes=9-5", RangeAsk::Invalid),
            ("bytes=5", RangeAsk::Invalid),
            ("bytes=", RangeAsk::Whole),
            ("bytes= , ", RangeAsk::Whole),
            ("bytes= 5 - 9 ", part(5, 5)),
            ("items=0-9", RangeAsk::Invalid),
            ("bytes=0-9,20-29", RangeAsk::Whole),
            ("bytes=0-9,x", RangeAsk::Invalid),
            ("bytes=200-,300-", RangeAsk::NoOverlap),
            ("bytes=200-,0-4", part(0, 5)),
            ("bytes=200-\u{80}", RangeAsk::NoOverlap),
            ("bytes=0-99,0-99", RangeAsk::Whole),
        ];
        for (header, want) in cases {
            assert_eq!(ask(Some(header.as_bytes()), 100), *want, "{header}");
        }
        assert_eq!(ask(None, 100), RangeAsk::Whole);
    }

    /// An empty body: no overlap means the whole (empty) body, as Go answers.
    #[test]
    fn an_empty_body_ignores_ranges_that_miss_it() {
        assert_eq!(ask(Some(b"bytes=0-"), 0), RangeAsk::Whole);
        assert_eq!(ask(Some(b"bytes=-5"), 0), part(0, 0));
        assert_eq!(RangeAsk::content_range(0, 0, 0), "bytes 0--1/0");
        assert_eq!(RangeAsk::content_range(100, 0, 100), "bytes 100-99/100");
        assert_eq!(RangeAsk::content_range(5, 95, 100), "bytes 5-99/100");
    }

    #[test]
    fn if_range_needs_the_exact_date() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let date = httpdate::fmt_http_date(t);
        assert!(if_range_holds(None, t));
        assert!(if_range_holds(Some(date.as_bytes()), t));
        assert!(!if_range_holds(Some(b"Mon, 01 Jan 2001 00:00:00 GMT"), t));
        assert!(!if_range_holds(Some(b"\"etag\""), t));
        assert!(!if_range_holds(Some(b"junk"), t));
    }
}
