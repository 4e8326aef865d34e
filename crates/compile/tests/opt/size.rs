//! Program size against libpcap's optimizer: the corpus's `opt` listings (libpcap 1.11) and
//! the system libpcap's `pcap_compile(…, optimize=1)` on generated expressions, per link type.
//! Prints the distribution (shorter / equal / longer, totals) and pins it.
//!
//! On the corpus, sift's program is no longer than libpcap's for at least 95% of the
//! expressions and shorter in total (97.8%, 1.7% fewer instructions). On generated expressions
//! it is shorter in total (7.5% fewer instructions) but no longer for only about 85% of them,
//! and cannot get near 95% without changing what programs return on truncated packets: a load
//! past the end of the packet makes the program return 0, libpcap's optimizer drops such loads
//! when their values are unused and moves tests ahead of them (its issue 430, an open
//! miscompilation), sift does neither unless the verdict provably cannot change (see
//! `opt::bounds`, `opt::pullup`). The test measures this directly: it runs libpcap's optimized
//! and unoptimized programs on the link type's frames (truncated and scrambled ones included),
//! on frames built to pass the expression's tests and on their prefixes. libpcap's optimizer
//! changes a verdict for about 420 of the 3,650 expressions, and 402 of the 556 where sift is
//! longer are among them. Over the expressions where libpcap's optimizer keeps every verdict,
//! sift is no longer for at least 95% (95.2%, 11.5% fewer instructions): that is pinned.
//!
//! Of the 556 longer programs, 85 are a single `ret` in libpcap (every load dropped), and most
//! others keep a dead load before an accepting `ret` (`dst net 2001:db8::/32` reads the last
//! address word, masked with 0) or test `host a or b` in the order the loads can fail in.
//! With failing loads ignored in the passes (an experiment, not a mode: `Known::safe` true for
//! bounded loads, every pull-up run reorderable), the same passes give 98.9% no longer and
//! 11.7% fewer instructions: 517 of the 556 are the price of the verdicts, 39 are optimizer
//! gaps (13 with huge or negative offsets libpcap folds, some unsoundly; tails it shares).
//! Run with `--nocapture` for the figures; `SIFT_OPT_SHOW=N` lists N of the longer ones, and
//! `SIFT_OPT_DUMP=FILE` writes both listings of every longer generated one to FILE.
//!
//! Expressions with `protochain` are left out: libpcap's optimizer turns itself off for the
//! whole program when it holds the walk's loop, so their sizes would compare sift's optimizer
//! with none.

use std::collections::BTreeMap;

use sift_compile::pipeline::{self, Options};
use sift_filetests::{Corpus, ExprGen, Frame, LinkType, PacketSet};
use sift_filter::{Layered, SystemResolver, TableResolver};
use sift_libpcap::Libpcap;

/// Sizes compared on one link type.
#[derive(Default, Clone, Copy)]
struct Dist {
    shorter: usize,
    equal: usize,
    longer: usize,
    sift: usize,
    libpcap: usize,
}

impl Dist {
    fn add(&mut self, sift: usize, libpcap: usize) {
        match sift.cmp(&libpcap) {
            std::cmp::Ordering::Less => self.shorter += 1,
            std::cmp::Ordering::Equal => self.equal += 1,
            std::cmp::Ordering::Greater => self.longer += 1,
        }
        self.sift += sift;
        self.libpcap += libpcap;
    }
    fn merge(&mut self, o: &Dist) {
        self.shorter += o.shorter;
        self.equal += o.equal;
        self.longer += o.longer;
        self.sift += o.sift;
        self.libpcap += o.libpcap;
    }
    fn total(&self) -> usize {
        self.shorter + self.equal + self.longer
    }
    fn line(&self, name: &str) -> String {
        format!(
            "{name:>11}: {:>5} exprs: {:>5} shorter, {:>5} equal, {:>4} longer ({:.1}% no \
             longer); instructions sift {} vs libpcap {} ({:+.1}%)",
            self.total(),
            self.shorter,
            self.equal,
            self.longer,
            100.0 * (self.shorter + self.equal) as f64 / self.total().max(1) as f64,
            self.sift,
            self.libpcap,
            100.0 * (self.sift as f64 - self.libpcap as f64) / self.libpcap.max(1) as f64
        )
    }
}

fn show() -> usize {
    std::env::var("SIFT_OPT_SHOW").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn report(title: &str, per: &BTreeMap<&str, Dist>, longer: &[String]) -> Dist {
    println!("{title}");
    let mut all = Dist::default();
    for (name, d) in per {
        println!("{}", d.line(name));
        all.merge(d);
    }
    println!("{}", all.line("all"));
    for l in longer.iter().take(show()) {
        println!("  longer: {l}");
    }
    all
}

#[test]
fn corpus_sizes_against_libpcap_opt_listings() {
    let Some(dir) = sift_testkit::libpcap_corpus() else { return };
    let Some(corpus) = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir)) else { return };
    let mut fixtures = TableResolver::empty();
    if let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt")) {
        fixtures.load_mixed(&text);
    }
    let resolver = Layered(fixtures, SystemResolver::new());
    let mut per: BTreeMap<&str, Dist> = BTreeMap::new();
    let mut longer = Vec::new();
    for c in corpus.accept.iter().filter(|c| {
        crate::common::FIXED_LINKS.contains(&c.link.name().unwrap())
            && !c.expr.contains("protochain")
    }) {
        let Some(opt) = c.opt.as_deref().and_then(|t| sift_insn::text::parse(t).ok()) else {
            continue;
        };
        let opts = Options::new(c.link, &resolver)
            .snaplen(c.snaplen as u32)
            .netmask((c.netmask != 0xffff_ffff).then_some(c.netmask))
            .linux_ext(c.linuxext);
        let Ok(prog) = pipeline::compile(&c.expr, &opts).map(|c| c.program.to_program()) else {
            continue;
        };
        per.entry(c.link.name().unwrap()).or_default().add(prog.len(), opt.len());
        if prog.len() > opt.len() {
            longer.push(format!(
                "{} {} `{}`: {} vs {}",
                c.name,
                c.link.name().unwrap(),
                c.expr,
                prog.len(),
                opt.len()
            ));
        }
    }
    let all = report("corpus (libpcap 1.11 opt listings)", &per, &longer);
    assert!(all.total() >= 900, "only {} compared", all.total());
    assert!(all.sift < all.libpcap, "not shorter in total");
    assert!((all.shorter + all.equal) * 100 >= all.total() * 95, "fewer than 95% no longer");
}

