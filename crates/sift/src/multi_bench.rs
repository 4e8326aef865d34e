//! What many filters cost per packet, decided together or run one by one
//! (`sift bench --filters`).
//!
//! **Why it exists.** Issue 20 asks whether a decision program over N filters costs about one
//! filter (≤ 2x for 1,000 realistic filters, ≤ 4x for 10,000), against running every filter
//! separately, as N tcpdumps or N sockets do. The figures must come from the same run on the
//! same packets, in memory ([`Packets`]), so this module times, in rounds, each of:
//!
//! * the decision program ([`crate::multi::MultiFilter::decide_batch`]) for every match
//!   ([`Decide::All`]) and for the first ([`Decide::First`]), its members on the JIT and on
//!   the interpreter;
//! * one filter alone: the set's first, compiled as `sift -r` compiles it, on the JIT's batch
//!   path as the offline paths run it;
//! * every filter separately: each filter's JIT over all packets in batches, one filter after
//!   the other. For large sets a sample of evenly spaced filters is timed and the sum scaled
//!   to the whole set ([`MultiFigures::separate_timed`] says how many were timed).
//!
//! Each round times every measure once (each for at least the minimum time), and the figure
//! of a measure is the median over the rounds: machine noise then hits all measures alike.
//! Before timing, the decision program's matches are checked against the separate filters'
//! verdicts on the timed filters (a difference is an error, not a figure).

use std::time::{Duration, Instant};

use sift_compile::multi::{Decide, FilterSet};
use sift_filter::SystemResolver;
use sift_jit::PacketRef;

use crate::bench::Packets;
use crate::filter::{BATCH_PACKETS, Compiled, Engine, FilterError};
use crate::multi::{MultiFilter, MultiFilterError};

/// What is timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// The decision program, every match, members on the JIT.
    DecideAllJit,
    /// The decision program, first match, members on the JIT.
    DecideFirstJit,
    /// The decision program, every match, members on the interpreter.
    DecideAllInterp,
    /// The decision program, first match, members on the interpreter.
    DecideFirstInterp,
    /// The set's first filter alone (JIT, batches).
    OneFilter,
    /// Every filter separately (JIT, batches), summed.
    Separate,
}

impl Measure {
    /// Every measure, in the order they are timed and shown.
    pub const ALL: [Measure; 6] = [
        Measure::DecideAllJit,
        Measure::DecideFirstJit,
        Measure::DecideAllInterp,
        Measure::DecideFirstInterp,
        Measure::OneFilter,
        Measure::Separate,
    ];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::DecideAllJit => "multi-all-jit",
            Measure::DecideFirstJit => "multi-first-jit",
            Measure::DecideAllInterp => "multi-all-interp",
            Measure::DecideFirstInterp => "multi-first-interp",
            Measure::OneFilter => "one-filter",
            Measure::Separate => "separate",
        }
    }
}

/// How to measure.
#[derive(Clone, Copy, Debug)]
pub struct MultiBenchOptions {
    /// Rounds (each measure timed once per round); the figure is the median.
    pub rounds: usize,
    /// The least time one measure runs in a round.
    pub min_time: Duration,
    /// The most filters timed separately; larger sets are sampled.
    pub separate_max: usize,
}

impl Default for MultiBenchOptions {
    fn default() -> Self {
        MultiBenchOptions { rounds: 5, min_time: Duration::from_millis(200), separate_max: 1000 }
    }
}

/// One measure's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// What was timed.
    pub measure: Measure,
    /// Nanoseconds per packet in each round.
    pub rounds: Vec<f64>,
}

impl Timing {
    /// The median over the rounds.
    pub fn median(&self) -> f64 {
        median(&self.rounds)
    }
}

