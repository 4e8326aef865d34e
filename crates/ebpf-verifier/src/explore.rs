//! The exploration: every path from the entry, one instruction at a time, with an explicit
//! stack of pending branches (no recursion), states stored at prune points and paths pruned
//! when a completely verified state at the same instruction covers them (the kernel's
//! `do_check` and `is_state_visited`). A stored state counts the paths still running below it
//! (`branches`); only finished ones prune, and meeting an unfinished equal one is an infinite
//! loop. Conditional jumps, calls, exits and `lddw` are here; arithmetic is in `alu`, memory
//! and helpers in `access`.

use std::collections::HashMap;

use sift_ebpf::{CallTarget, Cond, ImmKind, Insn, MapSpec, MapType, Operand, Width};

use crate::cfg::Cfg;
use crate::error::{VerifyError, VerifyErrorKind};
use crate::scalar::{Rel, Scalar, refine32, refine64};
use crate::state::{Frame, Kind, Reg, State};
use crate::{Options, PENDING_LIMIT, PROCESSED_LIMIT, ProgType, Report};

/// Stored states per instruction at most (more are not stored; pruning only gets rarer).
const STATES_PER_INSN: usize = 64;
/// Stored states in all at most.
const STATES_TOTAL: usize = 100_000;
/// Bytes of stored states at most (more are not stored).
const STORED_BYTES: usize = 256 << 20;
/// Bytes of pending paths' states at most ("too complex" beyond).
const PENDING_BYTES: usize = 512 << 20;
/// The kernel's frame limit (`MAX_CALL_FRAMES`).
pub const MAX_FRAMES: usize = 8;
/// The kernel's `BPF_MAX_VAR_OFF`.
pub const MAX_VAR_OFF: i64 = 1 << 29;

pub(crate) type Result<T> = std::result::Result<T, VerifyErrorKind>;

/// A stored state.
struct Node {
    state: State,
    /// [`fingerprint`] of the state: unfinished states are compared for equality only when it
    /// matches.
    print: u64,
    /// Paths below this state still being explored.
    branches: u32,
    parent: Option<usize>,
}

/// A path being explored.
struct Path {
    state: State,
    pc: usize,
    /// The last stored state on this path.
    parent: Option<usize>,
    jmps_since: u32,
    insns_since: u32,
}

/// What an instruction does to the path.
enum Step {
    /// Go on at this slot.
    Next(usize),
    /// The path ended.
    Done,
}

/// The verifier's working state for one program.
pub(crate) struct Verifier<'a> {
    pub(crate) cfg: Cfg,
    pub(crate) prog: ProgType,
    pub(crate) maps: &'a [MapSpec],
    pub(crate) options: Options,
    id_gen: u32,
    processed: u64,
    nodes: Vec<Node>,
    /// Stored states by slot.
    at: Vec<Vec<usize>>,
    pending: Vec<Path>,
    stored_bytes: usize,
    pending_bytes: usize,
    /// Stack bytes each function uses (by first slot).
    pub(crate) stack_depth: HashMap<usize, u32>,
    /// Calls seen: (caller function, callee function) → the call's slot.
    calls: HashMap<(usize, usize), usize>,
    /// The slot being stepped (accesses record their base there).
    pub(crate) cur_pc: usize,
    /// [`Report::access_bases`], being gathered.
    pub(crate) access_bases: Vec<Option<crate::AccessBase>>,
}

pub(crate) fn init_frame(callsite: usize, subprog: usize, frameno: u8) -> Frame {
    let mut regs = [Reg::NOT_INIT; 11];
    regs[10] = Reg::pointer(Kind::Stack(frameno), 0);
    Frame { regs, stack: Vec::new(), callsite, subprog }
}

