//! The command line as tcpdump's `getopt_long` reads it, turned into the form clap parses.
//!
//! tcpdump users write `-c2`, `-nc2`, `-s0`, `-r/path`, `-w-`; put options after the
//! expression (`sift -r f.pcap tcp -c 2`: GNU getopt moves operands to the end); end the
//! options with `--`; abbreviate long options (`--num`). clap alone takes none of that, so
//! [`normalize`] reads the arguments first with getopt's rules and this module's table of
//! every option the default mode knows (sift's and tcpdump's), and hands clap a plain form:
//! each option on its own with its value as the next argument, then `--` and the expression
//! words in their order. Its errors are getopt's (`invalid option -- 'k'`, `option requires an
//! argument -- 'c'`, `unrecognized option '--bogus'`, `option '--n' is ambiguous`), so a user
//! learns which option is wrong; tcpdump options sift does not implement are refused by name,
//! with the reason. A first argument naming a subcommand (`sift compile …`) is left to clap as
//! it is. With `POSIXLY_CORRECT` set, options end at the first operand, as getopt's do.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;

/// One option of the default mode.
struct Spec {
    /// The short option letter, if any.
    short: Option<u8>,
    /// The long name, if any.
    long: Option<&'static str>,
    /// Whether it takes a value.
    value: bool,
    /// Why sift refuses it (a tcpdump option sift does not implement).
    refused: Option<&'static str>,
}

const fn flag(short: u8, long: Option<&'static str>) -> Spec {
    Spec { short: Some(short), long, value: false, refused: None }
}

const fn valued(short: u8, long: Option<&'static str>) -> Spec {
    Spec { short: Some(short), long, value: true, refused: None }
}

const fn long(name: &'static str, value: bool) -> Spec {
    Spec { short: None, long: Some(name), value, refused: None }
}

const fn refused(short: u8, value: bool, why: &'static str) -> Spec {
    Spec { short: Some(short), long: None, value, refused: Some(why) }
}

/// Every option of the default mode (and of live capture), tcpdump 4.99's and sift's. The
/// clap definitions in `dump.rs` and `live.rs` must accept each supported one in the form
/// [`canonical`] gives (a test checks it).
const OPTIONS: &[Spec] = &[
    // tcpdump's short options, with their long names.
    flag(b'A', None),
    flag(b'a', None),
    valued(b'B', Some("buffer-size")),
    valued(b'c', None),
    valued(b'C', None),
    flag(b'd', None),
    flag(b'D', Some("list-interfaces")),
    flag(b'e', None),
    valued(b'F', None),
    flag(b'f', None),
    valued(b'G', None),
    flag(b'h', Some("help")),
    valued(b'i', Some("interface")),
    flag(b'I', Some("monitor-mode")),
    valued(b'j', Some("time-stamp-type")),
    flag(b'J', Some("list-time-stamp-types")),
    flag(b'K', Some("dont-verify-checksums")),
    flag(b'l', None),
    flag(b'n', None),
    flag(b'N', None),
    flag(b'O', Some("no-optimize")),
    flag(b'p', Some("no-promiscuous-mode")),
    flag(b'q', None),
    valued(b'Q', Some("direction")),
    valued(b'r', None),
    valued(b's', Some("snapshot-length")),
    flag(b'S', Some("absolute-tcp-sequence-numbers")),
    flag(b't', None),
    valued(b'T', None),
    flag(b'U', Some("packet-buffered")),
    flag(b'v', None),
    valued(b'w', None),
    valued(b'W', None),
    flag(b'x', None),
    flag(b'X', None),
    valued(b'y', Some("linktype")),
    valued(b'Z', Some("relinquish-privileges")),
    flag(b'#', Some("number")),
    // tcpdump's long-only options.
    long("count", false),
    long("immediate-mode", false),
    long("micro", false),
    long("nano", false),
    long("print", false),
    long("time-stamp-precision", true),
    long("version", false),
    // sift's own.
    long("block-timeout", true),
    long("engine", true),
    long("fanout", true),
    long("xdp", false),
    long("xdp-pass", false),
    long("xdp-copy", false),
    long("json", false),
    long("pcapng", false),
    long("split", true),
    long("first", false),
    // tcpdump's options sift does not implement.
    refused(b'b', false, "BGP AS numbers in ASDOT notation are not printed"),
    refused(b'E', true, "decrypting IPsec ESP is not supported"),
    refused(b'H', false, "802.11s mesh headers are not decoded"),
    refused(b'L', false, "data link types cannot be chosen: a capture has its interface's own"),
    refused(b'm', true, "SMI MIB modules are not loaded: SNMP is not decoded"),
    refused(b'M', true, "TCP-MD5 signatures are not checked"),
    refused(b'u', false, "NFS handles are not decoded"),
    refused(b'V', true, "give each file with -r instead (several are merged by time)"),
    refused(b'Y', false, "there is no parser debugging output"),
    refused(b'z', true, "no command is run after rotating a file"),
    Spec {
        short: None,
        long: Some("fp-type"),
        value: false,
        refused: Some("there is no floating-point test"),
    },
];

