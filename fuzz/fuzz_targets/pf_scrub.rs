//! Any bytes through pf's normalizations and `block return` answers
//! (`sift_firewall::scrub`, `sift_firewall::reply`): the first bytes choose the scrub options,
//! the return and the transport offset, the rest is the packet. No panic; the packet keeps its
//! length; an answer is at most the IPv6 minimum MTU and has right checksums when the packet
//! parsed with right checksums.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sift_firewall::Return;
use sift_firewall::packet::Packet;
use sift_firewall::reply::{self, REPLY_MAX, ReplyOpts};
use sift_firewall::scrub::{self, ScrubOpts};

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (ctl, rest) = data.split_at(8);
    let opts = ScrubOpts {
        nodf: ctl[0] & 1 != 0,
        random_id: ctl[0] & 2 != 0,
        min_ttl: ctl[1],
        max_mss: u16::from_be_bytes([ctl[2], ctl[3]]),
        set_tos: (ctl[0] & 4 != 0).then_some(ctl[4]),
        reassemble_tcp: false,
    };
    let ret = match ctl[0] >> 6 {
        0 => Return::Drop,
        1 => Return::Rst { ttl: ctl[5] },
        _ => Return::Icmp { ty: ctl[5], code: ctl[6] },
    };
    let mut ip = rest.to_vec();
    let parsed_l4 = Packet::parse(&ip).ok().and_then(|p| scrub::l4_offset(&p));
    // Either the real transport offset or an arbitrary one.
    let l4 = if ctl[0] & 8 != 0 { usize::from(ctl[7]) } else { parsed_l4.unwrap_or(0) };
    let _ = scrub::normalize_tcp(&mut ip, l4);
    scrub::normalize_mss(&mut ip, l4, opts.max_mss);
    scrub::scrub(&mut ip, Some(l4), &opts, &mut || u16::from(ctl[7]));
    let _ = scrub::normalize_ip4_off(&mut ip, ctl[0] & 16 != 0);
    assert_eq!(ip.len(), rest.len());
    let ropts = ReplyOpts { ip_id: 7, link_broadcast: ctl[0] & 32 != 0 };
    for bytes in [rest, &ip[..]] {
        if let Ok(answer) = reply::reply(bytes, ret, &ropts) {
            assert!(answer.len() <= REPLY_MAX);
            assert!(Packet::parse(&answer).is_ok(), "an answer is a packet pf judges");
        }
    }
});
