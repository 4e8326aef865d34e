//! Helper functions: the table an embedder fills (number → function over the VM's memory and
//! `r1`–`r5`), and the test helpers ubpf and the conformance suite's plugins provide.

use std::collections::BTreeMap;

use crate::memory::Memory;

/// What a helper asks of the VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperOutcome {
    /// Continue with `r0` set to this value.
    Return(u64),
    /// End the program now with this `r0` (ubpf's "unwind").
    Exit(u64),
    /// Continue in program `n` (`bpf_tail_call` found it in a prog array): the VM runs it in
    /// place of the current one, or falls through when it has no such program or the run
    /// has made [`MAX_TAIL_CALL_CNT`](crate::interp::MAX_TAIL_CALL_CNT) tail calls.
    TailCall(u32),
}

/// The arguments `r1`–`r5`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Args(pub [u64; 5]);

impl Args {
    /// `r1`.
    pub fn r1(&self) -> u64 {
        self.0[0]
    }
    /// `r2`.
    pub fn r2(&self) -> u64 {
        self.0[1]
    }
    /// `r3`.
    pub fn r3(&self) -> u64 {
        self.0[2]
    }
    /// `r4`.
    pub fn r4(&self) -> u64 {
        self.0[3]
    }
    /// `r5`.
    pub fn r5(&self) -> u64 {
        self.0[4]
    }
}

/// A helper: memory access goes through the run's checked [`Memory`]; an `Err` ends the run
/// with a located fault carrying the message.
pub type HelperFn = Box<dyn FnMut(&mut Memory<'_>, Args) -> Result<HelperOutcome, String>>;

/// The helpers a VM offers, by number.
#[derive(Default)]
pub struct Helpers {
    table: BTreeMap<u32, (&'static str, HelperFn)>,
}

impl std::fmt::Debug for Helpers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.table.iter().map(|(k, (n, _))| (k, n))).finish()
    }
}

impl Helpers {
    /// No helpers.
    pub fn new() -> Helpers {
        Helpers::default()
    }

    /// Adds (or replaces) helper `id`.
    pub fn register(
        &mut self,
        id: u32,
        name: &'static str,
        f: impl FnMut(&mut Memory<'_>, Args) -> Result<HelperOutcome, String> + 'static,
    ) -> &mut Helpers {
        self.table.insert(id, (name, Box::new(f)));
        self
    }

    /// Whether helper `id` exists.
    pub fn has(&self, id: u32) -> bool {
        self.table.contains_key(&id)
    }

    /// The name helper `id` was registered with.
    pub fn name(&self, id: u32) -> Option<&'static str> {
        self.table.get(&id).map(|(n, _)| *n)
    }

    /// Calls helper `id` (`None` when there is none), as the interpreter does.
    pub fn call(
        &mut self,
        id: u32,
        mem: &mut Memory<'_>,
        args: Args,
    ) -> Option<Result<HelperOutcome, String>> {
        self.get_mut(id).map(|f| f(mem, args))
    }

    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut HelperFn> {
        self.table.get_mut(&id).map(|(_, f)| f)
    }
}

/// The helpers of ubpf's test suite and its conformance plugin, by their numbers there:
/// 0 `gather_bytes` (`r1`…`r5` low bytes packed into 40 bits), 1 `memfrob` (XOR 42 over
/// `r2` bytes at `r1`), 2 `no_op`, 3 `sqrti` (integer square root), 4 `strcmp_ext` (C
/// strings at `r1` and `r2`), 5 `unwind` (returns `r1`; 0 ends the program).
pub fn test_helpers() -> Helpers {
    let mut h = Helpers::new();
    h.register(0, "gather_bytes", |_, a| {
        let v = a.0.iter().fold(0u64, |acc, &r| (acc << 8) | (r & 0xff));
        Ok(HelperOutcome::Return(v))
    });
    h.register(1, "memfrob", |m, a| {
        let bytes = m.slice_mut(a.r1(), a.r2() as usize).map_err(|e| e.to_string())?;
        bytes.iter_mut().for_each(|b| *b ^= 42);
        Ok(HelperOutcome::Return(0))
    });
    h.register(2, "no_op", |_, _| Ok(HelperOutcome::Return(0)));
    h.register(3, "sqrti", |_, a| Ok(HelperOutcome::Return(a.r1().isqrt())));
    h.register(4, "strcmp_ext", |m, a| {
        let cstr = |m: &Memory<'_>, mut p: u64| -> Result<Vec<u8>, String> {
            let mut s = Vec::new();
            loop {
                let b = m.load(p, 1).map_err(|e| e.to_string())? as u8;
                if b == 0 || s.len() > 1 << 16 {
                    return Ok(s);
                }
                s.push(b);
                p = p.wrapping_add(1);
            }
        };
        let (x, y) = (cstr(m, a.r1())?, cstr(m, a.r2())?);
        Ok(HelperOutcome::Return(match x.cmp(&y) {
            std::cmp::Ordering::Less => -1i64 as u64,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }))
    });
    h.register(5, "unwind", |_, a| {
        Ok(if a.r1() == 0 { HelperOutcome::Exit(0) } else { HelperOutcome::Return(a.r1()) })
    });
    h
}
