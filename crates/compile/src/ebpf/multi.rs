//! Many filters in one eBPF program: a [`MultiProgram`] lowered for XDP, TC or a socket
//! filter, deciding a packet once.
//!
//! **Why it exists.** The kernel runs one program per hook (or a chain of them, each paying
//! its own dispatch and packet parsing); splitting traffic by customer, VLAN, subnet or
//! service at XDP or TC needs the decision table of [`crate::multi`] as one program. Its
//! result cannot be a single verdict: it is the set of matching filters and CSPF's
//! first-match index, written to a map ([`ResultLayout`]) the embedder reads after the run.
//!
//! **The program**, in the order it runs:
//!
//! 1. *Prologue.* The result map's only element ([`result_map`], a per-CPU array: each CPU
//!    has its own, and a run is never interrupted by another on the same CPU) is looked up
//!    once; its pointer is spilled to the stack. `first` and `count` are zeroed, and the
//!    summary words are stored with the bits of the words holding filters that run on every
//!    packet ([`Anchoring::Always`]), whose candidate bits are stored too.
//! 2. *Index.* The tables of [`crate::multi::Index`], in its order: each guard's fields are
//!    loaded and compared once per group of tables sharing that guard (a failed guard skips
//!    the group), then each table's field is loaded once and looked up by a **binary search
//!    generated as code** over the table's sorted values (`if w7 >= v goto …`, a few
//!    equality tests at the leaves). A hit ORs the value's filters into the candidate words
//!    and their summary bits. A BPF hash map keyed by (table, value) was the alternative; the
//!    search in code was chosen because it costs ⌈log2 n⌉ + 4 compares of one register and no
//!    helper call (a hash lookup is a call, a hash and a bucket walk), needs no map for the
//!    loader to fill and keep in step with the program, and is checked by the verifier as
//!    plain code. Its cost is program size: about 10 slots per value, which the kernel's
//!    1,000,000-instruction limit and eBPF's 16-bit jumps bound ([`EbpfGenErrorKind::TooLarge`],
//!    [`EbpfGenErrorKind::JumpTooFar`]).
//! 3. *Filters*, in rank order, each behind a hierarchy of skips so that a packet pays for
//!    the filters that cannot match only a few instructions per 256, 32 and 8 of them: a
//!    block of 8 candidate words is skipped when its summary bits are clear, a word when it
//!    is 0 (a non-zero word is consumed: copied to `cur` and cleared), a byte of it when its
//!    bits are clear, and then each filter by one `jset` on the word (its body placed after
//!    the byte's gates, jumping back to the next gate). A candidate runs its own body, lowered
//!    from its optimized graph as [`super::lower`] does (A and X in `w7`/`w8`, one bounds
//!    check per group of loads), with its exits bound to this program: a match calls the
//!    record function (a bpf-to-bpf call, one copy for all filters), which appends the rank
//!    to `ranks` and sets `first` for a filter without `continue`; in [`Decide::First`] mode
//!    the run ends there (through a chain of `goto`s every 24,000 slots: eBPF's jumps reach
//!    32,767). The TC split jumps to its second copy with a `gotol` (ISA v4, kernel 6.6).
//! 4. *Return*: raw mode ([`EbpfOptions::raw`]) returns `first`; otherwise
//!    [`EbpfOptions::on_match`] when some filter took the packet, else
//!    [`EbpfOptions::on_miss`].
//!
//! Candidates are a superset of the matches (the index's soundness argument is in
//! [`crate::multi::anchor`]): candidate bits left over from an earlier run (a
//! [`Decide::First`] run ends before consuming every word) only make a filter run that
//! need not, so the result is each filter's own verdict, as [`MultiProgram::decide`] gives
//! it.
//!
//! **Return values.** XDP programs must return an `XDP_*` action (anything else is
//! `XDP_ABORTED` with a warning) and TC programs a `TC_ACT_*` one, so the index is a return
//! value only in raw mode, meant for `BPF_PROG_TEST_RUN` and sift's VM. A socket filter's
//! return is the number of bytes to keep: verdicts only.
//!
//! **For the verifier.** Both verifiers explore every path; sift's has no liveness analysis,
//! and the kernel's keeps packet-pointer ranges in its states. So every place where paths
//! join between two tables or two filters is preceded by a *settle*: scratch registers
//! zeroed, `data`/`data_end` reloaded (their proven range forgotten), and the candidate
//! words read back from the map value (whose contents the verifier never knows, unlike
//! constants on the stack). States at those joins are then equal and pruned, and a set of
//! filters verifies in about the sum of their own costs.
//!
//! TC, as for one filter, has two copies of all this: direct packet access when the skb is
//! linear, `bpf_skb_load_bytes` otherwise (socket filters have only the latter).

use std::collections::BTreeMap;

use sift_ebpf::isa::{
    AluOp as EAlu, AtomicOp, ByteOrder, CallTarget, Cond, ImmKind, Insn, Operand, Width,
};
use sift_ebpf::reg::*;
use sift_ebpf::{MapSpec, MapType, Reg, Size as ESize, helper_ids::id, skb};

