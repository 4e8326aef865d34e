//! Timestamps as tcpdump prints them (`-t` … `-ttttt`).
//!
//! tcpdump prints the default and `-tttt` formats in local time, with the offset from UTC that
//! the time zone rules give for each packet's own instant (a capture that spans a change to or
//! from summer time changes offset in the middle, as tcpdump's does). This crate knows no time
//! zone rules: the caller passes the offset as a function ([`UtcOffset`]; sift's command line
//! asks the C library, as tcpdump does), and without one the times are UTC. The calendar is
//! computed here from the epoch.

use crate::out::Out;
use sift_pcap::{FracUnit, Timestamp, Timeval};

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

/// The fraction as tcpdump prints `tv_usec`: `%06u` (`%09u` with `--nano`) of its low 32
/// bits, so that a record's out-of-range fraction shows as recorded (`.1000000`).
fn frac_digits(out: &mut Vec<u8>, frac: i64, nano: bool) {
    out.dec_width(u64::from(frac as u32), if nano { 9 } else { 6 });
}

/// What tcpdump 4.99 prints instead of a time whose seconds have bit 31 set (as a 32-bit
/// value: 2038-01-19T03:14:08Z and later until 2106, negative times, and such deltas).
const CONVERSION_ERROR: &[u8] = b"[Error converting time]";

/// tcpdump's `ts_date_hmsfrac_print`: `[YYYY-MM-DD ]HH:MM:SS.frac` of a `struct timeval` on
/// `zone`'s clock (UTC without; hours wrap at 24, also for deltas), or [`CONVERSION_ERROR`]
/// (tcpdump tests the seconds before it converts them to local time).
fn date_hms(out: &mut Vec<u8>, tv: Timeval, with_date: bool, nano: bool, zone: Option<UtcOffset>) {
    if tv.sec as u32 & 0x8000_0000 != 0 {
        out.extend_from_slice(CONVERSION_ERROR);
        return;
    }
    let secs = tv.sec.saturating_add(zone.map_or(0, |offset| offset(tv.sec)));
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    if i32::try_from(year - 1900).is_err() {
        out.extend_from_slice(CONVERSION_ERROR);
        return;
    }
    if with_date {
        out.dec_width(year.max(0) as u64, 4);
        out.push(b'-');
        out.dec_width(u64::from(month), 2);
        out.push(b'-');
        out.dec_width(u64::from(day), 2);
        out.push(b' ');
    }
    let s = secs.rem_euclid(86_400) as u64;
    out.dec_width(s / 3600, 2);
    out.push(b':');
    out.dec_width(s / 60 % 60, 2);
    out.push(b':');
    out.dec_width(s % 60, 2);
    out.push(b'.');
    frac_digits(out, tv.frac, nano);
}

/// Writes `ts` in `format` (without the trailing space). `prev` and `first` feed the deltas;
/// `zone` gives local time.
///
/// Times are what libpcap hands tcpdump ([`Timestamp::timeval`], at microseconds unless
/// `nano`), printed as tcpdump 4.99 prints them: out-of-range fractions as recorded, seconds
/// with bit 31 set as [`CONVERSION_ERROR`], `-tt` seconds as 32 bits, deltas in the signed
/// arithmetic of `netdissect_timevalsub` (a reference time of 0.000000 counts as none).
pub(crate) fn write(
    out: &mut Vec<u8>,
    format: TimeFormat,
    ts: Timestamp,
    prev: Option<Timestamp>,
    first: Option<Timestamp>,
    nano: bool,
    zone: Option<UtcOffset>,
) {
    let unit = if nano { FracUnit::Nanos } else { FracUnit::Micros };
    let tv = ts.timeval(unit);
    match format {
        TimeFormat::None => {}
        TimeFormat::TimeOfDay => date_hms(out, tv, false, nano, zone),
        TimeFormat::Epoch => {
            if tv.sec as u32 & 0x8000_0000 != 0 {
                out.extend_from_slice(CONVERSION_ERROR);
                return;
            }
            out.u(u64::from(tv.sec as u32));
            out.push(b'.');
            frac_digits(out, tv.frac, nano);
        }
        TimeFormat::DateTime => date_hms(out, tv, true, nano, zone),
        TimeFormat::DeltaPrevious | TimeFormat::DeltaFirst => {
            let base = if format == TimeFormat::DeltaPrevious { prev } else { first };
            // tcpdump keeps its reference in a timeval that starts at zero: zero means unset.
            let base = base.map(|b| b.timeval(unit)).filter(|b| *b != Timeval::default());
            let base = base.unwrap_or(tv);
            // tcpdump prints a negative delta with a leading '-'.
            let (neg, a, b) = if tv >= base { (false, tv, base) } else { (true, base, tv) };
            let mut delta =
                Timeval { sec: a.sec.wrapping_sub(b.sec), frac: a.frac.wrapping_sub(b.frac) };
            if delta.frac < 0 {
                delta.sec = delta.sec.wrapping_sub(1);
                delta.frac += i64::from(unit.per_sec());
            }
            out.push(if neg { b'-' } else { b' ' });
            date_hms(out, delta, false, nano, None);
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
