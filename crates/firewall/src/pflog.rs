//! pflog records: pf's log header (`struct pfloghdr` of `if_pflog.h`) in front of the packet,
//! as `pflog0` delivers them and tcpdump and tshark decode them (link type `PFLOG`, 117).
//!
//! Why its own module: which packets are logged is pf's choice (the rule's `log`, `log (all)`
//! for every packet of its states); what a record holds is pflog's format, kept here once.

use crate::packet::{Direction, Family, Meta, Packet};
use crate::{Decision, Verdict};

/// The pcap link type of pflog records (`LINKTYPE_PFLOG`).
pub const LINKTYPE_PFLOG: u32 = 117;
/// The header's size (`sizeof(struct pfloghdr)`).
pub const HEADER_LEN: usize = 100;
/// OpenBSD's `AF_INET`.
pub const AF_INET: u8 = 2;
/// OpenBSD's `AF_INET6`.
pub const AF_INET6: u8 = 24;
/// Interface and rule set names are cut to this many bytes (with a terminating NUL).
const NAME_LEN: usize = 16;

/// Whether pf logs a packet so decided: a rule with `log` decided it (or a `match` rule with
/// `log` applied), or it belongs to a state whose rule logs `(all)`.
pub fn logs(d: &Decision) -> bool {
    d.log != 0
}

fn put_name(out: &mut [u8], name: &str) {
    let b = name.as_bytes();
    let n = b.len().min(NAME_LEN - 1);
    out[..n].copy_from_slice(&b[..n]);
}

/// The pflog header of a packet decided `d`: `ruleset` is the anchor path of the deciding
/// rule's rule set (`""`: main), `anchor_nr` the anchor rule's number when the rule is in an
/// anchor (pf then logs it as `rulenr` and the rule as `subrulenr`).
pub fn header(
    d: &Decision,
    pkt: &Packet<'_>,
    meta: &Meta<'_>,
    ruleset: &str,
    anchor_nr: Option<u32>,
) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0] = HEADER_LEN as u8;
    h[1] = match pkt.af {
        Family::Inet => AF_INET,
        Family::Inet6 => AF_INET6,
    };
    h[2] = match d.action {
        Verdict::Pass => 0,
        Verdict::Block => 1,
    };
    h[3] = d.reason.code();
    put_name(&mut h[4..20], meta.ifname);
    put_name(&mut h[20..36], ruleset);
    let rule = d.rule.map_or(u32::MAX, |r| r.nr);
    let (rulenr, subrulenr) = match anchor_nr {
        Some(a) => (a, rule),
        None => (rule, u32::MAX),
    };
    h[36..40].copy_from_slice(&rulenr.to_be_bytes());
    h[40..44].copy_from_slice(&subrulenr.to_be_bytes());
    // The socket's user and process (unknown: UID_MAX and NO_PID), the rule's creator.
    h[44..48].copy_from_slice(&meta.uid.unwrap_or(u32::MAX).to_be_bytes());
    h[48..52].copy_from_slice(&(-1i32).to_be_bytes());
    h[52..56].copy_from_slice(&0u32.to_be_bytes());
    h[56..60].copy_from_slice(&0i32.to_be_bytes());
    h[60] = match meta.dir {
        Direction::In => 1,
        Direction::Out => 2,
    };
    // Not rewritten: no translated addresses follow (`rewritten` 0, naf the packet's).
    h[61] = 0;
    h[62] = h[1];
    h
}

/// A whole pflog record: the header, then the packet's bytes.
pub fn record(
    d: &Decision,
    pkt: &Packet<'_>,
    meta: &Meta<'_>,
    ruleset: &str,
    anchor_nr: Option<u32>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + pkt.bytes.len());
    out.extend_from_slice(&header(d, pkt, meta, ruleset, anchor_nr));
    out.extend_from_slice(pkt.bytes);
    out
}
