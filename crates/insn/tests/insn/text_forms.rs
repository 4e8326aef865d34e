//! The text forms against libpcap: golden files made by libpcap's own `bpf_dump`, the TESTrun
//! corpus listings (libpcap 1.11), and the installed tcpdump as a live oracle.

use sift_insn::text::{self, Format, ListingStyle};
use sift_insn::{Opcode, Program};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("data")
}

/// Every `NAME.prog` in tests/data (any text form) must print as `NAME.d`, `NAME.dd` and
/// `NAME.ddd`; those files were made by libpcap 1.10.3's `bpf_dump` (see `libpcap_dump.py`), so
/// this is "our `-d`/`-dd`/`-ddd` equals tcpdump's" for every opcode, every unknown code below
/// 256 and every ancillary offset. `BLESS=1` rewrites them from our output instead.
#[test]
fn golden_text_forms() {
    let mut cases = 0;
    for entry in std::fs::read_dir(data_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "prog") {
            continue;
        }
        cases += 1;
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = text::parse(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let d = text::listing(&prog);
        let dd = text::c_array(&prog);
        let ddd = text::decimal(&prog);
        sift_testkit::golden(&path.with_extension("d"), &d);
        sift_testkit::golden(&path.with_extension("dd"), &dd);
        sift_testkit::golden(&path.with_extension("ddd"), &ddd);
        // And each form reads back.
        assert_eq!(text::parse(&dd).unwrap(), prog, "{}: -dd round trip", path.display());
        assert_eq!(text::parse(&ddd).unwrap(), prog, "{}: -ddd round trip", path.display());
        assert_eq!(text::detect(&d), Format::Listing);
        let reread =
            text::parse(&d).unwrap_or_else(|e| panic!("{}: reading -d: {e}", path.display()));
        // `unimp 0x..` lines lose jt/jf/k, so compare what the listing shows.
        assert_eq!(text::listing(&reread), d, "{}: -d round trip", path.display());
    }
    assert!(cases >= 2, "expected golden cases in {}", data_dir().display());
}

/// The 49-opcode golden file holds exactly the 49 opcodes, each once.
#[test]
fn opcode_golden_covers_all_49() {
    let src = std::fs::read_to_string(data_dir().join("opcodes.prog")).unwrap();
    let prog = text::parse(&src).unwrap();
    let seen: HashSet<Opcode> = prog.iter().map(|i| i.opcode()).collect();
    assert_eq!(seen.len(), 49);
    assert!(Opcode::ALL.iter().all(|o| seen.contains(o)));
}

fn corpus_cases() -> Option<Vec<serde_like::Case>> {
    let dir = sift_testkit::libpcap_corpus()?;
    let json = std::fs::read_to_string(dir.join("libpcap_TESTrun_cases.json")).ok()?;
    Some(serde_like::cases(&json))
}

/// Strips the 1.11 TESTrun `; 0x…` comment and returns (listing line, code from the comment).
fn split_comment(line: &str) -> (&str, Option<u16>) {
    match line.rsplit_once(" ; 0x") {
        Some((l, c)) => (l.trim(), u16::from_str_radix(c.trim(), 16).ok()),
        None => (line.trim(), None),
    }
}

/// The corpus' `bpf_image` case lists all 49 opcodes in libpcap 1.11 form: it parses, each line's
/// `; 0x…` comment matches the parsed code, and printing in 1.11 style gives the same lines.
#[test]
fn corpus_bpf_image_case_round_trips() {
    let Some(cases) = corpus_cases() else { return };
    let case = cases.iter().find(|c| c.name == "bpf_image").expect("bpf_image case");
    let listing = case.unopt.as_deref().expect("unopt listing");
    let prog = text::parse(listing).unwrap();
    assert_eq!(prog.len(), 49);
    let seen: HashSet<Opcode> = prog.iter().map(|i| i.opcode()).collect();
    assert_eq!(seen.len(), 49, "all 49 opcodes");
    let lines: Vec<&str> = listing.lines().filter(|l| !l.trim().is_empty()).collect();
    for (n, (insn, line)) in prog.iter().zip(&lines).enumerate() {
        let (expected, code) = split_comment(line);
        assert_eq!(code, Some(insn.code), "line {n}: {line}");
        assert_eq!(text::image(insn, n, ListingStyle::Libpcap111), expected);
    }
}

/// Every expected listing in the corpus (`unopt` and `opt` of the accept cases) parses and
/// prints back identically in 1.11 style.
#[test]
fn corpus_listings_parse_and_reprint() {
    let Some(cases) = corpus_cases() else { return };
    let mut listings = 0;
    for case in &cases {
        for listing in [&case.unopt, &case.opt].into_iter().flatten() {
            let prog = text::parse(listing)
                .unwrap_or_else(|e| panic!("case {}: {e}\n{listing}", case.name));
            let lines: Vec<&str> = listing.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(prog.len(), lines.len(), "case {}", case.name);
            for (n, (insn, line)) in prog.iter().zip(&lines).enumerate() {
                let (expected, code) = split_comment(line);
                if let Some(code) = code {
                    assert_eq!(code, insn.code, "case {} line {n}", case.name);
                }
                assert_eq!(
                    text::image(insn, n, ListingStyle::Libpcap111),
                    expected,
                    "case {}",
                    case.name
                );
            }
            listings += 1;
        }
    }
    assert!(listings > 2000, "only {listings} listings found");
}

