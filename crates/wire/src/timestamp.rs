//! When a packet was seen: seconds and nanoseconds since the Unix epoch.
//!
//! Every source of packets (capture files, capture rings, the generator) and every consumer
//! (printers, the firewall's state timeouts) speaks of time the same way, so the type lives in
//! the leaf crate. A clock's resolution is anything that can say how many units it counts per
//! second ([`UnitsPerSec`]); the pcap crate's `TsResolution` is one.
//!
//! Capture files are not always right about time, and tcpdump copies and prints what they say
//! rather than what they mean: libpcap hands a classic pcap record's fields on unchecked (a
//! "fraction" of a second may count several seconds), and computes pcapng times modulo 2^64.
//! So that sift copies and prints such files as tcpdump does, a [`Timestamp`] can hold a pcap
//! record's fields *as recorded* ([`Timestamp::from_record`]), and [`Timestamp::timeval`] gives
//! the `struct timeval` libpcap would hand tcpdump for it; [`Timestamp::instant`] gives the
//! point in time for everything else.

/// Nanoseconds in a second.
const NANOS_PER_SEC: u32 = 1_000_000_000;

/// A capture timestamp: seconds since the Unix epoch and nanoseconds within the second.
///
/// Nanoseconds are exact for every pcap file and for pcapng resolutions down to 1 ns; finer
/// resolutions are truncated to the nanosecond. `secs` counts modulo 2^64, as libpcap does:
/// a pcapng time before 1970 (a negative `if_tsoffset`) has `secs` ≥ 2^63.
///
/// # Records kept as recorded
///
/// Normally `nanos < 1_000_000_000`. A classic pcap record whose fraction field is a second or
/// more (a damaged or fuzzed file) is kept as recorded, so that writing it gives back the same
/// fields and printing it shows what tcpdump shows ([`Timestamp::from_record`]); such a
/// timestamp has `nanos ≥ 1_000_000_000` and is read through [`timeval`](Timestamp::timeval)
/// and [`instant`](Timestamp::instant), not field by field:
///
/// * with `secs < 2^32`, `secs` is the record's seconds and `nanos` its fraction in
///   nanoseconds, an unsigned count past one second (a nanosecond field, or a microsecond field
///   times 1000 when that stays below 2^31);
/// * otherwise (a fraction too large for that, which libpcap reads as signed or unsigned
///   depending on the file's byte order: [`FieldSign`]) the low 32 bits of `secs` are the
///   record's seconds, the high 32 bits its fraction field, and `nanos − 1_000_000_000` says
///   how to read that field.
///
/// Both fields stay plain integers so that a timestamp can be stored and rebuilt as
/// `(secs, nanos)` without losing any of this.
///
/// Timestamps are ordered by their [`instant`](Timestamp::instant), seconds read as signed
/// (times before 1970 first), then by their fields (so that only equal timestamps compare
/// equal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z (see the type's documentation for records kept
    /// as recorded).
    pub secs: u64,
    /// Nanoseconds, `0..1_000_000_000` (see the type's documentation for records kept as
    /// recorded).
    pub nanos: u32,
}

impl Timestamp {
    /// The key timestamps are ordered by.
    fn order_key(self) -> (i64, u32, u64, u32) {
        let t = self.instant();
        (t.secs as i64, t.nanos, self.secs, self.nanos)
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A clock resolution: how many units it counts per second.
pub trait UnitsPerSec: Copy {
    /// Units per second (at least 1).
    fn units_per_sec(self) -> u64;
}

/// A plain count of units per second.
impl UnitsPerSec for u64 {
    fn units_per_sec(self) -> u64 {
        self
    }
}

/// What a classic pcap record's fraction field counts, and what tcpdump asks libpcap for
/// (microseconds unless `--nano`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FracUnit {
    /// Microseconds (magic `0xa1b2c3d4`; tcpdump's default).
    Micros,
    /// Nanoseconds (magic `0xa1b23c4d`; tcpdump `--nano`).
    Nanos,
}

impl FracUnit {
    /// Units in a second.
    pub const fn per_sec(self) -> u32 {
        match self {
            FracUnit::Micros => 1_000_000,
            FracUnit::Nanos => NANOS_PER_SEC,
        }
    }
}

/// How libpcap reads a classic pcap record's 32-bit fields on the little-endian hosts tcpdump
/// runs on: those of a file in the host's byte order are `bpf_int32` (signed), those of a
/// byte-swapped (big-endian) file come out of `SWAPLONG` unsigned. It matters only for a field
/// with its top bit set, and only for a fraction field scaled down (nanoseconds read as
/// microseconds divide differently) or compared (time deltas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldSign {
    /// A little-endian file: the fields are signed.
    Signed,
    /// A big-endian file: the fields are unsigned.
    Unsigned,
}

