//! libpcap's own filter test corpus (`TESTrun`), as typed cases.
//!
//! The corpus (`../shared/corpus/libpcap/libpcap_TESTrun_cases.json`) is the best available
//! statement of what libpcap's compiler does: 2,230 expressions with the exact program libpcap
//! 1.11 produces, 16,077 expressions it must refuse, and 185 expressions run over small captures.
//! This module turns the JSON into [`AcceptCase`], [`RejectCase`] and [`ApplyCase`] and says,
//! through [`Skip`], which cases cannot apply on this machine (libpcap's own test driver skips
//! them in some builds).

use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::LinkType;

/// The snapshot length `TESTrun` uses when a case names none.
pub const DEFAULT_SNAPLEN: i32 = 262_144;

/// `PCAP_NETMASK_UNKNOWN`: the netmask passed when a case names none.
pub const NETMASK_UNKNOWN: u32 = 0xffff_ffff;

/// Why a case does not apply here (the corpus's `skip` field, interpreted for this machine).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// The expression names hosts, networks or ethers from the corpus's name fixtures
    /// (`*.libpcap.test`); it applies only to a candidate that resolves those names.
    NameFixtures(String),
    /// libpcap skips the case on this platform (`is Linux`, `little-endian`,
    /// `is not OpenBSD`, a build option…).
    Platform(String),
}

/// A case libpcap must compile; `unopt`/`opt` are the expected `tcpdump -d` listings.
#[derive(Clone, Debug)]
pub struct AcceptCase {
    /// The case name in `TESTrun`.
    pub name: String,
    /// The filter expression.
    pub expr: String,
    /// The link type it is compiled for.
    pub link: LinkType,
    /// The snapshot length.
    pub snaplen: i32,
    /// The IPv4 netmask ([`NETMASK_UNKNOWN`] when none).
    pub netmask: u32,
    /// Whether Linux ancillary loads are allowed (a live Linux capture, filtertest `-l`).
    pub linuxext: bool,
    /// The expected unoptimized listing (libpcap 1.11, with `; 0x..` comments).
    pub unopt: String,
    /// The expected optimized listing, when the optimizer does not reject everything.
    pub opt: Option<String>,
    /// Whether the optimizer must answer "expression rejects all packets".
    pub opt_rejected: bool,
    /// Position within a group of expressions that must compile identically (0 = the first).
    pub alias_index: u32,
    /// Why the case does not apply here, if it does not.
    pub skip: Option<Skip>,
}

/// A case libpcap must refuse to compile.
#[derive(Clone, Debug)]
pub struct RejectCase {
    /// The case name in `TESTrun`.
    pub name: String,
    /// The filter expression.
    pub expr: String,
    /// The link type it is compiled for.
    pub link: LinkType,
    /// The IPv4 netmask ([`NETMASK_UNKNOWN`] when none).
    pub netmask: u32,
    /// A substring of libpcap's error message.
    pub errstr: String,
    /// Why the case does not apply here, if it does not.
    pub skip: Option<Skip>,
}

/// A filter run over a capture from the corpus, with the expected return value per packet.
#[derive(Clone, Debug)]
pub struct ApplyCase {
    /// The case name in `TESTrun`.
    pub name: String,
    /// The filter expression.
    pub expr: String,
    /// The capture, in the corpus's `captures/` directory.
    pub savefile: PathBuf,
    /// The filter's return value for each packet, in file order.
    pub results: Vec<u32>,
    /// The IPv4 netmask ([`NETMASK_UNKNOWN`] when none).
    pub netmask: u32,
    /// Why the case does not apply here, if it does not.
    pub skip: Option<Skip>,
}

/// The whole corpus, typed.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// Cases that must compile.
    pub accept: Vec<AcceptCase>,
    /// Cases that must not compile.
    pub reject: Vec<RejectCase>,
    /// Cases run over captures.
    pub apply: Vec<ApplyCase>,
    /// Entries that are not compiler cases: pseudo-expressions such as `_enumerate_bpf_image`,
    /// capture files a reader must refuse, link types missing from [`sift_wire::LinkType`]'s table.
    pub not_compiler_cases: Vec<String>,
}

/// Why the corpus could not be loaded.
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

#[derive(Deserialize)]
struct Raw {
    kind: String,
    name: String,
    expr: Option<String>,
    #[serde(rename = "DLT")]
    dlt: Option<String>,
    snaplen: Option<i32>,
    netmask: Option<String>,
    linuxext: Option<serde_json::Value>,
    unopt: Option<String>,
    opt: Option<String>,
    #[serde(default)]
    opt_rejected: bool,
    #[serde(default)]
    alias_index: u32,
    skip: Option<String>,
    errstr: Option<String>,
    savefile: Option<String>,
    results: Option<Vec<u32>>,
}

/// Parses a dotted IPv4 netmask into the host-order `u32` `pcap_compile` takes.
fn parse_netmask(s: Option<&str>) -> Result<u32, String> {
    let Some(s) = s else { return Ok(NETMASK_UNKNOWN) };
    let parts: Vec<u8> = s
        .split('.')
        .map(|p| p.parse::<u8>().map_err(|e| format!("netmask {s:?}: {e}")))
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [a, b, c, d] => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => Err(format!("netmask {s:?} is not dotted-quad")),
    }
}

/// Interprets the corpus's `skip` text for a Linux, little-endian build of libpcap without
/// name fixtures. An empty or absent text means the case always applies.
fn interpret_skip(skip: Option<&str>) -> Option<Skip> {
    let s = skip?.trim();
    if s.is_empty() {
        return None;
    }
    if s.starts_with("configure the ") {
        return Some(Skip::NameFixtures(s.to_owned()));
    }
    // Every other condition in the corpus ("is Linux", "little-endian", "is not OpenBSD",
    // "NO_PROTOCHAIN!=1", …) holds on a Linux little-endian host with a default build.
    Some(Skip::Platform(s.to_owned()))
}

