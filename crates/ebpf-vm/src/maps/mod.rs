//! Maps: the state eBPF programs keep between runs, with the kernel's semantics — what it
//! refuses at creation (and with which errno), the update flags (`BPF_ANY`, `BPF_NOEXIST`,
//! `BPF_EXIST`) and the negative errno each operation returns.
//!
//! Types: array, per-CPU array, hash, per-CPU hash, LRU hash (and its per-CPU form), LPM
//! trie ([`lpm`]), prog array (values are program indexes the embedder registers with
//! [`Vm::add_program`](crate::Vm::add_program)), ring buffer ([`ringbuf`]), queue and stack,
//! and device maps (`DEVMAP`, `DEVMAP_HASH`: interface indexes for `redirect_map`). Other
//! types are refused by [`Map::from_spec`] with [`MapError::Unsupported`].
//!
//! A map's values live in one buffer of `max_entries` slots, so that the pointer
//! `map_lookup_elem` returns stays valid (and writable in place) as the kernel's does; a hash
//! map keeps its keys beside, each naming a slot. Per-CPU maps hold `num_cpus` values per slot
//! (the embedder's virtual CPUs, 1 unless [`Map::from_spec_cpus`] says otherwise); a program
//! sees the value of the run's CPU ([`VmEnv::cpu`](crate::VmEnv)).
//!
//! The LRU hash evicts the least recently used element (updated or looked up by a program)
//! when a new key finds the map full. The kernel's LRU is approximate (per-CPU free lists,
//! an active and an inactive list): it may evict another element, or evict before the map is
//! full; tests must not depend on which element a full kernel LRU evicts.

pub mod lpm;
pub mod ringbuf;

pub use crate::kernel::register_map_helpers;

use std::collections::{BTreeMap, HashMap, VecDeque};

use sift_ebpf::{MapSpec, MapType};
use thiserror::Error;

/// Where map `i`'s values start: `MAP_BASE + (i << 32)`.
pub const MAP_BASE: u64 = 0x1_0000_0000;
/// What `lddw map_fd(i)` loads: a handle helpers recognise, not an address.
pub const MAP_HANDLE_BASE: u64 = 0xf000_0000_0000;

/// `BPF_ANY`: create or replace.
pub const BPF_ANY: u64 = 0;
/// `BPF_NOEXIST`: create only.
pub const BPF_NOEXIST: u64 = 1;
/// `BPF_EXIST`: replace only (queues and stacks: overwrite the oldest when full).
pub const BPF_EXIST: u64 = 2;
/// `BPF_F_NO_PREALLOC` (map flag): required by the LPM trie, refused by LRU hashes.
pub const BPF_F_NO_PREALLOC: u32 = 1;
/// The kernel's page size, the ring buffer's granule.
pub const PAGE_SIZE: u32 = 4096;
/// `MAX_BPF_STACK`: the largest hash key.
pub const MAX_KEY_SIZE: u32 = 512;
/// `PCPU_MIN_UNIT_SIZE`: the largest per-CPU value.
pub const MAX_PERCPU_VALUE_SIZE: u32 = 32768;
/// The most bytes one map may hold in this VM (values and mirrors).
pub const MAX_MAP_BYTES: u64 = 1 << 28;

/// The kernel's error numbers map operations return (negated).
pub mod errno {
    /// No such element.
    pub const ENOENT: i64 = 2;
    /// Try again (ring buffer full).
    pub const EAGAIN: i64 = 11;
    /// Out of range, or the map is full.
    pub const E2BIG: i64 = 7;
    /// Bad address (packet helpers out of the packet).
    pub const EFAULT: i64 = 14;
    /// The element exists.
    pub const EEXIST: i64 = 17;
    /// Invalid argument.
    pub const EINVAL: i64 = 22;
    /// No space (LPM trie full).
    pub const ENOSPC: i64 = 28;
    /// Permission denied.
    pub const EACCES: i64 = 13;
    /// The kernel-internal `ENOTSUPP` (LRU maps without preallocation).
    pub const ENOTSUPP: i64 = 524;
}
use errno::*;