/// A timestamp as libpcap hands it to tcpdump (`struct timeval`, both members 64-bit on
/// x86-64 Linux) at one precision: what tcpdump prints, and what `pcap_dump` writes (the low 32
/// bits of each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timeval {
    /// `tv_sec`.
    pub sec: i64,
    /// `tv_usec`: microseconds or nanoseconds, as asked; normally below one second.
    pub frac: i64,
}

/// `nanos` of a timestamp whose fraction field is in the high half of `secs`, by kind.
const RAW_MICROS_SIGNED: u32 = NANOS_PER_SEC;
const RAW_MICROS_UNSIGNED: u32 = NANOS_PER_SEC + 1;
const RAW_NANOS_SIGNED: u32 = NANOS_PER_SEC + 2;

/// A fraction field kept in the high half of `secs`: its value, its unit and its sign.
struct RawField {
    secs: u32,
    frac: u32,
    unit: FracUnit,
    sign: FieldSign,
}

impl Timestamp {
    /// Builds a timestamp from seconds and nanoseconds (nanoseconds must be below 10^9).
    pub const fn new(secs: u64, nanos: u32) -> Self {
        Timestamp { secs, nanos }
    }

    /// The timestamp of a classic pcap record with seconds field `secs` and fraction field
    /// `frac` counting `unit`s, read with `sign`. A fraction of a second or more is kept as
    /// recorded (see the type's documentation), as libpcap keeps it.
    pub fn from_record(secs: u32, frac: u32, unit: FracUnit, sign: FieldSign) -> Timestamp {
        let secs64 = u64::from(secs);
        let raw = |kind: u32| Timestamp { secs: secs64 | u64::from(frac) << 32, nanos: kind };
        match unit {
            FracUnit::Micros if frac < 1_000_000 => Timestamp::new(secs64, frac * 1000),
            // Below 2^31 ns, signed and unsigned readings agree: an unsigned count will do.
            FracUnit::Micros if frac < (1 << 31) / 1000 => Timestamp::new(secs64, frac * 1000),
            FracUnit::Micros => raw(match sign {
                FieldSign::Signed => RAW_MICROS_SIGNED,
                FieldSign::Unsigned => RAW_MICROS_UNSIGNED,
            }),
            FracUnit::Nanos if frac < 1 << 31 || sign == FieldSign::Unsigned => {
                Timestamp::new(secs64, frac)
            }
            FracUnit::Nanos => raw(RAW_NANOS_SIGNED),
        }
    }

    /// Whether this is a plain point in time (its fraction is below one second), not a pcap
    /// record's out-of-range fields kept as recorded.
    pub const fn is_normal(self) -> bool {
        self.nanos < NANOS_PER_SEC
    }

    /// The fraction field kept in the high half of `secs`, if this timestamp holds one.
    fn raw_field(self) -> Option<RawField> {
        let (unit, sign) = match self.nanos {
            RAW_MICROS_SIGNED => (FracUnit::Micros, FieldSign::Signed),
            RAW_MICROS_UNSIGNED => (FracUnit::Micros, FieldSign::Unsigned),
            RAW_NANOS_SIGNED => (FracUnit::Nanos, FieldSign::Signed),
            _ => return None,
        };
        (self.secs > u64::from(u32::MAX)).then_some(RawField {
            secs: self.secs as u32,
            frac: (self.secs >> 32) as u32,
            unit,
            sign,
        })
    }

    /// The point in time: for a record kept as recorded, its fraction field read as an
    /// unsigned count and carried into the seconds; any other timestamp unchanged.
    pub fn instant(self) -> Timestamp {
        if self.is_normal() {
            return self;
        }
        let (secs, nanos) = match self.raw_field() {
            Some(raw) => {
                let per_sec = u64::from(raw.unit.per_sec());
                let scale = u64::from(NANOS_PER_SEC) / per_sec;
                let frac = u64::from(raw.frac);
                (u64::from(raw.secs) + frac / per_sec, frac % per_sec * scale)
            }
            None => {
                let nanos = u64::from(self.nanos);
                let ns = u64::from(NANOS_PER_SEC);
                (self.secs.wrapping_add(nanos / ns), nanos % ns)
            }
        };
        Timestamp { secs, nanos: nanos as u32 }
    }

