//! The recursive-descent parser (libpcap's `grammar.y.in`, with its precedence quirks).

use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::{Kw, Tok, Token, lex};
use crate::semantic;
use sift_diag::Span;

/// Deepest nesting of parentheses, `not`, unary minus and arithmetic accepted.
pub const MAX_DEPTH: usize = 256;

type R<T> = Result<T, ParseError>;

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    /// For each `(` token index, the index of its matching `)` (or the end).
    close: Vec<usize>,
    pos: usize,
    depth: usize,
    /// Qualifiers a bare id inherits; `None` after a relation or an abbreviation.
    last: Option<Quals>,
}

fn tok_desc(t: &Tok, text: &str) -> String {
    match t {
        Tok::Eof => "end of input".into(),
        Tok::Num(_) => format!("number `{text}`"),
        Tok::Id(_) => format!("name `{text}`"),
        Tok::Hid(_) | Tok::Hid6(_) => format!("address `{text}`"),
        Tok::Eid(_) | Tok::Aid(_) => format!("address `{text}`"),
        Tok::Kw(_) => format!("keyword `{text}`"),
        _ => format!("`{text}`"),
    }
}

fn is_relop(t: &Tok) -> bool {
    matches!(t, Tok::Gt | Tok::Ge | Tok::Eq | Tok::Le | Tok::Lt | Tok::Ne)
}

fn is_arith_op(t: &Tok) -> bool {
    matches!(
        t,
        Tok::Plus
            | Tok::Minus
            | Tok::Star
            | Tok::Slash
            | Tok::Percent
            | Tok::Amp
            | Tok::Pipe
            | Tok::Caret
            | Tok::Shl
            | Tok::Shr
    )
}

