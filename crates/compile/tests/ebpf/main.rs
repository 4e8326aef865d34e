//! The eBPF back end (`sift_compile::ebpf`): golden listings (`golden`), the lowered programs on
//! sift's eBPF VM and verifier against the classic program on sift's classic VM (`vm`), the
//! same in the kernel with `BPF_PROG_TEST_RUN` (`kernel`), and the API's modes and refusals
//! (`api`). The filters are the libpcap corpus's expressions valid on EN10MB and generated
//! ones (`sift_filetests::ExprGen`); the packets are generated frames, frames aimed at each
//! filter's constants, `protochain` header chains, and all of them cut at several lengths.

mod api;
mod golden;
mod kernel;
mod multi;
mod vm;

use sift_compile::pipeline::{self, Compiled, LinkType, Options};
use sift_filetests::{Corpus, ExprGen, PacketSet};
use sift_filter::TableResolver;
use sift_testkit::Rng;

/// A filter to test: its text and what the pipeline made of it (for EN10MB, the kernel's form:
/// `protochain` walks unrolled, which is what the eBPF loop reproduces).
pub struct Filter {
    /// The expression.
    pub expr: String,
    /// The pipeline's output.
    pub compiled: Compiled,
}

/// The corpus's names (`TESTrun`'s fixtures) on top of the well-known ones.
pub fn resolver() -> TableResolver {
    let mut r = TableResolver::well_known();
    if let Some(dir) = sift_testkit::libpcap_corpus()
        && let Ok(text) = std::fs::read_to_string(dir.join("libpcap_TESTrun_name_fixtures.txt"))
    {
        r.load_mixed(&text);
    }
    r
}

/// Compiles `expr` for EN10MB (with `netmask`), or `None` when the pipeline refuses it.
pub fn compile(resolver: &TableResolver, expr: &str, netmask: Option<u32>) -> Option<Filter> {
    let opts = Options::new(LinkType::EN10MB, resolver).netmask(netmask);
    let compiled = pipeline::compile(expr, &opts).ok()?;
    Some(Filter { expr: expr.to_string(), compiled })
}

/// The corpus's accept cases for EN10MB that compile (once each, as the corpus has them
/// optimized and not), and how many did not compile. `None` without the corpus.
pub fn corpus_filters(resolver: &TableResolver) -> Option<(Vec<Filter>, usize)> {
    let dir = sift_testkit::libpcap_corpus()?;
    let corpus = sift_testkit::oracle("libpcap corpus", Corpus::load(&dir))?;
    let mut seen = std::collections::BTreeSet::new();
    let (mut out, mut refused) = (Vec::new(), 0);
    for case in corpus.accept.iter().filter(|c| c.link == LinkType::EN10MB) {
        let netmask = (case.netmask != 0xffff_ffff).then_some(case.netmask);
        if !seen.insert((case.expr.clone(), netmask)) {
            continue;
        }
        match compile(resolver, &case.expr, netmask) {
            Some(f) => out.push(f),
            None => refused += 1,
        }
    }
    Some((out, refused))
}

/// `n` generated expressions that compile for EN10MB (from `seed`), and how many did not.
pub fn generated_filters(resolver: &TableResolver, seed: u64, n: usize) -> (Vec<Filter>, usize) {
    let mut g = ExprGen::new(seed, "EN10MB");
    let (mut out, mut refused) = (Vec::new(), 0);
    while out.len() < n {
        match compile(resolver, &g.expr(), None) {
            Some(f) => out.push(f),
            None => refused += 1,
        }
    }
    (out, refused)
}

/// How many generated expressions the differential tests use: `SIFT_EBPF_EXPRS`, or `ci`.
pub fn generated_count(ci: usize) -> usize {
    std::env::var("SIFT_EBPF_EXPRS").ok().and_then(|v| v.parse().ok()).unwrap_or(ci)
}

