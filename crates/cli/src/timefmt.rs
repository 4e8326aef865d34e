//! Timestamps as tcpdump prints them. Times are shown in UTC (tcpdump uses the local zone; our
//! machines run in UTC, and UTC keeps output reproducible).

use sift_pcap::Timestamp;

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `HH:MM:SS.ffffff` (or nine fractional digits with `nano`), tcpdump's default.
pub fn time_of_day(ts: Timestamp, nano: bool) -> String {
    let secs_of_day = ts.secs % 86_400;
    let (h, m, s) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
    if nano {
        format!("{h:02}:{m:02}:{s:02}.{:09}", ts.nanos)
    } else {
        format!("{h:02}:{m:02}:{s:02}.{:06}", ts.nanos / 1000)
    }
}

/// `YYYY-MM-DD HH:MM:SS.ffffff`, tcpdump's `-tttt`.
#[allow(dead_code)] // Used by the printer of the next issue; tested here.
pub fn date_time(ts: Timestamp, nano: bool) -> String {
    let (y, mo, d) = civil_from_days((ts.secs / 86_400) as i64);
    format!("{y:04}-{mo:02}-{d:02} {}", time_of_day(ts, nano))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        let t = Timestamp::new(1_700_000_000, 123_456_789);
        assert_eq!(time_of_day(t, false), "22:13:20.123456");
        assert_eq!(time_of_day(t, true), "22:13:20.123456789");
        assert_eq!(date_time(t, false), "2023-11-14 22:13:20.123456");
        assert_eq!(date_time(Timestamp::new(951_782_400, 0), false), "2000-02-29 00:00:00.000000");
        assert_eq!(date_time(Timestamp::new(0, 0), false), "1970-01-01 00:00:00.000000");
    }
}
