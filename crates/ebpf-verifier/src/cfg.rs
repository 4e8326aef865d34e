//! The control-flow checks before any path is explored (the kernel's `check_subprogs` and
//! `check_cfg`): functions found from the `call local` targets, every jump inside its own
//! function and never into a `lddw`'s second half, no function falling off its end, every
//! instruction reachable, and the prune points (jump targets and the instructions after
//! conditional jumps and calls) where the exploration stores states.

use sift_ebpf::{CallTarget, Insn};

use crate::error::{VerifyError, VerifyErrorKind};

/// The program's shape.
pub struct Cfg {
    /// The instruction starting at each slot (`None` for a `lddw`'s second half).
    pub insn_at: Vec<Option<Insn>>,
    /// The first slot of each function, sorted (0 first).
    pub subprogs: Vec<usize>,
    /// Whether states are stored at each slot.
    pub prune_point: Vec<bool>,
}

fn err(insn: usize, kind: VerifyErrorKind) -> VerifyError {
    VerifyError { insn, kind }
}

impl Cfg {
    /// The function containing slot `i`.
    pub fn subprog_of(&self, i: usize) -> usize {
        let k = self.subprogs.partition_point(|&s| s <= i);
        self.subprogs[k.saturating_sub(1)]
    }

    /// The end (exclusive) of the function starting at `start`.
    pub fn subprog_end(&self, start: usize) -> usize {
        let k = self.subprogs.partition_point(|&s| s <= start);
        self.subprogs.get(k).copied().unwrap_or(self.insn_at.len())
    }

    /// Builds and checks the shape of `located` (instructions with their slot indices) of
    /// `n` slots.
    pub fn build(located: &[(usize, Insn)], n: usize) -> Result<Cfg, VerifyError> {
        let mut insn_at = vec![None; n];
        for &(i, insn) in located {
            insn_at[i] = Some(insn);
        }
        let mut subprogs = vec![0usize];
        for &(i, insn) in located {
            match insn {
                Insn::Call(CallTarget::Local(off)) => {
                    let t = i as i64 + 1 + i64::from(off);
                    if t < 0 || t >= n as i64 {
                        return Err(err(i, VerifyErrorKind::JumpOutOfRange { from: i, to: t }));
                    }
                    if insn_at[t as usize].is_none() {
                        return Err(err(i, VerifyErrorKind::IntoLdImm64(t as usize - 1)));
                    }
                    subprogs.push(t as usize);
                }
                Insn::Call(CallTarget::Kfunc { .. }) => {
                    return Err(err(i, VerifyErrorKind::Unsupported("calling kernel functions")));
                }
                Insn::Callx { .. } => {
                    return Err(err(i, VerifyErrorKind::Unsupported("callx")));
                }
                _ => {}
            }
        }
        subprogs.sort_unstable();
        subprogs.dedup();
        let mut cfg = Cfg { insn_at, subprogs, prune_point: vec![false; n] };
        // Successors, checked to stay in their function.
        let mut succ: Vec<[Option<usize>; 2]> = vec![[None, None]; n];
        for &(i, insn) in located {
            let sub = cfg.subprog_of(i);
            let end = cfg.subprog_end(sub);
            let check = |t: i64| -> Result<usize, VerifyError> {
                if t < sub as i64 || t >= end as i64 {
                    return Err(err(i, VerifyErrorKind::JumpOutOfRange { from: i, to: t }));
                }
                if cfg.insn_at[t as usize].is_none() {
                    return Err(err(i, VerifyErrorKind::IntoLdImm64(t as usize - 1)));
                }
                Ok(t as usize)
            };
            let next = i as i64 + insn.slots() as i64;
            succ[i] = match insn {
                Insn::Exit => [None, None],
                Insn::Ja { off, .. } => [Some(check(next + i64::from(off))?), None],
                Insn::Jmp { off, .. } => {
                    let t = check(next + i64::from(off))?;
                    let f = check(next)?;
                    [Some(f), Some(t)]
                }
                _ => {
                    if next >= end as i64 {
                        return Err(err(i, VerifyErrorKind::FallOff));
                    }
                    [Some(check(next)?), None]
                }
            };
        }
        // Reachability from the entry, following calls into their functions.
        let mut seen = vec![false; n];
        let mut work = vec![0usize];
        seen[0] = true;
        while let Some(i) = work.pop() {
            let mut next: Vec<usize> = succ[i].iter().flatten().copied().collect();
            if let Some(Insn::Call(CallTarget::Local(off))) = cfg.insn_at[i] {
                next.push((i as i64 + 1 + i64::from(off)) as usize);
            }
            for t in next {
                if !seen[t] {
                    seen[t] = true;
                    work.push(t);
                }
            }
        }
        for &(i, insn) in located {
            if !seen[i] {
                return Err(err(i, VerifyErrorKind::Unreachable(i)));
            }
            match insn {
                Insn::Jmp { .. } | Insn::Ja { .. } => {
                    for t in succ[i].iter().flatten() {
                        cfg.prune_point[*t] = true;
                    }
                }
                Insn::Call(_) => {
                    if let Some(t) = succ[i][0] {
                        cfg.prune_point[t] = true;
                    }
                }
                _ => {}
            }
        }
        Ok(cfg)
    }
}
