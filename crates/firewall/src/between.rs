//! pf between two interfaces: the two passes a forwarded frame makes, and the frames that
//! leave because of it.
//!
//! Why it exists: a bridge or router running pf judges a frame `in` on the interface it came
//! from and, if it passes, `out` on the one it leaves by, sharing one state table; the packets
//! pf makes itself (`block return`'s answers, synproxy's) leave toward the sender or onward.
//! `sift pf bridge` (`AF_PACKET` rings) and `sift pf run --between` (AF_XDP ports) forward
//! frames through this one function, so both follow the same rules.

use crate::frame::{self, Frame};
use crate::packet::{Direction, Meta};
use crate::{Decision, Firewall, Verdict};

/// `@N`, `state` or `@-1`: what decided.
pub fn decided_by(d: &Decision) -> String {
    if d.from_state {
        "state".into()
    } else {
        d.rule.map_or("@-1".into(), |r| format!("@{}", r.nr))
    }
}

/// `pass @3 match`, `block state bad-state held`: a decision as `--verdicts` prints it.
pub fn verdict_text(d: &Decision) -> String {
    let v = if d.action == Verdict::Pass { "pass" } else { "block" };
    let held = if d.held { " held" } else { "" };
    format!("{v} {} {}{held}", decided_by(d), d.reason.name())
}

/// What pf makes of one frame.
#[derive(Debug, Default)]
pub struct Fate {
    /// Frames that go on, out of the other interface: the packet as pf sends it (or the
    /// datagram it completed, or that datagram cut again), and pf's own packets in the
    /// packet's direction (`Decision::ahead`: synproxy's).
    pub on: Vec<Vec<u8>>,
    /// Frames back out of the interface the frame came from (`Decision::reply`: `block
    /// return`'s answers, synproxy's packets toward the sender).
    pub back: Vec<Vec<u8>>,
    /// Not IP: it went on unchanged.
    pub not_ip: bool,
    /// A pass blocked it.
    pub blocked: bool,
    /// pf kept it (a fragment waiting for its datagram, synproxy's handshake).
    pub held: bool,
}

/// `ip` behind the link header `header` of a frame of link type `link`; on Ethernet the
/// EtherType follows the packet's version (`af-to` changes it).
fn frame_with(link: u16, header: &[u8], ip: &[u8]) -> Vec<u8> {
    let mut f = [header, ip].concat();
    let at = header.len();
    if link == 1 && at >= 14 {
        let ethertype: u16 = if ip.first().is_some_and(|b| b >> 4 == 6) { 0x86dd } else { 0x0800 };
        f[at - 2..at].copy_from_slice(&ethertype.to_be_bytes());
    }
    f
}

/// The packets pf makes besides the one it judged, as frames: answers back, packets ahead.
fn made(fate: &mut Fate, d: &Decision, link: u16, header: &[u8]) {
    if let Some(r) = &d.reply {
        fate.back.push(frame::answer_frame(link, header, r));
    }
    if let Some(a) = &d.ahead {
        fate.on.push(frame_with(link, header, a));
    }
}

/// pf's two passes over `data` (a frame of link type `link` read on `from`, leaving by `to`,
/// at `now` on the firewall's clock, in seconds): `in on FROM` with pf's whole path
/// (reassembly first), then `out on TO` for each packet that goes on; appends the verdicts to
/// `line` (` in pass @3 match, out pass state match`, ` not-ip`).
pub fn judge(
    fw: &mut Firewall,
    link: u16,
    data: &[u8],
    from: &str,
    to: &str,
    now: u64,
    line: &mut String,
) -> Fate {
    let mut fate = Fate::default();
    let (ip, vlan) = match frame::ip_of(link, data) {
        Frame::Other => {
            line.push_str(" not-ip");
            fate.not_ip = true;
            fate.on.push(data.to_vec());
            return fate;
        }
        Frame::Ip { ip, vlan } => (ip, vlan),
    };
    let header = &data[..ip.as_ptr() as usize - data.as_ptr() as usize];
    let in_if = frame::interface(from, vlan);
    let out_if = frame::interface(to, vlan);
    let mut meta = Meta::new(&in_if, Direction::In);
    meta.now = now;
    let first = fw.process(ip, &meta);
    let d = &first.decision;
    line.push_str(" in ");
    line.push_str(&verdict_text(d));
    made(&mut fate, d, link, header);
    if d.action != Verdict::Pass {
        fate.blocked = true;
        return fate;
    }
    fate.held = first.out.is_empty();
    let mut meta = Meta::new(&out_if, Direction::Out);
    meta.now = now;
    meta.received_on = Some(&in_if);
    meta.tag = d.tag.as_deref();
    for pkt in &first.out {
        let second = fw.process(pkt, &meta);
        let d = &second.decision;
        line.push_str(", out ");
        line.push_str(&verdict_text(d));
        made(&mut fate, d, link, header);
        if d.action != Verdict::Pass {
            fate.blocked = true;
            continue;
        }
        fate.held |= second.out.is_empty();
        fate.on.extend(second.out.iter().map(|o| frame_with(link, header, o)));
    }
    fate
}