/// A command line getopt refuses, in getopt's words.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn error(text: String) -> UsageError {
    UsageError(text)
}

/// How an option is written for clap: its short form if it has one.
fn canonical(spec: &Spec) -> OsString {
    match (spec.short, spec.long) {
        (Some(c), _) => OsString::from(format!("-{}", c as char)),
        (None, Some(name)) => OsString::from(format!("--{name}")),
        (None, None) => unreachable!("every option has a name"),
    }
}

/// The option `--name` (exactly, or an unambiguous prefix, as getopt_long allows).
fn find_long(name: &str) -> Result<&'static Spec, UsageError> {
    if let Some(spec) = OPTIONS.iter().find(|s| s.long == Some(name)) {
        return Ok(spec);
    }
    let matches: Vec<&Spec> =
        OPTIONS.iter().filter(|s| s.long.is_some_and(|l| l.starts_with(name))).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(error(format!("unrecognized option '--{name}'"))),
        many => {
            let mut names: Vec<String> =
                many.iter().filter_map(|s| s.long).map(|l| format!("'--{l}'")).collect();
            names.sort();
            Err(error(format!(
                "option '--{name}' is ambiguous; possibilities: {}",
                names.join(" ")
            )))
        }
    }
}

fn check_refused(spec: &Spec) -> Result<(), UsageError> {
    match spec.refused {
        None => Ok(()),
        Some(why) => {
            let name = match (spec.short, spec.long) {
                (Some(c), _) => format!("-{}", c as char),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => String::new(),
            };
            Err(error(format!("option {name} is not supported by sift: {why}")))
        }
    }
}

/// Reads `argv` (program name first) as getopt_long does and returns it in the plain form
/// clap parses (see the module documentation). `subcommands`: the names that, as the first
/// argument, leave the command line to clap untouched.
pub(crate) fn normalize(
    argv: Vec<OsString>,
    subcommands: &[String],
) -> Result<Vec<OsString>, UsageError> {
    let posix = std::env::var_os("POSIXLY_CORRECT").is_some();
    normalize_with(argv, subcommands, posix)
}

fn normalize_with(
    argv: Vec<OsString>,
    subcommands: &[String],
    posix: bool,
) -> Result<Vec<OsString>, UsageError> {
    if let Some(first) = argv.get(1)
        && subcommands.iter().any(|s| OsStr::new(s) == first)
    {
        return Ok(argv);
    }
    let mut args = argv.into_iter();
    let mut out: Vec<OsString> = args.next().into_iter().collect();
    let mut operands: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next() {
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            operands.extend(args.by_ref());
            break;
        }
        if let Some(rest) = bytes.strip_prefix(b"--") {
            let (name, inline) = match rest.iter().position(|&b| b == b'=') {
                Some(eq) => (&rest[..eq], Some(OsStr::from_bytes(&rest[eq + 1..]).to_owned())),
                None => (rest, None),
            };
            let name = String::from_utf8_lossy(name).into_owned();
            let spec = find_long(&name)?;
            let long = spec.long.unwrap_or_default();
            check_refused(spec)?;
            out.push(canonical(spec));
            match (spec.value, inline) {
                (true, Some(v)) => out.push(v),
                (true, None) => match args.next() {
                    Some(v) => out.push(v),
                    None => return Err(error(format!("option '--{long}' requires an argument"))),
                },
                (false, Some(_)) => {
                    return Err(error(format!("option '--{long}' doesn't allow an argument")));
                }
                (false, None) => {}
            }
            continue;
        }
        if bytes.len() > 1 && bytes[0] == b'-' {
            let mut j = 1;
            while j < bytes.len() {
                let c = bytes[j];
                let Some(spec) = OPTIONS.iter().find(|s| s.short == Some(c)) else {
                    let shown = String::from_utf8_lossy(&bytes[j..]);
                    let ch = shown.chars().next().unwrap_or('?');
                    return Err(error(format!("invalid option -- '{ch}'")));
                };
                check_refused(spec)?;
                out.push(canonical(spec));
                j += 1;
                if spec.value {
                    if j < bytes.len() {
                        out.push(OsStr::from_bytes(&bytes[j..]).to_owned());
                    } else {
                        match args.next() {
                            Some(v) => out.push(v),
                            None => {
                                return Err(error(format!(
                                    "option requires an argument -- '{}'",
                                    c as char
                                )));
                            }
                        }
                    }
                    break;
                }
            }
            continue;
        }
        // An operand: a word of the expression.
        operands.push(arg);
        if posix {
            operands.extend(args.by_ref());
            break;
        }
    }
    if !operands.is_empty() {
        out.push("--".into());
        out.append(&mut operands);
    }
    Ok(out)
}

