//! Timestamps as tcpdump prints them (`-t` … `-ttttt`).
//!
//! tcpdump prints the default and `-tttt` formats in local time, with the offset from UTC that
//! the time zone rules give for each packet's own instant (a capture that spans a change to or
//! from summer time changes offset in the middle, as tcpdump's does). This crate knows no time
//! zone rules: the caller passes the offset as a function ([`UtcOffset`]; sift's command line
//! asks the C library, as tcpdump does), and without one the times are UTC. The calendar is
//! computed here from the epoch.

use crate::out::Out;
use sift_pcap::Timestamp;

/// The offset of local time from UTC, in seconds (east positive), at a Unix time: what the
/// time zone rules say for that instant.
pub type UtcOffset = fn(secs: i64) -> i64;

/// Which timestamp to print before each packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// `-t`: none.
    None,
    /// Default: `HH:MM:SS.ffffff` (local time, or UTC without a [`UtcOffset`]).
    #[default]
    TimeOfDay,
    /// `-tt`: seconds since the epoch, `S.ffffff`.
    Epoch,
    /// `-ttt`: delta from the previous packet, `HH:MM:SS.ffffff`.
    DeltaPrevious,
    /// `-tttt`: `YYYY-MM-DD HH:MM:SS.ffffff` (local time, or UTC without a [`UtcOffset`]).
    DateTime,
    /// `-ttttt`: delta from the first packet.
    DeltaFirst,
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
/// `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
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

fn frac(out: &mut Vec<u8>, nanos: u32, nano: bool) {
    out.push(b'.');
    if nano {
        out.dec_width(u64::from(nanos), 9);
    } else {
        out.dec_width(u64::from(nanos / 1000), 6);
    }
}

/// `HH:MM:SS.ffffff` of a number of seconds (hours wrap at 24 for times of day; deltas keep
/// counting hours as tcpdump does).
pub(crate) fn hms(out: &mut Vec<u8>, secs: u64, nanos: u32, nano: bool, wrap: bool) {
    let s = if wrap { secs % 86_400 } else { secs };
    out.dec_width(s / 3600, 2);
    out.push(b':');
    out.dec_width(s / 60 % 60, 2);
    out.push(b':');
    out.dec_width(s % 60, 2);
    frac(out, nanos, nano);
}

/// Seconds since the epoch of `ts` on the local clock (`zone`'s offset added; UTC without).
fn local_secs(ts: Timestamp, zone: Option<UtcOffset>) -> i64 {
    let secs = i64::try_from(ts.secs).unwrap_or(i64::MAX);
    secs.saturating_add(zone.map_or(0, |offset| offset(secs)))
}

