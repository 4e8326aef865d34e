//! Packet sets per link type: what every compiled program is run on.
//!
//! Two programs are "the same filter" for the harness when they return the same value on every
//! packet of a set, so a set must reach every branch a filter can take: the protocols filters
//! name (ARP, IPv4 with options and fragments, IPv6 with extension headers, TCP, UDP, SCTP,
//! ICMP), the encapsulations that shift offsets (VLAN, QinQ, MPLS, PPPoE, tunnels), and the
//! out-of-bounds paths (truncated frames, malformed frames, random bytes, and a prefix of every
//! length from 0 to 64 bytes). Sets are deterministic: a seed and a link type give the same
//! frames on every run.
//!
//! Where the packets come from, by link type:
//! * the six link types `sift-gen` writes (EN10MB, LINUX_SLL, LINUX_SLL2, RAW, NULL, LOOP):
//!   `sift-gen` directly, with encapsulations, tunnels, options, truncation and malformed frames;
//! * the link types in [`crate::link::WRAPPED`]: `sift-gen` Ethernet frames re-encapsulated by
//!   [`crate::link::wrap`];
//! * every link type: random-byte frames, short prefixes, and the corpus captures of that type
//!   (see [`PacketSet::add_captures`]).

use std::path::Path;

use sift_gen::{Config, Generator, Link, Mix, Prob, Rng};
use sift_vm::PacketMeta;
use sift_wire::ethertype;

use crate::LinkType;
use crate::link::{self, Parts};

/// One packet: the captured bytes and what a live Linux capture would know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The captured bytes.
    pub data: Vec<u8>,
    /// Wire length and Linux ancillary data (packet type, ifindex, stripped VLAN tag), used by
    /// programs compiled with Linux extensions.
    pub meta: PacketMeta,
}

impl Frame {
    /// The length on the wire.
    pub fn wire_len(&self) -> u32 {
        self.meta.wire_len
    }
}

/// How many frames of a set came from where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    /// Realistic frames from `sift-gen` (directly or re-encapsulated).
    pub generated: usize,
    /// Prefixes of realistic frames, one per length 0..=64 (several each).
    pub prefixes: usize,
    /// Random-byte frames.
    pub random: usize,
    /// Copies of realistic frames with every byte from a random offset on replaced by random
    /// bytes (headers kept up to there), so that tests of arbitrary payload bytes
    /// (`tcp[0xab] == 0xcd`) sometimes match.
    pub scrambled: usize,
    /// Packets of corpus captures with this link type.
    pub captures: usize,
}

/// A deterministic set of frames for one link type.
#[derive(Clone, Debug)]
pub struct PacketSet {
    /// The link type of every frame.
    pub link: LinkType,
    /// The frames.
    pub frames: Vec<Frame>,
    /// Where they came from.
    pub origins: Origins,
}

/// The `sift-gen` link for a corpus link name, when `sift-gen` writes it.
pub fn gen_link(name: &str) -> Option<Link> {
    Link::ALL.into_iter().find(|l| l.name() == name)
}

/// Whether realistic frames can be made for `name` (by `sift-gen` or a wrapper); other link
/// types get only random frames and captures.
pub fn has_generator(name: &str) -> bool {
    gen_link(name).is_some() || link::WRAPPED.contains(&name)
}

fn gen_config(link: Link) -> Config {
    Config {
        truncate: 0.04,
        malformed: 0.04,
        ipv6: 0.35,
        encapsulation: 0.3,
        tunnels: 0.15,
        ipv4_options: 0.12,
        ipv6_extensions: 0.25,
        mix: Mix { tcp: 40, dns: 15, ping: 10, arp: 8, ndp: 6, sctp: 6, syslog: 8, fragments: 8 },
        ..Config::with_link(link)
    }
}

