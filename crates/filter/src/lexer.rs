//! The hand-written lexer: libpcap's `scanner.l` rules, longest match first, ties broken in
//! the scanner's rule order (keywords, `$xx`, MAC, number, dotted number, IPv6, bad MAC,
//! named constants, identifier).

use crate::error::{ParseError, ParseErrorKind};
use sift_diag::Span;
use std::net::Ipv6Addr;

/// A token's kind and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A number, or a named constant such as `tcp-syn` (the value is already known).
    Num(u32),
    /// 2–4 dotted numbers (`10.1`, `10.1.2.3`), kept as text: its meaning depends on context.
    Hid(String),
    /// An IPv6 address accepted by inet_pton.
    Hid6(Ipv6Addr),
    /// A MAC-48 address in any of the accepted forms.
    Eid([u8; 6]),
    /// An ARCnet / MS/TP `$xx` address.
    Aid(u8),
    /// An identifier (a name), or a backslash-escaped keyword without its backslash.
    Id(String),
    /// A keyword.
    Kw(Kw),
    /// `and` / `&&`.
    And,
    /// `or` / `||`.
    Or,
    /// `not` / `!`.
    Not,
    /// `=` or `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// `%`.
    Percent,
    /// `&`.
    Amp,
    /// `|`.
    Pipe,
    /// `^`.
    Caret,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `[`.
    LBrack,
    /// `]`.
    RBrack,
    /// `:`.
    Colon,
    /// End of input.
    Eof,
}

/// A token with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
}

macro_rules! keywords {
    ($($v:ident = $($s:literal)|+;)*) => {
        /// A reserved word of the filter language (lowercase only, as libpcap).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Kw { $($v),* }
        const KEYWORDS: &[(&str, Kw)] = &[$($(($s, Kw::$v),)+)*];
    };
}

keywords! {
    Dst = "dst"; Src = "src";
    Link = "link"; Ether = "ether"; Ppp = "ppp"; Slip = "slip"; Fddi = "fddi"; Tr = "tr"; Wlan = "wlan";
    Arp = "arp"; Rarp = "rarp"; Ip = "ip"; Sctp = "sctp"; Tcp = "tcp"; Udp = "udp"; Icmp = "icmp";
    Igmp = "igmp"; Igrp = "igrp"; Pim = "pim"; Vrrp = "vrrp"; Carp = "carp"; Radio = "radio";
    Ip6 = "ip6"; Icmp6 = "icmp6"; Ah = "ah"; Esp = "esp"; Atalk = "atalk"; Aarp = "aarp";
    Decnet = "decnet"; Lat = "lat"; Sca = "sca"; Moprc = "moprc"; Mopdl = "mopdl";
    Iso = "iso"; Esis = "esis" | "es-is"; Isis = "isis" | "is-is"; L1 = "l1"; L2 = "l2";
    Iih = "iih"; Lsp = "lsp"; Snp = "snp"; Csnp = "csnp"; Psnp = "psnp"; Clnp = "clnp";
    Stp = "stp"; Ipx = "ipx"; Netbeui = "netbeui";
    Host = "host"; Net = "net"; Mask = "mask"; Port = "port"; Portrange = "portrange";
    Proto = "proto"; Protochain = "protochain"; Gateway = "gateway";
    Type = "type"; Subtype = "subtype"; Dir = "dir" | "direction";
    Addr1 = "addr1" | "address1"; Addr2 = "addr2" | "address2"; Addr3 = "addr3" | "address3";
    Addr4 = "addr4" | "address4"; Ra = "ra"; Ta = "ta";
    Less = "less"; Greater = "greater"; Byte = "byte"; Broadcast = "broadcast";
    Multicast = "multicast"; Len = "len" | "length"; Inbound = "inbound"; Outbound = "outbound";
    Ifindex = "ifindex"; Vlan = "vlan"; Mpls = "mpls"; Pppoed = "pppoed"; Pppoes = "pppoes";
    Geneve = "geneve"; Vxlan = "vxlan";
    Lane = "lane"; Llc = "llc"; Metac = "metac"; Bcc = "bcc"; Oam = "oam"; Oamf4 = "oamf4";
    Oamf4ec = "oamf4ec"; Oamf4sc = "oamf4sc"; Sc = "sc"; Ilmic = "ilmic"; Vpi = "vpi";
    Vci = "vci"; Connectmsg = "connectmsg"; Metaconnect = "metaconnect";
    PfIfname = "ifname" | "on"; PfRset = "ruleset" | "rset"; PfRnr = "rulenum" | "rnr";
    PfSrnr = "subrulenum" | "srnr"; PfReason = "reason"; PfAction = "action";
    Fisu = "fisu"; Lssu = "lssu" | "lsu"; Msu = "msu"; Hfisu = "hfisu"; Hlssu = "hlssu";
    Hmsu = "hmsu"; Sio = "sio"; Opc = "opc"; Dpc = "dpc"; Sls = "sls"; Hsio = "hsio";
    Hopc = "hopc"; Hdpc = "hdpc"; Hsls = "hsls";
}