// Map flags the kernel accepts per type (`*_CREATE_FLAG_MASK`).
const F_NUMA_NODE: u32 = 4;
const F_ACCESS_MASK: u32 = 8 | 16 | 128 | 256;
const F_MMAPABLE: u32 = 1024;
const F_PRESERVE_ELEMS: u32 = 2048;
const F_INNER_MAP: u32 = 4096;
const F_NO_COMMON_LRU: u32 = 2;
const F_ZERO_SEED: u32 = 64;
const F_PROG_ACCESS: u32 = 128 | 256;
const ARRAY_FLAGS: u32 = F_NUMA_NODE | F_MMAPABLE | F_ACCESS_MASK | F_PRESERVE_ELEMS | F_INNER_MAP;
const HASH_FLAGS: u32 =
    BPF_F_NO_PREALLOC | F_NO_COMMON_LRU | F_NUMA_NODE | F_ACCESS_MASK | F_ZERO_SEED;

/// The old name of a map's type (it is the kernel's [`MapType`]).
pub type MapKind = MapType;

/// A map's shape without name or flags (the first API; [`MapSpec`] is the full one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapDef {
    /// The type.
    pub kind: MapKind,
    /// Key bytes (4 for arrays).
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Elements at most.
    pub max_entries: u32,
}

/// A map the VM cannot make.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MapError {
    /// A type this VM does not have.
    #[error("map `{name}`: type {map_type} is not supported by sift's VM")]
    Unsupported {
        /// The map's name.
        name: String,
        /// Its type.
        map_type: MapType,
    },
    /// A definition the kernel refuses.
    #[error("map `{name}` ({map_type}): {reason} (the kernel refuses it: errno {errno})")]
    Invalid {
        /// The map's name.
        name: String,
        /// Its type.
        map_type: MapType,
        /// What is wrong.
        reason: String,
        /// The kernel's error number for it.
        errno: i64,
    },
}

/// The first API's name for [`MapError`].
pub type MapDefError = MapError;

/// How a map keeps its elements.
#[derive(Clone, Debug)]
enum Store {
    /// Every slot exists (zeroed at creation).
    Array,
    /// Slots that may be empty (prog arrays, device maps).
    Sparse(Vec<bool>),
    /// Keys naming slots; `lru` when it evicts.
    Hash { keys: HashMap<Vec<u8>, u32>, free: Slots, lru: Option<Lru> },
    /// Prefixes naming slots.
    Lpm { trie: lpm::Trie, free: Slots },
    /// Queue (`lifo` false) or stack.
    Queue { items: VecDeque<Vec<u8>>, lifo: bool },
    /// Ring buffer records.
    Ring(ringbuf::Ring),
}

/// Free value slots: those given back, then those never used (allocated lazily, so that a
/// large map costs nothing until it fills).
#[derive(Clone, Debug, Default)]
struct Slots {
    free: Vec<u32>,
    fresh: u32,
    max: u32,
}

impl Slots {
    fn new(max: u32) -> Slots {
        Slots { free: Vec::new(), fresh: 0, max }
    }

    fn pop(&mut self) -> Option<u32> {
        self.free.pop().or_else(|| {
            (self.fresh < self.max).then(|| {
                self.fresh += 1;
                self.fresh - 1
            })
        })
    }

    fn push(&mut self, slot: u32) {
        self.free.push(slot);
    }
}

/// Recency: each slot's last use, and the keys by last use.
#[derive(Clone, Debug, Default)]
struct Lru {
    tick: u64,
    last: HashMap<u32, u64>,
    order: BTreeMap<u64, Vec<u8>>,
}

impl Lru {
    fn touch(&mut self, slot: u32, key: &[u8]) {
        if let Some(t) = self.last.get(&slot) {
            self.order.remove(t);
        }
        self.tick += 1;
        self.last.insert(slot, self.tick);
        self.order.insert(self.tick, key.to_vec());
    }

