//! Packets shared by the integration tests: sift-gen traffic on every link type it knows,
//! clean and with truncated and malformed frames.
#![allow(dead_code)]

use sift_gen::{Config, Generator, Link};
use sift_pcap::Timestamp;

/// One generated packet.
pub struct Frame {
    pub link_type: sift_pcap::LinkType,
    pub ts: Timestamp,
    pub wire_len: u32,
    pub data: Vec<u8>,
}

/// `count` frames per link type and damage setting (clean; 40% truncated + 20% malformed).
pub fn frames(link: Link, count: usize, seed: u64, damaged: bool) -> Vec<Frame> {
    let cfg = Config {
        truncate: if damaged { 0.4 } else { 0.0 },
        malformed: if damaged { 0.2 } else { 0.0 },
        ..Config::with_link(link)
    };
    let mut g = Generator::new(seed, cfg);
    let link_type = g.link_type();
    let mut buf = Vec::new();
    (0..count)
        .map(|_| {
            let m = g.next_frame(&mut buf);
            Frame {
                link_type,
                ts: Timestamp::new(m.ts_sec, m.ts_nsec),
                wire_len: m.wire_len,
                data: buf.clone(),
            }
        })
        .collect()
}

/// Writes frames of one link type to a pcap file.
pub fn write_pcap(path: &std::path::Path, frames: &[Frame]) {
    let link_type = frames.first().map_or(sift_pcap::LinkType::EN10MB, |f| f.link_type);
    let file = std::fs::File::create(path).unwrap();
    let mut w = sift_pcap::PcapWriter::new(
        std::io::BufWriter::new(file),
        link_type,
        0,
        262_144,
        sift_pcap::Precision::Nano,
    )
    .unwrap();
    for f in frames {
        w.write(f.ts, f.wire_len, &f.data).unwrap();
    }
    w.finish().unwrap();
}
