//! Any bytes as a sequence of fragments for a few IPv4 and IPv6 queues, pushed through pf's
//! reassembly with a small fragment limit: no panic; never more fragments held than the limit,
//! memory bounded by it; every complete datagram parses as IP with its length field matching
//! its size (IPv4 with a correct header checksum), and IPv6 ones cut again with
//! `refragment6` into fragments that reassemble to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_firewall::fragment::{FragLimits, Reassembler, Reassembly, refragment6};

const LIMIT: usize = 32;

/// One fragment from 6 control bytes and a run of data: family, queue, offset, flags, length.
fn fragment(ctl: &[u8], data: &[u8]) -> Vec<u8> {
    let six = ctl[0] & 1 != 0;
    let id = u32::from(ctl[0] >> 1 & 3);
    let src = ctl[0] >> 3 & 1;
    let off = u16::from_be_bytes([ctl[1], ctl[2]]) & 0xfff8;
    let mf = ctl[3] & 1 != 0;
    let len = (usize::from(u16::from_be_bytes([ctl[4], ctl[5]])) % 3000).min(data.len());
    let payload = &data[..len];
    if six {
        let mut p = vec![0x60, 0, 0, 0];
        let hop = ctl[3] & 2 != 0;
        let ext = if hop { 8 } else { 0 };
        p.extend_from_slice(&((ext + 8 + len) as u16).to_be_bytes());
        p.extend_from_slice(&[if hop { 0 } else { 44 }, 64]);
        p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, src]);
        p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        if hop {
            p.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
        }
        p.extend_from_slice(&[ctl[3] >> 2, 0]);
        p.extend_from_slice(&(off | u16::from(mf)).to_be_bytes());
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(payload);
        p
    } else {
        let words = 5 + usize::from(ctl[3] >> 6);
        let mut p = vec![0x40 | words as u8, 0];
        p.extend_from_slice(&((words * 4 + len) as u16).to_be_bytes());
        p.extend_from_slice(&(id as u16).to_be_bytes());
        let flags = (off >> 3) | if mf { 0x2000 } else { 0 } | u16::from(ctl[3] & 2) << 13;
        p.extend_from_slice(&flags.to_be_bytes());
        p.extend_from_slice(&[64, 17, 0, 0, 10, 0, 0, src, 10, 0, 0, 2]);
        p.resize(words * 4, 1);
        p.extend_from_slice(payload);
        p
    }
}

fn check(bytes: &[u8], refrag: Option<sift_firewall::fragment::Refrag>) {
    match bytes[0] >> 4 {
        4 => {
            let hlen = usize::from(bytes[0] & 15) * 4;
            assert_eq!(usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), bytes.len());
            assert_eq!(sift_wire::checksum::internet(&bytes[..hlen]), 0);
            assert_eq!(u16::from_be_bytes([bytes[6], bytes[7]]), 0);
        }
        6 => {
            assert_eq!(usize::from(u16::from_be_bytes([bytes[4], bytes[5]])) + 40, bytes.len());
            let rf = refrag.expect("IPv6 datagrams carry their refragmentation");
            if let Ok(frags) = refragment6(bytes, &rf) {
                let mut r = Reassembler::new(FragLimits::default());
                let mut again = None;
                for f in &frags {
                    if let Reassembly::Complete(d) = r.push(f, 0) {
                        again = Some(d.bytes);
                    }
                }
                // Fragments of 64 octets or more stay within PF_FRAG_ENTRY_LIMIT.
                if frags.len() > 1 && rf.maxlen >= 64 {
                    assert_eq!(again.as_deref(), Some(bytes));
                }
            }
        }
        v => panic!("complete datagram of IP version {v}"),
    }
}

fuzz_target!(|input: &[u8]| {
    let mut r = Reassembler::new(FragLimits { frags: LIMIT, timeout_secs: 2 });
    let mut rest = input;
    let mut now = 0u64;
    while rest.len() >= 6 {
        let (ctl, tail) = rest.split_at(6);
        rest = tail;
        if ctl[0] == 0xff {
            now += u64::from(ctl[1] & 3);
            r.expire(now);
            continue;
        }
        let p = fragment(ctl, rest);
        let used = p.len().min(rest.len()).min(usize::from(ctl[5] & 15));
        rest = &rest[used..];
        if let Reassembly::Complete(d) = r.push(&p, now) {
            check(&d.bytes, d.refrag);
        }
        assert!(r.fragments() <= LIMIT);
        assert!(r.memory() <= (LIMIT + 1) * (3 * 65536 + 1024) + 4096);
    }
    // Raw bytes as one packet.
    let _ = r.push(input, now);
});