    fn forget(&mut self, slot: u32) {
        if let Some(t) = self.last.remove(&slot) {
            self.order.remove(&t);
        }
    }
}

/// One map's contents.
#[derive(Clone, Debug)]
pub struct Map {
    spec: MapSpec,
    num_cpus: u32,
    values: Vec<u8>,
    store: Store,
}

fn invalid(spec: &MapSpec, errno: i64, reason: impl Into<String>) -> MapError {
    MapError::Invalid {
        name: spec.name.clone(),
        map_type: spec.map_type,
        reason: reason.into(),
        errno,
    }
}

impl Map {
    /// An empty map of the first API's shape (arrays: every value zero).
    pub fn new(def: MapDef) -> Result<Map, MapError> {
        Map::from_spec(&MapSpec {
            name: String::new(),
            map_type: def.kind,
            key_size: def.key_size,
            value_size: def.value_size,
            max_entries: def.max_entries,
            flags: if def.kind == MapType::LpmTrie { BPF_F_NO_PREALLOC } else { 0 },
            initial: Vec::new(),
        })
    }

    /// The map a program declares, with one virtual CPU; `spec.initial` becomes the first
    /// value (global data sections).
    pub fn from_spec(spec: &MapSpec) -> Result<Map, MapError> {
        Map::from_spec_cpus(spec, 1)
    }