impl Kw {
    /// The keyword's canonical spelling (the first one listed by libpcap's scanner).
    pub fn as_str(self) -> &'static str {
        KEYWORDS.iter().find(|(_, k)| *k == self).map_or("?", |(s, _)| s)
    }

    /// Looks a word up (exact, lowercase).
    pub fn lookup(word: &str) -> Option<Kw> {
        KEYWORDS.iter().find(|(s, _)| *s == word).map(|(_, k)| *k)
    }
}

/// Named constants the scanner turns into numbers.
pub const CONSTANTS: &[(&str, u32)] = &[
    ("icmptype", 0),
    ("icmpcode", 1),
    ("icmp-echoreply", 0),
    ("icmp-unreach", 3),
    ("icmp-sourcequench", 4),
    ("icmp-redirect", 5),
    ("icmp-echo", 8),
    ("icmp-routeradvert", 9),
    ("icmp-routersolicit", 10),
    ("icmp-timxceed", 11),
    ("icmp-paramprob", 12),
    ("icmp-tstamp", 13),
    ("icmp-tstampreply", 14),
    ("icmp-ireq", 15),
    ("icmp-ireqreply", 16),
    ("icmp-maskreq", 17),
    ("icmp-maskreply", 18),
    ("icmp6type", 0),
    ("icmp6code", 1),
    ("icmp6-destinationunreach", 1),
    ("icmp6-packettoobig", 2),
    ("icmp6-timeexceeded", 3),
    ("icmp6-parameterproblem", 4),
    ("icmp6-echo", 128),
    ("icmp6-echoreply", 129),
    ("icmp6-multicastlistenerquery", 130),
    ("icmp6-multicastlistenerreportv1", 131),
    ("icmp6-multicastlistenerdone", 132),
    ("icmp6-routersolicit", 133),
    ("icmp6-routeradvert", 134),
    ("icmp6-neighborsolicit", 135),
    ("icmp6-neighboradvert", 136),
    ("icmp6-redirect", 137),
    ("icmp6-routerrenum", 138),
    ("icmp6-nodeinformationquery", 139),
    ("icmp6-nodeinformationresponse", 140),
    ("icmp6-ineighbordiscoverysolicit", 141),
    ("icmp6-ineighbordiscoveryadvert", 142),
    ("icmp6-multicastlistenerreportv2", 143),
    ("icmp6-homeagentdiscoveryrequest", 144),
    ("icmp6-homeagentdiscoveryreply", 145),
    ("icmp6-mobileprefixsolicit", 146),
    ("icmp6-mobileprefixadvert", 147),
    ("icmp6-certpathsolicit", 148),
    ("icmp6-certpathadvert", 149),
    ("icmp6-multicastrouteradvert", 151),
    ("icmp6-multicastroutersolicit", 152),
    ("icmp6-multicastrouterterm", 153),
    ("tcpflags", 13),
    ("tcp-fin", 0x01),
    ("tcp-syn", 0x02),
    ("tcp-rst", 0x04),
    ("tcp-push", 0x08),
    ("tcp-ack", 0x10),
    ("tcp-urg", 0x20),
    ("tcp-ece", 0x40),
    ("tcp-cwr", 0x80),
];

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Length of `{B}` (1–2 hex digits) at `i`.
fn b_len(s: &[u8], i: usize) -> usize {
    let mut n = 0;
    while n < 2 && i + n < s.len() && is_hex(s[i + n]) {
        n += 1;
    }
    n
}

