// Shared by the capture-reader fuzz targets (included, not a module of its own, so each target
// stays one binary).

use sift_pcap::{PcapngWriter, Reader, Timestamp};

type Record = (Timestamp, u32, Vec<u8>, u32);

fn drain(reader: &mut Reader) -> (Vec<Record>, Option<String>) {
    let mut out = Vec::new();
    loop {
        match reader.next_packet() {
            Ok(Some(p)) => out.push((p.timestamp, p.wire_len, p.data.to_vec(), p.interface)),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

struct Trickle(Vec<u8>, usize);

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.0.len() - self.1);
        buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
        self.1 += n;
        Ok(n)
    }
}

pub fn check(bytes: &[u8]) {
    let whole = Reader::from_bytes(bytes.to_vec());
    let streamed = Reader::from_read(Box::new(Trickle(bytes.to_vec(), 0)));
    let (mut whole, mut streamed) = match (whole, streamed) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            return;
        }
        (a, b) => panic!("paths disagree at open: {:?} / {:?}", a.err(), b.err()),
    };
    let (packets, error) = drain(&mut whole);
    assert_eq!((packets.clone(), error), drain(&mut streamed));
    // Round trip through the pcapng writer (it holds every interface and resolution).
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    for iface in whole.interfaces() {
        w.add_interface(iface).unwrap();
    }
    // A pcap record kept as recorded comes back as its instant; a time the interface cannot
    // count in 64 bits comes back clamped (and counted): its time is not compared.
    let mut written = Vec::new();
    for (ts, wire_len, data, iface) in &packets {
        let clamped = w.clamped().count;
        if w.write(*iface, *ts, *wire_len, data).is_ok() {
            let kept = w.clamped().count == clamped;
            written.push((kept.then(|| ts.instant()), *wire_len, data.clone(), *iface));
        }
    }
    let out = w.finish().unwrap();
    let mut back = Reader::from_bytes(out).unwrap();
    let (again, error) = drain(&mut back);
    assert_eq!(error, None);
    assert_eq!(again.len(), written.len());
    let again: Vec<_> = again
        .into_iter()
        .zip(&written)
        .map(|((ts, wire_len, data, iface), w)| (w.0.map(|_| ts), wire_len, data, iface))
        .collect();
    assert_eq!(again, written);
}