fn is_id_tok(t: &Tok) -> bool {
    matches!(t, Tok::Id(_) | Tok::Hid(_) | Tok::Hid6(_) | Tok::Eid(_) | Tok::Aid(_) | Tok::Num(_))
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> R<Parser<'a>> {
        let toks = lex(src)?;
        let mut close = vec![0; toks.len()];
        let mut stack = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            match t.tok {
                Tok::LParen => stack.push(i),
                Tok::RParen => {
                    if let Some(o) = stack.pop() {
                        close[o] = i;
                    }
                }
                _ => {}
            }
        }
        for o in stack {
            close[o] = toks.len() - 1;
        }
        Ok(Parser { src, toks, close, pos: 0, depth: 0, last: None })
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn text(&self, span: Span) -> &str {
        self.src.get(span.range()).unwrap_or("")
    }

    fn unexpected(&self, expected: &str) -> ParseError {
        let t = &self.toks[self.pos];
        ParseError::new(
            K::TokenUnexpected {
                found: tok_desc(&t.tok, self.text(t.span)),
                expected: expected.into(),
            },
            t.span,
        )
    }

    fn expect(&mut self, t: Tok, expected: &str) -> R<Token> {
        if *self.peek() == t { Ok(self.bump()) } else { Err(self.unexpected(expected)) }
    }

    /// Enters one level of nesting, just after the token that opens it (which the error
    /// points at when the level is one too many).
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError::new(K::NestingTooDeep, self.prev_span()));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn num(&mut self, expected: &str) -> R<(u32, Span)> {
        match *self.peek() {
            Tok::Num(n) => Ok((n, self.bump().span)),
            _ => Err(self.unexpected(expected)),
        }
    }

    /// The whole input.
    pub(crate) fn parse(mut self) -> R<Option<Expr>> {
        if *self.peek() == Tok::Eof {
            return Ok(None);
        }
        let e = self.expr()?;
        if *self.peek() != Tok::Eof {
            let exp = if *self.peek() == Tok::RParen {
                "`and`, `or` or end of input (unbalanced `)`)"
            } else {
                "`and`, `or` or end of input"
            };
            return Err(self.unexpected(exp));
        }
        Ok(Some(e))
    }

    /// `term ((and|or) term)*`, iteratively.
    fn expr(&mut self) -> R<Expr> {
        let first = self.term()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Tok::And => BoolOp::And,
                Tok::Or => BoolOp::Or,
                _ => break,
            };
            let before = self.pos;
            let op_span = self.bump().span;
            let e = self.term()?;
            debug_assert!(self.pos > before, "parser made no progress");
            rest.push((op, op_span, e));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        let span = first.span.cover(rest.last().map_or(first.span, |r| r.2.span));
        Ok(Expr { kind: ExprKind::Chain { first: Box::new(first), rest }, span })
    }

    fn term(&mut self) -> R<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Not => {
                self.bump();
                self.enter()?;
                let inner = self.term()?;
                self.leave();
                let span = start.cover(inner.span);
                Ok(Expr { kind: ExprKind::Not(Box::new(inner)), span })
            }
            Tok::LParen => {
                let close = self.close[self.pos];
                let after = &self.toks[(close + 1).min(self.toks.len() - 1)].tok;
                if is_relop(after) || is_arith_op(after) {
                    return self.relation();
                }
                self.bump();
                self.enter()?;
                let saved = self.last;
                let inner = self.expr()?;
                self.expect(Tok::RParen, "`and`, `or` or `)`")?;
                self.leave();
                self.last = saved;
                let span = start.cover(self.prev_span());
                Ok(Expr { kind: inner.kind, span })
            }
            Tok::Num(_)
                if !(is_relop(self.peek_at(1)) || is_arith_op(self.peek_at(1)))
                    && self.last.is_some() =>
            {
                self.inherited_id()
            }
            Tok::Num(_) | Tok::Minus => self.relation(),
            Tok::Id(_) | Tok::Hid(_) | Tok::Hid6(_) | Tok::Eid(_) | Tok::Aid(_) => {
                if self.last.is_some() {
                    self.inherited_id()
                } else {
                    Err(self.unexpected("a primitive or a relation"))
                }
            }
            Tok::Kw(k) => self.keyword(k),
            _ => Err(self.unexpected(&self.expected_term())),
        }
    }

    /// What may start a term here, naming the operator it follows when there is one (`tcp
    /// and` wants "a primitive after `and`").
    fn expected_term(&self) -> String {
        if let Some(prev) = self.pos.checked_sub(1).map(|i| &self.toks[i])
            && matches!(prev.tok, Tok::And | Tok::Or | Tok::Not)
        {
            return format!("a primitive after `{}`", self.text(prev.span));
        }
        "a primitive, a relation, `not` or `(`".into()
    }

    fn inherited_id(&mut self) -> R<Expr> {
        let quals = self.last.unwrap_or_default();
        self.id_term(quals, true)
    }

    /// What follows a qualifier head: an id, `not id`, or `( id (and|or) id … )`.
    fn id_term(&mut self, quals: Quals, inherited: bool) -> R<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Not => {
                self.bump();
                self.enter()?;
                let inner = self.id_term(quals, inherited)?;
                self.leave();
                let span = start.cover(inner.span);
                Ok(Expr { kind: ExprKind::Not(Box::new(inner)), span })
            }
            Tok::LParen => {
                self.bump();
                self.enter()?;
                let first = self.id_term(quals, inherited)?;
                let mut rest = Vec::new();
                loop {
                    let op = match self.peek() {
                        Tok::And => BoolOp::And,
                        Tok::Or => BoolOp::Or,
                        _ => break,
                    };
                    let op_span = self.bump().span;
                    rest.push((op, op_span, self.id_term(quals, inherited)?));
                }
                self.expect(Tok::RParen, "`and`, `or` or `)`")?;
                self.leave();
                let span = start.cover(self.prev_span());
                if rest.is_empty() {
                    return Ok(Expr { kind: first.kind, span });
                }
                Ok(Expr { kind: ExprKind::Chain { first: Box::new(first), rest }, span })
            }
            t if is_id_tok(&t) => {
                let t = self.bump();
                let (id, id_span) = self.id_value(t, quals)?;
                self.last = Some(quals);
                let span = if inherited { id_span } else { head_span(quals, id_span) };
                Ok(Expr { kind: ExprKind::Prim(Primitive::Id { quals, id, id_span }), span })
            }
            _ => Err(self.unexpected(&expected_id(quals))),
        }
    }

    /// Reads an id token (with `/len` or `mask m` after an address) and checks it.
    fn id_value(&mut self, t: Token, quals: Quals) -> R<(Id, Span)> {
        let mut span = t.span;
        let id = match t.tok {
            Tok::Num(n) => Id::Num(n),
            Tok::Hid(s) => {
                if *self.peek() == Tok::Slash {
                    self.bump();
                    let (len, ls) = self.num("a prefix length")?;
                    span = span.cover(ls);
                    Id::V4Prefix { addr: s, len }
                } else if *self.peek() == Tok::Kw(Kw::Mask) {
                    self.bump();
                    let m = self.bump();
                    match m.tok {
                        Tok::Hid(mask) => {
                            span = span.cover(m.span);
                            Id::V4Mask { addr: s, mask }
                        }
                        _ => {
                            self.pos -= 1;
                            return Err(self.unexpected("a dotted netmask after `mask`"));
                        }
                    }
                } else {
                    Id::V4(s)
                }
            }
            Tok::Hid6(a) => {
                if *self.peek() == Tok::Slash {
                    self.bump();
                    let (len, ls) = self.num("a prefix length")?;
                    span = span.cover(ls);
                    Id::V6Prefix(a, len)
                } else {
                    Id::V6(a)
                }
            }
            Tok::Eid(m) => Id::Mac(m),
            Tok::Aid(a) => Id::Arc(a),
            Tok::Id(s) => Id::Name(s),
            _ => {
                return Err(ParseError::new(
                    K::TokenUnexpected { found: "token".into(), expected: expected_id(quals) },
                    t.span,
                ));
            }
        };
        semantic::check_id(&quals, &id, span, self.text(span))?;
        Ok((id, span))
    }

    fn prim(&mut self, p: Primitive, start: Span) -> R<Expr> {
        self.last = None;
        Ok(Expr { kind: ExprKind::Prim(p), span: start.cover(self.prev_span()) })
    }

    fn opt_num(&mut self) -> Option<(u32, Span)> {
        if let Tok::Num(n) = *self.peek() { Some((n, self.bump().span)) } else { None }
    }

    fn limit(&self, v: Option<(u32, Span)>, what: &str, max: u32) -> R<Option<u32>> {
        match v {
            Some((n, s)) if n > max => Err(ParseError::new(
                K::ValueTooLarge { what: what.into(), value: n.into(), max: max.into() },
                s,
            )),
            _ => Ok(v.map(|x| x.0)),
        }
    }

    fn keyword(&mut self, k: Kw) -> R<Expr> {
        let start = self.span();
        if let Some(p) = Proto::from_kw(k) {
            // Accessor: `proto[…]` starts a relation.
            if *self.peek_at(1) == Tok::LBrack {
                return self.relation();
            }
            self.bump();
            let pq = Some((p, start));
            return match self.peek() {
                Tok::Kw(k) if starts_head(*k) => self.head(pq),
                Tok::Kw(Kw::Broadcast) => {
                    self.bump();
                    self.prim(Primitive::Broadcast(Some(p)), start)
                }
                Tok::Kw(Kw::Multicast) => {
                    self.bump();
                    self.prim(Primitive::Multicast(Some(p)), start)
                }
                Tok::Kw(Kw::Type | Kw::Subtype | Kw::Dir) => self.p80211(Some(p), start),
                _ if p.is_link() || p == Proto::Radio => Err(ParseError::new(
                    K::AbbreviationInvalid {
                        name: if p == Proto::Radio { "radio" } else { "link" },
                    },
                    start,
                )),
                _ => self.prim(Primitive::Proto(p), start),
            };
        }
        match k {
            k if starts_head(k) => self.head(None),
            Kw::Broadcast => {
                self.bump();
                self.prim(Primitive::Broadcast(None), start)
            }
            Kw::Multicast => {
                self.bump();
                self.prim(Primitive::Multicast(None), start)
            }
            Kw::Len => self.relation(),
            Kw::Less | Kw::Greater => {
                self.bump();
                let (n, _) = self.num(&format!("a length after `{}`", k.as_str()))?;
                self.prim(
                    if k == Kw::Less { Primitive::Less(n) } else { Primitive::Greater(n) },
                    start,
                )
            }
            Kw::Byte => {
                self.bump();
                let (index, _) = self.num("a byte offset after `byte`")?;
                let op = match self.peek() {
                    Tok::Amp => ByteOp::And,
                    Tok::Pipe => ByteOp::Or,
                    Tok::Lt => ByteOp::Lt,
                    Tok::Gt => ByteOp::Gt,
                    Tok::Eq => ByteOp::Eq,
                    _ => return Err(self.unexpected("`&`, `|`, `<`, `>` or `=`")),
                };
                self.bump();
                let v = self.num("a byte value")?;
                let value = self.limit(Some(v), "byte argument", 255)?.unwrap_or(0);
                self.prim(Primitive::Byte { index, op, value }, start)
            }
            Kw::Inbound => {
                self.bump();
                self.prim(Primitive::Inbound, start)
            }
            Kw::Outbound => {
                self.bump();
                self.prim(Primitive::Outbound, start)
            }
            Kw::Ifindex => {
                self.bump();
                let (n, _) = self.num("an interface index after `ifindex`")?;
                self.prim(Primitive::Ifindex(n), start)
            }
            Kw::Vlan | Kw::Mpls | Kw::Pppoes | Kw::Geneve | Kw::Vxlan => {
                self.bump();
                let v = self.opt_num();
                let p = match k {
                    Kw::Vlan => Primitive::Vlan(self.limit(v, "VLAN tag", 4095)?),
                    Kw::Mpls => Primitive::Mpls(self.limit(v, "MPLS label", 0xf_ffff)?),
                    Kw::Pppoes => {
                        Primitive::Pppoes(self.limit(v, "PPPoE session number", 0xffff)?)
                    }
                    Kw::Geneve => Primitive::Geneve(self.limit(v, "Geneve VNI", 0xff_ffff)?),
                    _ => Primitive::Vxlan(self.limit(v, "VXLAN VNI", 0xff_ffff)?),
                };
                self.prim(p, start)
            }
            Kw::Pppoed => {
                self.bump();
                self.prim(Primitive::Pppoed, start)
            }
            Kw::Llc => {
                self.bump();
                let kind = match self.peek().clone() {
                    Tok::Kw(Kw::PfRnr) => {
                        self.bump();
                        Some("rnr".to_string())
                    }
                    Tok::Id(s) => {
                        let sp = self.bump().span;
                        let l = s.to_ascii_lowercase();
                        if !semantic::LLC_TYPES.contains(&l.as_str()) {
                            return Err(ParseError::new(K::LlcTypeUnknown { name: s }, sp));
                        }
                        Some(l)
                    }
                    _ => None,
                };
                self.prim(Primitive::Llc(kind), start)
            }
            Kw::PfIfname | Kw::PfRset => {
                self.bump();
                let name = match self.peek().clone() {
                    Tok::Id(s) => {
                        self.bump();
                        s
                    }
                    _ => return Err(self.unexpected("a name")),
                };
                self.prim(
                    if k == Kw::PfIfname {
                        Primitive::PfIfname(name)
                    } else {
                        Primitive::PfRuleset(name)
                    },
                    start,
                )
            }
            Kw::PfRnr | Kw::PfSrnr => {
                self.bump();
                let (n, _) = self.num("a rule number")?;
                self.prim(
                    if k == Kw::PfRnr {
                        Primitive::PfRulenum(n)
                    } else {
                        Primitive::PfSubrulenum(n)
                    },
                    start,
                )
            }
            Kw::PfReason => {
                self.bump();
                let v = match self.peek().clone() {
                    Tok::Num(n) => {
                        self.bump();
                        n
                    }
                    Tok::Id(s) => {
                        let sp = self.bump().span;
                        semantic::pf_reason(&s)
                            .ok_or_else(|| ParseError::new(K::PfReasonUnknown { name: s }, sp))?
                    }
                    _ => return Err(self.unexpected("a reason number or name")),
                };
                self.prim(Primitive::PfReason(v), start)
            }
            Kw::PfAction => {
                self.bump();
                let v = match self.peek().clone() {
                    Tok::Id(s) => {
                        let sp = self.bump().span;
                        semantic::pf_action(&s)
                            .ok_or_else(|| ParseError::new(K::PfActionUnknown { name: s }, sp))?
                    }
                    _ => return Err(self.unexpected("an action name")),
                };
                self.prim(Primitive::PfAction(v), start)
            }
            Kw::Type | Kw::Subtype | Kw::Dir => self.p80211(None, start),
            Kw::Lane
            | Kw::Metac
            | Kw::Bcc
            | Kw::Oamf4ec
            | Kw::Oamf4sc
            | Kw::Sc
            | Kw::Ilmic
            | Kw::Oam
            | Kw::Oamf4
            | Kw::Connectmsg
            | Kw::Metaconnect => {
                self.bump();
                self.prim(Primitive::Atm(k), start)
            }
            Kw::Fisu | Kw::Lssu | Kw::Msu | Kw::Hfisu | Kw::Hlssu | Kw::Hmsu => {
                self.bump();
                self.prim(Primitive::Mtp2(k), start)
            }
            Kw::Vpi
            | Kw::Vci
            | Kw::Sio
            | Kw::Opc
            | Kw::Dpc
            | Kw::Sls
            | Kw::Hsio
            | Kw::Hopc
            | Kw::Hdpc
            | Kw::Hsls => {
                self.bump();
                let max = match k {
                    Kw::Vpi | Kw::Sio | Kw::Hsio => 255,
                    Kw::Vci => 65535,
                    Kw::Opc | Kw::Dpc | Kw::Hopc | Kw::Hdpc => 16383,
                    _ => 15,
                };
                let what = match k {
                    Kw::Vpi => "VPI",
                    Kw::Vci => "VCI",
                    _ => k.as_str(),
                };
                let cmp = self.field_cmp(what, max)?;
                let p = if matches!(k, Kw::Vpi | Kw::Vci) {
                    Primitive::AtmField { field: k, cmp }
                } else {
                    Primitive::Mtp3Field { field: k, cmp }
                };
                self.prim(p, start)
            }
            _ => Err(self.unexpected("a primitive, a relation, `not` or `(`")),
        }
    }

    fn field_cmp(&mut self, what: &str, max: u32) -> R<FieldCmp> {
        let op = match self.peek() {
            Tok::Gt => Some(RelOp::Gt),
            Tok::Ge => Some(RelOp::Ge),
            Tok::Eq => Some(RelOp::Eq),
            Tok::Le => Some(RelOp::Le),
            Tok::Lt => Some(RelOp::Lt),
            Tok::Ne => Some(RelOp::Ne),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let v = self.num("a number")?;
            return Ok(FieldCmp::Rel(op, self.limit(Some(v), what, max)?.unwrap_or(0)));
        }
        if *self.peek() == Tok::LParen {
            self.bump();
            let mut vals = Vec::new();
            loop {
                let v = self.num("a number")?;
                vals.push(self.limit(Some(v), what, max)?.unwrap_or(0));
                if *self.peek() == Tok::Or {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(Tok::RParen, "`or` or `)`")?;
            return Ok(FieldCmp::Any(vals));
        }
        let v = self.num("a number, a comparison or `(`")?;
        Ok(FieldCmp::Any(vec![self.limit(Some(v), what, max)?.unwrap_or(0)]))
    }

    fn p80211(&mut self, proto: Option<Proto>, start: Span) -> R<Expr> {
        let k = self.bump();
        let word = |p: &mut Self| -> R<(Result<u32, String>, Span)> {
            match p.peek().clone() {
                Tok::Num(n) => Ok((Ok(n), p.bump().span)),
                Tok::Id(s) => Ok((Err(s), p.bump().span)),
                _ => Err(p.unexpected("a number or a name")),
            }
        };
        let prim = match k.tok {
            Tok::Kw(Kw::Type) => {
                let (t, ts) = word(self)?;
                let ty = match t {
                    Ok(n) if n & !0x0c != 0 => return Err(ParseError::new(K::WlanTypeInvalid, ts)),
                    Ok(n) => n,
                    Err(s) => semantic::wlan_type(&s).ok_or_else(|| {
                        ParseError::new(K::WlanTypeUnknown { name: s.clone() }, ts)
                    })?,
                };
                let subtype = if *self.peek() == Tok::Kw(Kw::Subtype) {
                    self.bump();
                    let (st, ss) = word(self)?;
                    Some(match st {
                        Ok(n) if n & !0xf0 != 0 => {
                            return Err(ParseError::new(K::WlanSubtypeInvalid, ss));
                        }
                        Ok(n) => n,
                        Err(s) => semantic::wlan_subtype(ty, &s).ok_or_else(|| {
                            ParseError::new(
                                K::WlanSubtypeUnknown { name: s.clone(), ty: Some(ty) },
                                ss,
                            )
                        })?,
                    })
                } else {
                    None
                };
                Primitive::WlanType { proto, ty, subtype }
            }
            Tok::Kw(Kw::Subtype) => {
                // libpcap takes only a name here.
                let Tok::Id(s) = self.peek().clone() else {
                    return Err(self.unexpected("an 802.11 subtype name"));
                };
                let ss = self.bump().span;
                let type_subtype = semantic::wlan_type_subtype(&s).ok_or_else(|| {
                    ParseError::new(K::WlanSubtypeUnknown { name: s.clone(), ty: None }, ss)
                })?;
                Primitive::WlanSubtype { proto, type_subtype }
            }
            _ => {
                let (d, ds) = word(self)?;
                let dir = match d {
                    Ok(n) if n > 3 => return Err(ParseError::new(K::WlanDirInvalid, ds)),
                    Ok(n) => n,
                    Err(s) => semantic::wlan_dir(&s).ok_or_else(|| {
                        ParseError::new(K::WlanDirUnknown { name: s.clone() }, ds)
                    })?,
                };
                Primitive::WlanDir { proto, dir }
            }
        };
        self.prim(prim, start)
    }

    /// `[proto] [dir] [type] id` after the protocol (if any) was read.
    fn head(&mut self, proto: Option<(Proto, Span)>) -> R<Expr> {
        let mut q = Quals { proto, dir: None, ty: None };
        let ds = self.span();
        let dir = match self.peek() {
            Tok::Kw(Kw::Src) | Tok::Kw(Kw::Dst) => {
                let first = if *self.peek() == Tok::Kw(Kw::Src) { Kw::Src } else { Kw::Dst };
                let other = if first == Kw::Src { Kw::Dst } else { Kw::Src };
                self.bump();
                match (self.peek().clone(), self.peek_at(1).clone()) {
                    (Tok::Or, Tok::Kw(o)) if o == other => {
                        self.bump();
                        self.bump();
                        Some(Dir::SrcOrDst)
                    }
                    (Tok::And, Tok::Kw(o)) if o == other => {
                        self.bump();
                        self.bump();
                        Some(Dir::SrcAndDst)
                    }
                    _ => Some(if first == Kw::Src { Dir::Src } else { Dir::Dst }),
                }
            }
            Tok::Kw(Kw::Ra) => Some(Dir::Ra),
            Tok::Kw(Kw::Ta) => Some(Dir::Ta),
            Tok::Kw(Kw::Addr1) => Some(Dir::Addr1),
            Tok::Kw(Kw::Addr2) => Some(Dir::Addr2),
            Tok::Kw(Kw::Addr3) => Some(Dir::Addr3),
            Tok::Kw(Kw::Addr4) => Some(Dir::Addr4),
            _ => None,
        };
        if let Some(d) = dir {
            if !matches!(d, Dir::Src | Dir::Dst | Dir::SrcOrDst | Dir::SrcAndDst) {
                self.bump();
            }
            q.dir = Some((d, ds.cover(self.prev_span())));
        }
        let ts = self.span();
        let ty = match self.peek() {
            Tok::Kw(Kw::Host) => Some(QualType::Host),
            Tok::Kw(Kw::Net) => Some(QualType::Net),
            Tok::Kw(Kw::Port) => Some(QualType::Port),
            Tok::Kw(Kw::Portrange) => Some(QualType::Portrange),
            Tok::Kw(Kw::Proto) => Some(QualType::Proto),
            Tok::Kw(Kw::Protochain) => Some(QualType::Protochain),
            Tok::Kw(Kw::Gateway) => Some(QualType::Gateway),
            _ => None,
        };
        if let Some(t) = ty {
            if q.dir.is_some()
                && matches!(t, QualType::Proto | QualType::Protochain | QualType::Gateway)
            {
                return Err(self.unexpected(&format!(
                    "`host`, `net`, `port`, `portrange` or an address after `{}`",
                    q.dir.map_or("", |d| d.0.as_str())
                )));
            }
            self.bump();
            q.ty = Some((t, ts));
        }
        // Broadcast/multicast after `ether`/`ip` only take a proto; anything else needs an id.
        self.id_term(q, false)
    }

    /// `arth relop arth`.
    fn relation(&mut self) -> R<Expr> {
        let lhs = self.arith()?;
        let op = match self.peek() {
            Tok::Gt => RelOp::Gt,
            Tok::Ge => RelOp::Ge,
            Tok::Eq => RelOp::Eq,
            Tok::Le => RelOp::Le,
            Tok::Lt => RelOp::Lt,
            Tok::Ne => RelOp::Ne,
            _ => {
                return Err(self.unexpected(
                    "an arithmetic operator or a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`)",
                ));
            }
        };
        self.bump();
        let rhs = self.arith()?;
        self.last = None;
        let span = lhs.span.cover(rhs.span);
        Ok(Expr { kind: ExprKind::Rel { op, lhs, rhs }, span })
    }

    fn arith(&mut self) -> R<Arith> {
        self.arith_level(0)
    }

    /// Levels, loosest first: `|`, `&`, `<< >>`, `+ -`, `* /`; then unary minus and the
    /// precedence-less `%` and `^` (see [`Parser::arith_postfix`]).
    fn arith_level(&mut self, level: u8) -> R<Arith> {
        if level == 5 {
            return self.arith_unary();
        }
        let mut lhs = self.arith_level(level + 1)?;
        let mut chain = 0usize;
        loop {
            let op = match (level, self.peek()) {
                (0, Tok::Pipe) => ArithOp::Or,
                (1, Tok::Amp) => ArithOp::And,
                (2, Tok::Shl) => ArithOp::Shl,
                (2, Tok::Shr) => ArithOp::Shr,
                (3, Tok::Plus) => ArithOp::Add,
                (3, Tok::Minus) => ArithOp::Sub,
                (4, Tok::Star) => ArithOp::Mul,
                (4, Tok::Slash) => ArithOp::Div,
                _ => break,
            };
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(ParseError::new(K::NestingTooDeep, self.span()));
            }
            self.bump();
            let rhs = self.arith_level(level + 1)?;
            lhs = self.binop(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn binop(&self, op: ArithOp, lhs: Arith, rhs: Arith) -> R<Arith> {
        if let ArithKind::Num(n) = rhs.kind {
            let err = match op {
                ArithOp::Div if n == 0 => Some(K::DivisionByZero),
                ArithOp::Mod if n == 0 => Some(K::ModulusByZero),
                ArithOp::Shl | ArithOp::Shr if n > 31 => Some(K::ShiftTooLarge),
                _ => None,
            };
            if let Some(k) = err {
                return Err(ParseError::new(k, rhs.span));
            }
        }
        let span = lhs.span.cover(rhs.span);
        Ok(Arith { kind: ArithKind::Bin { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span })
    }

    fn arith_unary(&mut self) -> R<Arith> {
        if *self.peek() == Tok::Minus {
            let s = self.bump().span;
            self.enter()?;
            let inner = self.arith_unary()?;
            self.leave();
            let span = s.cover(inner.span);
            return Ok(Arith { kind: ArithKind::Neg(Box::new(inner)), span });
        }
        self.arith_postfix()
    }

    /// `%` and `^` have no precedence in libpcap's grammar and bison shifts on the conflict, so
    /// their left operand is the operand just before them and their right operand is
    /// everything to the right: `a*b%c+d` is `a*(b%(c+d))` (checked against tcpdump -d).
    fn arith_postfix(&mut self) -> R<Arith> {
        let p = self.arith_primary()?;
        let op = match self.peek() {
            Tok::Percent => ArithOp::Mod,
            Tok::Caret => ArithOp::Xor,
            _ => return Ok(p),
        };
        self.bump();
        self.enter()?;
        let rhs = self.arith()?;
        self.leave();
        self.binop(op, p, rhs)
    }

    fn arith_primary(&mut self) -> R<Arith> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Num(n) => {
                self.bump();
                Ok(Arith { kind: ArithKind::Num(n), span: start })
            }
            Tok::Kw(Kw::Len) => {
                self.bump();
                Ok(Arith { kind: ArithKind::Len, span: start })
            }
            Tok::LParen => {
                self.bump();
                self.enter()?;
                let inner = self.arith()?;
                self.expect(Tok::RParen, "an arithmetic operator or `)`")?;
                self.leave();
                Ok(Arith { kind: inner.kind, span: start.cover(self.prev_span()) })
            }
            Tok::Kw(k) if Proto::from_kw(k).is_some() && *self.peek_at(1) == Tok::LBrack => {
                let proto = Proto::from_kw(k).unwrap_or(Proto::Link);
                if !proto.has_accessor() {
                    return Err(ParseError::new(
                        K::IndexUnsupported { proto: k.as_str().into() },
                        start,
                    ));
                }
                self.bump();
                self.bump();
                self.enter()?;
                let index = self.arith()?;
                self.leave();
                let mut size = 1u8;
                if *self.peek() == Tok::Colon {
                    self.bump();
                    let (n, s) = self.num("a size (1, 2 or 4)")?;
                    if !matches!(n, 1 | 2 | 4) {
                        return Err(ParseError::new(K::DataSizeInvalid, s));
                    }
                    size = n as u8;
                }
                self.expect(Tok::RBrack, "`:` or `]`")?;
                Ok(Arith {
                    kind: ArithKind::Load { proto, index: Box::new(index), size },
                    span: start.cover(self.prev_span()),
                })
            }
            _ => Err(self.unexpected("a number, `len`, `proto[offset]` or `(`")),
        }
    }
}

fn expected_id(q: Quals) -> String {
    match q.ty.map(|t| t.0) {
        Some(QualType::Port) => "a port number or service name after `port`".into(),
        Some(QualType::Portrange) => "a port range (`p1-p2`) after `portrange`".into(),
        Some(QualType::Proto | QualType::Protochain) => "a protocol number or name".into(),
        Some(QualType::Net) => "a network after `net`".into(),
        Some(QualType::Gateway) => "a host name after `gateway`".into(),
        _ => "an address or name".into(),
    }
}

/// A primitive's span: from its first qualifier to the end of its id.
fn head_span(q: Quals, id: Span) -> Span {
    [q.proto.map(|p| p.1), q.dir.map(|d| d.1), q.ty.map(|t| t.1)]
        .into_iter()
        .flatten()
        .fold(id, Span::cover)
}

/// Keywords that start the direction/type part of a primitive (`[proto] [dir] [type] id`).
fn starts_head(k: Kw) -> bool {
    matches!(
        k,
        Kw::Src
            | Kw::Dst
            | Kw::Host
            | Kw::Net
            | Kw::Port
            | Kw::Portrange
            | Kw::Proto
            | Kw::Protochain
            | Kw::Gateway
            | Kw::Ra
            | Kw::Ta
            | Kw::Addr1
            | Kw::Addr2
            | Kw::Addr3
            | Kw::Addr4
    )
}