impl<'a> Verifier<'a> {
    pub(crate) fn new(cfg: Cfg, prog: ProgType, maps: &'a [MapSpec], options: Options) -> Self {
        let n = cfg.insn_at.len();
        Verifier {
            cfg,
            prog,
            maps,
            options,
            id_gen: 0,
            processed: 0,
            nodes: Vec::new(),
            at: vec![Vec::new(); n],
            pending: Vec::new(),
            stored_bytes: 0,
            pending_bytes: 0,
            stack_depth: HashMap::new(),
            calls: HashMap::new(),
            cur_pc: 0,
            access_bases: vec![None; n],
        }
    }

    pub(crate) fn new_id(&mut self) -> u32 {
        self.id_gen = self.id_gen.wrapping_add(1).max(1);
        self.id_gen
    }

    pub(crate) fn run(mut self) -> std::result::Result<Report, VerifyError> {
        let mut entry = init_frame(usize::MAX, 0, 0);
        entry.regs[1] = Reg::pointer(Kind::Ctx, 0);
        let state = State { frames: vec![entry], refs: Vec::new() };
        self.pending.push(Path { state, pc: 0, parent: None, jmps_since: 0, insns_since: 0 });
        while let Some(mut path) = self.pending.pop() {
            self.pending_bytes = self.pending_bytes.saturating_sub(path.state.approx_bytes());
            loop {
                let pc = path.pc;
                self.processed += 1;
                if self.processed > PROCESSED_LIMIT {
                    return Err(VerifyError {
                        insn: pc,
                        kind: VerifyErrorKind::TooLarge(self.processed),
                    });
                }
                let located = |kind| VerifyError { insn: pc, kind };
                if self.cfg.prune_point[pc] && self.visit(&mut path).map_err(located)? {
                    self.finish(path.parent);
                    break;
                }
                path.insns_since += 1;
                match self.step(&mut path).map_err(located)? {
                    Step::Next(n) => path.pc = n,
                    Step::Done => {
                        self.finish(path.parent);
                        break;
                    }
                }
            }
        }
        self.check_stack_sizes()?;
        let max_states_per_insn = self.at.iter().map(Vec::len).max().unwrap_or(0);
        Ok(Report {
            processed: self.processed,
            max_states_per_insn,
            total_states: self.nodes.len(),
            access_bases: self.access_bases,
        })
    }

    /// At a prune point: `Ok(true)` when a verified state covers the path; otherwise the
    /// path's state may be stored.
    fn visit(&mut self, path: &mut Path) -> Result<bool> {
        let pc = path.pc;
        let mut looping = false;
        let print = fingerprint(&path.state);
        for &n in &self.at[pc] {
            let node = &self.nodes[n];
            if node.branches > 0 {
                if node.print == print && node.state == path.state {
                    return Err(VerifyErrorKind::InfiniteLoop(pc));
                }
                looping = true;
                continue;
            }
            if node.state.subsumes(&path.state) {
                return Ok(true);
            }
        }
        // Inside a loop, store a state only now and then (the kernel's heuristic): each
        // iteration's state differs and would only make the lists long.
        if looping && path.jmps_since < 20 && path.insns_since < 100 {
            return Ok(false);
        }
        let list_len = self.at[pc].len();
        let bytes = path.state.approx_bytes();
        if list_len >= STATES_PER_INSN
            || self.nodes.len() >= STATES_TOTAL
            || self.stored_bytes + bytes > STORED_BYTES
        {
            return Ok(false);
        }
        self.stored_bytes += bytes;
        let id = self.nodes.len();
        self.nodes.push(Node {
            state: path.state.clone(),
            print,
            branches: 1,
            parent: path.parent,
        });
        self.at[pc].push(id);
        path.parent = Some(id);
        path.jmps_since = 0;
        path.insns_since = 0;
        Ok(false)
    }

    /// A path below `parent` ended: the states above it have one running path fewer.
    fn finish(&mut self, mut parent: Option<usize>) {
        while let Some(n) = parent {
            let node = &mut self.nodes[n];
            node.branches = node.branches.saturating_sub(1);
            if node.branches > 0 {
                break;
            }
            parent = node.parent;
        }
    }