/// Length of `{N}` at `i` (hex `0x…` if it has a digit, else decimal).
fn n_len(s: &[u8], i: usize) -> usize {
    if i + 2 < s.len() && s[i] == b'0' && (s[i + 1] | 0x20) == b'x' && is_hex(s[i + 2]) {
        let mut j = i + 2;
        while j < s.len() && is_hex(s[j]) {
            j += 1;
        }
        return j - i;
    }
    s[i..].iter().take_while(|b| b.is_ascii_digit()).count()
}

/// Length of the identifier pattern `[A-Za-z0-9]([-_.A-Za-z0-9]*[.A-Za-z0-9])?` at `i`.
fn id_len(s: &[u8], i: usize) -> usize {
    if !s[i].is_ascii_alphanumeric() {
        return 0;
    }
    let mut j = i + 1;
    let mut last_ok = j;
    while j < s.len() && (s[j].is_ascii_alphanumeric() || matches!(s[j], b'-' | b'_' | b'.')) {
        j += 1;
        if s[j - 1] != b'-' && s[j - 1] != b'_' {
            last_ok = j;
        }
    }
    last_ok - i
}

/// Length of a MAC-48 form at `i`, with its bytes.
fn mac_len(s: &[u8], i: usize) -> Option<(usize, [u8; 6])> {
    let mut best: Option<(usize, [u8; 6])> = None;
    let hexval =
        |t: &[u8]| t.iter().fold(0u32, |a, &b| a * 16 + (b as char).to_digit(16).unwrap_or(0));
    for sep in [b':', b'-', b'.'] {
        let mut j = i;
        let mut out = [0u8; 6];
        let mut ok = true;
        for (k, o) in out.iter_mut().enumerate() {
            if k > 0 {
                if j < s.len() && s[j] == sep {
                    j += 1;
                } else {
                    ok = false;
                    break;
                }
            }
            let n = b_len(s, j);
            if n == 0 {
                ok = false;
                break;
            }
            *o = hexval(&s[j..j + n]) as u8;
            j += n;
        }
        if ok && best.is_none_or(|b| j - i > b.0) {
            best = Some((j - i, out));
        }
    }
    // {B2}\.{B2}\.{B2} and {B2}{3}
    let b2 = |j: usize| j + 4 <= s.len() && s[j..j + 4].iter().all(|&b| is_hex(b));
    if b2(i)
        && i + 4 < s.len()
        && s[i + 4] == b'.'
        && b2(i + 5)
        && i + 9 < s.len()
        && s[i + 9] == b'.'
        && b2(i + 10)
    {
        let mut out = [0u8; 6];
        for (k, g) in [i, i + 5, i + 10].into_iter().enumerate() {
            out[2 * k] = hexval(&s[g..g + 2]) as u8;
            out[2 * k + 1] = hexval(&s[g + 2..g + 4]) as u8;
        }
        if best.is_none_or(|b| 14 > b.0) {
            best = Some((14, out));
        }
    }
    if i + 12 <= s.len() && s[i..i + 12].iter().all(|&b| is_hex(b)) {
        let mut out = [0u8; 6];
        for (k, o) in out.iter_mut().enumerate() {
            *o = hexval(&s[i + 2 * k..i + 2 * k + 2]) as u8;
        }
        if best.is_none_or(|b| 12 > b.0) {
            best = Some((12, out));
        }
    }
    best
}

/// Length of `{N}(\.{N}){1,3}` at `i`.
fn hid_len(s: &[u8], i: usize) -> usize {
    let mut j = i + n_len(s, i);
    if j == i {
        return 0;
    }
    let mut dots = 0;
    while dots < 3 && j + 1 < s.len() && s[j] == b'.' {
        let n = n_len(s, j + 1);
        if n == 0 {
            break;
        }
        j += 1 + n;
        dots += 1;
    }
    if dots == 0 { 0 } else { j - i }
}

