//! Differential test against the real parser: for expressions tcpdump accepts, tcpdump must
//! compile sift's canonical print (explicit qualifiers, fully parenthesised arithmetic) to the
//! same unoptimised program. This pins precedence, associativity and qualifier inheritance to
//! what libpcap actually does. Skips (or fails under `SIFT_REQUIRE_ORACLES=1`) without tcpdump.

use std::path::Path;
use std::process::Command;

fn compile(tcpdump: &Path, expr: &str) -> Option<String> {
    let out = Command::new(tcpdump).args(["-y", "EN10MB", "-O", "-d", "--", expr]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check(tcpdump: &Path, exprs: &[String]) -> (usize, usize, Vec<String>) {
    let (mut compared, mut skipped, mut bad) = (0, 0, Vec::new());
    for e in exprs {
        let Ok(Some(ast)) = sift_filter::parse(e) else {
            skipped += 1;
            continue;
        };
        let Some(want) = compile(tcpdump, e) else {
            skipped += 1;
            continue;
        };
        let printed = ast.to_string();
        compared += 1;
        if compile(tcpdump, &printed).as_deref() != Some(want.as_str()) {
            bad.push(format!("{e:?} printed as {printed:?}"));
        }
    }
    (compared, skipped, bad)
}

#[test]
fn canonical_print_compiles_like_the_original() {
    let Some(tcpdump) = sift_testkit::tool("tcpdump") else { return };
    let mut exprs: Vec<String> = Vec::new();
    // Our own goldens: precedence quirks, inheritance, primitives.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parse");
    for f in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        exprs.extend(text.lines().filter_map(|l| l.strip_prefix("input: ")).map(str::to_owned));
    }
    // Extra arithmetic shapes.
    for e in [
        "ip[0]*ip[1]%ip[2]+ip[3]=3",
        "ip[0]-ip[1]%ip[2]-ip[3]=3",
        "ip[0]<<1^ip[1]>>2=3",
        "ip[0]&1|ip[1]&2^ip[2]=3",
        "3=ip[0]*-ip[1]%ip[2]",
        "len-1>5 or len - 1 > 5",
        "host 1.2.3.4 and (port 80) and 1.2.3.5",
        "not host 1.2.3.4 and 1.2.3.5 or 1.2.3.6",
        "host (1.2.3.4 or not 1.2.3.5) and port (80 or 443)",
    ] {
        exprs.push(e.into());
    }
    exprs.extend(random_arith(400));
    exprs.extend(random_bool(200));
    // libpcap's corpus, link-independent Ethernet cases.
    if let Some(c) = sift_testkit::libpcap_corpus() {
        let text = std::fs::read_to_string(c.join("libpcap_filter_expressions.txt")).unwrap();
        exprs.extend(
            text.lines()
                .filter(|l| !l.contains("libpcap.test") && !l.contains("host.invalid"))
                .map(str::to_owned),
        );
    }
    let (compared, skipped, bad) = check(&tcpdump, &exprs);
    eprintln!("tcpdump differential: {compared} compared, {skipped} skipped, {} differ", bad.len());
    for b in &bad {
        eprintln!("  differs: {b}");
    }
    assert!(compared > 500, "too few comparisons ({compared})");
    assert!(bad.is_empty(), "{} canonical prints compile differently", bad.len());
}

/// A small deterministic PRNG (xorshift), so the generated cases are the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Random relations mixing every arithmetic operator (including the precedence-less `%` and
/// `^`), unary minus and parentheses, without literal zero divisors or large shifts.
fn random_arith(n: usize) -> Vec<String> {
    fn term(r: &mut Rng, depth: u32) -> String {
        match r.next(if depth > 2 { 3 } else { 6 }) {
            0 => format!("ip[{}]", r.next(20)),
            1 => format!("{}", 1 + r.next(9)),
            2 => "len".into(),
            3 => format!("-{}", term(r, depth + 1)),
            _ => format!("({})", expr(r, depth + 1)),
        }
    }
    fn expr(r: &mut Rng, depth: u32) -> String {
        const OPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
        let mut s = term(r, depth);
        for _ in 0..r.next(4) {
            s = format!("{s}{}{}", OPS[r.next(10) as usize], term(r, depth));
        }
        s
    }
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            let rel = ["=", "!=", "<", ">", "<=", ">="][r.next(6) as usize];
            format!("{} {rel} {}", expr(&mut r, 0), expr(&mut r, 0))
        })
        .collect()
}

/// Random `and`/`or`/`not` combinations with bare ids that inherit qualifiers.
fn random_bool(n: usize) -> Vec<String> {
    const PRIMS: [&str; 8] = [
        "host 10.0.0.1",
        "src host 10.0.0.2",
        "tcp dst port 80",
        "udp port 53",
        "net 192.168.0.0/16",
        "ip6 host ::1",
        "tcp",
        "ip[0] = 69",
    ];
    const IDS: [&str; 4] = ["10.0.0.3", "22", "443", "10.0.0.4"];
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|_| {
            let mut s = PRIMS[r.next(8) as usize].to_string();
            for _ in 0..1 + r.next(5) {
                let op = if r.next(2) == 0 { " and " } else { " or " };
                let not = if r.next(4) == 0 { "not " } else { "" };
                let operand = match r.next(3) {
                    0 => IDS[r.next(4) as usize].to_string(),
                    1 => format!("({} or {})", IDS[r.next(4) as usize], IDS[r.next(4) as usize]),
                    _ => PRIMS[r.next(8) as usize].to_string(),
                };
                s = format!("{s}{op}{not}{operand}");
            }
            s
        })
        .collect()
}