    /// The `struct timeval` libpcap would hand tcpdump for this timestamp when asked for
    /// `unit`s: a record's fields as libpcap reads and scales them (a nanosecond field divided
    /// by 1000, truncating toward zero, as C does; a microsecond field times 1000), seconds
    /// modulo 2^64 read as signed.
    ///
    /// One difference is left: libpcap reads the seconds field of a little-endian pcap file as
    /// signed, so times past 2038-01-19 from such files are negative there (this only changes
    /// tcpdump's `-ttt`/`-ttttt` deltas across them); here they are positive, as from a
    /// big-endian file.
    pub fn timeval(self, unit: FracUnit) -> Timeval {
        if let Some(raw) = self.raw_field() {
            let frac = match raw.sign {
                FieldSign::Signed => i64::from(raw.frac as i32),
                FieldSign::Unsigned => i64::from(raw.frac),
            };
            let frac = match (raw.unit, unit) {
                (FracUnit::Micros, FracUnit::Nanos) => frac * 1000,
                (FracUnit::Nanos, FracUnit::Micros) => frac / 1000,
                _ => frac,
            };
            return Timeval { sec: i64::from(raw.secs), frac };
        }
        let nanos = i64::from(self.nanos);
        let frac = match unit {
            FracUnit::Micros => nanos / 1000,
            FracUnit::Nanos => nanos,
        };
        Timeval { sec: self.secs as i64, frac }
    }

    /// Converts a count of units of `resolution` since the epoch.
    pub fn from_units(units: u64, resolution: impl UnitsPerSec) -> Self {
        let ups = resolution.units_per_sec().max(1);
        let secs = units / ups;
        let frac = units % ups;
        let nanos = (u128::from(frac) * 1_000_000_000 / u128::from(ups)) as u32;
        Timestamp { secs, nanos }
    }