use super::asm::{Asm, Label};
use super::lower::{
    A, BUF, BUF_SIZE, CTX, DATA, DATA_END, KEY, Lowering, WALK_BUF, WALK_X, alu32, alu64, ldx, mem,
    mov32, mov64_reg,
};
use super::plan::{Access, COPY_LIMIT, DIRECT_LIMIT, Outcome, access_size, read_before_written};
use super::{EbpfFilter, EbpfGenError, EbpfGenErrorKind, EbpfOptions, Hook, scan, steps};
use crate::ir::{Cfg, RegSet, Size, Slot, Stmt};
use crate::multi::field::{Base, Field};
use crate::multi::{Anchoring, Decide, MultiProgram};
use crate::pipeline::Compiled;

/// The name of the result map ([`result_map`]).
pub const RESULT_MAP: &str = "sift_multi";

/// Where the map value's pointer is spilled (below the single-filter lowering's stack).
const PTR: i16 = -352;

/// The kernel's largest per-CPU map value (`PCPU_MIN_UNIT_SIZE`).
const MAX_VALUE: usize = 32 << 10;

/// The kernel's largest program (`BPF_COMPLEXITY_LIMIT_INSNS`, for privileged loaders).
const MAX_SLOTS: usize = 1_000_000;

/// Slots after which a jump to the end of a first-match run takes a stepping stone.
const END_REACH: usize = 24_000;

/// The layout of the result map's value, native-endian `u32`s: `first` (rank + 1 of the
/// first matching filter without `continue`, 0 for none) at 0, `count` at 4, then scratch
/// (the word being consumed, the summary words, the candidate words), then `ranks`:
/// `count` ranks, ascending — every matching filter ([`Decide::All`]), or those the packet
/// is delivered to ([`Decide::First`]: the `continue` filters before `first`, and `first`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultLayout {
    /// How many filters (ranks `0..filters`).
    pub filters: u32,
    /// Candidate words (32 filters each).
    pub words: u32,
    /// Summary words (32 candidate words each).
    pub summaries: u32,
}

/// What a run decided, read back from the result map ([`ResultLayout::decode`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MultiResult {
    /// The first matching filter without `continue` (CSPF's delivery stops there).
    pub first: Option<u32>,
    /// The ranks in the result set, ascending (see [`ResultLayout`]).
    pub ranks: Vec<u32>,
}

impl ResultLayout {
    /// Byte offset of `first`.
    pub const FIRST: u32 = 0;
    /// Byte offset of `count`.
    pub const COUNT: u32 = 4;
    /// Byte offset of the candidate word being consumed (scratch).
    const CUR: u32 = 8;
    /// Byte offset of the first summary word.
    const SUMMARY: u32 = 16;

    /// The layout for `filters` filters.
    pub fn new(filters: u32) -> ResultLayout {
        let words = filters.div_ceil(32);
        ResultLayout { filters, words, summaries: words.div_ceil(32) }
    }

    fn summary(&self, s: u32) -> u64 {
        u64::from(Self::SUMMARY) + 4 * u64::from(s)
    }

    fn cand(&self, w: u32) -> u64 {
        self.summary(self.summaries) + 4 * u64::from(w)
    }

    /// Byte offset of `ranks`.
    pub fn ranks(&self) -> u64 {
        self.cand(self.words)
    }

    /// The value's size in bytes (a multiple of 8).
    pub fn value_size(&self) -> u64 {
        (self.ranks() + 4 * u64::from(self.filters)).next_multiple_of(8)
    }

    /// Reads a value (one CPU's) back; `None` when it is too short or inconsistent.
    pub fn decode(&self, value: &[u8]) -> Option<MultiResult> {
        let word = |at: u64| -> Option<u32> {
            let at = usize::try_from(at).ok()?;
            let b = value.get(at..at + 4)?;
            Some(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        };
        let first = word(u64::from(Self::FIRST))?;
        let count = word(u64::from(Self::COUNT))?;
        if count > self.filters || first > self.filters {
            return None;
        }
        let ranks: Option<Vec<u32>> =
            (0..u64::from(count)).map(|i| word(self.ranks() + 4 * i)).collect();
        Some(MultiResult { first: first.checked_sub(1), ranks: ranks? })
    }
}

/// The result map of a program for `layout`: a per-CPU array of one element.
pub fn result_map(layout: &ResultLayout) -> MapSpec {
    MapSpec {
        name: RESULT_MAP.into(),
        map_type: MapType::PerCpuArray,
        key_size: 4,
        value_size: u32::try_from(layout.value_size()).unwrap_or(u32::MAX),
        max_entries: 1,
        flags: 0,
        initial: Vec::new(),
    }
}

/// A lowered [`MultiProgram`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EbpfMultiFilter {
    /// The program; its only map is [`result_map`] (map 0).
    pub filter: EbpfFilter,
    /// The result map's value.
    pub layout: ResultLayout,
    /// How packets are decided.
    pub mode: Decide,
}