/// Length and value of the longest IPv6 address at `i`, plus the length of the raw
/// IPv6-looking run (used to report a bogus address).
fn v6_len(s: &[u8], i: usize) -> (usize, Option<Ipv6Addr>, usize) {
    // The longest IPv6 text (with an embedded IPv4 address) is 45 characters; capping the run
    // keeps the prefix search below linear-time trouble on hostile input.
    let run = s[i..].iter().take(64).take_while(|&&b| is_hex(b) || b == b':' || b == b'.').count();
    let text = &s[i..i + run];
    if text.iter().filter(|&&b| b == b':').count() < 2 {
        return (0, None, 0);
    }
    for l in (2..=run).rev() {
        if let Ok(t) = std::str::from_utf8(&text[..l])
            && let Ok(a) = t.parse::<Ipv6Addr>()
        {
            return (l, Some(a), run);
        }
    }
    (0, None, run)
}

/// Length of `{B}:+({B}:+)+` at `i` (the "bogus ethernet address" rule).
fn bogus_eid_len(s: &[u8], i: usize) -> usize {
    let mut j = i;
    let mut groups = 0;
    loop {
        let n = b_len(s, j);
        if n == 0 || j + n >= s.len() || s[j + n] != b':' {
            break;
        }
        j += n;
        while j < s.len() && s[j] == b':' {
            j += 1;
        }
        groups += 1;
    }
    if groups >= 2 { j - i } else { 0 }
}

/// Parses a `{N}` token's text as libpcap's `stoulen` does, with its error wording.
pub(crate) fn parse_number(text: &str) -> Result<u32, ParseErrorKind> {
    use sift_diag::number::{NumberError, Syntax, parse};
    match parse(text, Syntax::C, u64::from(u32::MAX)) {
        Ok((n, _)) => Ok(n as u32),
        // stoulen reads no digit as 0 (a bare `0x` is not a number token; address parts may
        // be empty).
        Err(NumberError::NoDigits(_)) => Ok(0),
        Err(NumberError::Overflow(r)) => {
            Err(ParseErrorKind::NumberOverflow { text: text.into(), base: r.long_name() })
        }
        Err(e) => {
            Err(ParseErrorKind::NumberInvalid { text: text.into(), base: e.radix().short_name() })
        }
    }
}