/// An Ethernet frame carrying IPv6 (`ipv6`) or IPv4 with `headers` (next-header values) in
/// a chain of 8-byte extension headers after the network header, then `last` and 8 bytes.
/// AH (51) headers get libpcap's length rule: `len` = 0, so the next offset is 8 bytes from
/// the network header's start (a chain with AH may loop back on itself, as in libpcap).
pub fn chain(ipv6: bool, headers: &[u8], last: u8) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    let first = headers.first().copied().unwrap_or(last);
    if ipv6 {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 0, first, 64]);
        f.extend_from_slice(&[0; 32]);
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0, 0, 64, first, 0, 0]);
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    }
    for (i, _) in headers.iter().enumerate() {
        let next = headers.get(i + 1).copied().unwrap_or(last);
        f.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 0]);
    }
    f.extend_from_slice(&[0; 8]);
    f
}

/// Frames with `protochain` walks to take: chains of every extension header, AH headers
/// (whose offsets loop back on themselves), long chains, for IPv4 and IPv6.
pub fn chains() -> Vec<Vec<u8>> {
    const EXT: [u8; 5] = [0, 60, 43, 44, 51];
    let mut out = Vec::new();
    let mut rng = Rng(0xc4a1);
    for ipv6 in [true, false] {
        for n in [0usize, 1, 2, 3, 5, 8, 20, 70, 200] {
            for last in [6u8, 17, 58, 59, 51] {
                let headers: Vec<u8> = if ipv6 {
                    (0..n).map(|_| EXT[rng.below(EXT.len() as u64) as usize]).collect()
                } else {
                    vec![51; n]
                };
                out.push(chain(ipv6, &headers, last));
            }
        }
        // AH whose length points back at itself: libpcap's walk goes round for ever (its
        // budget ends the program), the unrolled one until its depth.
        let mut f = chain(ipv6, &[51], 6);
        let (nl, x) = (14, if ipv6 { 40 } else { 20 });
        f[nl + x] = 51;
        f[nl + x + 1] = (x / 4 - 2) as u8;
        out.push(f);
    }
    out
}

/// The shared frames: generated traffic (with prefixes, scrambled and random frames) and
/// header chains, each at least 14 bytes long (what XDP and TC test runs take).
pub fn base_frames(seed: u64, realistic: usize) -> Vec<Vec<u8>> {
    let set = PacketSet::generate(LinkType::EN10MB, seed, realistic, realistic / 5);
    let mut out: Vec<Vec<u8>> = set.frames.into_iter().map(|f| f.data).collect();
    out.extend(chains());
    out.retain(|f| f.len() >= 14 && f.len() <= MAX_FRAME);
    out
}

/// The longest frame the tests give XDP (a test run's page, less head- and tailroom; sift's
/// VM has the same frame).
pub const MAX_FRAME: usize = 3_000;

/// `frames` plus frames aimed at `f`'s constants, each also cut at two lengths of at least 14
/// bytes (a load past the end must end the program with 0).
pub fn packets_for(f: &Filter, frames: &[Vec<u8>], seed: u64, directed: usize) -> Vec<Vec<u8>> {
    let mut set = PacketSet::empty(LinkType::EN10MB);
    set.frames = frames
        .iter()
        .map(|d| sift_filetests::Frame {
            data: d.clone(),
            meta: sift_vm::PacketMeta { wire_len: d.len() as u32, ..Default::default() },
        })
        .collect();
    let aimed =
        sift_filetests::packets::directed(&[f.compiled.program.insns()], &set, seed, directed);
    let mut out: Vec<Vec<u8>> = frames.to_vec();
    out.extend(aimed.into_iter().map(|fr| fr.data).filter(|d| d.len() <= MAX_FRAME));
    let mut rng = Rng(seed | 1);
    let whole = out.len();
    for i in 0..whole {
        let len = out[i].len();
        if len > 14 {
            for _ in 0..2 {
                let cut = 14 + rng.below((len - 14) as u64) as usize;
                out.push(out[i][..cut].to_vec());
            }
        }
    }
    out
}

/// What the classic program returns on `pkt` (its wire length its captured length, as XDP
/// and a test run's skb see it).
pub fn classic(vm: &sift_vm::Interpreter, pkt: &[u8]) -> u32 {
    vm.run(pkt, pkt.len() as u32)
}
