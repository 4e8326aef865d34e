//! An eBPF object in the kernel: its maps created, its programs' map references pointed at
//! them and each program loaded with `BPF_PROG_LOAD` — what libbpf's `bpf_object__load` does,
//! for the objects `sift-ebpf-elf` reads (or any programs with `MapSpec`s).
//!
//! Why it exists: sift deploys programs that share maps (pf's XDP and TC programs read and
//! write one state table), fills those maps from user space and reads them back; this module is
//! the generic part of that, with no knowledge of what a program does. A refused program comes
//! back with the verifier's log ([`ObjectError::Rejected`]). Maps can be taken over from a
//! running object ([`ObjectLoader::reuse_map`]) so that a new program set keeps the old one's
//! state.
//!
//! The map references are the `lddw` pseudo instructions `sift-ebpf-elf` leaves: `src_reg` 1
//! (`BPF_PSEUDO_MAP_FD`) or 2 (`BPF_PSEUDO_MAP_VALUE`), with the map's index in `imm`; the
//! index becomes the map's file descriptor (a map value's offset, in the second slot, stays).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use sift_ebpf::{EbpfInsn, MapSpec, MapType, ProgType};
use sift_sys::bpf;

/// The verifier log buffer asked for after a refusal (the kernel keeps the log's tail, where
/// the reason is, when it does not fit).
const LOG_SIZE: usize = 16 << 20;

/// Why an object could not be loaded, or a map could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// `BPF_MAP_CREATE` failed for a map.
    #[error("map {name}: BPF_MAP_CREATE: {source}")]
    MapCreate {
        /// The map.
        name: String,
        /// The kernel's error.
        source: io::Error,
    },
    /// A map's initial contents (a global data section) could not be written.
    #[error("map {name}: initial value: {source}")]
    MapInit {
        /// The map.
        name: String,
        /// The kernel's error.
        source: io::Error,
    },
    /// A reused map does not have the shape the object declares.
    #[error("map {name}: the map reused is {got}, the object declares {want}")]
    MapShape {
        /// The map.
        name: String,
        /// What the object declares (type, key and value sizes).
        want: String,
        /// What was given.
        got: String,
    },
    /// A program's `lddw` names a map the object does not have.
    #[error("program {program}, instruction {slot}: map {map} does not exist ({maps} maps)")]
    Reference {
        /// The program.
        program: String,
        /// The `lddw`'s slot.
        slot: usize,
        /// The index it names.
        map: usize,
        /// How many maps there are.
        maps: usize,
    },
    /// The kernel cannot be asked (not root, no `bpf(2)`).
    #[error("program {program}: the kernel cannot load eBPF: {source}")]
    Unavailable {
        /// The program.
        program: String,
        /// The kernel's error.
        source: io::Error,
    },
    /// The verifier refused a program.
    #[error("program {program}: the kernel's verifier refused it ({source}):\n{log}")]
    Rejected {
        /// The program.
        program: String,
        /// The error `BPF_PROG_LOAD` returned.
        source: io::Error,
        /// The verifier's log (level 1), its tail when longer than the buffer.
        log: String,
    },
    /// A program's name the kernel would refuse (letters, digits, `_` and `.` only).
    #[error("program {program}: {source}")]
    Name {
        /// The program.
        program: String,
        /// What was wrong with it.
        source: io::Error,
    },
    /// No map of that name.
    #[error("no map {0}")]
    NoMap(String),
    /// No program of that name.
    #[error("no program {0}")]
    NoProgram(String),
    /// A map operation failed.
    #[error("map {name}: {op}: {source}")]
    MapOp {
        /// The map.
        name: String,
        /// The operation.
        op: &'static str,
        /// The kernel's error.
        source: io::Error,
    },
    /// A key or value of the wrong size.
    #[error("map {name}: {what} of {got} bytes, the map's are {want}")]
    Size {
        /// The map.
        name: String,
        /// `key` or `value`.
        what: &'static str,
        /// The size given.
        got: usize,
        /// The map's size.
        want: usize,
    },
}