    /// Queues a second path at `pc` with `state`.
    fn fork(&mut self, path: &Path, state: State, pc: usize) -> Result<()> {
        let bytes = state.approx_bytes();
        if self.pending.len() >= PENDING_LIMIT || self.pending_bytes + bytes > PENDING_BYTES {
            return Err(VerifyErrorKind::TooComplex(self.pending.len()));
        }
        self.pending_bytes += bytes;
        if let Some(p) = path.parent {
            self.nodes[p].branches += 1;
        }
        self.pending.push(Path { state, pc, parent: path.parent, jmps_since: 0, insns_since: 0 });
        Ok(())
    }

    /// The register `r`, which must have been written.
    pub(crate) fn read(st: &State, r: u8) -> Result<Reg> {
        let reg = st.cur().regs[usize::from(r)];
        if reg.kind == Kind::NotInit {
            return Err(VerifyErrorKind::NotInit(r));
        }
        Ok(reg)
    }

    /// Writes `r` (never `r10`).
    pub(crate) fn write(st: &mut State, r: u8, reg: Reg) -> Result<()> {
        if r == 10 {
            return Err(VerifyErrorKind::FramePointer);
        }
        st.cur_mut().regs[usize::from(r)] = reg;
        Ok(())
    }

    fn step(&mut self, path: &mut Path) -> Result<Step> {
        let pc = path.pc;
        let Some(insn) = self.cfg.insn_at[pc] else {
            return Err(VerifyErrorKind::IntoLdImm64(pc.saturating_sub(1)));
        };
        let next = pc + insn.slots();
        self.cur_pc = pc;
        let st = &mut path.state;
        match insn {
            Insn::Alu { width, op, dst, src } => self.alu(st, width, op, dst, src)?,
            Insn::Neg { width, dst } => self.neg(st, width, dst)?,
            Insn::MovSx { width, bits, dst, src } => self.movsx(st, width, bits, dst, src)?,
            Insn::Endian { order, bits, dst } => self.endian(st, order, bits, dst)?,
            Insn::Load { size, dst, src, off } => self.load(st, size, dst, src, off, false)?,
            Insn::LoadSx { size, dst, src, off } => self.load(st, size, dst, src, off, true)?,
            Insn::Store { size, dst, off, src } => self.store(st, size, dst, off, src)?,
            Insn::Atomic { width, op, fetch, dst, src, off } => {
                self.atomic(st, width, op, fetch, dst, src, off)?
            }
            Insn::LdImm64 { dst, kind, imm } => self.ld_imm64(st, dst, kind, imm)?,
            Insn::LdAbs { size, .. } => self.ld_abs(st, size, None)?,
            Insn::LdInd { size, src, .. } => self.ld_abs(st, size, Some(src))?,
            Insn::Ja { off, .. } => {
                path.jmps_since += 1;
                return Ok(Step::Next((next as i64 + i64::from(off)) as usize));
            }
            Insn::Jmp { width, cond, dst, src, off } => {
                path.jmps_since += 1;
                let target = (next as i64 + i64::from(off)) as usize;
                let (fall, taken) = self.cond_jump(&path.state, width, cond, dst, src)?;
                return Ok(match (fall, taken) {
                    (Some(f), Some(t)) => {
                        self.fork(path, t, target)?;
                        path.state = f;
                        Step::Next(next)
                    }
                    (Some(f), None) => {
                        path.state = f;
                        Step::Next(next)
                    }
                    (None, Some(t)) => {
                        path.state = t;
                        Step::Next(target)
                    }
                    (None, None) => Step::Done,
                });
            }
            Insn::Call(CallTarget::Helper(id)) => self.helper_call(st, pc, id)?,
            Insn::Call(CallTarget::Local(off)) => {
                let target = (next as i64 + i64::from(off)) as usize;
                return self.local_call(st, pc, target).map(Step::Next);
            }
            Insn::Call(CallTarget::Kfunc { .. }) => {
                return Err(VerifyErrorKind::Unsupported("calling kernel functions"));
            }
            Insn::Callx { .. } => return Err(VerifyErrorKind::Unsupported("callx")),
            Insn::Exit => return self.exit(st),
        }
        Ok(Step::Next(next))
    }

