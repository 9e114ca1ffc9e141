//! RFC 3339 timestamps on the wire, in UTC: whole seconds (`2026-11-30T12:00:00Z`, an
//! ended record's `at`, §4.3) and milliseconds (`2026-11-30T12:00:00.000Z`, a `push/event`'s
//! `timestamp`, SPEC §9.1).
//!
//! The time is an argument (this crate holds no clock); the calendar is `humantime`'s.
//! A time RFC 3339 cannot write — before 1970 or after year 9999, which on a server's own
//! clock means a broken clock — is clamped to the nearest one it can, so writing a
//! timestamp never fails (humantime's formatter panics on such a time).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 9999-12-31T23:59:59.999999999Z, the last instant RFC 3339's four-digit year can write.
const LAST_WRITABLE: Duration = Duration::new(253_402_300_799, 999_999_999);

/// `t` as RFC 3339 in UTC with whole seconds (`2026-11-30T12:00:00Z`); the fraction of a
/// second is dropped. Clamped to 1970-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z.
pub fn rfc3339_seconds(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(clamp(t)).to_string()
}

/// `t` as RFC 3339 in UTC with milliseconds (`2026-11-30T12:00:00.000Z`); the rest of the
/// second is dropped. Clamped to 1970-01-01T00:00:00.000Z ..= 9999-12-31T23:59:59.999Z.
pub fn rfc3339_millis(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(clamp(t)).to_string()
}

/// `t`, or the nearest time RFC 3339 can write (§4.3, SPEC §9.1 [project]: clamped, never
/// refused).
fn clamp(t: SystemTime) -> SystemTime {
    match t.duration_since(UNIX_EPOCH) {
        Err(_) => UNIX_EPOCH,
        Ok(d) if d > LAST_WRITABLE => UNIX_EPOCH + LAST_WRITABLE,
        Ok(_) => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_whole_seconds_in_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_040_000) + Duration::from_millis(700);
        assert_eq!(rfc3339_seconds(t), "2026-11-30T12:00:00Z");
    }

    #[test]
    fn formats_milliseconds_in_utc() {
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(951_782_400_000 + 3_723_456); // 2000-02-29
        assert_eq!(rfc3339_millis(t), "2000-02-29T01:02:03.456Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599); // last second of 2026
        assert_eq!(rfc3339_millis(t), "2026-12-31T23:59:59.000Z");
        // The microseconds are dropped, not rounded.
        let t = UNIX_EPOCH + Duration::from_micros(1_999_999);
        assert_eq!(rfc3339_millis(t), "1970-01-01T00:00:01.999Z");
    }

    #[test]
    fn clamps_a_broken_clock_instead_of_panicking() {
        let before = UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(rfc3339_seconds(before), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_millis(before), "1970-01-01T00:00:00.000Z");
        let far = UNIX_EPOCH + Duration::from_secs(400_000_000_000);
        assert_eq!(rfc3339_seconds(far), "9999-12-31T23:59:59Z");
        assert_eq!(rfc3339_millis(far), "9999-12-31T23:59:59.999Z");
        // The first second past year 9999, and the last one inside it, as they are.
        let past = UNIX_EPOCH + Duration::from_secs(253_402_300_800);
        assert_eq!(rfc3339_millis(past), "9999-12-31T23:59:59.999Z");
        let last = UNIX_EPOCH + Duration::from_millis(253_402_300_799_250);
        assert_eq!(rfc3339_seconds(last), "9999-12-31T23:59:59Z");
        assert_eq!(rfc3339_millis(last), "9999-12-31T23:59:59.250Z");
    }
}