/// A program to load: its name (and section), type and linked code with map references by
/// index (`sift_ebpf_elf::ObjProgram` has these fields).
#[derive(Clone, Copy, Debug)]
pub struct ProgramSource<'a> {
    /// The name (the C function's).
    pub name: &'a str,
    /// The section it came from (`xdp`, `tc/ingress`).
    pub section: &'a str,
    /// The type.
    pub prog_type: ProgType,
    /// The slots.
    pub insns: &'a [EbpfInsn],
}

/// A map in the kernel.
#[derive(Debug)]
pub struct KernelMap {
    spec: MapSpec,
    fd: OwnedFd,
    cpus: usize,
}

/// A map element: key and value bytes.
pub type Entry = (Vec<u8>, Vec<u8>);

/// A program in the kernel.
#[derive(Debug)]
pub struct KernelProgram {
    /// The name.
    pub name: String,
    /// The section.
    pub section: String,
    /// The type.
    pub prog_type: ProgType,
    /// How many slots it has.
    pub slots: usize,
    /// The verifier's log, when asked for ([`ObjectLoader::verifier_log`]).
    pub log: Option<String>,
    fd: OwnedFd,
}

impl KernelProgram {
    /// Its file descriptor (for `BPF_PROG_TEST_RUN` or attaching).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Loads an object: maps first (created, or reused), then each program.
#[derive(Debug)]
pub struct ObjectLoader<'a> {
    maps: Vec<MapSpec>,
    reused: Vec<(String, KernelMap)>,
    programs: Vec<ProgramSource<'a>>,
    license: String,
    log: bool,
}