/// Lowers `multi` (compiled for EN10MB) for `opts.hook`, deciding packets by `mode` (see the
/// module documentation). Counting and AF_XDP redirects are refused
/// ([`EbpfGenErrorKind::MultiOptions`]); a filter without an eBPF form is named
/// ([`EbpfGenErrorKind::Member`], located in its own graph); sets beyond the kernel's limits
/// are refused ([`EbpfGenErrorKind::TooLarge`], [`EbpfGenErrorKind::JumpTooFar`]).
pub fn lower_multi(
    multi: &MultiProgram,
    opts: &EbpfOptions,
    mode: Decide,
) -> Result<EbpfMultiFilter, EbpfGenError> {
    if opts.count || opts.xsk {
        return Err(EbpfGenError::new(EbpfGenErrorKind::MultiOptions, None));
    }
    let filters = u32::try_from(multi.len()).unwrap_or(u32::MAX);
    let layout = ResultLayout::new(filters);
    let size = usize::try_from(layout.value_size()).unwrap_or(usize::MAX);
    if size > MAX_VALUE {
        let what = "the result map's value bytes";
        let kind = EbpfGenErrorKind::TooLarge { what, size, limit: MAX_VALUE };
        return Err(EbpfGenError::new(kind, None));
    }
    // The filters that can match, by rank.
    let mut bodies: BTreeMap<u32, &Compiled> = BTreeMap::new();
    for (rank, m) in multi.members.iter().enumerate() {
        let Some(c) = &m.compiled else { continue };
        if m.anchoring == Anchoring::Never {
            continue;
        }
        let rank = rank as u32;
        scan(c).map_err(|e| {
            let kind = EbpfGenErrorKind::Member {
                rank,
                name: m.spec.name.clone(),
                kind: Box::new(e.kind),
            };
            EbpfGenError::new(kind, e.at)
        })?;
        bodies.insert(rank, c);
    }
    let body_opts = EbpfOptions { raw: false, count: false, xsk: false, ..*opts };
    let mut g = Gen {
        asm: Asm::default(),
        opts,
        body_opts: &body_opts,
        mode,
        layout,
        multi,
        bodies,
        tables: tables(multi),
        end: None,
        record: None,
        dirty: vec![R1, R3, R4, R5, R9],
    };
    g.prologue();
    match opts.hook {
        Hook::Xdp => g.variant(Access::Direct { xdp: true }),
        Hook::Tc => {
            let slow = g.linear_split();
            g.variant(Access::Direct { xdp: false });
            g.asm.bind(slow);
            g.variant(Access::Copy);
        }
        Hook::SocketFilter => g.variant(Access::Copy),
    }
    g.record_body();
    let insns = super::finish(g.asm)?;
    let slots: usize = insns.iter().map(Insn::slots).sum();
    if slots > MAX_SLOTS {
        let what = "the program's instruction slots";
        let kind = EbpfGenErrorKind::TooLarge { what, size: slots, limit: MAX_SLOTS };
        return Err(EbpfGenError::new(kind, None));
    }
    let filter = EbpfFilter { insns, maps: vec![result_map(&layout)], hook: opts.hook };
    Ok(EbpfMultiFilter { filter, layout, mode })
}

/// One table of the index as code: its field, its guard, its values with their filters.
struct TableCode {
    field: Field,
    /// `(field, ==?, value)` conditions.
    guard: Vec<(Field, bool, u32)>,
    /// Values ascending, each with its ranks ascending.
    entries: Vec<(u32, Vec<u32>)>,
}

/// The index's tables as code wants them: the field, the context conditions, and each value's
/// ranks. Entries' own guards and exactness are not used: a candidate's body decides.
fn tables(multi: &MultiProgram) -> Vec<TableCode> {
    let index = &multi.index;
    index
        .tables
        .iter()
        .map(|t| {
            let field = index.fields[t.field as usize];
            let guard = index.guards[t.guard as usize]
                .iter()
                .map(|&c| {
                    let (f, eq, v) = index.conds[c as usize];
                    (index.fields[f as usize], eq, v)
                })
                .collect();
            let entries = t
                .map
                .iter()
                .into_iter()
                .map(|(v, es)| {
                    let mut ranks: Vec<u32> = es.iter().map(|e| e.rank).collect();
                    ranks.sort_unstable();
                    ranks.dedup();
                    (v, ranks)
                })
                .collect();
            TableCode { field, guard, entries }
        })
        .collect()
}

/// The program being written.
struct Gen<'a> {
    asm: Asm,
    opts: &'a EbpfOptions,
    /// The bodies' options: verdicts (match or miss), nothing counted.
    body_opts: &'a EbpfOptions,
    mode: Decide,
    layout: ResultLayout,
    multi: &'a MultiProgram,
    bodies: BTreeMap<u32, &'a Compiled>,
    tables: Vec<TableCode>,
    /// The pending jump target to the end of a first-match run, and the slot of its first use.
    end: Option<(Label, usize)>,
    /// The record function, once called.
    record: Option<Label>,
    /// Registers the index phase wrote since its last settle (besides `w0`, `r2`, `w7`, which
    /// every table writes).
    dirty: Vec<Reg>,
}

fn off(v: u64) -> i16 {
    i16::try_from(v).unwrap_or(i16::MAX)
}

fn st_imm(size: ESize, dst: Reg, at: i16, v: i32) -> Insn {
    Insn::Store { size, dst, off: at, src: Operand::Imm(v) }
}

fn st_reg(size: ESize, dst: Reg, at: i16, src: Reg) -> Insn {
    Insn::Store { size, dst, off: at, src: Operand::Reg(src) }
}