#[test]
fn generated_sizes_against_system_libpcap() {
    let Some(pcap) = sift_testkit::oracle("system libpcap", Libpcap::load()) else { return };
    let resolver = SystemResolver::new();
    let mut per: BTreeMap<&str, Dist> = BTreeMap::new();
    // The same, over the expressions whose libpcap optimized program returns what libpcap's
    // own unoptimized program returns on every frame tried.
    let mut faithful: BTreeMap<&str, Dist> = BTreeMap::new();
    let (mut unfaithful, mut longer_unfaithful) = (0, 0);
    let mut longer = Vec::new();
    let mut dump = std::env::var_os("SIFT_OPT_DUMP").and_then(|p| std::fs::File::create(p).ok());
    for (i, name) in crate::common::FIXED_LINKS.iter().enumerate() {
        let link = LinkType::from_name(name).unwrap();
        let set = PacketSet::generate(link, 0x0f5e + i as u64, 200, 50);
        let opts = Options::new(link, &resolver);
        let n = if *name == "EN10MB" { 1500 } else { 300 };
        for src in ExprGen::new(0x5eed + i as u64, name).take(n) {
            if src.contains("protochain") {
                continue;
            }
            let Ok(reference) = pcap.compile(link, 262144, &src, true, 0xffff_ffff) else {
                continue;
            };
            let Ok(prog) = pipeline::compile(&src, &opts).map(|c| c.program.to_program()) else {
                continue;
            };
            per.entry(name).or_default().add(prog.len(), reference.len());
            let unopt = pcap.compile(link, 262144, &src, false, 0xffff_ffff).expect(&src);
            let kept = verdicts_kept(&pcap, &reference, &unopt, &set, prog.insns());
            if kept {
                faithful.entry(name).or_default().add(prog.len(), reference.len());
            } else {
                unfaithful += 1;
                longer_unfaithful += usize::from(prog.len() > reference.len());
            }
            if prog.len() > reference.len() {
                longer.push(format!("{name} `{src}`: {} vs {}", prog.len(), reference.len()));
                if let Some(out) = dump.as_mut() {
                    use std::io::Write;
                    let _ = writeln!(
                        out,
                        "=== {name} `{src}`: {} vs {}\n--- sift\n{}--- libpcap\n{}",
                        prog.len(),
                        reference.len(),
                        sift_insn::text::listing(prog.insns()),
                        sift_insn::text::listing(&reference)
                    );
                }
            }
        }
    }
    let all = report(&format!("generated ({} optimized)", pcap.version()), &per, &longer);
    println!(
        "libpcap's optimized program returns something else than its unoptimized one on some \
         frame for {unfaithful} of {} expressions ({longer_unfaithful} of the {} where sift's \
         program is longer)",
        all.total(),
        all.longer
    );
    let kept = report(
        "generated, where libpcap's optimizer keeps every verdict on the frames tried",
        &faithful,
        &[],
    );
    assert!(all.total() >= 2000, "only {} compared", all.total());
    assert!(kept.sift < kept.libpcap, "not shorter in total where libpcap keeps verdicts");
    assert!(
        (kept.shorter + kept.equal) * 100 >= kept.total() * 95,
        "fewer than 95% no longer where libpcap keeps verdicts"
    );
    // Pinned (see the module documentation for why not 95%): shorter in total by at least 6%,
    // at least 84% no longer.
    assert!(all.sift * 100 <= all.libpcap * 94, "fewer than 6% shorter in total");
    assert!((all.shorter + all.equal) * 100 >= all.total() * 84, "fewer than 84% no longer");
}

/// Whether libpcap's optimized program `opt` returns what its unoptimized program `unopt`
/// returns on every frame tried: the link type's generated set (with truncated and scrambled
/// frames), frames built to pass `sift`'s tests, and every even-length prefix of those up to
/// 96 bytes (where a dropped load changes a verdict).
fn verdicts_kept(
    pcap: &Libpcap,
    opt: &[sift_insn::Insn],
    unopt: &[sift_insn::Insn],
    set: &PacketSet,
    sift: &[sift_insn::Insn],
) -> bool {
    let same =
        |data: &[u8], wire: u32| pcap.filter(opt, data, wire) == pcap.filter(unopt, data, wire);
    let directed: Vec<Frame> = sift_filetests::packets::directed(&[sift], set, 0xd1, 24);
    set.frames.iter().chain(&directed).all(|f| same(&f.data, f.wire_len()))
        && directed
            .iter()
            .all(|f| (0..f.data.len().min(96)).step_by(2).all(|n| same(&f.data[..n], f.wire_len())))
}