fn meta_for(rng: &mut Rng, data: &[u8], wire_len: u32) -> PacketMeta {
    let vlan_present = rng.chance(Prob::one_in(4));
    let vid = rng.pick(&[10u16, 500, 2061, 2014, 1, 4095, 0]);
    PacketMeta {
        wire_len,
        protocol: data.get(12..14).map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
        pkttype: rng.pick(&[0u8, 0, 1, 2, 3, 4, 4]),
        ifindex: Some(rng.pick(&[1u32, 2, 10, 10, 11, 0x1234_5678])),
        hatype: Some(1),
        vlan_tci: if vlan_present { (rng.below(8) as u16) << 13 | vid } else { 0 },
        vlan_present,
        vlan_tpid: if vlan_present { rng.pick(&[ethertype::VLAN, ethertype::QINQ]) } else { 0 },
        ..PacketMeta::new(wire_len)
    }
}

/// Bytes filters like to compare with: the corpus's favourite `0xab`/`0xcd`, protocol numbers,
/// EtherType halves, flags, all-zeros and all-ones.
const INTERESTING: &[u8] = &[
    0xcd, 0xab, 0x00, 0xff, 0x01, 0x02, 0x04, 0x06, 0x08, 0x11, 0x12, 0x3a, 0x45, 0x60, 0x86, 0xdd,
];

/// Fills `out` with random bytes, half of them drawn from [`INTERESTING`].
fn scramble(rng: &mut Rng, out: &mut [u8]) {
    for b in out {
        *b = if rng.chance(Prob::one_in(2)) { rng.pick(INTERESTING) } else { rng.below(256) as u8 };
    }
}

impl PacketSet {
    /// An empty set for `link`.
    pub fn empty(link: LinkType) -> PacketSet {
        PacketSet { link, frames: Vec::new(), origins: Origins::default() }
    }

    /// A set of about `realistic * 4 / 3 + 65 * 3 + random` frames for `link`: `realistic`
    /// generated frames (none when the link type has no generator) and a third as many
    /// scrambled copies, three prefixes of each length 0..=64 and `random` random-byte frames.
    pub fn generate(link: LinkType, seed: u64, realistic: usize, random: usize) -> PacketSet {
        let mut set = PacketSet::empty(link);
        let mut rng = Rng::new(seed ^ 0x5eed_f11e);
        let mut buf = Vec::new();
        if let Some(gl) = gen_link(link.name().unwrap_or_default()) {
            let mut g = Generator::new(seed, gen_config(gl));
            for _ in 0..realistic {
                let m = g.next_frame(&mut buf);
                set.push(&mut rng, buf.clone(), m.wire_len);
            }
            set.origins.generated = realistic;
        } else if let Some(name) = link.name().filter(|n| link::WRAPPED.contains(n)) {
            let mut g = Generator::new(seed, gen_config(Link::Ethernet));
            let mut made = 0;
            let mut tries = 0;
            while made < realistic && tries < realistic * 4 {
                tries += 1;
                let m = g.next_frame(&mut buf);
                let Some(parts) = Parts::of_ethernet(&buf, m.wire_len) else { continue };
                if let Some((bytes, wire)) = link::wrap(name, &mut rng, &parts) {
                    set.push(&mut rng, bytes, wire);
                    made += 1;
                }
            }
            set.origins.generated = made;
        }
        // Scrambled copies: headers kept up to a random offset, random bytes after it.
        let realistic_frames = set.frames.len();
        for _ in 0..realistic_frames / 3 {
            let f = &set.frames[rng.index(realistic_frames)];
            let (mut data, wire) = (f.data.clone(), f.wire_len());
            if data.len() < 2 {
                continue;
            }
            let from = rng.range(1, data.len() as u64 - 1) as usize;
            scramble(&mut rng, &mut data[from..]);
            set.push(&mut rng, data, wire);
            set.origins.scrambled += 1;
        }
        // Prefixes of every short length, so that loads near the end of a frame fail.
        let sources: Vec<Frame> =
            set.frames.iter().filter(|f| f.data.len() > 64).cloned().collect();
        for len in 0..=64usize {
            for _ in 0..3 {
                let (data, wire) = match sources.len() {
                    0 => {
                        let mut d = vec![0u8; len];
                        rng.fill(&mut d);
                        (d, len as u32 + rng.below(64) as u32)
                    }
                    n => {
                        let f = &sources[rng.index(n)];
                        (f.data[..len].to_vec(), f.wire_len())
                    }
                };
                set.push(&mut rng, data, wire);
                set.origins.prefixes += 1;
            }
        }
        for _ in 0..random {
            let len = if rng.chance(Prob::one_in(2)) {
                rng.below(80) as usize
            } else {
                rng.below(600) as usize
            };
            let mut d = vec![0u8; len];
            rng.fill(&mut d);
            let wire =
                if rng.chance(Prob::one_in(4)) { len + rng.below(1500) as usize } else { len };
            set.push(&mut rng, d, wire as u32);
            set.origins.random += 1;
        }
        set
    }