    /// [`Map::from_spec`] with `num_cpus` values per element for per-CPU maps (at least 1).
    pub fn from_spec_cpus(spec: &MapSpec, num_cpus: u32) -> Result<Map, MapError> {
        use MapType as T;
        let num_cpus = num_cpus.max(1);
        let (k, v, n, f) = (spec.key_size, spec.value_size, spec.max_entries, spec.flags);
        let percpu = matches!(spec.map_type, T::PerCpuArray | T::PerCpuHash | T::LruPerCpuHash);
        let bad = |errno, why: &str| Err(invalid(spec, errno, why));
        // What the map may come to hold, bookkeeping included, checked before anything is
        // allocated.
        let cpus = if percpu { u64::from(num_cpus) } else { 1 };
        let per_entry = match spec.map_type {
            T::Queue | T::Stack => u64::from(v) + 24,
            T::Ringbuf => 2,
            T::Array | T::PerCpuArray => u64::from(v) * cpus,
            _ => u64::from(v) * cpus + u64::from(k) + 24,
        };
        let estimate = u64::from(n) * per_entry;
        if estimate > MAX_MAP_BYTES {
            return bad(E2BIG, &format!("{estimate} bytes is more than sift's VM holds per map"));
        }
        let store = match spec.map_type {
            T::Array | T::PerCpuArray | T::ProgArray => {
                if spec.map_type == T::ProgArray && v != 4 {
                    return bad(EINVAL, "prog array values are 4 bytes");
                }
                if spec.map_type == T::ProgArray && f & F_PROG_ACCESS != 0 {
                    return bad(EINVAL, "prog arrays refuse BPF_F_RDONLY_PROG/WRONLY_PROG");
                }
                if n == 0 || k != 4 || v == 0 || f & !ARRAY_FLAGS != 0 {
                    return bad(EINVAL, "arrays need 4-byte keys, values and entries");
                }
                if spec.map_type != T::Array && f & (F_MMAPABLE | F_INNER_MAP) != 0 {
                    return bad(EINVAL, "only plain arrays are mmapable or inner maps");
                }
                if percpu && v > MAX_PERCPU_VALUE_SIZE {
                    return bad(E2BIG, "per-CPU values are at most 32768 bytes");
                }
                if spec.map_type == T::ProgArray {
                    Store::Sparse(vec![false; n as usize])
                } else {
                    Store::Array
                }
            }
            T::Devmap | T::DevmapHash => {
                if n == 0 || k != 4 || (v != 4 && v != 8) || f & !(F_NUMA_NODE | 8 | 16) != 0 {
                    return bad(EINVAL, "device maps need 4-byte keys and 4- or 8-byte values");
                }
                if spec.map_type == T::Devmap {
                    Store::Sparse(vec![false; n as usize])
                } else {
                    Store::Hash { keys: HashMap::new(), free: Slots::new(n), lru: None }
                }
            }
            T::Hash | T::PerCpuHash | T::LruHash | T::LruPerCpuHash => {
                let lru = matches!(spec.map_type, T::LruHash | T::LruPerCpuHash);
                if f & !HASH_FLAGS != 0 || (!lru && f & F_NO_COMMON_LRU != 0) {
                    return bad(EINVAL, "flags the kernel does not accept for hashes");
                }
                if lru && f & BPF_F_NO_PREALLOC != 0 {
                    return bad(ENOTSUPP, "LRU hashes are always preallocated");
                }
                if n == 0 || k == 0 || v == 0 {
                    return bad(EINVAL, "key size, value size and max entries must be non-zero");
                }
                if k > MAX_KEY_SIZE {
                    return bad(E2BIG, "keys are at most 512 bytes");
                }
                if percpu && v > MAX_PERCPU_VALUE_SIZE {
                    return bad(E2BIG, "per-CPU values are at most 32768 bytes");
                }
                let lru = lru.then(Lru::default);
                Store::Hash { keys: HashMap::new(), free: Slots::new(n), lru }
            }
            T::LpmTrie => {
                if n == 0
                    || f & BPF_F_NO_PREALLOC == 0
                    || f & !(BPF_F_NO_PREALLOC | F_NUMA_NODE | F_ACCESS_MASK) != 0
                    || !(5..=4 + 256).contains(&k)
                    || v == 0
                {
                    return bad(
                        EINVAL,
                        "LPM tries need BPF_F_NO_PREALLOC, keys of 4 + 1…256 bytes and values",
                    );
                }
                Store::Lpm { trie: lpm::Trie::default(), free: Slots::new(n) }
            }
            T::Queue | T::Stack => {
                if n == 0 || k != 0 || v == 0 || f & !(F_NUMA_NODE | F_ACCESS_MASK) != 0 {
                    return bad(EINVAL, "queues and stacks need no key, values and entries");
                }
                Store::Queue { items: VecDeque::new(), lifo: spec.map_type == T::Stack }
            }
            T::Ringbuf => {
                if f & !F_NUMA_NODE != 0
                    || k != 0
                    || v != 0
                    || !n.is_power_of_two()
                    || !n.is_multiple_of(PAGE_SIZE)
                {
                    return bad(
                        EINVAL,
                        "ring buffers have no key or value and a power-of-2 multiple of 4096 bytes",
                    );
                }
                Store::Ring(ringbuf::Ring { size: u64::from(n), ..ringbuf::Ring::default() })
            }
            t => return Err(MapError::Unsupported { name: spec.name.clone(), map_type: t }),
        };
        let bytes = match &store {
            Store::Queue { .. } => 0,
            Store::Ring(r) => 2 * r.size,
            _ => u64::from(v) * u64::from(n) * cpus,
        };
        let mut values = vec![0; bytes as usize];
        if matches!(store, Store::Array) {
            let m = spec.initial.len().min(values.len());
            values[..m].copy_from_slice(&spec.initial[..m]);
        }
        Ok(Map { spec: spec.clone(), num_cpus: if percpu { num_cpus } else { 1 }, values, store })
    }

    /// The first API's shape.
    pub fn def(&self) -> MapDef {
        MapDef {
            kind: self.spec.map_type,
            key_size: self.spec.key_size,
            value_size: self.spec.value_size,
            max_entries: self.spec.max_entries,
        }
    }

    /// The declaration it was made from.
    pub fn spec(&self) -> &MapSpec {
        &self.spec
    }

    /// The type.
    pub fn map_type(&self) -> MapType {
        self.spec.map_type
    }