/// Splits `src` into tokens, stopping at the first lexical error.
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let s = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
            continue;
        }
        let start = i;
        let span = |len: usize| Span::from_range(start..start + len);
        // Two-character operators first (longest match).
        let two = if i + 1 < s.len() { &s[i..i + 2] } else { &s[i..i + 1] };
        let op2 = match two {
            b"&&" => Some(Tok::And),
            b"||" => Some(Tok::Or),
            b">=" => Some(Tok::Ge),
            b"<=" => Some(Tok::Le),
            b"!=" => Some(Tok::Ne),
            b"==" => Some(Tok::Eq),
            b"<<" => Some(Tok::Shl),
            b">>" => Some(Tok::Shr),
            _ => None,
        };
        if let Some(t) = op2 {
            out.push(Token { tok: t, span: span(2) });
            i += 2;
            continue;
        }
        let op1 = match c {
            b'+' => Some(Tok::Plus),
            b'-' => Some(Tok::Minus),
            b'*' => Some(Tok::Star),
            b'/' => Some(Tok::Slash),
            b'%' => Some(Tok::Percent),
            b':' if !(i + 1 < s.len() && s[i + 1] == b':') => Some(Tok::Colon),
            b'[' => Some(Tok::LBrack),
            b']' => Some(Tok::RBrack),
            b'!' => Some(Tok::Not),
            b'<' => Some(Tok::Lt),
            b'>' => Some(Tok::Gt),
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b'&' => Some(Tok::Amp),
            b'|' => Some(Tok::Pipe),
            b'^' => Some(Tok::Caret),
            b'=' => Some(Tok::Eq),
            _ => None,
        };
        if let Some(t) = op1 {
            out.push(Token { tok: t, span: span(1) });
            i += 1;
            continue;
        }
        if c == b'\\' {
            let n = s[i + 1..]
                .iter()
                .take_while(|&&b| !matches!(b, b' ' | b'!' | b'(' | b')' | b'\n' | b'\t'))
                .count();
            if n == 0 {
                return Err(ParseError::new(ParseErrorKind::CharUnexpected { ch: '\\' }, span(1)));
            }
            let text = String::from_utf8_lossy(&s[i + 1..i + 1 + n]).into_owned();
            out.push(Token { tok: Tok::Id(text), span: span(n + 1) });
            i += 1 + n;
            continue;
        }
        if c == b'$' {
            let n = b_len(s, i + 1);
            if n == 0 {
                return Err(ParseError::new(ParseErrorKind::CharUnexpected { ch: '$' }, span(1)));
            }
            let v = u8::from_str_radix(&src[i + 1..i + 1 + n], 16).unwrap_or(0);
            out.push(Token { tok: Tok::Aid(v), span: span(n + 1) });
            i += 1 + n;
            continue;
        }
        if c == b':' || c.is_ascii_alphanumeric() {
            // Candidates in rule order; the longest wins, the earliest on a tie.
            let mut best: (usize, u8) = (0, 9);
            let mut consider = |len: usize, rank: u8| {
                if len > best.0 {
                    best = (len, rank);
                }
            };
            let idl = if c == b':' { 0 } else { id_len(s, i) };
            let word = if idl > 0 { &src[i..i + idl] } else { "" };
            let bool_op = match word {
                "and" => Some(Tok::And),
                "or" => Some(Tok::Or),
                "not" => Some(Tok::Not),
                _ => None,
            };
            if let Some(t) = bool_op {
                out.push(Token { tok: t, span: span(idl) });
                i += idl;
                continue;
            }
            let kw = Kw::lookup(word);
            if kw.is_some() {
                consider(idl, 0);
            }
            let mac = if c == b':' { None } else { mac_len(s, i) };
            if let Some((l, _)) = mac {
                consider(l, 1);
            }
            let nl = if c.is_ascii_digit() { n_len(s, i) } else { 0 };
            consider(nl, 2);
            let hl = if c.is_ascii_digit() { hid_len(s, i) } else { 0 };
            consider(hl, 3);
            let (v6l, v6, run) = v6_len(s, i);
            consider(v6l, 4);
            let run_text = &s[i..i + run];
            let bad6 = if run > v6l
                && (run_text.windows(2).any(|w| w == b"::")
                    || (v6l > 0 && run_text.contains(&b'.')))
            {
                run
            } else {
                0
            };
            consider(bad6, 8);
            let bl = bogus_eid_len(s, i);
            consider(bl, 5);
            let cst =
                if idl > 0 { CONSTANTS.iter().find(|(n, _)| *n == &src[i..i + idl]) } else { None };
            if cst.is_some() {
                consider(idl, 6);
            }
            consider(idl, 7);
            let (len, rank) = best;
            if len == 0 {
                return Err(ParseError::new(ParseErrorKind::CharUnexpected { ch: ':' }, span(1)));
            }
            let text = &src[i..i + len];
            let tok = match rank {
                0 => Tok::Kw(kw.unwrap_or(Kw::Host)),
                1 => Tok::Eid(mac.map(|m| m.1).unwrap_or_default()),
                2 => match parse_number(text) {
                    Ok(v) => Tok::Num(v),
                    Err(k) => return Err(ParseError::new(k, span(len))),
                },
                3 => Tok::Hid(text.to_owned()),
                4 => Tok::Hid6(v6.unwrap_or(Ipv6Addr::UNSPECIFIED)),
                5 => {
                    // Point at the whole would-be address, not just the part the rule matched.
                    let more = s[i + len..]
                        .iter()
                        .take_while(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.' | b'-'))
                        .count();
                    let whole = &src[i..i + len + more];
                    return Err(ParseError::new(
                        ParseErrorKind::MacBogus { text: whole.into() },
                        span(len + more),
                    ));
                }
                8 => {
                    return Err(ParseError::new(
                        ParseErrorKind::Ipv6Invalid { text: text.into() },
                        span(len),
                    ));
                }
                6 => Tok::Num(cst.map_or(0, |c| c.1)),
                _ => Tok::Id(text.to_owned()),
            };
            out.push(Token { tok, span: span(len) });
            i += len;
            continue;
        }
        let ch = src[i..].chars().next().unwrap_or('?');
        return Err(ParseError::new(ParseErrorKind::CharUnexpected { ch }, span(ch.len_utf8())));
    }
    out.push(Token { tok: Tok::Eof, span: Span::empty(s.len() as u32) });
    Ok(out)
}