    fn local_call(&mut self, st: &mut State, pc: usize, target: usize) -> Result<usize> {
        if st.frames.len() >= MAX_FRAMES {
            return Err(VerifyErrorKind::CallDepth(st.frames.len() + 1));
        }
        let caller = st.cur().subprog;
        self.calls.entry((caller, target)).or_insert(pc);
        let mut frame = init_frame(pc, target, st.frames.len() as u8);
        frame.regs[1..=5].copy_from_slice(&st.cur().regs[1..=5]);
        st.frames.push(frame);
        Ok(target)
    }

    fn exit(&mut self, st: &mut State) -> Result<Step> {
        let r0 = Self::read(st, 0)?;
        if st.frames.len() == 1 {
            if r0.kind.is_pointer() && !self.options.privileged {
                return Err(VerifyErrorKind::LeakReturn(0));
            }
            if let Some(r) = st.refs.first() {
                return Err(VerifyErrorKind::Unreleased { id: r.id, insn: r.insn });
            }
            return Ok(Step::Done);
        }
        let depth = st.frames.len() - 1;
        if r0.kind == Kind::Stack(depth as u8) {
            return Err(VerifyErrorKind::ReturnStackPtr);
        }
        let Some(callee) = st.frames.pop() else { return Ok(Step::Done) };
        let caller = st.cur_mut();
        caller.regs[0] = r0;
        for r in &mut caller.regs[1..=5] {
            *r = Reg::NOT_INIT;
        }
        Ok(Step::Next(callee.callsite + 1))
    }

    fn ld_imm64(&mut self, st: &mut State, dst: u8, kind: ImmKind, imm: u64) -> Result<()> {
        let reg = match kind {
            ImmKind::Imm => Reg::scalar(Scalar::konst(imm)),
            ImmKind::MapFd | ImmKind::MapIdx => {
                let m = imm as u32;
                if m as usize >= self.maps.len() || imm >> 32 != 0 {
                    return Err(VerifyErrorKind::BadMap(m));
                }
                Reg::pointer(Kind::MapPtr(m), 0)
            }
            ImmKind::MapValue | ImmKind::MapIdxValue => {
                let (m, off) = (imm as u32, imm >> 32);
                let Some(map) = self.maps.get(m as usize) else {
                    return Err(VerifyErrorKind::BadMap(m));
                };
                if map.map_type != MapType::Array || map.max_entries != 1 {
                    return Err(VerifyErrorKind::DirectValue(map.map_type as u32));
                }
                if off >= u64::from(map.value_size) {
                    return Err(VerifyErrorKind::MapValuePointer {
                        value_size: map.value_size,
                        off,
                    });
                }
                Reg::pointer(Kind::MapValue(m), off as i32)
            }
            ImmKind::BtfId => return Err(VerifyErrorKind::Unsupported("lddw of a BTF id")),
            ImmKind::Func => {
                return Err(VerifyErrorKind::Unsupported("lddw of a function (callbacks)"));
            }
        };
        Self::write(st, dst, reg)
    }

    fn ld_abs(&mut self, st: &mut State, size: sift_ebpf::Size, src: Option<u8>) -> Result<()> {
        if self.prog == ProgType::Xdp {
            return Err(VerifyErrorKind::LdAbsNotAllowed);
        }
        let r6 = st.cur().regs[6];
        if r6.kind != Kind::Ctx || r6.off != 0 {
            return Err(VerifyErrorKind::LdAbsCtx);
        }
        if let Some(s) = src {
            let r = Self::read(st, s)?;
            if r.kind != Kind::Scalar && !self.options.privileged {
                return Err(VerifyErrorKind::LeakInto { reg: s, place: "packet load" });
            }
        }
        let frame = st.cur_mut();
        for r in &mut frame.regs[1..=5] {
            *r = Reg::NOT_INIT;
        }
        let bits = size.bytes() as u32 * 8;
        frame.regs[0] = Reg::scalar(Scalar::upto(u64::MAX >> (64 - bits)));
        Ok(())
    }

