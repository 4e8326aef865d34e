//! When a packet was seen: seconds and nanoseconds since the Unix epoch.
//!
//! Every source of packets (capture files, capture rings, the generator) and every consumer
//! (printers, the firewall's state timeouts) speaks of time the same way, so the type lives in
//! the leaf crate. A clock's resolution is anything that can say how many units it counts per
//! second ([`UnitsPerSec`]); the pcap crate's `TsResolution` is one.

/// A capture timestamp: seconds since the Unix epoch and nanoseconds within the second.
///
/// Nanoseconds are exact for every pcap file and for pcapng resolutions down to 1 ns; finer
/// resolutions are truncated to the nanosecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    pub secs: u64,
    /// Nanoseconds, `0..1_000_000_000`.
    pub nanos: u32,
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

impl Timestamp {
    /// Builds a timestamp from seconds and nanoseconds (nanoseconds must be below 10^9).
    pub const fn new(secs: u64, nanos: u32) -> Self {
        Timestamp { secs, nanos }
    }

    /// Converts a count of units of `resolution` since the epoch.
    pub fn from_units(units: u64, resolution: impl UnitsPerSec) -> Self {
        let ups = resolution.units_per_sec().max(1);
        let secs = units / ups;
        let frac = units % ups;
        let nanos = (u128::from(frac) * 1_000_000_000 / u128::from(ups)) as u32;
        Timestamp { secs, nanos }
    }

    /// Converts to a count of units of `resolution` since the epoch; `None` if it does not fit
    /// in 64 bits.
    ///
    /// When some count converts back to exactly this timestamp (as when it was read at this
    /// resolution), that count is returned, so read → write → read is the identity even for
    /// resolutions that do not divide a nanosecond (2^-30 s); otherwise the time is truncated.
    pub fn to_units(self, resolution: impl UnitsPerSec) -> Option<u64> {
        let ups = u128::from(resolution.units_per_sec().max(1));
        let whole = u128::from(self.secs) * ups;
        let frac = u128::from(self.nanos) * ups / 1_000_000_000;
        let truncated = u64::try_from(whole + frac).ok()?;
        match truncated.checked_add(1) {
            Some(up)
                if Timestamp::from_units(truncated, resolution) != self
                    && Timestamp::from_units(up, resolution) == self =>
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
}