/// What `bench --filters` found.
#[derive(Clone, Debug)]
pub struct MultiFigures {
    /// Filters in the set.
    pub filters: usize,
    /// Packets run over.
    pub packets: usize,
    /// Compiling the set into the decision program (every filter compiled and optimized, the
    /// anchors chosen, the tables built).
    pub compile: Duration,
    /// Putting the members on the JIT.
    pub jit: Duration,
    /// The decision program's summary (how the index reaches the filters, its tables).
    pub summary: String,
    /// Packets that go to at least one filter, and (packet, filter) matches in all.
    pub matched: (usize, usize),
    /// Filters run per packet, on average (the candidates the index gives).
    pub candidates_per_packet: f64,
    /// How many filters [`Measure::Separate`] timed (the rest scaled from them).
    pub separate_timed: usize,
    /// The figures, in [`Measure::ALL`]'s order.
    pub timings: Vec<Timing>,
}

impl MultiFigures {
    /// The median of `measure`.
    pub fn median(&self, measure: Measure) -> f64 {
        self.timings.iter().find(|t| t.measure == measure).map_or(f64::NAN, Timing::median)
    }
}

/// Why the set cannot be measured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MultiBenchError {
    /// The set does not compile.
    #[error(transparent)]
    Set(#[from] MultiFilterError),
    /// The first filter does not compile alone.
    #[error(transparent)]
    First(#[from] FilterError),
    /// The decision program and a filter run alone disagree on a packet.
    #[error("filter `{name}` alone {} packet {packet}; the decision program does not agree", if *.alone { "accepts" } else { "rejects" })]
    Disagree {
        /// The filter.
        name: String,
        /// The packet's index.
        packet: usize,
        /// The filter's verdict alone.
        alone: bool,
    },
}

/// Measures `set` (read from `origin`) over `packets`.
pub fn measure(
    packets: &Packets,
    set: &FilterSet,
    origin: &str,
    options: &MultiBenchOptions,
) -> Result<MultiFigures, MultiBenchError> {
    let resolver = SystemResolver::new();
    let target = packets.target();
    let started = Instant::now();
    let program = crate::multi::compile(set, &target, true, &resolver, origin)?;
    let compile = started.elapsed();
    let summary = program.summary();
    let started = Instant::now();
    let jit = MultiFilter::new(program.clone(), Engine::Jit);
    let jit_time = started.elapsed();
    let interp = MultiFilter::new(program, Engine::Interp);
    let first_expr = &set.filters()[0].expr;
    let first = crate::filter::compile(first_expr, &target, true, &resolver)?;
    let first = Compiled::new(&first, Engine::Jit);
    let refs = packets.refs();

    // Which filters are timed separately: all, or an evenly spaced sample.
    let n = set.len();
    let timed: Vec<u32> = if n <= options.separate_max.max(1) {
        (0..n as u32).collect()
    } else {
        let k = options.separate_max.max(1);
        (0..k).map(|i| (i * n / k) as u32).collect()
    };

    // The decision program's matches, checked against the timed filters alone.
    let mut d = jit.decision();
    let mut per_packet: Vec<Vec<u32>> = vec![Vec::new(); refs.len()];
    let (mut matched, mut matches, mut candidates) = (0usize, 0usize, 0usize);
    for (i, p) in refs.iter().enumerate() {
        let m = jit.decide(p.data(), p.wire_len(), Decide::All, &mut d).to_vec();
        matched += usize::from(!m.is_empty());
        matches += m.len();
        candidates += d.candidates();
        per_packet[i] = m;
    }
    let mut verdicts = Vec::with_capacity(BATCH_PACKETS);
    for &r in &timed {
        let Some(f) = jit.member_engine(r) else { continue };
        for (b, batch) in refs.chunks(BATCH_PACKETS).enumerate() {
            f.run_batch(batch, &mut verdicts);
            for (j, &v) in verdicts.iter().enumerate() {
                let i = b * BATCH_PACKETS + j;
                if (v != 0) != per_packet[i].binary_search(&r).is_ok() {
                    let name = jit.name(r).to_string();
                    return Err(MultiBenchError::Disagree { name, packet: i, alone: v != 0 });
                }
            }
        }
    }
    drop(per_packet);

    let mut timings: Vec<Timing> =
        Measure::ALL.iter().map(|&measure| Timing { measure, rounds: Vec::new() }).collect();
    let scale = n as f64 / timed.len() as f64;
    for _ in 0..options.rounds.max(1) {
        for t in &mut timings {
            let ns = match t.measure {
                Measure::DecideAllJit => time_decide(&jit, &refs, Decide::All, options),
                Measure::DecideFirstJit => time_decide(&jit, &refs, Decide::First, options),
                Measure::DecideAllInterp => time_decide(&interp, &refs, Decide::All, options),
                Measure::DecideFirstInterp => time_decide(&interp, &refs, Decide::First, options),
                Measure::OneFilter => time_passes(&refs, options.min_time, |out, sink| {
                    for batch in refs.chunks(BATCH_PACKETS) {
                        *sink += first.run_batch(std::hint::black_box(batch), out);
                    }
                }),
                Measure::Separate => {
                    let ns = time_passes(&refs, options.min_time, |out, sink| {
                        for &r in &timed {
                            let Some(f) = jit.member_engine(r) else { continue };
                            for batch in refs.chunks(BATCH_PACKETS) {
                                *sink += f.run_batch(std::hint::black_box(batch), out);
                            }
                        }
                    });
                    ns * scale
                }
            };
            t.rounds.push(ns);
        }
    }
    Ok(MultiFigures {
        filters: n,
        packets: refs.len(),
        compile,
        jit: jit_time,
        summary,
        matched: (matched, matches),
        candidates_per_packet: candidates as f64 / refs.len().max(1) as f64,
        separate_timed: timed.len(),
        timings,
    })
}

/// The decision program over every packet, in batches, as the offline paths run it.
fn time_decide(
    filter: &MultiFilter,
    refs: &[PacketRef<'_>],
    mode: Decide,
    options: &MultiBenchOptions,
) -> f64 {
    let mut d = filter.decision();
    time_passes(refs, options.min_time, |_, sink| {
        for batch in refs.chunks(BATCH_PACKETS) {
            *sink += filter.decide_batch(std::hint::black_box(batch), mode, &mut d, |_, m| {
                std::hint::black_box(m);
            });
        }
    })
}

/// Runs `pass` (one pass over every packet) repeatedly for at least `min_time`; nanoseconds
/// per packet.
fn time_passes(
    refs: &[PacketRef<'_>],
    min_time: Duration,
    mut pass: impl FnMut(&mut Vec<u32>, &mut usize),
) -> f64 {
    let mut out = Vec::with_capacity(BATCH_PACKETS);
    let (mut rounds, mut sink, start) = (0u64, 0usize, Instant::now());
    while rounds == 0 || start.elapsed() < min_time {
        pass(&mut out, &mut sink);
        rounds += 1;
    }
    std::hint::black_box(sink);
    start.elapsed().as_nanos() as f64 / (rounds as f64 * refs.len().max(1) as f64)
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn figures_for_a_small_set_agree_with_the_filters_alone() {
        let mut g = sift_gen::Generator::new(3, sift_gen::Config::default());
        let mut packets = Packets::new(g.link_type(), 262_144);
        let mut frame = Vec::new();
        for _ in 0..500 {
            let m = g.next_frame(&mut frame);
            packets.push(&frame, m.wire_len);
        }
        let set = FilterSet::parse(b"a tcp\nb udp port 53\nc ip6\nd vlan 7\n").unwrap();
        let options = MultiBenchOptions { rounds: 3, min_time: Duration::ZERO, separate_max: 2 };
        let f = measure(&packets, &set, "t", &options).unwrap();
        assert_eq!((f.filters, f.packets, f.separate_timed), (4, 500, 2));
        assert!(f.matched.0 > 0 && f.matched.1 >= f.matched.0);
        for t in &f.timings {
            assert_eq!(t.rounds.len(), 3);
            assert!(t.median() > 0.0, "{t:?}");
        }
    }
}