    fn push(&mut self, rng: &mut Rng, data: Vec<u8>, wire_len: u32) {
        let meta = meta_for(rng, &data, wire_len.max(data.len() as u32));
        self.frames.push(Frame { data, meta });
    }

    /// Adds the packets of every capture in `dir` whose link type is this set's (files that do
    /// not open, or hold other link types, are passed over). Returns how many were added.
    pub fn add_captures(&mut self, dir: &Path) -> usize {
        let mut rng = Rng::new(u64::from(self.link.number()));
        let mut added = 0;
        let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let Ok(frames) = read_capture(&path) else { continue };
            for (linktype, data, wire) in frames {
                if linktype == u32::from(self.link.number()) {
                    self.push(&mut rng, data, wire);
                    added += 1;
                }
            }
        }
        self.origins.captures += added;
        added
    }

    /// Keeps every `n`-th frame (for quick runs); `n` of 0 or 1 keeps all.
    pub fn thin(&self, n: usize) -> PacketSet {
        let n = n.max(1);
        PacketSet {
            link: self.link,
            frames: self.frames.iter().step_by(n).cloned().collect(),
            origins: self.origins,
        }
    }
}

/// Reads every packet of a capture with `sift-pcap`: `(LINKTYPE, captured bytes, wire length)`.
pub fn read_capture(path: &Path) -> Result<Vec<(u32, Vec<u8>, u32)>, String> {
    let mut reader = sift_pcap::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet().map_err(|e| format!("{}: {e}", path.display()))? {
        out.push((u32::from(p.link_type.number()), p.data.to_vec(), p.wire_len));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_frames_meet_constants() {
        use sift_insn::Insn;
        // ldh [12]; jeq #0x800 jt 2 jf 5; ld [26]; jeq #0xc0a8aad3 jt 4 jf 5; ret #1; ret #0
        let prog = [
            Insn::stmt(0x28, 12),
            Insn::jump(0x15, 0x800, 0, 3),
            Insn::stmt(0x20, 26),
            Insn::jump(0x15, 0xc0a8_aad3, 0, 1),
            Insn::stmt(0x06, 1),
            Insn::stmt(0x06, 0),
        ];
        let en = LinkType::from_name("EN10MB").unwrap();
        let set = PacketSet::generate(en, 1, 50, 0);
        let frames = directed(&[&prog], &set, 9, 8);
        assert_eq!(frames.len(), 8);
        assert!(
            frames
                .iter()
                .step_by(2)
                .all(|f| f.data[12..14] == [8, 0] && f.data[26..30] == [0xc0, 0xa8, 0xaa, 0xd3])
        );
    }

    #[test]
    fn deterministic_and_sized() {
        let en = LinkType::from_name("EN10MB").unwrap();
        let a = PacketSet::generate(en, 7, 300, 50);
        let b = PacketSet::generate(en, 7, 300, 50);
        assert_eq!(a.frames, b.frames);
        assert_eq!(a.frames.len(), 300 + a.origins.scrambled + 195 + 50);
        assert!(a.origins.scrambled > 90);
        assert!((0..=64).all(|n| a.frames.iter().any(|f| f.data.len() == n)));
    }

    #[test]
    fn wrapped_and_unknown_links() {
        let wlan = LinkType::from_name("IEEE802_11").unwrap();
        let s = PacketSet::generate(wlan, 1, 200, 10);
        assert_eq!(s.origins.generated, 200);
        let usb = LinkType::from_name("USB_LINUX").unwrap();
        let s = PacketSet::generate(usb, 1, 200, 10);
        assert_eq!(s.origins.generated, 0);
        assert_eq!(s.frames.len(), 195 + 10);
    }
}

/// One constraint read from a program: "the `size`-byte big-endian word at `offset` is
/// compared with `value`".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Constraint {
    offset: u32,
    size: usize,
    value: u32,
}