    /// Converts to a count of units of `resolution` since the epoch (of the
    /// [`instant`](Self::instant)); `None` if it does not fit in 64 bits.
    ///
    /// When some count converts back to exactly this timestamp (as when it was read at this
    /// resolution), that count is returned, so read → write → read is the identity even for
    /// resolutions that do not divide a nanosecond (2^-30 s); otherwise the time is truncated.
    pub fn to_units(self, resolution: impl UnitsPerSec) -> Option<u64> {
        let t = self.instant();
        let ups = u128::from(resolution.units_per_sec().max(1));
        let whole = u128::from(t.secs) * ups;
        let frac = u128::from(t.nanos) * ups / 1_000_000_000;
        let truncated = u64::try_from(whole + frac).ok()?;
        match truncated.checked_add(1) {
            Some(up)
                if Timestamp::from_units(truncated, resolution) != t
                    && Timestamp::from_units(up, resolution) == t =>
            {
                Some(up)
            }
            _ => Some(truncated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_trip() {
        let t = Timestamp::new(1_700_000_000, 123_456_789);
        assert_eq!(t.to_units(1_000_000_000u64), Some(1_700_000_000_123_456_789));
        assert_eq!(Timestamp::from_units(1_700_000_000_123_456, 1_000_000u64).nanos, 123_456_000);
        // 2^-30 s does not divide a nanosecond; what was read converts back to the same count.
        let binary = 1u64 << 30;
        for units in [0u64, 12_345, (1 << 40) + 7] {
            let t = Timestamp::from_units(units, binary);
            assert_eq!(t.to_units(binary), Some(units));
        }
        assert_eq!(Timestamp::new(u64::MAX, 0).to_units(1_000u64), None);
    }

    /// libpcap 1.10 on x86-64: what `pcap_dump` writes for a record read from a file of each
    /// unit and byte order, at each precision (checked against tcpdump 4.99 `-r F -w G` and
    /// `--nano -r F -w G` by the pcap crate's oracle tests).
    #[test]
    fn record_fields_read_as_libpcap_reads_them() {
        let written = |frac: u32, file: FracUnit, sign: FieldSign, asked: FracUnit| {
            let tv = Timestamp::from_record(1_418_145_370, frac, file, sign).timeval(asked);
            assert_eq!(tv.sec, 1_418_145_370);
            tv.frac as u32
        };
        use FieldSign::{Signed, Unsigned};
        use FracUnit::{Micros, Nanos};
        for sign in [Signed, Unsigned] {
            for frac in [0, 999_999, 1_000_000, 2_147_483, 2_147_484, 4_294_968, u32::MAX] {
                // Microseconds: copied as they are, or multiplied by 1000 (mod 2^32).
                assert_eq!(written(frac, Micros, sign, Micros), frac);
                assert_eq!(written(frac, Micros, sign, Nanos), frac.wrapping_mul(1000));
            }
            for frac in [999_999_999, 1_000_000_000, 0x7fff_ffff] {
                assert_eq!(written(frac, Nanos, sign, Nanos), frac);
                assert_eq!(written(frac, Nanos, sign, Micros), frac / 1000);
            }
        }
        // A nanosecond field with its top bit set divides as signed in a little-endian file.
        assert_eq!(written(0x8000_0000, Nanos, Signed, Micros), 4_292_819_813);
        assert_eq!(written(0xffff_fc18, Nanos, Signed, Micros), u32::MAX);
        assert_eq!(written(u32::MAX, Nanos, Signed, Micros), 0);
        assert_eq!(written(0x8000_0000, Nanos, Unsigned, Micros), 2_147_483);
        assert_eq!(written(u32::MAX, Nanos, Unsigned, Micros), 4_294_967);
        assert_eq!(written(u32::MAX, Nanos, Signed, Nanos), u32::MAX);
    }

    #[test]
    fn records_kept_as_recorded_survive_their_fields() {
        use FieldSign::{Signed, Unsigned};
        use FracUnit::{Micros, Nanos};
        for unit in [Micros, Nanos] {
            for sign in [Signed, Unsigned] {
                for frac in [0, 5, 999_999, 1_000_000, 4_294_968, 999_999_999, 1 << 31, u32::MAX] {
                    let t = Timestamp::from_record(u32::MAX, frac, unit, sign);
                    // Stored as (secs, nanos) and rebuilt, nothing is lost.
                    let back = Timestamp { secs: t.secs, nanos: t.nanos };
                    assert_eq!(back.timeval(unit).frac as u32, frac, "{unit:?} {sign:?} {frac}");
                    assert_eq!(back.timeval(unit).sec, i64::from(u32::MAX));
                    let normal = frac < unit.per_sec();
                    assert_eq!(t.is_normal(), normal);
                    // The instant carries the fraction (read unsigned) into the seconds.
                    let per_sec = u64::from(unit.per_sec());
                    let i = t.instant();
                    assert!(i.is_normal());
                    assert_eq!(i.secs, u64::from(u32::MAX) + u64::from(frac) / per_sec);
                    let scale = 1_000_000_000 / per_sec;
                    assert_eq!(u64::from(i.nanos), u64::from(frac) % per_sec * scale);
                }
            }
        }
    }

    #[test]
    fn order_is_that_of_instants() {
        let at = |secs: u64, nanos: u32| Timestamp::new(secs, nanos);
        let odd = Timestamp::from_record(100, 0x8000_0000, FracUnit::Micros, FieldSign::Signed);
        // 100 s plus 2147.483648 s: after 2000 s, before 3000 s, whatever its fields say.
        assert!(at(2000, 0) < odd && odd < at(3000, 0));
        assert!(at(u64::MAX, 0) < at(0, 0), "before 1970 comes first");
        assert!(at(5, 1) < at(5, 2) && at(5, 999_999_999) < at(6, 0));
        // Same instant, different fields: ordered, not equal.
        let carried = Timestamp::from_record(1, 1_500_000, FracUnit::Micros, FieldSign::Signed);
        assert_ne!(carried.cmp(&at(2, 500_000_000)), std::cmp::Ordering::Equal);
    }

    #[test]
    fn seconds_count_modulo_two_to_the_64() {
        // A pcapng time before 1970 (a negative if_tsoffset): negative, as libpcap's time_t.
        let before = Timestamp::new(5u64.wrapping_sub(10), 250_000_000);
        assert_eq!(before.timeval(FracUnit::Micros), Timeval { sec: -5, frac: 250_000 });
        assert_eq!(before.instant(), before);
        // Past 2106: the seconds go on, and `pcap_dump` keeps their low 32 bits.
        let late = Timestamp::new((1 << 32) + 7, 0);
        assert_eq!(late.timeval(FracUnit::Nanos).sec as u32, 7);
    }
}