    /// The states after a conditional jump: (fall through, taken), `None` for a branch that
    /// cannot be taken.
    fn cond_jump(
        &mut self,
        st: &State,
        width: Width,
        cond: Cond,
        dst: u8,
        src: Operand,
    ) -> Result<(Option<State>, Option<State>)> {
        let a = Self::read(st, dst)?;
        let (b, src_reg) = match src {
            Operand::Reg(r) => (Self::read(st, r)?, Some(r)),
            Operand::Imm(imm) => (Reg::scalar(Scalar::konst(imm as i64 as u64)), None),
        };
        let rel = match cond {
            Cond::Eq => Rel::Eq,
            Cond::Ne => Rel::Ne,
            Cond::Gt => Rel::Gt,
            Cond::Ge => Rel::Ge,
            Cond::Lt => Rel::Lt,
            Cond::Le => Rel::Le,
            Cond::Sgt => Rel::Sgt,
            Cond::Sge => Rel::Sge,
            Cond::Slt => Rel::Slt,
            Cond::Sle => Rel::Sle,
            Cond::Set => Rel::Set,
        };
        // Null checks.
        if width == Width::W64
            && matches!(rel, Rel::Eq | Rel::Ne)
            && matches!(a.kind, Kind::MapValueOrNull(_) | Kind::RingbufMemOrNull(_))
            && b.kind == Kind::Scalar
            && b.var.as_const() == Some(0)
        {
            let (mut null, mut nonnull) = (st.clone(), st.clone());
            mark_null(&mut null, a.id, true);
            mark_null(&mut nonnull, a.id, false);
            return Ok(if rel == Rel::Eq {
                (Some(nonnull), Some(null))
            } else {
                (Some(null), Some(nonnull))
            });
        }
        // Packet pointers against the end (or metadata against the data).
        if width == Width::W64
            && let Some(src_r) = src_reg
        {
            let low_high = |x: Kind, y: Kind| {
                matches!((x, y), (Kind::Packet, Kind::PacketEnd) | (Kind::PacketMeta, Kind::Packet))
            };
            let ordered = matches!(rel, Rel::Gt | Rel::Ge | Rel::Lt | Rel::Le);
            if ordered && (low_high(a.kind, b.kind) || low_high(b.kind, a.kind)) {
                // Normalise to `ptr REL end`.
                let (ptr, rel) = if low_high(a.kind, b.kind) { (a, rel) } else { (b, rel.swap()) };
                let _ = src_r;
                // (holds-in-taken, right-open): the branch where `ptr < end` or `ptr <= end`.
                let (in_taken, open) = match rel {
                    Rel::Gt => (false, false),
                    Rel::Ge => (false, true),
                    Rel::Lt => (true, true),
                    _ => (true, false),
                };
                let (mut fall, mut taken) = (st.clone(), st.clone());
                let good = if in_taken { &mut taken } else { &mut fall };
                mark_pkt_range(good, &ptr, open);
                return Ok((Some(fall), Some(taken)));
            }
        }
        // A map value or memory pointer (never null) against 0: the result is known (the
        // kernel's `reg_not_null`; it does not count packet, stack or context pointers).
        if width == Width::W64 && matches!(rel, Rel::Eq | Rel::Ne) {
            let never_null = |x: &Reg| matches!(x.kind, Kind::MapValue(_) | Kind::RingbufMem(_));
            let zero = |x: &Reg| x.kind == Kind::Scalar && x.var.as_const() == Some(0);
            if (never_null(&a) && zero(&b)) || (zero(&a) && never_null(&b)) {
                let same = Some(st.clone());
                return Ok(if rel == Rel::Eq { (same, None) } else { (None, same) });
            }
        }
        if a.kind.is_pointer() || b.kind.is_pointer() {
            if !self.options.privileged {
                let r = if a.kind.is_pointer() { dst } else { src_reg.unwrap_or(dst) };
                return Err(VerifyErrorKind::PtrCompare(r));
            }
            return Ok((Some(st.clone()), Some(st.clone())));
        }
        let branch = |rel: Rel| -> Option<State> {
            let (mut x, mut y) = (a.var, b.var);
            let ok = match width {
                Width::W64 => refine64(&mut x, &mut y, rel),
                Width::W32 => refine32(&mut x, &mut y, rel),
            };
            if !ok {
                return None;
            }
            let mut s = st.clone();
            set_scalar(&mut s, dst, a.id, x);
            if let Some(r) = src_reg {
                set_scalar(&mut s, r, b.id, y);
            }
            Some(s)
        };
        Ok((branch(rel.negate()), branch(rel)))
    }

