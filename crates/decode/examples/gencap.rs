//! Writes a generated capture: `gencap LINK COUNT SEED TRUNCATE MALFORMED OUT`.
use sift_gen::{Config, Generator, Link};
use sift_pcap::{PcapWriter, Precision, Timestamp};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let link = Link::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(&a[1])).unwrap();
    let cfg = Config {
        truncate: a[4].parse().unwrap(),
        malformed: a[5].parse().unwrap(),
        ..Config::with_link(link)
    };
    let mut g = Generator::new(a[3].parse().unwrap(), cfg);
    let out = std::fs::File::create(&a[6]).unwrap();
    let mut w = PcapWriter::new(out, g.link_type(), 0, 262144, Precision::Micro).unwrap();
    let mut frame = Vec::new();
    for _ in 0..a[2].parse::<u64>().unwrap() {
        let m = g.next_frame(&mut frame);
        w.write(Timestamp::new(m.ts_sec, m.ts_nsec), m.wire_len, &frame).unwrap();
    }
    w.finish().unwrap();
}
