//! Random rule sets and packets over a small value space (so that rules match often), shared
//! by the evaluator's differential tests.

use sift_firewall::packet::{Family, Packet};
use sift_testkit::Rng;

pub const IFACES: &[&str] = &["em0", "lo0", "tun1000000"];
pub const V4: &[&str] = &["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.1.1"];
pub const V6: &[&str] = &["2001:db8::", "2001:db8::1", "2001:db8::2"];

pub fn addr(rng: &mut Rng, v6: bool) -> String {
    let not = if rng.chance(15) { "! " } else { "" };
    let a = if v6 {
        match rng.below(4) {
            0 => "2001:db8::/127".to_string(),
            1 => "<t6>".to_string(),
            _ => rng.pick(V6).to_string(),
        }
    } else {
        match rng.below(9) {
            0 => "10.0.0.0/31".into(),
            1 => "10.0.0.0/30".into(),
            2 => "<t1>".into(),
            3 => "<t2>".into(),
            4 => "10.0.0.1 - 10.0.0.2".into(),
            5 => "10.0.0.0/16".into(),
            _ => rng.pick(V4).to_string(),
        }
    };
    format!("{not}{a}")
}

pub fn port(rng: &mut Rng) -> String {
    let a = rng.range(1, 4);
    let b = rng.range(a + 1, 5);
    match rng.below(9) {
        0 => format!("port {a}"),
        1 => format!("port != {a}"),
        2 => format!("port < {a}"),
        3 => format!("port <= {a}"),
        4 => format!("port > {a}"),
        5 => format!("port >= {a}"),
        6 => format!("port {a}:{b}"),
        7 => format!("port {a} >< {b}"),
        _ => format!("port {a} <> {b}"),
    }
}

/// One filter rule (no anchors).
pub fn rule(rng: &mut Rng) -> String {
    rule_with(rng, true)
}

/// One filter rule; without `anchors_and_tags`, only what pf in the kernel can run (no
/// `match`, tags, `received-on`, `probability`, `once`).
pub fn rule_with(rng: &mut Rng, anchors_and_tags: bool) -> String {
    let mut s = String::new();
    s += if anchors_and_tags {
        rng.pick(&["pass", "pass", "block", "block", "match"])
    } else {
        rng.pick(&["pass", "pass", "block", "block"])
    };
    let block = s == "block";
    if block && rng.chance(20) {
        s += rng.pick(&[" return", " drop", " return-icmp"]);
    }
    s += rng.pick(&["", "", " in", " out"]);
    if !s.starts_with("match") && rng.chance(25) {
        s += " quick";
    }
    if rng.chance(35) {
        let not = if rng.chance(30) { "! " } else { "" };
        s += &format!(" on {not}{}", rng.pick(&["em0", "lo0", "egress", "lo", "tun1000000"]));
    }
    let v6 = rng.chance(25);
    let af = if v6 {
        " inet6"
    } else if rng.chance(40) {
        " inet"
    } else {
        ""
    };
    s += af;
    let proto = match rng.below(6) {
        0 | 1 => Some("tcp"),
        2 => Some("udp"),
        3 if !v6 => Some("icmp"),
        4 => Some("47"),
        _ => None,
    };
    if let Some(p) = proto {
        s += &format!(" proto {p}");
    }
    let ports = matches!(proto, Some("tcp" | "udp"));
    let mut any = true;
    if rng.chance(50) || (ports && rng.chance(50)) {
        any = false;
        s += " from ";
        s += &if rng.chance(40) { "any".to_string() } else { addr(rng, v6) };
        if ports && rng.chance(40) {
            s += &format!(" {}", port(rng));
        }
    }
    if rng.chance(50) || (ports && rng.chance(50)) {
        if any {
            s += " from any";
        }
        any = false;
        s += " to ";
        s += &if rng.chance(40) { "any".to_string() } else { addr(rng, v6) };
        if ports && rng.chance(40) {
            s += &format!(" {}", port(rng));
        }
    }
    if any && rng.chance(50) {
        s += " all";
    }
    if proto == Some("tcp") && rng.chance(30) {
        s += rng.pick(&[" flags S/SA", " flags A/A", " flags /F", " flags SA/SAFR"]);
    }
    if proto == Some("icmp") && af == " inet" && rng.chance(50) {
        s += rng.pick(&[" icmp-type echoreq", " icmp-type echorep", " icmp-type unreach code 1"]);
    }
    if rng.chance(10) {
        s += rng.pick(&[" tos 0x10", " tos 0x20"]);
    }
    if anchors_and_tags && rng.chance(15) {
        s += rng.pick(&[" tag T1", " tag T2"]);
    }
    if anchors_and_tags && rng.chance(15) {
        s += rng.pick(&[" tagged T1", " ! tagged T2", " tagged T2"]);
    }
    if anchors_and_tags && rng.chance(8) {
        s += rng.pick(&[" received-on em0", " received-on lo"]);
    }
    if anchors_and_tags && rng.chance(5) {
        s += " probability 50%";
    }
    if anchors_and_tags && rng.chance(4) && !s.starts_with("match") {
        s += " once";
    }
    if rng.chance(10) && s.starts_with("pass") {
        s += rng.pick(&[" no state", " keep state (sloppy)"]);
    }
    s
}

/// A packet of the generator's small value space (no bytes: only the fields rules test).
pub fn packet_bytes_free(rng: &mut Rng) -> Packet<'static> {
    let v6 = rng.chance(25);
    let proto = rng.pick(&[6u8, 6, 17, 1, 47, 58]);
    let proto = match (v6, proto) {
        (true, 1) => 58,
        (false, 58) => 1,
        (_, p) => p,
    };
    let key = |s: &str| -> u128 {
        match s.parse::<std::net::IpAddr>().unwrap() {
            std::net::IpAddr::V4(a) => u128::from(u32::from(a)) << 96,
            std::net::IpAddr::V6(a) => u128::from(a),
        }
    };
    let a = |rng: &mut Rng| if v6 { key(rng.pick(V6)) } else { key(rng.pick(V4)) };
    let icmp = proto == 1 || proto == 58;
    Packet {
        af: if v6 { Family::Inet6 } else { Family::Inet },
        proto,
        src: a(rng),
        dst: a(rng),
        sport: if icmp { 0 } else { rng.range(0, 5) as u16 },
        dport: if icmp { 0 } else { rng.range(0, 5) as u16 },
        tcp_flags: if proto == 6 {
            rng.pick(&[0x02u8, 0x12, 0x10, 0x01, 0x11, 0x04, 0x18])
        } else {
            0
        },
        icmp_type: if icmp { rng.pick(&[8u8, 0, 3, 11, 128, 129]) } else { 0 },
        icmp_code: if icmp { rng.range(0, 1) as u8 } else { 0 },
        tos: rng.pick(&[0u8, 0x10, 0x20]),
        ttl: 64,
        fragment: rng.chance(5),
        len: 60,
        bytes: &[],
    }
}
