//! Timestamps as tcpdump prints them (`-t` … `-ttttt`).
//!
//! tcpdump prints local time; sift prints UTC and computes the calendar from the epoch itself
//! (no time-zone database). On the machines sift is tested on `TZ` is UTC, so the two agree; on
//! a machine in another zone `-tttt` and the default format differ from tcpdump's by the offset.

use crate::out::Out;
use sift_pcap::Timestamp;

/// Which timestamp to print before each packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// `-t`: none.
    None,
    /// Default: `HH:MM:SS.ffffff` (UTC).
    #[default]
    TimeOfDay,
    /// `-tt`: seconds since the epoch, `S.ffffff`.
    Epoch,
    /// `-ttt`: delta from the previous packet, `HH:MM:SS.ffffff`.
    DeltaPrevious,
    /// `-tttt`: `YYYY-MM-DD HH:MM:SS.ffffff` (UTC).
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

/// Writes `ts` in `format` (without the trailing space). `prev` and `first` feed the deltas.
pub(crate) fn write(
    out: &mut Vec<u8>,
    format: TimeFormat,
    ts: Timestamp,
    prev: Option<Timestamp>,
    first: Option<Timestamp>,
    nano: bool,
) {
    match format {
        TimeFormat::None => {}
        TimeFormat::TimeOfDay => hms(out, ts.secs, ts.nanos, nano, true),
        TimeFormat::Epoch => {
            out.u(ts.secs);
            frac(out, ts.nanos, nano);
        }
        TimeFormat::DateTime => {
            let (y, m, d) = civil_from_days((ts.secs / 86_400) as i64);
            out.dec_width(y.max(0) as u64, 4);
            out.push(b'-');
            out.dec_width(u64::from(m), 2);
            out.push(b'-');
            out.dec_width(u64::from(d), 2);
            out.push(b' ');
            hms(out, ts.secs, ts.nanos, nano, true);
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
        write(&mut v, format, ts, prev, prev, nano);
        String::from_utf8(v).unwrap()
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