impl<'a> ObjectLoader<'a> {
    /// An object of these maps (in the order the programs' references index them), programs
    /// and license.
    pub fn new(maps: &[MapSpec], programs: &[ProgramSource<'a>], license: &str) -> Self {
        ObjectLoader {
            maps: maps.to_vec(),
            reused: Vec::new(),
            programs: programs.to_vec(),
            license: license.to_string(),
            log: false,
        }
    }

    /// Keeps the verifier's log of every program, accepted or not ([`KernelProgram::log`]):
    /// what `--dry-run` shows. Loading with a log is slower.
    pub fn verifier_log(mut self, on: bool) -> Self {
        self.log = on;
        self
    }

    /// Sets map `name`'s number of entries before it is created (a state table sized to a
    /// limit, a table sized to what it will hold); unknown names are ignored.
    pub fn max_entries(mut self, name: &str, n: u32) -> Self {
        if let Some(m) = self.maps.iter_mut().find(|m| m.name == name) {
            m.max_entries = n;
        }
        self
    }

    /// Uses `map` (of a running object) for map `name` instead of creating one: its contents
    /// stay, and both objects' programs share it. Its shape must be the declared one.
    pub fn reuse_map(mut self, name: &str, map: KernelMap) -> Self {
        self.reused.push((name.to_string(), map));
        self
    }

    /// Creates the maps and loads the programs.
    pub fn load(self) -> Result<KernelObject, ObjectError> {
        let cpus = possible_cpus();
        let mut reused = self.reused;
        let mut maps = Vec::with_capacity(self.maps.len());
        for spec in &self.maps {
            if let Some(i) = reused.iter().position(|(n, _)| *n == spec.name) {
                let (_, m) = reused.swap_remove(i);
                let same = m.spec.map_type == spec.map_type
                    && m.spec.key_size == spec.key_size
                    && m.spec.value_size == spec.value_size;
                if !same {
                    let shape =
                        |m: &MapSpec| format!("{:?} {}/{}", m.map_type, m.key_size, m.value_size);
                    return Err(ObjectError::MapShape {
                        name: spec.name.clone(),
                        want: shape(spec),
                        got: shape(&m.spec),
                    });
                }
                maps.push(m);
                continue;
            }
            maps.push(KernelMap::create(spec, cpus)?);
        }
        let mut programs = Vec::with_capacity(self.programs.len());
        for p in &self.programs {
            let bytes = relocate(p, &maps)?;
            let (fd, log) = load_program(p, &bytes, &self.license, self.log)?;
            programs.push(KernelProgram {
                name: p.name.to_string(),
                section: p.section.to_string(),
                prog_type: p.prog_type,
                slots: p.insns.len(),
                log,
                fd,
            });
        }
        Ok(KernelObject { maps, programs })
    }
}

/// The slots of `p` with each map reference's index replaced by the map's descriptor.
fn relocate(p: &ProgramSource<'_>, maps: &[KernelMap]) -> Result<Vec<u8>, ObjectError> {
    let mut insns = p.insns.to_vec();
    let mut i = 0;
    while i < insns.len() {
        if insns[i].code == 0x18 {
            if matches!(insns[i].src, 1 | 2) {
                let m = insns[i].imm as u32 as usize;
                let Some(map) = maps.get(m) else {
                    return Err(ObjectError::Reference {
                        program: p.name.to_string(),
                        slot: i,
                        map: m,
                        maps: maps.len(),
                    });
                };
                insns[i].imm = map.fd.as_raw_fd();
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    Ok(insns.iter().flat_map(EbpfInsn::encode).collect())
}

/// `BPF_PROG_LOAD` named as the program (the kernel's 15 characters), with XDP's expected
/// attach type; on a refusal a second load with the verifier's log. With `keep_log`, the first
/// load already asks for the log and returns it.
pub fn load_program(
    p: &ProgramSource<'_>,
    bytes: &[u8],
    license: &str,
    keep_log: bool,
) -> Result<(OwnedFd, Option<String>), ObjectError> {
    let name = kernel_name(p.name);
    let load = |license: &str, log: Option<&mut [u8]>| {
        let opts = bpf::ProgLoad {
            expected_attach_type: if p.prog_type == ProgType::Xdp { bpf::BPF_XDP } else { 0 },
            name: &name,
            license,
            log,
            ..bpf::ProgLoad::new(p.prog_type.number())
        };
        bpf::prog_load_with(bytes, opts)
    };
    let text = |log: &[u8]| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).into_owned()
    };
    let refused_name = |e: io::Error| ObjectError::Name { program: p.name.to_string(), source: e };
    let first = if keep_log {
        let mut log = vec![0u8; LOG_SIZE];
        match load(license, Some(&mut log)) {
            Ok(fd) => return Ok((fd, Some(text(&log)))),
            Err(e) => e,
        }
    } else {
        match load(license, None) {
            Ok(fd) => return Ok((fd, None)),
            Err(e) => e,
        }
    };
    if first.kind() == io::ErrorKind::InvalidInput {
        return Err(refused_name(first));
    }
    if bpf::is_unavailable(&first) {
        return Err(ObjectError::Unavailable { program: p.name.to_string(), source: first });
    }
    // The log load is licensed GPL; the refusal is the same for the GPL objects sift builds.
    let mut log = vec![0u8; LOG_SIZE];
    let again = load("GPL", Some(&mut log));
    match again {
        // Accepted with a GPL license: the object's own license was the problem.
        Ok(_) if license != "GPL" => Err(ObjectError::Rejected {
            program: p.name.to_string(),
            source: first,
            log: format!("(accepted under the GPL: license {license:?} refused)"),
        }),
        // Loaded the second time: a transient failure.
        Ok(fd) => Ok((fd, keep_log.then(|| text(&log)))),
        Err(_) => Err(ObjectError::Rejected {
            program: p.name.to_string(),
            source: first,
            log: text(&log),
        }),
    }
}

/// An object in the kernel: its maps and programs, closed when dropped (attached programs
/// stay while their links hold them).
#[derive(Debug)]
pub struct KernelObject {
    maps: Vec<KernelMap>,
    programs: Vec<KernelProgram>,
}

impl KernelObject {
    /// The maps, in the object's order.
    pub fn maps(&self) -> &[KernelMap] {
        &self.maps
    }

    /// The programs, in the object's order.
    pub fn programs(&self) -> &[KernelProgram] {
        &self.programs
    }

    /// Map `name`.
    pub fn map(&self, name: &str) -> Result<&KernelMap, ObjectError> {
        self.maps.iter().find(|m| m.spec.name == name).ok_or(ObjectError::NoMap(name.into()))
    }

    /// Program `name` (its function's name or its section).
    pub fn program(&self, name: &str) -> Result<&KernelProgram, ObjectError> {
        self.programs
            .iter()
            .find(|p| p.name == name)
            .or_else(|| self.programs.iter().find(|p| p.section == name))
            .ok_or(ObjectError::NoProgram(name.into()))
    }

    /// Takes map `name` out (to hand it to the next object's [`ObjectLoader::reuse_map`]).
    pub fn take_map(&mut self, name: &str) -> Result<KernelMap, ObjectError> {
        let i = self
            .maps
            .iter()
            .position(|m| m.spec.name == name)
            .ok_or(ObjectError::NoMap(name.into()))?;
        Ok(self.maps.remove(i))
    }
}

impl KernelMap {
    /// Another handle on the same map (its descriptor duplicated): the map lives while either
    /// is open, so counters can be read after the program that wrote them is gone.
    pub fn try_clone(&self) -> std::io::Result<KernelMap> {
        Ok(KernelMap { spec: self.spec.clone(), fd: self.fd.try_clone()?, cpus: self.cpus })
    }
}

impl KernelMap {
    /// The map of `spec`'s name and shape that program `prog_id` uses (`None`: it has none):
    /// how a later command reads the maps of a program it did not load.
    pub fn of_program(prog_id: u32, spec: &MapSpec) -> Result<Option<KernelMap>, ObjectError> {
        let op = |op| move |source| ObjectError::MapOp { name: spec.name.clone(), op, source };
        let prog = bpf::prog_get_fd_by_id(prog_id).map_err(op("program by id"))?;
        let info = bpf::prog_info(&prog).map_err(op("program info"))?;
        let name = kernel_name(&spec.name);
        for id in info.map_ids {
            let fd = bpf::map_get_fd_by_id(id).map_err(op("map by id"))?;
            let m = bpf::map_info(&fd).map_err(op("map info"))?;
            if m.name == name
                && m.map_type == spec.map_type as u32
                && m.key_size == spec.key_size
                && m.value_size == spec.value_size
            {
                let spec = MapSpec { max_entries: m.max_entries, ..spec.clone() };
                return Ok(Some(KernelMap { spec, fd, cpus: possible_cpus() }));
            }
        }
        Ok(None)
    }

    /// Pins the map at `path` in a BPF file system (replacing a pin there).
    pub fn pin(&self, path: &std::path::Path) -> Result<(), ObjectError> {
        let op = |source| ObjectError::MapOp { name: self.spec.name.clone(), op: "pin", source };
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(op(e)),
        }
        bpf::obj_pin(&self.fd, path).map_err(op)
    }

    /// The map pinned at `path`, which must have `spec`'s type, key and value sizes.
    pub fn open_pinned(path: &std::path::Path, spec: &MapSpec) -> Result<KernelMap, ObjectError> {
        let op = |op| move |source| ObjectError::MapOp { name: spec.name.clone(), op, source };
        let fd = bpf::obj_get(path).map_err(op("open pin"))?;
        let m = bpf::map_info(&fd).map_err(op("map info"))?;
        if m.map_type != spec.map_type as u32
            || m.key_size != spec.key_size
            || m.value_size != spec.value_size
        {
            return Err(ObjectError::MapShape {
                name: spec.name.clone(),
                want: format!("{:?} {}/{}", spec.map_type, spec.key_size, spec.value_size),
                got: format!("type {} {}/{}", m.map_type, m.key_size, m.value_size),
            });
        }
        let spec = MapSpec { max_entries: m.max_entries, ..spec.clone() };
        Ok(KernelMap { spec, fd, cpus: possible_cpus() })
    }

    /// Creates a map of `spec`, with its initial contents; `cpus` is the number of possible
    /// CPUs (per-CPU values).
    fn create(spec: &MapSpec, cpus: usize) -> Result<KernelMap, ObjectError> {
        let fd = bpf::map_create_with(&bpf::MapCreate {
            map_type: spec.map_type as u32,
            key_size: spec.key_size,
            value_size: spec.value_size,
            max_entries: spec.max_entries,
            map_flags: spec.flags,
            name: &kernel_name(&spec.name),
        })
        .map_err(|source| ObjectError::MapCreate { name: spec.name.clone(), source })?;
        if !spec.initial.is_empty() {
            let mut v = spec.initial.clone();
            v.resize(spec.value_size as usize, 0);
            bpf::map_update_elem(&fd, &0u32.to_le_bytes(), &v, 0)
                .map_err(|source| ObjectError::MapInit { name: spec.name.clone(), source })?;
        }
        Ok(KernelMap { spec: spec.clone(), fd, cpus })
    }

    /// What it is.
    pub fn spec(&self) -> &MapSpec {
        &self.spec
    }

    /// Its file descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Whether its values are per CPU.
    pub fn is_percpu(&self) -> bool {
        matches!(
            self.spec.map_type,
            MapType::PerCpuArray | MapType::PerCpuHash | MapType::LruPerCpuHash
        )
    }

    fn check(&self, what: &'static str, got: usize, want: u32) -> Result<(), ObjectError> {
        if got != want as usize {
            return Err(ObjectError::Size {
                name: self.spec.name.clone(),
                what,
                got,
                want: want as usize,
            });
        }
        Ok(())
    }

    fn op(&self, op: &'static str) -> impl FnOnce(io::Error) -> ObjectError + '_ {
        move |source| ObjectError::MapOp { name: self.spec.name.clone(), op, source }
    }

    /// `BPF_MAP_UPDATE_ELEM` (`flags`: `BPF_ANY` 0, `BPF_NOEXIST` 1, `BPF_EXIST` 2). A
    /// per-CPU map's value is given once and written for every CPU.
    pub fn update(&self, key: &[u8], value: &[u8], flags: u64) -> Result<(), ObjectError> {
        self.check("key", key.len(), self.spec.key_size)?;
        self.check("value", value.len(), self.spec.value_size)?;
        if self.is_percpu() {
            let stride = (value.len() + 7) & !7;
            let mut all = vec![0u8; stride * self.cpus];
            for c in 0..self.cpus {
                all[c * stride..c * stride + value.len()].copy_from_slice(value);
            }
            return bpf::map_update_elem(&self.fd, key, &all, flags).map_err(self.op("update"));
        }
        bpf::map_update_elem(&self.fd, key, value, flags).map_err(self.op("update"))
    }

    /// `BPF_MAP_LOOKUP_ELEM`: the value (`None`: no such key); a per-CPU map's values of every
    /// possible CPU, one after the other, each `value_size` bytes.
    pub fn lookup(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ObjectError> {
        self.check("key", key.len(), self.spec.key_size)?;
        let size = self.spec.value_size as usize;
        let stride = if self.is_percpu() { (size + 7) & !7 } else { size };
        let n = if self.is_percpu() { self.cpus } else { 1 };
        let mut v = vec![0u8; stride * n];
        match bpf::map_lookup_elem(&self.fd, key, &mut v) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.op("lookup")(e)),
        }
        if stride != size {
            let mut packed = Vec::with_capacity(size * n);
            for c in 0..n {
                packed.extend_from_slice(&v[c * stride..c * stride + size]);
            }
            v = packed;
        }
        Ok(Some(v))
    }

    /// A per-CPU map's values of `key` summed as little-endian `u64`s, field by field (the
    /// value is a sequence of counters); a plain map's value as it is.
    pub fn lookup_summed(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ObjectError> {
        let Some(v) = self.lookup(key)? else { return Ok(None) };
        if !self.is_percpu() {
            return Ok(Some(v));
        }
        let size = self.spec.value_size as usize;
        let mut sum = vec![0u64; size / 8];
        for cpu in v.chunks(size) {
            for (i, w) in cpu.chunks_exact(8).enumerate() {
                sum[i] = sum[i].wrapping_add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
            }
        }
        let mut out: Vec<u8> = sum.iter().flat_map(|x| x.to_le_bytes()).collect();
        out.resize(size, 0);
        Ok(Some(out))
    }

    /// `BPF_MAP_DELETE_ELEM`; `false` when there was no such key.
    pub fn delete(&self, key: &[u8]) -> Result<bool, ObjectError> {
        self.check("key", key.len(), self.spec.key_size)?;
        match bpf::map_delete_elem(&self.fd, key) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.op("delete")(e)),
        }
    }