/// The constants a program compares absolute loads with (`ldh [12]; jeq #0x800`,
/// `ld [26]; and #0xffffff00; jeq #0xc0a8aa00`, `ldb [23]; jgt #5`…).
fn constraints(prog: &[sift_insn::Insn]) -> Vec<Constraint> {
    use sift_insn::Opcode::*;
    let mut out = Vec::new();
    let mut cur: Option<(u32, usize)> = None;
    for insn in prog {
        let k = insn.k;
        match insn.opcode() {
            LdAbsW if k < sift_insn::code::SKF_AD_OFF => cur = Some((k, 4)),
            LdAbsH if k < sift_insn::code::SKF_AD_OFF => cur = Some((k, 2)),
            LdAbsB if k < sift_insn::code::SKF_AD_OFF => cur = Some((k, 1)),
            AndK => {}
            JeqK | JsetK | JgeK => {
                if let Some((offset, size)) = cur {
                    out.push(Constraint { offset, size, value: k });
                }
            }
            JgtK => {
                if let Some((offset, size)) = cur {
                    out.push(Constraint { offset, size, value: k.wrapping_add(1) });
                }
            }
            RetK | RetA | Ja => {}
            _ => cur = None,
        }
    }
    out.sort_by_key(|c| (c.offset, c.size, c.value));
    out.dedup();
    out
}

/// Frames aimed at the programs' own tests: copies of frames of `set` with a random subset of
/// the constants the programs compare (see `constraints`) written at their offsets, so that
/// tests of specific addresses, ports and header values (`host 192.168.170.211`,
/// `link[7:2] == 0x1234`) meet packets that pass them. Deterministic in `seed`.
pub fn directed(progs: &[&[sift_insn::Insn]], set: &PacketSet, seed: u64, n: usize) -> Vec<Frame> {
    let mut cs: Vec<Constraint> = progs.iter().flat_map(|p| constraints(p)).collect();
    cs.sort_by_key(|c| (c.offset, c.size, c.value));
    cs.dedup();
    let bases: Vec<&Frame> = set.frames.iter().filter(|f| f.data.len() >= 20).collect();
    if cs.is_empty() || bases.is_empty() || cs.iter().any(|c| c.offset > 65_536) {
        return Vec::new();
    }
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut f = bases[rng.index(bases.len())].clone();
        // Half the frames take every constraint in program order (later ones win where they
        // overlap), half a random subset.
        let all = i % 2 == 0;
        for c in &cs {
            if !all && rng.chance(Prob::one_in(2)) {
                continue;
            }
            let end = c.offset as usize + c.size;
            if f.data.len() < end {
                f.data.resize(end, 0);
            }
            let bytes = c.value.to_be_bytes();
            f.data[c.offset as usize..end].copy_from_slice(&bytes[4 - c.size..]);
        }
        f.meta.wire_len = f.meta.wire_len.max(f.data.len() as u32);
        out.push(f);
    }
    out
}