/// The canonical forms of every supported option, for the test that clap takes them all.
#[cfg(test)]
pub(crate) fn supported() -> impl Iterator<Item = (OsString, bool)> {
    OPTIONS.iter().filter(|s| s.refused.is_none()).map(|s| (canonical(s), s.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Result<Vec<String>, String> {
        let mut argv = vec![OsString::from("sift")];
        argv.extend(args.iter().map(OsString::from));
        let subs = vec!["compile".to_owned(), "gen".to_owned()];
        normalize_with(argv, &subs, false)
            .map(|v| v.into_iter().skip(1).map(|a| a.into_string().unwrap()).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn attached_values_and_clusters_are_split() {
        assert_eq!(norm(&["-c2", "-s0"]).unwrap(), ["-c", "2", "-s", "0"]);
        assert_eq!(norm(&["-nc2"]).unwrap(), ["-n", "-c", "2"]);
        assert_eq!(norm(&["-r/p/f.pcap", "-w-"]).unwrap(), ["-r", "/p/f.pcap", "-w", "-"]);
        assert_eq!(norm(&["-vvnn"]).unwrap(), ["-v", "-v", "-n", "-n"]);
        assert_eq!(norm(&["-s", "-1"]).unwrap(), ["-s", "-1"], "a value may start with '-'");
    }

    #[test]
    fn operands_move_after_the_options() {
        let got = norm(&["-r", "f", "tcp", "-c", "2", "and", "port", "80"]).unwrap();
        assert_eq!(got, ["-r", "f", "-c", "2", "--", "tcp", "and", "port", "80"]);
        let got = norm(&["port 80", "-w", "o.pcap"]).unwrap();
        assert_eq!(got, ["-w", "o.pcap", "--", "port 80"]);
        // `--` ends the options; `-` alone is an operand.
        assert_eq!(norm(&["-r", "f", "--", "-c", "1"]).unwrap(), ["-r", "f", "--", "-c", "1"]);
        assert_eq!(norm(&["-r", "-", "tcp"]).unwrap(), ["-r", "-", "--", "tcp"]);
        // POSIXLY_CORRECT: options end at the first operand.
        let argv = ["sift", "tcp", "-c", "2"].map(OsString::from).to_vec();
        let got = normalize_with(argv, &[], true).unwrap();
        assert_eq!(got, ["sift", "--", "tcp", "-c", "2"].map(OsString::from));
    }

    #[test]
    fn long_options_take_values_both_ways_and_abbreviate() {
        assert_eq!(
            norm(&["--time-stamp-precision=nano"]).unwrap(),
            ["--time-stamp-precision", "nano"]
        );
        assert_eq!(norm(&["--snapshot-length", "96"]).unwrap(), ["-s", "96"]);
        assert_eq!(norm(&["--num", "--cou"]).unwrap(), ["-#", "--count"]);
        assert_eq!(norm(&["--linktype=RAW"]).unwrap(), ["-y", "RAW"]);
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(norm(&["-k"]).unwrap_err(), "invalid option -- 'k'");
        assert_eq!(norm(&["-nk"]).unwrap_err(), "invalid option -- 'k'");
        assert_eq!(norm(&["-c"]).unwrap_err(), "option requires an argument -- 'c'");
        assert_eq!(norm(&["--bogus"]).unwrap_err(), "unrecognized option '--bogus'");
        assert_eq!(norm(&["--count=3"]).unwrap_err(), "option '--count' doesn't allow an argument");
        assert_eq!(
            norm(&["--direction"]).unwrap_err(),
            "option '--direction' requires an argument"
        );
        let e = norm(&["--n"]).unwrap_err();
        assert_eq!(
            e,
            "option '--n' is ambiguous; possibilities: '--nano' '--no-optimize' \
             '--no-promiscuous-mode' '--number'"
        );
        let e = norm(&["-E", "secret"]).unwrap_err();
        assert!(e.starts_with("option -E is not supported by sift: "), "{e}");
    }

    #[test]
    fn subcommands_are_left_alone() {
        assert_eq!(norm(&["compile", "-s0", "tcp"]).unwrap(), ["compile", "-s0", "tcp"]);
        // Not in the first place: an expression word.
        assert_eq!(norm(&["-r", "f", "gen"]).unwrap(), ["-r", "f", "--", "gen"]);
    }

    #[test]
    fn short_and_long_names_are_unique() {
        for (i, a) in OPTIONS.iter().enumerate() {
            for b in &OPTIONS[i + 1..] {
                assert!(a.short.is_none() || a.short != b.short, "{:?}", a.short);
                assert!(a.long.is_none() || a.long != b.long, "{:?}", a.long);
            }
        }
    }
}
