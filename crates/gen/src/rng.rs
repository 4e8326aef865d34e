//! A small, fast, portable pseudo-random number generator.
//!
//! xoshiro256** (Blackman and Vigna, 2018), seeded through SplitMix64. Both are a few lines of
//! integer arithmetic, so the stream depends only on this file: no dependency upgrade, platform
//! or floating-point library can change the packets generated from a seed.

/// SplitMix64: used to expand a 64-bit seed into xoshiro's 256-bit state.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256**: the generator behind every random choice in this crate.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut sm = SplitMix64::new(seed);
        let s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        // SplitMix64 never yields four zeros in a row, so the state is never all-zero.
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A uniform integer in `0..n` (0 when `n` is 0), without modulo bias (Lemire's method).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform integer in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            None => self.next_u64(),
        }
    }

    /// A uniform index into a collection of `len` elements (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// A uniform element of `items`, which must not be empty (a programming error, not input).
    #[track_caller]
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        assert!(!items.is_empty(), "Rng::pick on an empty slice");
        items[self.index(items.len())]
    }

    /// True with probability `p`, a [`Prob`].
    pub fn chance(&mut self, p: Prob) -> bool {
        // p.0 == u32::MAX + 1 cannot be represented; Prob::ALWAYS is handled by the compare.
        u64::from(self.next_u32()) < p.0
    }

    /// Picks an element of `items` by their weights; `None` when all weights are 0.
    pub fn weighted<'a, T>(&mut self, items: &'a [(u32, T)]) -> Option<&'a T> {
        let total: u64 = items.iter().map(|(w, _)| u64::from(*w)).sum();
        let mut x = self.below(total);
        for (w, item) in items {
            let w = u64::from(*w);
            if x < w {
                return Some(item);
            }
            x -= w;
        }
        None
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// An exponentially distributed integer with the given mean (for inter-arrival gaps),
    /// computed with integer arithmetic only so it is identical on every platform.
    pub fn exponential(&mut self, mean: u64) -> u64 {
        // -ln(U) = ln 2 * -log2(U), U uniform in (0, 1]; -log2(U) in 32.32 fixed point.
        let u = self.next_u64() | 1; // U = u / 2^64, never 0
        let neg_log2 = (64u64 << 32) - log2_fixed(u);
        // ln 2 in 0.32 fixed point.
        const LN2: u128 = 2_977_044_472;
        let e = (u128::from(neg_log2) * LN2) >> 32; // -ln(U), 32.32
        let scaled = (e * u128::from(mean)) >> 32;
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

/// log2(x) in 32.32 fixed point for x ≥ 1, by repeated squaring (exact to about 2^-30).
fn log2_fixed(x: u64) -> u64 {
    let int = 63 - u64::from(x.leading_zeros());
    // Mantissa in [1, 2) as Q1.62.
    let mut m = if int <= 62 { u128::from(x) << (62 - int) } else { u128::from(x) >> (int - 62) };
    let mut frac = 0u64;
    for bit in (0..32).rev() {
        m = (m * m) >> 62;
        if m >= 2u128 << 62 {
            m >>= 1;
            frac |= 1 << bit;
        }
    }
    (int << 32) | frac
}

/// A probability with 32-bit resolution, built from an `f64` once (the conversion of a given
/// literal is exact IEEE arithmetic, so it is the same everywhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Prob(u64);

impl Prob {
    /// Never.
    pub const NEVER: Prob = Prob(0);
    /// Always.
    pub const ALWAYS: Prob = Prob(1 << 32);

    /// `p` clamped to `[0, 1]` (NaN counts as 0).
    pub fn new(p: f64) -> Prob {
        if p.is_nan() || p <= 0.0 {
            Prob::NEVER
        } else if p >= 1.0 {
            Prob::ALWAYS
        } else {
            Prob((p * 4_294_967_296.0) as u64)
        }
    }

    /// One in `n` (never for 0).
    pub const fn one_in(n: u32) -> Prob {
        if n == 0 { Prob::NEVER } else { Prob((1u64 << 32) / n as u64) }
    }

    /// Per-mille.
    pub const fn per_mille(n: u32) -> Prob {
        if n >= 1000 { Prob::ALWAYS } else { Prob(((1u64 << 32) * n as u64) / 1000) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // From the reference C implementation, seed 1234567.
        let mut s = SplitMix64::new(1234567);
        assert_eq!(s.next_u64(), 6457827717110365317);
        assert_eq!(s.next_u64(), 3203168211198807973);
    }

    #[test]
    fn xoshiro_is_deterministic_and_spread() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let mut c = Rng::new(43);
        let va: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..100).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        let ones: u32 = va.iter().map(|v| v.count_ones()).sum();
        assert!((3000..3400).contains(&ones), "{ones} one-bits in 6400");
    }

    #[test]
    fn below_and_range_stay_in_bounds() {
        let mut r = Rng::new(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let v = r.below(10);
            seen[v as usize] += 1;
            let w = r.range(5, 9);
            assert!((5..=9).contains(&w));
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        assert_eq!(r.below(0), 0);
        assert_eq!(r.range(3, 3), 3);
        assert_eq!(r.range(4, 3), 4);
        let _ = r.range(0, u64::MAX);
    }

    #[test]
    fn log2_fixed_is_accurate() {
        for x in [1u64, 2, 3, 10, 1000, 123_456_789, u64::MAX] {
            let got = log2_fixed(x) as f64 / 4_294_967_296.0;
            let want = (x as f64).log2();
            assert!((got - want).abs() < 1e-8, "log2({x}) = {got}, want {want}");
        }
    }

    #[test]
    fn exponential_has_the_requested_mean() {
        let mut r = Rng::new(99);
        let n = 200_000u64;
        let sum: u64 = (0..n).map(|_| r.exponential(10_000)).sum();
        let mean = sum / n;
        assert!((9_800..10_200).contains(&mean), "mean {mean}");
    }

    #[test]
    fn probabilities() {
        let mut r = Rng::new(5);
        assert!(!(0..1000).any(|_| r.chance(Prob::NEVER)));
        assert!((0..1000).all(|_| r.chance(Prob::ALWAYS)));
        let hits = (0..100_000).filter(|_| r.chance(Prob::new(0.25))).count();
        assert!((24_000..26_000).contains(&hits), "{hits}");
        assert_eq!(Prob::new(f64::NAN), Prob::NEVER);
        assert_eq!(Prob::per_mille(1000), Prob::ALWAYS);
        assert_eq!(r.weighted::<u8>(&[(0, 1), (0, 2)]), None);
        assert_eq!(r.weighted(&[(0, 1), (5, 2)]), Some(&2));
    }
}