/// Replaces every `#` comment (to the end of its line) with spaces, keeping byte offsets, as
/// tcpdump's `-F` does.
pub fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut in_comment = false;
    for ch in src.chars() {
        if ch == '\n' {
            in_comment = false;
            out.push('\n');
        } else if in_comment || ch == '#' {
            in_comment = true;
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()));
        } else {
            out.push(ch);
        }
    }
    out
}

/// A filter built from command-line arguments joined with single spaces, as tcpdump does,
/// with the byte offset where each argument starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinedArgs {
    /// The joined text.
    pub text: String,
    /// Start offset of each argument in `text`.
    pub starts: Vec<u32>,
}

impl JoinedArgs {
    /// Joins `args` with single spaces.
    pub fn new<S: AsRef<str>>(args: &[S]) -> JoinedArgs {
        let mut text = String::new();
        let mut starts = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if k > 0 {
                text.push(' ');
            }
            starts.push(text.len() as u32);
            text.push_str(a.as_ref());
        }
        JoinedArgs { text, starts }
    }

    /// Which argument holds byte `offset`, and the offset inside it.
    pub fn locate(&self, offset: u32) -> Option<(usize, u32)> {
        let k = self.starts.partition_point(|&s| s <= offset).checked_sub(1)?;
        Some((k, offset - self.starts[k]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn longest_match_and_rule_order() {
        assert_eq!(toks("len-1")[0], Tok::Id("len-1".into()));
        assert_eq!(toks("tcp-syn")[0], Tok::Num(2));
        assert_eq!(toks("10.1.2.3")[0], Tok::Hid("10.1.2.3".into()));
        assert_eq!(toks("10.1.2.3.")[0], Tok::Id("10.1.2.3.".into()));
        assert_eq!(toks("0x10")[0], Tok::Num(16));
        assert_eq!(toks("012345670123")[0], Tok::Eid([0x01, 0x23, 0x45, 0x67, 0x01, 0x23]));
        assert_eq!(toks("aa:b:c:d:e:ff")[0], Tok::Eid([0xaa, 0xb, 0xc, 0xd, 0xe, 0xff]));
        assert_eq!(toks("0102.0304.0506")[0], Tok::Eid([1, 2, 3, 4, 5, 6]));
        assert_eq!(toks("::1")[0], Tok::Hid6(Ipv6Addr::LOCALHOST));
        assert_eq!(toks("::ffff:1.2.3.4")[0], Tok::Hid6("::ffff:1.2.3.4".parse().unwrap()));
        assert_eq!(toks("\\tcp")[0], Tok::Id("tcp".into()));
        assert_eq!(toks("TCP")[0], Tok::Id("TCP".into()));
        assert_eq!(toks("$1f")[0], Tok::Aid(0x1f));
        assert_eq!(
            toks("ether[12:2]")[..6],
            [Tok::Kw(Kw::Ether), Tok::LBrack, Tok::Num(12), Tok::Colon, Tok::Num(2), Tok::RBrack]
        );
        assert_eq!(toks("a&&b||!c")[1], Tok::And);
    }

    #[test]
    fn number_errors() {
        assert_eq!(
            lex("08").unwrap_err().kind,
            ParseErrorKind::NumberInvalid { text: "08".into(), base: "octal" }
        );
        assert!(matches!(
            lex("4294967296").unwrap_err().kind,
            ParseErrorKind::NumberOverflow { .. }
        ));
        assert_eq!(toks("4294967295")[0], Tok::Num(u32::MAX));
        assert!(matches!(lex("1:2:3:4:5").unwrap_err().kind, ParseErrorKind::MacBogus { .. }));
    }

    #[test]
    fn comments_and_args() {
        assert_eq!(strip_comments("tcp # x\nudp"), "tcp    \nudp");
        let j = JoinedArgs::new(&["tcp", "port", "80"]);
        assert_eq!(j.text, "tcp port 80");
        assert_eq!(j.locate(9), Some((2, 0)));
    }
}