    /// Values per element: the virtual CPUs of a per-CPU map, 1 otherwise.
    pub fn num_cpus(&self) -> u32 {
        self.num_cpus
    }

    /// Whether values are per CPU.
    pub fn is_percpu(&self) -> bool {
        matches!(
            self.spec.map_type,
            MapType::PerCpuArray | MapType::PerCpuHash | MapType::LruPerCpuHash
        )
    }

    fn vsize(&self) -> usize {
        self.spec.value_size as usize
    }

    fn data_bits(&self) -> u32 {
        (self.spec.key_size - 4) * 8
    }

    /// An LPM key's prefix length and data, or `None` if the key has the wrong size.
    fn lpm_key<'k>(&self, key: &'k [u8]) -> Option<(u32, &'k [u8])> {
        if key.len() != self.spec.key_size as usize || key.len() < 4 {
            return None;
        }
        let (p, data) = key.split_at(4);
        Some((u32::from_le_bytes(p.try_into().ok()?), data))
    }

    /// The element's slot (exact key; LPM: longest prefix), without marking it used.
    fn slot_of(&self, key: &[u8]) -> Option<u32> {
        if key.len() != self.spec.key_size as usize {
            return None;
        }
        match &self.store {
            Store::Array => {
                let i = u32::from_le_bytes(key.try_into().ok()?);
                (i < self.spec.max_entries).then_some(i)
            }
            Store::Sparse(present) => {
                let i = u32::from_le_bytes(key.try_into().ok()?);
                present.get(i as usize).copied().unwrap_or(false).then_some(i)
            }
            Store::Hash { keys, .. } => keys.get(key).copied(),
            Store::Lpm { trie, .. } => {
                let (p, data) = self.lpm_key(key)?;
                if p > data.len() as u32 * 8 {
                    return None;
                }
                trie.lookup(p, data)
            }
            Store::Queue { .. } | Store::Ring(_) => None,
        }
    }

    fn value_at(&self, slot: u32, cpu: u32) -> &[u8] {
        let n = self.vsize();
        let i = slot as usize * self.num_cpus as usize + cpu as usize;
        &self.values[i * n..][..n]
    }

    /// The value for `key` (LPM tries: of the longest prefix; per-CPU maps: CPU 0's; queues
    /// and stacks: the next to pop, whatever `key`).
    pub fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        if let Store::Queue { .. } = self.store {
            return self.peek();
        }
        self.lookup_cpu(key, 0)
    }

    /// A per-CPU map's value for `key` on virtual CPU `cpu`.
    pub fn lookup_cpu(&self, key: &[u8], cpu: u32) -> Option<&[u8]> {
        if cpu >= self.num_cpus {
            return None;
        }
        self.slot_of(key).map(|s| self.value_at(s, cpu))
    }

    /// Every CPU's value for `key`, CPU 0 first.
    pub fn lookup_percpu(&self, key: &[u8]) -> Option<Vec<&[u8]>> {
        let s = self.slot_of(key)?;
        Some((0..self.num_cpus).map(|c| self.value_at(s, c)).collect())
    }

    /// Checks flags and finds or makes the slot for `key` (the update's first half).
    fn slot_for_update(&mut self, key: &[u8], flags: u64) -> Result<u32, i64> {
        // BPF_F_LOCK (4) needs a spin lock in the value, which these maps never have.
        if flags > BPF_EXIST || key.len() != self.spec.key_size as usize {
            return Err(-EINVAL);
        }
        let max = self.spec.max_entries;
        let data_bits = if self.spec.map_type == MapType::LpmTrie { self.data_bits() } else { 0 };
        match &mut self.store {
            Store::Array => {
                let i = u32::from_le_bytes(key.try_into().map_err(|_| -EINVAL)?);
                if i >= max {
                    Err(-E2BIG)
                } else if flags == BPF_NOEXIST {
                    Err(-EEXIST)
                } else {
                    Ok(i)
                }
            }
            Store::Sparse(present) => {
                let i = u32::from_le_bytes(key.try_into().map_err(|_| -EINVAL)?);
                if self.spec.map_type == MapType::ProgArray && flags != BPF_ANY {
                    return Err(-EINVAL);
                }
                if i >= max {
                    return Err(-E2BIG);
                }
                if flags == BPF_NOEXIST && present[i as usize] {
                    return Err(-EEXIST);
                }
                present[i as usize] = true;
                Ok(i)
            }
            Store::Hash { keys, free, lru } => {
                if let Some(&s) = keys.get(key) {
                    if flags == BPF_NOEXIST {
                        return Err(-EEXIST);
                    }
                    if let Some(l) = lru {
                        l.touch(s, key);
                    }
                    return Ok(s);
                }
                if flags == BPF_EXIST {
                    return Err(-ENOENT);
                }
                let s = match (free.pop(), lru.as_mut()) {
                    (Some(s), _) => s,
                    (None, Some(l)) => {
                        // Full: the least recently used element goes.
                        let Some((_, old)) = l.order.pop_first() else { return Err(-E2BIG) };
                        let s = keys.remove(&old).ok_or(-E2BIG)?;
                        l.last.remove(&s);
                        s
                    }
                    (None, None) => return Err(-E2BIG),
                };
                keys.insert(key.to_vec(), s);
                if let Some(l) = lru {
                    l.touch(s, key);
                }
                Ok(s)
            }
            Store::Lpm { trie, free } => {
                let p = u32::from_le_bytes(key[..4].try_into().map_err(|_| -EINVAL)?);
                if p > data_bits {
                    return Err(-EINVAL);
                }
                match trie.find_for_update(p, &key[4..]) {
                    lpm::Insert::Replace(s) => {
                        if flags == BPF_NOEXIST {
                            return Err(-EEXIST);
                        }
                        trie.replace_data(p, &key[4..]);
                        Ok(s)
                    }
                    lpm::Insert::New => {
                        if flags == BPF_EXIST {
                            return Err(-ENOENT);
                        }
                        let Some(s) = free.pop() else { return Err(-ENOSPC) };
                        trie.insert(p, &key[4..], s);
                        Ok(s)
                    }
                }
            }
            Store::Queue { .. } | Store::Ring(_) => Err(-EINVAL),
        }
    }

    /// Sets `key` to `value` with the kernel's flags, as `BPF_MAP_UPDATE_ELEM` does; `Err`
    /// is the negative errno. Per-CPU maps take either one value (every CPU gets it) or one
    /// per CPU, each padded to 8 bytes (the syscall's layout). Queues and stacks push (the
    /// key is empty); prog arrays take a program index ([`Vm::add_program`](crate::Vm)).
    pub fn update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Result<(), i64> {
        if let Store::Queue { .. } = self.store {
            return self.push(value, flags);
        }
        let n = self.vsize();
        let padded = n.div_ceil(8) * 8;
        let cpus = self.num_cpus as usize;
        let all = self.is_percpu() && value.len() == padded * cpus && value.len() != n;
        if value.len() != n && !all {
            return Err(-EINVAL);
        }
        let s = self.slot_for_update(key, flags)? as usize;
        for c in 0..cpus {
            let src = if all { &value[c * padded..][..n] } else { value };
            self.values[(s * cpus + c) * n..][..n].copy_from_slice(src);
        }
        Ok(())
    }

    /// A program's update: only the run's CPU's value changes (a new per-CPU element's other
    /// values are zero, as the kernel's `pcpu_init_value` does).
    pub(crate) fn update_from_prog(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: u64,
        cpu: u32,
    ) -> Result<(), i64> {
        let n = self.vsize();
        if value.len() != n {
            return Err(-EINVAL);
        }
        let existed = self.slot_of(key).is_some()
            && !matches!(self.store, Store::Lpm { .. } | Store::Sparse(_));
        let s = self.slot_for_update(key, flags)? as usize;
        let cpus = self.num_cpus as usize;
        let cpu = (cpu as usize).min(cpus - 1);
        let percpu = self.is_percpu();
        for c in 0..cpus {
            let dst = &mut self.values[(s * cpus + c) * n..][..n];
            if c == cpu {
                dst.copy_from_slice(value);
            } else if !existed && percpu {
                dst.fill(0);
            }
        }
        Ok(())
    }

    /// Removes `key` (arrays: `-EINVAL`, their elements cannot be deleted; LPM: the exact
    /// prefix).
    pub fn delete(&mut self, key: &[u8]) -> Result<(), i64> {
        if key.len() != self.spec.key_size as usize {
            return Err(-EINVAL);
        }
        let data_bits = if self.spec.map_type == MapType::LpmTrie { self.data_bits() } else { 0 };
        match &mut self.store {
            Store::Array | Store::Queue { .. } | Store::Ring(_) => Err(-EINVAL),
            Store::Sparse(present) => {
                let i = u32::from_le_bytes(key.try_into().map_err(|_| -EINVAL)?) as usize;
                match present.get_mut(i) {
                    None => Err(-E2BIG),
                    Some(p) if !*p => Err(-ENOENT),
                    Some(p) => {
                        *p = false;
                        Ok(())
                    }
                }
            }
            Store::Hash { keys, free, lru } => match keys.remove(key) {
                Some(s) => {
                    free.push(s);
                    if let Some(l) = lru {
                        l.forget(s);
                    }
                    Ok(())
                }
                None => Err(-ENOENT),
            },
            Store::Lpm { trie, free } => {
                let p = u32::from_le_bytes(key[..4].try_into().map_err(|_| -EINVAL)?);
                if p > data_bits {
                    return Err(-EINVAL);
                }
                let s = trie.remove(p, &key[4..]).ok_or(-ENOENT)?;
                free.push(s);
                Ok(())
            }
        }
    }

    /// The keys, in ascending byte order (arrays: every index; queues, stacks and ring
    /// buffers: none).
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = match &self.store {
            Store::Array => (0..self.spec.max_entries).map(|i| i.to_le_bytes().to_vec()).collect(),
            Store::Sparse(present) => (0..self.spec.max_entries)
                .filter(|&i| present[i as usize])
                .map(|i| i.to_le_bytes().to_vec())
                .collect(),
            Store::Hash { keys, .. } => keys.keys().cloned().collect(),
            Store::Lpm { trie, .. } => trie
                .entries()
                .into_iter()
                .map(|(p, data, _)| [&p.to_le_bytes()[..], &data].concat())
                .collect(),
            Store::Queue { .. } | Store::Ring(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// The key after `key` in [`Map::keys`]'s order (the first key for `None`), as
    /// `BPF_MAP_GET_NEXT_KEY` iterates (in its own order).
    pub fn next_key(&self, key: Option<&[u8]>) -> Option<Vec<u8>> {
        let keys = self.keys();
        match key {
            None => keys.into_iter().next(),
            Some(k) => keys.into_iter().find(|x| x.as_slice() > k),
        }
    }

    /// Every `(key, value)`, keys in ascending byte order; per-CPU maps: the values of every
    /// CPU one after the other; queues and stacks: empty keys, next to pop first.
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        if let Store::Queue { items, lifo } = &self.store {
            let mut v: Vec<_> = items.iter().map(|x| (Vec::new(), x.clone())).collect();
            if *lifo {
                v.reverse();
            }
            return v;
        }
        self.keys()
            .into_iter()
            .filter_map(|k| {
                let s = self.exact_slot(&k)?;
                let v = (0..self.num_cpus).flat_map(|c| self.value_at(s, c).to_vec()).collect();
                Some((k, v))
            })
            .collect()
    }

    /// The slot of exactly `key` (LPM: the exact prefix, not the longest match).
    fn exact_slot(&self, key: &[u8]) -> Option<u32> {
        match &self.store {
            Store::Lpm { trie, .. } => {
                let (p, data) = self.lpm_key(key)?;
                trie.exact(p, data)
            }
            _ => self.slot_of(key),
        }
    }

    /// Queues and stacks: adds `value`; when full, `BPF_EXIST` drops the oldest element,
    /// otherwise `-E2BIG`.
    pub fn push(&mut self, value: &[u8], flags: u64) -> Result<(), i64> {
        let max = self.spec.max_entries as usize;
        let n = self.vsize();
        let Store::Queue { items, .. } = &mut self.store else { return Err(-EINVAL) };
        if flags & BPF_NOEXIST != 0 || flags > BPF_EXIST || value.len() != n {
            return Err(-EINVAL);
        }
        if items.len() >= max {
            if flags != BPF_EXIST {
                return Err(-E2BIG);
            }
            // The oldest: a queue's front, a stack's bottom (also its front here).
            items.pop_front();
        }
        items.push_back(value.to_vec());
        Ok(())
    }

    /// Queues and stacks: removes and returns the next element (queue: oldest; stack:
    /// newest); `-ENOENT` when empty.
    pub fn pop(&mut self) -> Result<Vec<u8>, i64> {
        let Store::Queue { items, lifo } = &mut self.store else { return Err(-EINVAL) };
        let v = if *lifo { items.pop_back() } else { items.pop_front() };
        v.ok_or(-ENOENT)
    }

    /// Queues and stacks: the next element without removing it.
    pub fn peek(&self) -> Option<&[u8]> {
        let Store::Queue { items, lifo } = &self.store else { return None };
        let v = if *lifo { items.back() } else { items.front() };
        v.map(Vec::as_slice)
    }

    /// Ring buffers: the records submitted since the last drain, in order (discarded ones
    /// skipped); stops at a record still reserved.
    pub fn ringbuf_drain(&mut self) -> Vec<Vec<u8>> {
        match &mut self.store {
            Store::Ring(r) => r.drain(&self.values),
            _ => Vec::new(),
        }
    }

    /// Ring buffers: `bpf_ringbuf_query`'s answer for `flags` (0 otherwise).
    pub fn ringbuf_query(&self, flags: u64) -> u64 {
        match &self.store {
            Store::Ring(r) => r.query(flags),
            _ => 0,
        }
    }

    /// Ring buffers: reserves `size` bytes; the address of the record's data.
    pub(crate) fn ringbuf_reserve(&mut self, index: usize, size: u64) -> Option<u64> {
        let Store::Ring(r) = &mut self.store else { return None };
        let at = r.reserve(&mut self.values, size)?;
        Some(MAP_BASE + ((index as u64) << 32) + at as u64)
    }

    /// Ring buffers: commits the record at buffer offset `data`.
    pub(crate) fn ringbuf_commit(&mut self, data: usize, discard: bool) -> bool {
        let Store::Ring(r) = &mut self.store else { return false };
        r.commit(&mut self.values, data, discard)
    }

    /// A program's lookup: the address of the value on `cpu`, the element marked used (LRU).
    pub(crate) fn lookup_from_prog(&mut self, index: usize, key: &[u8], cpu: u32) -> Option<u64> {
        let s = self.slot_of(key)?;
        if let Store::Hash { lru: Some(l), .. } = &mut self.store {
            l.touch(s, key);
        }
        let cpu = u64::from(cpu.min(self.num_cpus - 1));
        let n = self.spec.value_size as u64;
        let i = u64::from(s) * u64::from(self.num_cpus) + cpu;
        Some(MAP_BASE + ((index as u64) << 32) + i * n)
    }

    /// Prog arrays: the program index at `index`, if set.
    pub(crate) fn prog_at(&self, index: u32) -> Option<u32> {
        let s = self.slot_of(&index.to_le_bytes())?;
        Some(u32::from_le_bytes(self.value_at(s, 0).try_into().ok()?))
    }

    pub(crate) fn byte_len(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.values
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.values
    }
}

#[cfg(test)]
mod tests;
