//! RFC 3339 times for ended records (§4.3: `at` is an RFC 3339 time).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 9999-12-31T23:59:59Z, the last second RFC 3339's four-digit year can write.
const LAST_WRITABLE: Duration = Duration::from_secs(253_402_300_799);

/// `at` as RFC 3339 with whole seconds (`2026-11-30T12:00:00Z`).
///
/// The clock is the server's own, so a time outside what RFC 3339 can write means a broken
/// clock; it is clamped to the nearest writable second rather than failing the end of an
/// instance (humantime's formatter would panic on it).
pub(crate) fn rfc3339(at: SystemTime) -> String {
    let clamped = match at.duration_since(UNIX_EPOCH) {
        Err(_) => UNIX_EPOCH,
        Ok(d) if d > LAST_WRITABLE => UNIX_EPOCH + LAST_WRITABLE,
        Ok(_) => at,
    };
    humantime::format_rfc3339_seconds(clamped).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_whole_seconds_in_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_040_000) + Duration::from_millis(700);
        assert_eq!(rfc3339(t), "2026-11-30T12:00:00Z");
    }

    #[test]
    fn clamps_a_broken_clock_instead_of_panicking() {
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00Z"
        );
        let far = UNIX_EPOCH + Duration::from_secs(400_000_000_000);
        assert_eq!(rfc3339(far), "9999-12-31T23:59:59Z");
    }
}