impl Gen<'_> {
    fn emit(&mut self, insn: Insn) {
        self.asm.emit(insn);
    }

    fn packet_offsets(&self) -> (i16, i16) {
        match self.opts.hook {
            Hook::Xdp => (sift_ebpf::xdp_md::DATA, sift_ebpf::xdp_md::DATA_END),
            _ => (skb::DATA, skb::DATA_END),
        }
    }

    /// `data` and `data_end` afresh (direct access), with no range proven.
    fn reload_packet(&mut self) {
        let (data, end) = self.packet_offsets();
        self.emit(ldx(ESize::W, DATA, CTX, data));
        self.emit(ldx(ESize::W, DATA_END, CTX, end));
    }

    /// The map value, the result reset, the candidates of filters that always run.
    fn prologue(&mut self) {
        self.emit(mov64_reg(CTX, R1));
        self.emit(st_imm(ESize::W, R10, KEY, 0));
        self.emit(mov64_reg(R2, R10));
        self.emit(alu64(EAlu::Add, R2, Operand::Imm(i32::from(KEY))));
        self.emit(Insn::LdImm64 { dst: R1, kind: ImmKind::MapFd, imm: 0 });
        self.emit(Insn::Call(CallTarget::Helper(id::MAP_LOOKUP_ELEM as i32)));
        let have = self.asm.label();
        self.asm.jmp(Width::W64, Cond::Ne, R0, Operand::Imm(0), have);
        // An array's element 0 always exists; the verifier wants the test.
        self.asm.ret(if self.opts.raw { 0 } else { self.opts.on_miss });
        self.asm.bind(have);
        self.emit(st_reg(ESize::DW, R10, PTR, R0));
        self.emit(mov64_reg(R8, R0));
        // `first` and `count`.
        self.emit(st_imm(ESize::DW, R8, 0, 0));
        let l = self.layout;
        let mut summary = vec![0u32; l.summaries as usize];
        let mut always = vec![0u32; l.words as usize];
        for &r in &self.multi.index.always {
            if self.bodies.contains_key(&r) {
                always[(r / 32) as usize] |= 1 << (r % 32);
                summary[(r / 1024) as usize] |= 1 << ((r / 32) % 32);
            }
        }
        for (s, bits) in summary.into_iter().enumerate() {
            self.emit(st_imm(ESize::W, R8, off(l.summary(s as u32)), bits as i32));
        }
        for (w, bits) in always.into_iter().enumerate() {
            if bits != 0 {
                self.emit(st_imm(ESize::W, R8, off(l.cand(w as u32)), bits as i32));
            }
        }
        // The stack the bodies write, zeroed (and zeroed again after each body that writes it):
        // equal at every join.
        let mut slots = std::collections::BTreeSet::new();
        for c in self.bodies.values() {
            slots.extend(stack_written(&c.cfg));
        }
        for at in slots {
            self.emit(st_imm(ESize::DW, R10, at, 0));
        }
    }

    /// TC: the direct-access copy of the program when the whole skb is linear, else the
    /// copying one at the label returned (through a `gotol`: it is a whole program away).
    fn linear_split(&mut self) -> Label {
        let (slow, stone, fast) = (self.asm.label(), self.asm.label(), self.asm.label());
        self.emit(ldx(ESize::W, R1, CTX, skb::LEN));
        self.asm.jmp(Width::W64, Cond::Gt, R1, Operand::Imm(DIRECT_LIMIT as i32), stone);
        self.reload_packet();
        self.emit(mov64_reg(R2, DATA));
        self.emit(alu64(EAlu::Add, R2, Operand::Reg(R1)));
        self.asm.jmp(Width::W64, Cond::Gt, R2, Operand::Reg(DATA_END), stone);
        self.asm.ja(fast);
        self.asm.bind(stone);
        self.asm.ja_long(slow);
        self.asm.bind(fast);
        slow
    }

    /// The index phase's state at every join: scratch zeroed, the packet pointers afresh
    /// (direct access) or zeroed, the map value in `r8`.
    fn settle_index(&mut self, access: Access) {
        let mut zero = vec![R0, R2, A];
        let dirty = std::mem::take(&mut self.dirty);
        zero.extend(dirty.iter().copied().filter(|&r| r != DATA && r != DATA_END));
        zero.sort_unstable();
        zero.dedup();
        for r in zero {
            self.emit(mov32(r, 0));
        }
        match access {
            Access::Direct { .. } => self.reload_packet(),
            Access::Copy => {
                if dirty.contains(&DATA) {
                    self.emit(mov32(DATA, 0));
                }
                if dirty.contains(&DATA_END) {
                    self.emit(mov32(DATA_END, 0));
                }
            }
        }
    }

    /// One copy of the program for an access: index, filters, return.
    fn variant(&mut self, access: Access) {
        if access == Access::Copy {
            // Every byte of the copy buffer written (zeroes where the packet is shorter): the
            // bytes each path has copied differ, and sift's verifier, without liveness
            // analysis, would otherwise tell its states apart at every join.
            self.emit(mov32(R2, 0));
            self.emit(mov64_reg(R1, CTX));
            self.emit(mov64_reg(R3, R10));
            self.emit(alu64(EAlu::Add, R3, Operand::Imm(i32::from(BUF))));
            self.emit(mov32(R4, BUF_SIZE as u32));
            self.emit(Insn::Call(CallTarget::Helper(id::SKB_LOAD_BYTES as i32)));
        }
        // What the prologue, the TC split or the helper call left in the registers.
        self.dirty.extend([R1, R3, R4, R5, R9]);
        self.settle_index(access);
        self.index(access);
        self.filters(access);
        self.finish();
    }

    /// `first` (raw) or the verdict.
    fn finish(&mut self) {
        if let Some((l, _)) = self.end.take() {
            self.asm.bind(l);
        }
        self.emit(ldx(ESize::DW, R1, R10, PTR));
        if self.opts.raw {
            self.emit(ldx(ESize::W, R0, R1, ResultLayout::FIRST as i16));
            self.emit(Insn::Exit);
        } else {
            let miss = self.asm.label();
            self.emit(ldx(ESize::W, R0, R1, ResultLayout::COUNT as i16));
            self.asm.jmp(Width::W32, Cond::Eq, R0, Operand::Imm(0), miss);
            self.asm.ret(self.opts.on_match);
            self.asm.bind(miss);
            self.asm.ret(self.opts.on_miss);
        }
    }

    // ---- The index -----------------------------------------------------------------------

    fn index(&mut self, access: Access) {
        let tables = std::mem::take(&mut self.tables);
        let mut i = 0;
        while i < tables.len() {
            let mut j = i + 1;
            while j < tables.len() && tables[j].guard == tables[i].guard {
                j += 1;
            }
            // The group's last table settles where a failed guard goes.
            let skip = self.asm.label();
            let mut live = true;
            for &(f, eq, v) in &tables[i].guard {
                if !self.field(f, access, skip) {
                    live = false;
                    break;
                }
                let c = if eq { Cond::Ne } else { Cond::Eq };
                self.asm.jmp(Width::W32, c, A, Operand::Imm(v as i32), skip);
            }
            if !live {
                self.asm.bind(skip);
                self.settle_index(access);
                i = j;
                continue;
            }
            for (k, t) in tables[i..j].iter().enumerate() {
                let done = if i + k + 1 == j { skip } else { self.asm.label() };
                self.table(t, access, done);
                self.asm.bind(done);
                self.settle_index(access);
            }
            i = j;
        }
        self.tables = tables;
    }

    /// A table: its field, the search, the marks; every way out goes to `done`.
    fn table(&mut self, t: &TableCode, access: Access, done: Label) {
        if t.entries.is_empty() {
            return;
        }
        if !self.field(t.field, access, done) {
            return;
        }
        let marks: Vec<Label> = t.entries.iter().map(|_| self.asm.label()).collect();
        self.search(&t.entries, 0, t.entries.len(), &marks, done);
        for ((_, ranks), &l) in t.entries.iter().zip(&marks) {
            self.asm.bind(l);
            self.mark(ranks);
            self.asm.ja(done);
        }
    }

    /// A binary search for `w7` over `entries[lo..hi]` (ascending), ending in equality tests.
    fn search(
        &mut self,
        e: &[(u32, Vec<u32>)],
        lo: usize,
        hi: usize,
        marks: &[Label],
        miss: Label,
    ) {
        if hi - lo <= 4 {
            for i in lo..hi {
                self.asm.jmp(Width::W32, Cond::Eq, A, Operand::Imm(e[i].0 as i32), marks[i]);
            }
            self.asm.ja(miss);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let right = self.asm.label();
        self.asm.jmp(Width::W32, Cond::Ge, A, Operand::Imm(e[mid].0 as i32), right);
        self.search(e, lo, mid, marks, miss);
        self.asm.bind(right);
        self.search(e, mid, hi, marks, miss);
    }

    /// ORs `ranks` (of filters with a body) into the candidate words and their summary bits.
    fn mark(&mut self, ranks: &[u32]) {
        let mut words: BTreeMap<u32, u32> = BTreeMap::new();
        let mut summaries: BTreeMap<u32, u32> = BTreeMap::new();
        for &r in ranks.iter().filter(|r| self.bodies.contains_key(r)) {
            *words.entry(r / 32).or_default() |= 1 << (r % 32);
            *summaries.entry(r / 1024).or_default() |= 1 << ((r / 32) % 32);
        }
        let l = self.layout;
        let at = words.into_iter().map(|(w, b)| (l.cand(w), b));
        let at = at.chain(summaries.into_iter().map(|(s, b)| (l.summary(s), b)));
        for (o, bits) in at.collect::<Vec<_>>() {
            self.emit(mov32(R0, bits));
            self.emit(Insn::Atomic {
                width: Width::W32,
                op: AtomicOp::Or,
                fetch: false,
                dst: R8,
                src: R0,
                off: off(o),
            });
        }
    }

    /// `w7 = field` as [`Field::eval`] computes it, or `fail` where it has no value; `false`
    /// when no packet has it (then only the jump to `fail` is written: what would follow is
    /// unreachable).
    #[must_use]
    fn field(&mut self, f: Field, access: Access, fail: Label) -> bool {
        match (f.base, access) {
            (Base::Len, Access::Direct { xdp: true }) => {
                self.emit(mov64_reg(A, DATA_END));
                self.emit(alu64(EAlu::Sub, A, Operand::Reg(DATA)));
                self.emit(Insn::Alu {
                    width: Width::W32,
                    op: EAlu::Mov,
                    dst: A,
                    src: Operand::Reg(A),
                });
            }
            (Base::Len, _) => self.emit(ldx(ESize::W, A, CTX, skb::LEN)),
            (Base::Abs(size, k), Access::Direct { .. }) => {
                let end = u64::from(k) + u64::from(size.bytes());
                if end > DIRECT_LIMIT {
                    self.asm.ja(fail);
                    return false;
                }
                self.check(DATA, end, fail);
                self.load(DATA, k, size);
            }
            (Base::Ind { size, k, msh }, Access::Direct { .. }) => {
                let end = u64::from(k) + u64::from(size.bytes());
                if u64::from(msh) + 1 > DIRECT_LIMIT || end > DIRECT_LIMIT {
                    self.asm.ja(fail);
                    return false;
                }
                self.check(DATA, u64::from(msh) + 1, fail);
                self.msh(Some(msh));
                if end + 60 > DIRECT_LIMIT {
                    self.asm.jmp(
                        Width::W64,
                        Cond::Gt,
                        R0,
                        Operand::Imm((DIRECT_LIMIT - end) as i32),
                        fail,
                    );
                }
                self.dirty.push(R1);
                self.emit(mov64_reg(R1, DATA));
                self.emit(alu64(EAlu::Add, R1, Operand::Reg(R0)));
                self.check(R1, end, fail);
                self.load(R1, k, size);
            }
            (Base::Abs(size, k), Access::Copy) => {
                let end = u64::from(k) + u64::from(size.bytes());
                if end > COPY_LIMIT {
                    self.asm.ja(fail);
                    return false;
                }
                self.emit(mov32(R2, k));
                self.copy(size.bytes(), fail);
                self.load(R10, BUF as u32, size);
            }
            (Base::Ind { size, k, msh }, Access::Copy) => {
                let end = u64::from(k) + u64::from(size.bytes());
                if u64::from(msh) + 1 > COPY_LIMIT || end > COPY_LIMIT {
                    self.asm.ja(fail);
                    return false;
                }
                self.emit(mov32(R2, msh));
                self.copy(1, fail);
                self.msh(None);
                // `x + k` fits in 32 bits; past `INT_MAX` the helper fails, as the load would.
                self.emit(mov64_reg(R2, R0));
                self.emit(alu64(EAlu::Add, R2, Operand::Imm(k as i32)));
                self.copy(size.bytes(), fail);
                self.load(R10, BUF as u32, size);
            }
        }
        if f.mask != u32::MAX {
            self.emit(alu32(EAlu::And, A, f.mask));
        }
        true
    }

    /// `base + end <= data_end`, or `fail`.
    fn check(&mut self, base: Reg, end: u64, fail: Label) {
        self.emit(mov64_reg(R2, base));
        self.emit(alu64(EAlu::Add, R2, Operand::Imm(end as i32)));
        self.asm.jmp(Width::W64, Cond::Gt, R2, Operand::Reg(DATA_END), fail);
    }

    /// `w0 = 4 * (byte & 0xf)`, the byte at `data + msh` (direct) or copied to the buffer.
    fn msh(&mut self, at: Option<u32>) {
        match at {
            Some(msh) => self.load(DATA, msh, Size::B),
            None => self.load(R10, BUF as u32, Size::B),
        }
        self.emit(Insn::Alu { width: Width::W32, op: EAlu::Mov, dst: R0, src: Operand::Reg(A) });
        self.emit(alu32(EAlu::And, R0, 0xf));
        self.emit(alu32(EAlu::Lsh, R0, 2));
    }

    /// `bpf_skb_load_bytes(ctx, r2, buf, len)`, or `fail`.
    fn copy(&mut self, len: u32, fail: Label) {
        self.dirty.extend([R1, R3, R4, R5]);
        self.emit(mov64_reg(R1, CTX));
        self.emit(mov64_reg(R3, R10));
        self.emit(alu64(EAlu::Add, R3, Operand::Imm(i32::from(BUF))));
        self.emit(mov32(R4, len));
        self.emit(Insn::Call(CallTarget::Helper(id::SKB_LOAD_BYTES as i32)));
        self.asm.jmp(Width::W64, Cond::Ne, R0, Operand::Imm(0), fail);
    }

    /// `w7 = ntoh(*(size *)(base + k))` (`R10`: `k` is the stack offset, as `u32`).
    fn load(&mut self, base: Reg, k: u32, size: Size) {
        let at = if base == R10 {
            k as i32 as i16
        } else if let Ok(at) = i16::try_from(k) {
            at
        } else {
            self.dirty.push(R3);
            self.emit(mov64_reg(R3, base));
            self.emit(alu64(EAlu::Add, R3, Operand::Imm(k as i32)));
            self.emit(ldx(access_size(size), A, R3, 0));
            self.swap(size);
            return;
        };
        self.emit(ldx(access_size(size), A, base, at));
        self.swap(size);
    }

    fn swap(&mut self, size: Size) {
        match size {
            Size::H => self.emit(Insn::Endian { order: ByteOrder::Be, bits: 16, dst: A }),
            Size::W => self.emit(Insn::Endian { order: ByteOrder::Be, bits: 32, dst: A }),
            Size::B => {}
        }
    }

    // ---- The filters ---------------------------------------------------------------------

    /// Every filter with a body, in rank order, behind its skips.
    fn filters(&mut self, access: Access) {
        // From the index's state to the filters': the map value in r1.
        self.emit(mov64_reg(R1, R8));
        self.emit(mov32(R8, 0));
        if let Access::Direct { .. } = access {
            self.emit(mov32(DATA, 0));
            self.emit(mov32(DATA_END, 0));
        }
        let ranks: Vec<u32> = self.bodies.keys().copied().collect();
        let l = self.layout;
        for s in 0..l.summaries {
            let in_s: Vec<u32> = ranks.iter().copied().filter(|r| r / 1024 == s).collect();
            if in_s.is_empty() {
                continue;
            }
            for (b, in_b) in group(&in_s, |r| (r / 256) % 4) {
                let b_end = self.asm.label();
                self.emit(ldx(ESize::W, R0, R1, off(l.summary(s))));
                self.emit(alu32(EAlu::And, R0, 0xff << (8 * b)));
                self.asm.jmp(Width::W32, Cond::Eq, R0, Operand::Imm(0), b_end);
                for (w, in_w) in group(&in_b, |r| r / 32) {
                    self.word(w, &in_w, access);
                }
                self.asm.bind(b_end);
            }
        }
    }

    /// One candidate word: skipped when 0, else consumed (kept in `cur`) and its filters gated
    /// by byte and bit. Each filter's gate falls through to the next gate when its bit is
    /// clear, and its body, placed after the gates, jumps back to the next gate: the
    /// verifier's first path then skips every body and leaves one pending branch per filter
    /// (the kernel allows 8,192), not one per branch of every body before it.
    fn word(&mut self, w: u32, ranks: &[u32], access: Access) {
        let l = self.layout;
        let cur = ResultLayout::CUR as i16;
        let w_end = self.asm.label();
        self.emit(ldx(ESize::W, R2, R1, off(l.cand(w))));
        self.asm.jmp(Width::W32, Cond::Eq, R2, Operand::Imm(0), w_end);
        self.emit(st_imm(ESize::W, R1, off(l.cand(w)), 0));
        self.emit(st_reg(ESize::W, R1, cur, R2));
        let bytes = group(ranks, |r| (r % 32) / 8);
        let one_byte = bytes.len() == 1;
        for (j, in_j) in bytes {
            let j_end = self.asm.label();
            if !one_byte {
                self.emit(ldx(ESize::W, R0, R1, cur));
                self.emit(alu32(EAlu::And, R0, 0xff << (8 * j)));
                self.asm.jmp(Width::W32, Cond::Eq, R0, Operand::Imm(0), j_end);
                self.emit(mov32(R0, 0));
            }
            let gates: Vec<Label> = in_j.iter().map(|_| self.asm.label()).collect();
            let bodies: Vec<Label> = in_j.iter().map(|_| self.asm.label()).collect();
            for (k, &r) in in_j.iter().enumerate() {
                self.asm.bind(gates[k]);
                // Read afresh at every gate: the state here is the same however it was reached.
                self.emit(ldx(ESize::W, R2, R1, cur));
                let bit = (1u32 << (r % 32)) as i32;
                self.asm.jmp(Width::W32, Cond::Set, R2, Operand::Imm(bit), bodies[k]);
            }
            self.asm.ja(j_end);
            for (k, &r) in in_j.iter().enumerate() {
                self.stepping_stone();
                self.asm.bind(bodies[k]);
                self.body(r, access);
                let next = gates.get(k + 1).copied().unwrap_or(j_end);
                self.asm.ja(next);
            }
            self.asm.bind(j_end);
        }
        self.asm.bind(w_end);
    }

    /// A first-match run's jump to its end, far away: a stepping stone here (right after an
    /// unconditional jump) when the pending one is about to go out of reach.
    fn stepping_stone(&mut self) {
        let Some((l, first)) = self.end else { return };
        if self.asm.slots() - first < END_REACH {
            return;
        }
        self.asm.bind(l);
        let next = self.asm.label();
        self.end = Some((next, self.asm.slots()));
        self.asm.ja(next);
    }

    fn end_label(&mut self) -> Label {
        match self.end {
            Some((l, _)) => l,
            None => {
                let l = self.asm.label();
                self.end = Some((l, self.asm.slots()));
                l
            }
        }
    }

    /// Filter `r`'s body, its outcome recorded, then the filters' state again.
    fn body(&mut self, r: u32, access: Access) {
        let c = self.bodies[&r];
        if let Access::Direct { .. } = access {
            self.reload_packet();
        }
        let zero = read_before_written(&c.cfg);
        let asm = std::mem::take(&mut self.asm);
        let mut lw = Lowering::resume(&c.cfg, self.body_opts, steps(c), asm);
        lw.prologue(false, false, zero);
        lw.body(access);
        let (asm, exits) = lw.into_parts();
        self.asm = asm;
        let cont = self.asm.label();
        for (o, l) in exits {
            let matched = match o {
                Outcome::Match => true,
                Outcome::Miss => false,
                Outcome::Value(v) => v != 0,
            };
            self.asm.bind(l);
            if matched {
                self.record(r, cont);
            } else {
                self.asm.ja(cont);
            }
        }
        self.asm.bind(cont);
        // The filters' state: the map value, the rest zero.
        self.emit(ldx(ESize::DW, R1, R10, PTR));
        let mut zero = vec![R0, R2, R3, R4, DATA_END, A];
        if writes_x(&c.cfg) {
            zero.push(R8);
        }
        if matches!(access, Access::Direct { .. }) || writes_r9(&c.cfg) {
            // `data`, or the copying walk's counter.
            zero.push(DATA);
        }
        for reg in zero {
            self.emit(mov32(reg, 0));
        }
        for at in stack_written(&c.cfg) {
            self.emit(st_imm(ESize::DW, R10, at, 0));
        }
    }

    /// A match of filter `r`: the record function called, and a first-match run ended at a
    /// filter without `continue`; else on to `cont`.
    fn record(&mut self, r: u32, cont: Label) {
        let stop = !self.multi.members[r as usize].spec.cont;
        self.emit(ldx(ESize::DW, R1, R10, PTR));
        self.emit(mov32(R2, r));
        self.emit(mov32(R3, if stop { r + 1 } else { 0 }));
        let f = self.record_fn();
        self.asm.call(f);
        if stop && self.mode == Decide::First {
            let end = self.end_label();
            self.asm.ja(end);
        } else {
            self.asm.ja(cont);
        }
    }

    fn record_fn(&mut self) -> Label {
        *self.record.get_or_insert_with(|| self.asm.label())
    }

    /// The record function (a bpf-to-bpf call: one copy for every filter), if called:
    /// `record(value, rank, first)` appends `rank` to `ranks` and sets `first` when it is 0.
    fn record_body(&mut self) {
        let Some(f) = self.record else { return };
        let l = self.layout;
        let (full, out) = (self.asm.label(), self.asm.label());
        self.asm.bind(f);
        self.emit(ldx(ESize::W, R0, R1, ResultLayout::COUNT as i16));
        // Never taken (each filter records once a run); the verifier wants the bound.
        self.asm.jmp(Width::W64, Cond::Ge, R0, Operand::Imm(l.filters as i32), full);
        self.emit(mov64_reg(R4, R0));
        self.emit(alu64(EAlu::Lsh, R4, Operand::Imm(2)));
        self.emit(alu64(EAlu::Add, R4, Operand::Reg(R1)));
        self.emit(st_reg(ESize::W, R4, off(l.ranks()), R2));
        self.emit(alu32(EAlu::Add, R0, 1));
        self.emit(st_reg(ESize::W, R1, ResultLayout::COUNT as i16, R0));
        self.asm.bind(full);
        let first = ResultLayout::FIRST as i16;
        self.asm.jmp(Width::W32, Cond::Eq, R3, Operand::Imm(0), out);
        self.emit(ldx(ESize::W, R0, R1, first));
        self.asm.jmp(Width::W32, Cond::Ne, R0, Operand::Imm(0), out);
        self.emit(st_reg(ESize::W, R1, first, R3));
        self.asm.bind(out);
        self.asm.ret(0);
    }
}

