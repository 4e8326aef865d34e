//! Times reading and printing a generated 10,000-rule pf.conf (`pfctl -o none -nv`'s work):
//! `cargo run --release -p sift-pf --example pf_parse_bench [RULES] [ROUNDS]`.
//!
//! The rules mix what real rule sets hold: macros, pass/block/match with interfaces, address
//! families, protocols, networks, ports and ranges, state options, labels with macros, tags,
//! nat-to and rdr-to. Prints the best and median time of a round.

use std::time::Instant;

use sift_pf::{Options, host::FixtureHost, pfctl};

/// A rule set of `n` rules (one rule per line, no lists, so `n` rules print).
fn generate(n: usize) -> String {
    let mut s = String::from("ext_if = \"tun1000000\"\nint_net = \"10.0.0.0/8\"\n");
    s.push_str("table <bad> persist { 192.0.2.0/24 198.51.100.7 }\n");
    for i in 0..n {
        let a = (i / 256) % 256;
        let b = i % 256;
        let line = match i % 8 {
            0 => format!(
                "pass in on $ext_if proto tcp from any to 10.{a}.{b}.1 port {} keep state label \"r$nr\"\n",
                1 + i % 60000
            ),
            1 => format!("block drop in quick on $ext_if inet from 172.16.{a}.{b}/32 to any\n"),
            2 => format!(
                "pass out on lo0 proto udp from $int_net port 1024:65535 to 192.168.{a}.{b} port = 53\n"
            ),
            3 => format!(
                "match out on $ext_if inet from 10.{a}.{b}.0/24 to any nat-to 203.0.113.{b}\n"
            ),
            4 => format!(
                "pass in inet6 proto tcp from any to 2001:db8::{i:x} port {{ 80 443 }} flags S/SA modulate state (max 100, tcp.established 600)\n"
            ),
            5 => format!(
                "block return in log on ! lo0 proto tcp from <bad> to any port > {} tag t{i}\n",
                i % 65535
            ),
            6 => format!(
                "match in on $ext_if proto tcp from any to 10.{a}.{b}.2 port 8080 rdr-to 127.0.0.1 port 80\n"
            ),
            _ => format!(
                "pass in proto icmp from any to 10.{a}.{b}.3 icmp-type echoreq code 0 tos lowdelay probability 50%\n"
            ),
        };
        s.push_str(&line);
    }
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    // Case 4 expands to two rules; count printed rules for the report.
    let text = generate(n);
    let host = FixtureHost::openbsd(".");
    let opts = Options { verbose: true, ..Options::default() };
    let mut times = Vec::new();
    let mut printed = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let out = pfctl("stdin", &text, &opts, &host);
        times.push(t.elapsed());
        assert_eq!(out.status, 0, "{}", out.stderr);
        printed = out.stdout.lines().count();
    }
    times.sort();
    println!(
        "{n} rules ({} bytes, {printed} lines printed): best {:.1} ms, median {:.1} ms over {rounds} rounds",
        text.len(),
        times[0].as_secs_f64() * 1e3,
        times[rounds / 2].as_secs_f64() * 1e3
    );
}
