//! Captures for `sift pf`: tcpdump's Linux cooked v2 records (interface index and packet type
//! per packet) rewritten as pcapng with one interface per index, named as in the namespace,
//! and each packet's direction in `epb_flags` — what `sift pf` reads to judge a packet in or
//! out on its interface. Then `sift pf --verdicts` run and its lines read.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use sift_pcap::{Direction, Interface, LinkType, PacketFlags, PcapngWriter, Timestamp};

/// Linux cooked capture v2.
const SLL2: u16 = 276;
/// `PACKET_OUTGOING`: the kernel sent the packet.
const OUTGOING: u8 = 4;

/// One captured packet.
#[derive(Clone, Debug)]
pub struct Rec {
    /// When.
    pub ts: Timestamp,
    /// The interface's index in its namespace.
    pub ifindex: u32,
    /// Sent (true) or received.
    pub outbound: bool,
    /// The Linux cooked v2 frame.
    pub frame: Vec<u8>,
}

impl Rec {
    /// A record for the IPv4 packet `ip`, crafted by a test.
    pub fn crafted(ts: Timestamp, ifindex: u32, outbound: bool, ip: &[u8]) -> Rec {
        let mut frame = Vec::with_capacity(20 + ip.len());
        frame.extend_from_slice(&0x0800u16.to_be_bytes());
        frame.extend_from_slice(&[0, 0]);
        frame.extend_from_slice(&ifindex.to_be_bytes());
        // ARPHRD_ETHER, the packet type, a 6-byte address padded to 8.
        frame.extend_from_slice(&1u16.to_be_bytes());
        frame.extend_from_slice(&[if outbound { OUTGOING } else { 0 }, 6]);
        frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 9, 0, 0]);
        frame.extend_from_slice(ip);
        Rec { ts, ifindex, outbound, frame }
    }

    /// The IP packet (after the 20-byte cooked header), for IPv4 frames.
    pub fn ipv4(&self) -> Option<&[u8]> {
        (self.frame.get(..2)? == [0x08, 0x00]).then(|| &self.frame[20..])
    }

    /// The fields of the IPv4 packet.
    pub fn parsed(&self) -> Option<super::packets::Ip> {
        super::packets::parse_ipv4(self.ipv4()?)
    }
}

/// Reads a tcpdump capture taken with `-i any -y LINUX_SLL2`.
pub fn read_sll2(path: &Path) -> Vec<Rec> {
    let mut r = sift_pcap::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        assert_eq!(p.link_type.number(), SLL2, "{}", path.display());
        let d = p.data;
        assert!(d.len() >= 20, "{}: a short cooked header", path.display());
        out.push(Rec {
            ts: p.timestamp,
            ifindex: u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
            outbound: d[10] == OUTGOING,
            frame: d.to_vec(),
        });
    }
    out
}

/// Writes `recs` as pcapng: an interface (Linux cooked v2, named from `names`) per index in
/// order of first use, each packet's direction in its `epb_flags`.
pub fn write_pcapng(recs: &[Rec], names: &HashMap<u32, String>, path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = PcapngWriter::new(std::io::BufWriter::new(f)).unwrap();
    let mut ids = HashMap::new();
    for r in recs {
        let id = match ids.get(&r.ifindex) {
            Some(&id) => id,
            None => {
                let mut iface =
                    Interface::new(LinkType::new(SLL2), 262_144, sift_pcap::TsResolution::NANO);
                iface.name = Some(names.get(&r.ifindex).cloned().unwrap_or_else(|| {
                    panic!("no interface {} in {names:?}", r.ifindex);
                }));
                let id = w.add_interface(&iface).unwrap();
                ids.insert(r.ifindex, id);
                id
            }
        };
        let dir = if r.outbound { Direction::Outbound } else { Direction::Inbound };
        let len = r.frame.len() as u32;
        w.write_with_flags(id, r.ts, len, &r.frame, PacketFlags::with_direction(dir)).unwrap();
    }
    w.finish().unwrap();
}

/// One line of `sift pf --verdicts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Passed (true) or blocked.
    pub pass: bool,
    /// `@N` (the rule), `state`, or `@-1` (the default); `not-ip` for frames pf does not judge.
    pub by: String,
    /// pf's reason (`match`, `state-mismatch`, …).
    pub reason: String,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = if self.pass { "pass" } else { "block" };
        write!(f, "{v} {} {}", self.by, self.reason)
    }
}

/// Runs `sift pf -f RULES -r CAPTURE --verdicts` (the rules in a temporary file) and returns
/// one verdict per packet.
pub fn sift_pf(rules: &str, capture: &Path) -> Vec<Verdict> {
    let rules_file = tempfile::Builder::new().suffix(".conf").tempfile().unwrap();
    std::fs::write(rules_file.path(), rules).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sift"))
        .args(["pf", "-f", rules_file.path().to_str().unwrap(), "-r", capture.to_str().unwrap()])
        .arg("--verdicts")
        .output()
        .expect("run sift pf");
    assert!(out.status.success(), "sift pf: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.first().copied(), Some((i + 1).to_string().as_str()), "{l}");
            match f[..] {
                [_, v, "not-ip"] => {
                    Verdict { pass: v == "pass", by: "not-ip".into(), reason: String::new() }
                }
                [_, v, by, reason] => {
                    Verdict { pass: v == "pass", by: by.into(), reason: reason.into() }
                }
                _ => panic!("unexpected verdict line {l:?}"),
            }
        })
        .collect()
}