    /// Every key, in the kernel's order (`BPF_MAP_GET_NEXT_KEY`).
    pub fn keys(&self) -> Result<Vec<Vec<u8>>, ObjectError> {
        let mut out = Vec::new();
        let mut key: Option<Vec<u8>> = None;
        loop {
            let mut k = vec![0u8; self.spec.key_size as usize];
            match bpf::map_get_next_key(&self.fd, key.as_deref(), &mut k) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(self.op("next key")(e)),
            }
            out.push(k.clone());
            key = Some(k);
        }
        Ok(out)
    }

    /// Every (key, value) (per-CPU values as [`KernelMap::lookup`] gives them); keys that
    /// vanish while the map is read are left out.
    pub fn entries(&self) -> Result<Vec<Entry>, ObjectError> {
        let mut out = Vec::new();
        for k in self.keys()? {
            if let Some(v) = self.lookup(&k)? {
                out.push((k, v));
            }
        }
        Ok(out)
    }
}

/// A name as the kernel keeps it for programs and maps: its first 15 characters, as libbpf
/// truncates (`bpftool` shows them; [`KernelMap::of_program`] finds maps by them). Characters
/// other than letters, digits, `_` and `.` are refused when loading.
pub fn kernel_name(name: &str) -> String {
    name.chars().take(15).collect()
}