fn truthy(v: Option<&serde_json::Value>) -> bool {
    match v {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::Number(n)) => n.as_u64() != Some(0),
        Some(serde_json::Value::String(s)) => !s.is_empty() && s != "0",
        Some(_) => true,
    }
}

impl Corpus {
    /// Loads `libpcap_TESTrun_cases.json` from the corpus directory `dir`; captures are looked
    /// up in `dir/captures`.
    pub fn load(dir: &Path) -> Result<Corpus, LoadError> {
        let path = dir.join("libpcap_TESTrun_cases.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| LoadError(format!("{}: {e}", path.display())))?;
        Corpus::from_json(&text, &dir.join("captures"))
    }

    /// Loads the corpus through [`sift_testkit::libpcap_corpus`] (skip/require policy).
    pub fn load_default() -> Option<Corpus> {
        let dir = sift_testkit::libpcap_corpus()?;
        sift_testkit::oracle("libpcap corpus", Corpus::load(&dir))
    }

    /// Parses the corpus JSON; `captures` is the directory holding the savefiles.
    pub fn from_json(text: &str, captures: &Path) -> Result<Corpus, LoadError> {
        let raw: Vec<Raw> =
            serde_json::from_str(text).map_err(|e| LoadError(format!("corpus JSON: {e}")))?;
        let mut corpus = Corpus::default();
        for r in raw {
            let bad = |what: &str| LoadError(format!("case {}: {what}", r.name));
            let skip = interpret_skip(r.skip.as_deref());
            let netmask = parse_netmask(r.netmask.as_deref()).map_err(|e| bad(&e))?;
            let Some(expr) = r.expr.clone() else {
                corpus.not_compiler_cases.push(r.name);
                continue;
            };
            match r.kind.as_str() {
                "accept" | "reject" => {
                    let dlt_name = r.dlt.as_deref().ok_or_else(|| bad("no DLT"))?;
                    let Some(link) = LinkType::from_name(dlt_name) else {
                        corpus.not_compiler_cases.push(r.name);
                        continue;
                    };
                    if r.kind == "accept" {
                        if expr.starts_with('_') {
                            corpus.not_compiler_cases.push(r.name);
                            continue;
                        }
                        corpus.accept.push(AcceptCase {
                            expr,
                            link,
                            snaplen: r.snaplen.unwrap_or(DEFAULT_SNAPLEN),
                            netmask,
                            linuxext: truthy(r.linuxext.as_ref()),
                            unopt: r.unopt.clone().ok_or_else(|| bad("no unopt listing"))?,
                            opt: r.opt.clone(),
                            opt_rejected: r.opt_rejected,
                            alias_index: r.alias_index,
                            skip,
                            name: r.name,
                        });
                    } else {
                        corpus.reject.push(RejectCase {
                            expr,
                            link,
                            netmask,
                            errstr: r.errstr.clone().unwrap_or_default(),
                            skip,
                            name: r.name,
                        });
                    }
                }
                "apply" => {
                    let savefile = r.savefile.as_deref().ok_or_else(|| bad("no savefile"))?;
                    corpus.apply.push(ApplyCase {
                        expr,
                        savefile: captures.join(savefile),
                        results: r.results.clone().ok_or_else(|| bad("no results"))?,
                        netmask,
                        skip,
                        name: r.name,
                    });
                }
                other => return Err(bad(&format!("unknown kind {other:?}"))),
            }
        }
        Ok(corpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netmasks() {
        assert_eq!(parse_netmask(None), Ok(NETMASK_UNKNOWN));
        assert_eq!(parse_netmask(Some("255.255.255.0")), Ok(0xffff_ff00));
        assert!(parse_netmask(Some("255.255")).is_err());
    }

    #[test]
    fn skips() {
        assert_eq!(interpret_skip(None), None);
        assert_eq!(interpret_skip(Some("")), None);
        assert!(matches!(
            interpret_skip(Some("configure the hosts file")),
            Some(Skip::NameFixtures(_))
        ));
        assert!(matches!(interpret_skip(Some("is Linux")), Some(Skip::Platform(_))));
    }

    #[test]
    fn small_json() {
        let json = r#"[
 {"kind":"accept","name":"a","expr":"ip","DLT":"RAW","snaplen":null,"netmask":null,
  "linuxext":null,"unopt":"(000) ret #1\n","opt":null,"opt_rejected":false,"alias_index":0,
  "skip":null,"generate_offline_filter":null},
 {"kind":"reject","name":"r","expr":"ether host 1","DLT":"RAW","errstr":"not supported",
  "netmask":null,"savefile":null,"skip":"is Linux"},
 {"kind":"apply","name":"p","expr":"tcp","savefile":"x.pcap","results":[0,262144],
  "netmask":"255.255.255.0","skip":null},
 {"kind":"reject","name":"f","expr":null,"DLT":null,"errstr":"bad","savefile":"y.pcap",
  "netmask":null,"skip":null}
]"#;
        let c = Corpus::from_json(json, Path::new("/c")).unwrap();
        assert_eq!(c.accept.len(), 1);
        assert_eq!(c.accept[0].link.dlt(), 12);
        assert_eq!(c.accept[0].snaplen, DEFAULT_SNAPLEN);
        assert_eq!(c.reject[0].skip, Some(Skip::Platform("is Linux".into())));
        assert_eq!(c.apply[0].netmask, 0xffff_ff00);
        assert_eq!(c.apply[0].savefile, Path::new("/c/x.pcap"));
        assert_eq!(c.not_compiler_cases, ["f"]);
    }
}