/// The 8-byte stack slots a filter's body writes besides the copy buffer: its scratch words
/// (those it zeroes at entry too) and a walk's.
fn stack_written(cfg: &Cfg) -> std::collections::BTreeSet<i16> {
    let mut regs = read_before_written(cfg);
    let mut walks = false;
    for b in &cfg.blocks {
        for s in &b.stmts {
            regs = regs.union(s.defs());
            walks |= matches!(s, Stmt::Walk(_));
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for k in 0..Slot::COUNT as u32 {
        let slot = Slot::new(k).expect("below 16");
        if regs.intersects(RegSet::mem(slot)) {
            out.insert(mem(slot).div_euclid(8) * 8);
        }
    }
    if walks {
        out.insert(WALK_X.div_euclid(8) * 8);
        out.insert(WALK_BUF.div_euclid(8) * 8);
    }
    out
}

/// Whether a filter's body writes X (`w8`).
fn writes_x(cfg: &Cfg) -> bool {
    cfg.blocks.iter().flat_map(|b| &b.stmts).any(|s| s.defs().intersects(RegSet::X))
}

/// Whether a filter's body has a walk (whose copying form counts in `r9`).
fn writes_r9(cfg: &Cfg) -> bool {
    cfg.blocks.iter().flat_map(|b| &b.stmts).any(|s| matches!(s, Stmt::Walk(_)))
}

/// `items` (ascending) in runs of equal `key`, in order.
fn group(items: &[u32], key: impl Fn(u32) -> u32) -> Vec<(u32, Vec<u32>)> {
    let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
    for &i in items {
        let k = key(i);
        match out.last_mut() {
            Some((lk, v)) if *lk == k => v.push(i),
            _ => out.push((k, vec![i])),
        }
    }
    out
}