/// How many CPUs the kernel may have (`/sys/devices/system/cpu/possible`, e.g. `0-1`): the
/// number of values of a per-CPU map's element. 1 when the file cannot be read.
pub fn possible_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()))
        .unwrap_or(1)
}

/// The number of CPUs of a kernel CPU list (`0-3,5`): the highest plus one.
fn parse_cpu_list(s: &str) -> Option<usize> {
    let mut highest = None;
    for part in s.split(',') {
        let last = part.rsplit('-').next()?;
        let n: usize = last.trim().parse().ok()?;
        highest = Some(highest.map_or(n, |h: usize| h.max(n)));
    }
    highest.map(|h| h + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-1"), Some(2));
        assert_eq!(parse_cpu_list("0-3,5"), Some(6));
        assert_eq!(parse_cpu_list("x"), None);
    }

    fn kernel() -> bool {
        if !sift_testkit::is_root() {
            return sift_testkit::oracle_missing("kernel bpf(2)", "not root").unwrap_or(false);
        }
        true
    }

    fn spec(name: &str, map_type: MapType, value_size: u32) -> MapSpec {
        MapSpec {
            name: name.into(),
            map_type,
            key_size: 4,
            value_size,
            max_entries: 4,
            flags: 0,
            initial: Vec::new(),
        }
    }

    /// `r1 = map; r2 = fp - 4; *(u32 *)(fp - 4) = 1; call map_lookup_elem; if r0 == 0 goto
    /// out; lock *(u64 *)(r0 + 0) += 5; out: r0 = 2; exit`: adds 5 to element 1 of map 0.
    fn counting_program(map_src: u8) -> Vec<EbpfInsn> {
        let i = |code, dst, src, off, imm| EbpfInsn { code, dst, src, off, imm };
        vec![
            i(0x62, 10, 0, -4, 1),     // *(u32 *)(r10 - 4) = 1
            i(0x18, 1, map_src, 0, 0), // r1 = map 0
            i(0x00, 0, 0, 0, 0),
            i(0xbf, 2, 10, 0, 0), // r2 = r10
            i(0x07, 2, 0, 0, -4), // r2 += -4
            i(0x85, 0, 0, 0, 1),  // call map_lookup_elem
            i(0x15, 0, 0, 2, 0),  // if r0 == 0 goto +2
            i(0xb7, 1, 0, 0, 5),  // r1 = 5
            i(0xdb, 0, 1, 0, 0),  // lock *(u64 *)(r0 + 0) += r1
            i(0xb7, 0, 0, 0, 2),  // r0 = XDP_PASS
            i(0x95, 0, 0, 0, 0),  // exit
        ]
    }

    #[test]
    fn maps_are_created_shared_and_read_back() {
        if !kernel() {
            return;
        }
        let insns = counting_program(1);
        let progs = [ProgramSource {
            name: "count",
            section: "xdp",
            prog_type: ProgType::Xdp,
            insns: &insns,
        }];
        let maps = [spec("counts", MapType::PerCpuArray, 8)];
        let obj = ObjectLoader::new(&maps, &progs, "GPL").load().unwrap();
        let p = obj.program("count").unwrap();
        assert_eq!(obj.program("xdp").unwrap().name, "count");
        let frame = [0u8; 64];
        let r = bpf::prog_test_run(p.fd(), &frame, &[], 1).unwrap();
        assert_eq!(r.retval, 2);
        let m = obj.map("counts").unwrap();
        let sum = m.lookup_summed(&1u32.to_le_bytes()).unwrap().unwrap();
        assert_eq!(u64::from_le_bytes(sum[..8].try_into().unwrap()), 5);
        // A per-CPU update writes every CPU's value.
        m.update(&2u32.to_le_bytes(), &7u64.to_le_bytes(), 0).unwrap();
        let all = m.lookup(&2u32.to_le_bytes()).unwrap().unwrap();
        assert_eq!(all.len(), 8 * possible_cpus());
        assert_eq!(m.keys().unwrap().len(), 4);
        assert!(matches!(
            m.update(&[0; 3], &[0; 8], 0),
            Err(ObjectError::Size { what: "key", got: 3, .. })
        ));
        // The map taken over by a second object keeps its contents.
        let mut obj = obj;
        let taken = obj.take_map("counts").unwrap();
        let obj2 =
            ObjectLoader::new(&maps, &progs, "GPL").reuse_map("counts", taken).load().unwrap();
        bpf::prog_test_run(obj2.program("count").unwrap().fd(), &frame, &[], 1).unwrap();
        let sum = obj2.map("counts").unwrap().lookup_summed(&1u32.to_le_bytes()).unwrap().unwrap();
        assert_eq!(u64::from_le_bytes(sum[..8].try_into().unwrap()), 10);
    }

    #[test]
    fn refusals_carry_the_log_and_bad_references_are_named() {
        if !kernel() {
            return;
        }
        // Map 1 does not exist.
        let mut insns = counting_program(1);
        insns[1].imm = 1;
        let progs = [ProgramSource {
            name: "count",
            section: "xdp",
            prog_type: ProgType::Xdp,
            insns: &insns,
        }];
        let maps = [spec("counts", MapType::Array, 8)];
        let e = ObjectLoader::new(&maps, &progs, "GPL").load().unwrap_err();
        assert!(matches!(e, ObjectError::Reference { slot: 1, map: 1, maps: 1, .. }), "{e}");
        // The lookup's result used without its null check.
        let mut insns = counting_program(1);
        insns[6] = EbpfInsn { code: 0x05, dst: 0, src: 0, off: 0, imm: 0 }; // ja +0
        let progs = [ProgramSource { insns: &insns, ..progs[0] }];
        let e = ObjectLoader::new(&maps, &progs, "GPL").load().unwrap_err();
        let ObjectError::Rejected { log, .. } = &e else { panic!("{e}") };
        assert!(log.contains("map_value_or_null"), "{log}");
        // A reused map of another shape.
        let obj = ObjectLoader::new(&maps, &[], "GPL").load().unwrap();
        let mut obj = obj;
        let m = obj.take_map("counts").unwrap();
        let other = [spec("counts", MapType::Array, 16)];
        let e = ObjectLoader::new(&other, &[], "GPL").reuse_map("counts", m).load().unwrap_err();
        assert!(matches!(e, ObjectError::MapShape { .. }), "{e}");
    }
}