    /// Checks that no call chain's frames use more than 512 bytes of stack (each function's
    /// depth rounded up to 16, as for JITed programs).
    fn check_stack_sizes(&self) -> std::result::Result<(), VerifyError> {
        let depth = |f: usize| {
            let d = self.stack_depth.get(&f).copied().unwrap_or(0) as usize;
            d.div_ceil(16) * 16
        };
        // (function, frames so far, bytes so far, the last call's slot)
        let mut work = vec![(0usize, 1usize, depth(0), 0usize)];
        while let Some((f, frames, bytes, at)) = work.pop() {
            if bytes > crate::state::STACK_SIZE {
                return Err(VerifyError {
                    insn: at,
                    kind: VerifyErrorKind::StackSize { calls: frames, size: bytes },
                });
            }
            if frames >= MAX_FRAMES {
                continue;
            }
            for (&(caller, callee), &pc) in &self.calls {
                if caller == f {
                    work.push((callee, frames + 1, bytes + depth(callee), pc));
                }
            }
        }
        Ok(())
    }
}

/// A cheap digest of the innermost frame's registers (equal states have equal digests).
fn fingerprint(st: &State) -> u64 {
    let mut h = st.frames.len() as u64;
    for r in &st.cur().regs {
        for v in
            [r.off as u64, r.var.var.value, r.var.var.mask, r.var.umin, r.var.umax, r.range.into()]
        {
            h = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        }
    }
    h
}

/// After a null check: every register with `id` becomes null (scalar 0) or the pointer.
fn mark_null(st: &mut State, id: u32, null: bool) {
    let mut released = None;
    st.for_each_reg(|r| {
        if r.id != id || id == 0 {
            return;
        }
        match r.kind {
            Kind::MapValueOrNull(m) if !null => {
                r.kind = Kind::MapValue(m);
                r.id = 0;
            }
            Kind::RingbufMemOrNull(n) if !null => r.kind = Kind::RingbufMem(n),
            Kind::MapValueOrNull(_) | Kind::RingbufMemOrNull(_) => {
                if r.ref_id != 0 {
                    released = Some(r.ref_id);
                }
                *r = Reg::scalar(Scalar::konst(0));
            }
            _ => {}
        }
    });
    if let Some(rid) = released {
        st.refs.retain(|x| x.id != rid);
    }
}

/// After `ptr` was proven before the end: packet pointers with its id may read up to its
/// offset (plus one when the comparison was strict).
fn mark_pkt_range(st: &mut State, ptr: &Reg, open: bool) {
    if ptr.off < 0 || (ptr.off == 0 && open) {
        return;
    }
    if ptr.var.umax > 0xffff || ptr.var.umax + ptr.off as u64 > 0xffff {
        return;
    }
    let range = ptr.off as u32 + u32::from(open);
    let (kind, id) = (ptr.kind, ptr.id);
    st.for_each_reg(|r| {
        if r.kind == kind && r.id == id {
            r.range = r.range.max(range);
        }
    });
}

/// Writes a refined scalar into `r` and the registers linked to it.
fn set_scalar(st: &mut State, r: u8, id: u32, var: Scalar) {
    let n = st.frames.len() - 1;
    st.frames[n].regs[usize::from(r)].var = var;
    if id != 0 {
        st.for_each_reg(|x| {
            if x.kind == Kind::Scalar && x.id == id {
                x.var = var;
            }
        });
    }
}
