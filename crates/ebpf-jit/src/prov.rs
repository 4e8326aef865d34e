//! Which region each memory access most likely reaches: a cheap forward provenance guess
//! that picks the one region the inline check compares with. A wrong guess costs only speed
//! (the access goes to the slow path, which finds the right region or the fault), never
//! correctness, so the analysis is a single pass in slot order with joins at the targets of
//! forward jumps and no iteration for loops.

use sift_ebpf::EbpfInsn;

/// Where a register's value points, as far as the guess goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prov {
    /// Unknown (a scalar, or a pointer the guess lost).
    Unknown,
    /// The stack (`r10` and its copies).
    Stack,
    /// The context or input memory (`r1` on entry).
    Mem,
    /// The packet (a 32-bit field loaded from the context).
    Packet,
    /// A map value (`map_lookup_elem`'s result, `lddw map_value`).
    Map,
}

type State = [Prov; 11];

fn join(a: &State, b: &State) -> State {
    let mut s = *a;
    for (x, y) in s.iter_mut().zip(b) {
        if x != y {
            *x = Prov::Unknown;
        }
    }
    s
}

/// The guess for each slot that accesses memory (`None` elsewhere): the region of the
/// access's base register. `functions` are the slots where functions start.
pub(crate) fn analyze(slots: &[EbpfInsn], functions: &[usize]) -> Vec<Option<Prov>> {
    let n = slots.len();
    let mut out = vec![None; n];
    // States carried by forward jumps, by target (sparse: most slots are no target).
    let mut incoming: std::collections::HashMap<usize, State> = std::collections::HashMap::new();
    let mut cur: Option<State> = None;
    let mut pc = 0;
    while pc < n {
        let i = slots[pc];
        if functions.binary_search(&pc).is_ok() {
            let mut s = [Prov::Unknown; 11];
            s[10] = Prov::Stack;
            if pc == 0 {
                s[1] = Prov::Mem;
            }
            cur = Some(s);
        }
        cur = match (cur, incoming.remove(&pc)) {
            (Some(a), Some(b)) => Some(join(&a, &b)),
            (a, b) => a.or(b),
        };
        let mut s = cur.unwrap_or_else(|| {
            let mut s = [Prov::Unknown; 11];
            s[10] = Prov::Stack;
            s
        });
        let d = usize::from(i.dst & 0xf).min(10);
        let r = usize::from(i.src & 0xf).min(10);
        let class = i.code & 7;
        let mut next = pc + 1;
        let mut falls = true;
        match i.code {
            // Loads: the base is `src`.
            0x61 | 0x69 | 0x71 | 0x79 | 0x81 | 0x89 | 0x91 => {
                out[pc] = Some(s[r]);
                s[d] =
                    if i.code == 0x61 && s[r] == Prov::Mem { Prov::Packet } else { Prov::Unknown };
            }
            // Stores and atomics: the base is `dst`.
            0x62 | 0x6a | 0x72 | 0x7a | 0x63 | 0x6b | 0x73 | 0x7b => out[pc] = Some(s[d]),
            0xc3 | 0xdb => {
                out[pc] = Some(s[d]);
                if i.imm & 1 != 0 || i.imm == 0xe1 {
                    s[r] = Prov::Unknown;
                }
                if i.imm == 0xf1 {
                    s[0] = Prov::Unknown;
                }
            }
            0xbf if i.off == 0 => s[d] = s[r],
            0x07 | 0x17 => {}
            0x0f if s[d] == Prov::Unknown => s[d] = s[r],
            0x0f | 0x1f => {}
            0x18 => {
                s[d] = if matches!(i.src, 2 | 6) { Prov::Map } else { Prov::Unknown };
                next = pc + 2;
            }
            0x85 if i.src == 1 => {
                for x in &mut s[..6] {
                    *x = Prov::Unknown;
                }
            }
            0x85 | 0x8d => {
                // This JIT keeps r1-r5 across helper calls (as the interpreter does).
                s[0] = if i.code == 0x85 && i.imm == 1 { Prov::Map } else { Prov::Unknown };
            }
            0x95 => falls = false,
            0x20 | 0x28 | 0x30 | 0x40 | 0x48 | 0x50 => s[0] = Prov::Unknown,
            _ if class == 5 || class == 6 => {
                let op = i.code & 0xf0;
                let off = if i.code == 0x06 { i64::from(i.imm) } else { i64::from(i.off) };
                let t = pc as i64 + 1 + off;
                if op == 0x00 {
                    falls = false;
                }
                if t > pc as i64 && (t as usize) < n {
                    let t = t as usize;
                    let joined = match incoming.get(&t) {
                        Some(x) => join(x, &s),
                        None => s,
                    };
                    incoming.insert(t, joined);
                }
            }
            _ if class == 4 || class == 7 => s[d] = Prov::Unknown,
            _ => {}
        }
        cur = if falls { Some(s) } else { None };
        pc = next;
    }
    out
}