/// Writes `ts` in `format` (without the trailing space). `prev` and `first` feed the deltas;
/// `zone` gives local time.
pub(crate) fn write(
    out: &mut Vec<u8>,
    format: TimeFormat,
    ts: Timestamp,
    prev: Option<Timestamp>,
    first: Option<Timestamp>,
    nano: bool,
    zone: Option<UtcOffset>,
) {
    match format {
        TimeFormat::None => {}
        TimeFormat::TimeOfDay => {
            let secs = local_secs(ts, zone).rem_euclid(86_400) as u64;
            hms(out, secs, ts.nanos, nano, true);
        }
        TimeFormat::Epoch => {
            out.u(ts.secs);
            frac(out, ts.nanos, nano);
        }
        TimeFormat::DateTime => {
            let local = local_secs(ts, zone);
            let (y, m, d) = civil_from_days(local.div_euclid(86_400));
            out.dec_width(y.max(0) as u64, 4);
            out.push(b'-');
            out.dec_width(u64::from(m), 2);
            out.push(b'-');
            out.dec_width(u64::from(d), 2);
            out.push(b' ');
            hms(out, local.rem_euclid(86_400) as u64, ts.nanos, nano, true);
        }
        TimeFormat::DeltaPrevious | TimeFormat::DeltaFirst => {
            let base = if format == TimeFormat::DeltaPrevious { prev } else { first };
            let base = base.unwrap_or(ts);
            // Without nanosecond output, libpcap hands tcpdump microsecond timestamps: the
            // delta is taken between the truncated values.
            let micro = |t: Timestamp| {
                if nano { t } else { Timestamp::new(t.secs, t.nanos / 1000 * 1000) }
            };
            let (ts, base) = (micro(ts), micro(base));
            // tcpdump prints a negative delta with a leading '-'.
            let (neg, a, b) = if ts >= base { (false, ts, base) } else { (true, base, ts) };
            let mut secs = a.secs - b.secs;
            let nanos = if a.nanos >= b.nanos {
                a.nanos - b.nanos
            } else {
                secs -= 1;
                a.nanos + 1_000_000_000 - b.nanos
            };
            out.push(if neg { b'-' } else { b' ' });
            hms(out, secs, nanos, nano, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(format: TimeFormat, ts: Timestamp, prev: Option<Timestamp>, nano: bool) -> String {
        let mut v = Vec::new();
        write(&mut v, format, ts, prev, prev, nano, None);
        String::from_utf8(v).unwrap()
    }

    /// New York's rules from 2007 on, enough for the instants below: UTC-4 from the second
    /// Sunday of March to the first Sunday of November, else UTC-5.
    fn new_york(secs: i64) -> i64 {
        // 2023-03-12 07:00 UTC and 2023-11-05 06:00 UTC.
        if (1_678_604_400..1_699_164_000).contains(&secs) { -4 * 3600 } else { -5 * 3600 }
    }

    fn local(format: TimeFormat, ts: Timestamp, zone: UtcOffset) -> String {
        let mut v = Vec::new();
        write(&mut v, format, ts, None, None, false, Some(zone));
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn local_time_uses_the_offset_of_each_instant() {
        let summer = Timestamp::new(1_690_000_000, 500_000_000); // 2023-07-22 04:26:40 UTC
        assert_eq!(local(TimeFormat::TimeOfDay, summer, new_york), "00:26:40.500000");
        assert_eq!(local(TimeFormat::DateTime, summer, new_york), "2023-07-22 00:26:40.500000");
        let winter = Timestamp::new(1_700_000_000, 0); // 2023-11-14 22:13:20 UTC
        assert_eq!(local(TimeFormat::DateTime, winter, new_york), "2023-11-14 17:13:20.000000");
        // Before the epoch on the local clock, and a day back.
        let epoch = Timestamp::new(0, 0);
        assert_eq!(local(TimeFormat::DateTime, epoch, new_york), "1969-12-31 19:00:00.000000");
        assert_eq!(local(TimeFormat::TimeOfDay, epoch, new_york), "19:00:00.000000");
        // East of UTC, across midnight; epoch seconds never change.
        let kolkata: UtcOffset = |_| 5 * 3600 + 1800;
        let late = Timestamp::new(1_700_000_000, 0);
        assert_eq!(local(TimeFormat::DateTime, late, kolkata), "2023-11-15 03:43:20.000000");
        assert_eq!(local(TimeFormat::Epoch, late, kolkata), "1700000000.000000");
    }

    #[test]
    fn formats_known_instants() {
        let t = Timestamp::new(1_700_000_000, 123_456_789);
        assert_eq!(show(TimeFormat::TimeOfDay, t, None, false), "22:13:20.123456");
        assert_eq!(show(TimeFormat::TimeOfDay, t, None, true), "22:13:20.123456789");
        assert_eq!(show(TimeFormat::Epoch, t, None, false), "1700000000.123456");
        assert_eq!(show(TimeFormat::DateTime, t, None, false), "2023-11-14 22:13:20.123456");
        let leap = Timestamp::new(951_782_400, 0);
        assert_eq!(show(TimeFormat::DateTime, leap, None, false), "2000-02-29 00:00:00.000000");
        let earlier = Timestamp::new(1_699_999_999, 999_999_000);
        assert_eq!(show(TimeFormat::DeltaPrevious, t, Some(earlier), false), " 00:00:00.123457");
        assert_eq!(show(TimeFormat::DeltaPrevious, earlier, Some(t), false), "-00:00:00.123457");
        assert_eq!(show(TimeFormat::DeltaPrevious, t, None, false), " 00:00:00.000000");
    }
}