/// Real filter expressions, compiled by the installed tcpdump.
const EXPRESSIONS: &[&str] = &[
    "ip",
    "ip6",
    "arp",
    "tcp",
    "udp",
    "icmp",
    "tcp port 80",
    "udp port 53",
    "host 10.0.0.1",
    "net 192.168.0.0/16",
    "src host 10.1.2.3 and dst port 443",
    "(tcp and portrange 0-1024) or (udp and portrange 1025-2048)",
    "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
    "ip[2:2] > 576",
    "len > 100",
    "less 64",
    "greater 1000",
    "ether host 00:11:22:33:44:55",
    "ether broadcast",
    "ether multicast",
    "vlan 100 and ip",
    "mpls and ip",
    "ip proto 47",
    "icmp[icmptype] == icmp-echo",
    "ip6 and tcp port 22",
    "not port 22",
    "ip[0] & 0xf != 5",
    "tcp[13] & 7 != 0",
    "ip[8] * 3 - 1 > 5",
    "ip[6:2] & 0x1fff = 0 and ip[2:2] / 2 % 3 = 1",
    "udp[8:4] ^ 0xffff = 7",
    "ip[1] << 2 >> 1 = 4",
    "ether[len - 1] = 0",
    "ip6 protochain 6",
    "ip src net 10.0.0.0/8 and not tcp",
    "portrange 6000-6010 or port 5555",
    "ip multicast or ip broadcast",
    "ip host 1.1.1.1 && (tcp[2:2] > 1024 || udp)",
];

fn tcpdump(tool: &Path, flag: &str, optimize: bool, expr: &str) -> String {
    let mut cmd = Command::new(tool);
    cmd.args(["-y", "EN10MB", flag]);
    if !optimize {
        cmd.arg("-O");
    }
    let out = cmd.arg(expr).output().expect("run tcpdump");
    assert!(
        out.status.success(),
        "tcpdump {flag} {expr}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `tcpdump -ddd EXPR` read by us and printed as `-d`/`-dd`/`-ddd` equals tcpdump's own
/// `-d`/`-dd`/`-ddd` byte for byte; and tcpdump's `-d` and `-dd` read back to the same program.
#[test]
fn tcpdump_oracle_expressions() {
    let Some(tool) = sift_testkit::tool("tcpdump") else { return };
    let mut checked = 0;
    for expr in EXPRESSIONS {
        for optimize in [true, false] {
            let ddd = tcpdump(&tool, "-ddd", optimize, expr);
            let prog: Program = text::parse(&ddd).unwrap_or_else(|e| panic!("{expr}: {e}"));
            let d = tcpdump(&tool, "-d", optimize, expr);
            let dd = tcpdump(&tool, "-dd", optimize, expr);
            assert_eq!(text::listing(&prog), d, "-d of {expr:?} (optimize {optimize})");
            assert_eq!(text::c_array(&prog), dd, "-dd of {expr:?}");
            assert_eq!(text::decimal(&prog), ddd, "-ddd of {expr:?}");
            // The listing hides fields the opcode ignores (gencode leaves `tax` with k=1), so
            // compare what it shows.
            assert_eq!(text::listing(&text::parse(&d).unwrap()), d, "reading -d of {expr:?}");
            assert_eq!(text::parse(&dd).unwrap(), prog, "reading -dd of {expr:?}");
            checked += 1;
        }
    }
    eprintln!("checked {checked} tcpdump compilations");
}

/// A minimal reader for the corpus JSON: only the string fields this test needs. (Avoids a
/// serde dependency for one test file.)
mod serde_like {
    pub struct Case {
        pub name: String,
        pub unopt: Option<String>,
        pub opt: Option<String>,
    }

    /// Splits the top-level array into objects and pulls out `name`, `unopt` and `opt`.
    pub fn cases(json: &str) -> Vec<Case> {
        let mut out = Vec::new();
        let bytes = json.as_bytes();
        let mut i = 0;
        let mut depth = 0usize;
        let mut start = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i = skip_string(bytes, i);
                    continue;
                }
                b'{' => {
                    if depth == 0 {
                        start = i;
                    }
                    depth += 1;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        let obj = &json[start..=i];
                        out.push(Case {
                            name: field(obj, "name").unwrap_or_default(),
                            unopt: field(obj, "unopt"),
                            opt: field(obj, "opt"),
                        });
                    }
                }
                _ => {}
            }
            i += 1;
        }
        out
    }

    fn skip_string(bytes: &[u8], mut i: usize) -> usize {
        i += 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        i
    }

    /// The string value of a top-level `"key": "…"` in a flat object (null → None).
    fn field(obj: &str, key: &str) -> Option<String> {
        let pat = format!("\"{key}\" : ");
        let at = obj.find(&pat)? + pat.len();
        let rest = &obj[at..];
        if !rest.starts_with('"') {
            return None;
        }
        let end = skip_string(rest.as_bytes(), 0);
        unescape(&rest[1..end - 1])
    }

    fn unescape(s: &str) -> Option<String> {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            }
        }
        Some(out)
    }
}

/// Live oracle: for every one of the 65,536 opcodes (with a few operands each), our `-d` line
/// is byte-identical to what the installed libpcap's `bpf_image` prints.
#[test]
fn every_opcode_images_like_libpcap() {
    let Some(lib) = sift_testkit::oracle("system libpcap", sift_libpcap::Libpcap::load()) else {
        return;
    };
    let mut checked = 0;
    for code in 0..=u16::MAX {
        for (k, jt, jf) in
            [(0u32, 0u8, 0u8), (0x1f, 3, 200), (0xffff_f02c, 1, 0), (0x8000_0000, 255, 7)]
        {
            let insn = sift_insn::Insn::new(code, jt, jf, k);
            let n = usize::from(code % 1000);
            let ours = text::image(&insn, n, ListingStyle::default());
            let theirs = lib.image(&insn, n);
            assert_eq!(ours, theirs, "code {code:#06x} k {k:#x} jt {jt} jf {jf}");
            checked += 1;
        }
    }
    assert_eq!(checked, 65_536 * 4);
}
