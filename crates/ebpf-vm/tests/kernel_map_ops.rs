//! Maps against the kernel's, operation by operation: random updates (with every flag and
//! an invalid one), deletes, lookups (LPM: longest-prefix matches), pushes, pops and peeks
//! on a kernel map (map syscalls) and on this VM's [`Map`] through its API, comparing each
//! result (the errno) and every value read, then the contents at the end. Per-CPU maps use
//! the syscall's layout (a value per possible CPU, the VM given as many virtual CPUs).
//!
//! Not here: LRU hashes (the kernel's per-CPU free lists make it evict before it is full
//! when the thread moves between CPUs; the program cases cover LRU below its size), prog
//! arrays and device maps (their syscall values are file descriptors and interfaces).

use std::io;
use std::os::fd::OwnedFd;

use sift_ebpf::{MapSpec, MapType};
use sift_ebpf_vm::Map;
use sift_sys::bpf;

use sift_testkit::Rng;

fn errno(r: io::Result<()>) -> i64 {
    match r {
        Ok(()) => 0,
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(-1)),
    }
}

fn vm_errno(r: Result<(), i64>) -> i64 {
    r.err().unwrap_or(0)
}

fn possible_cpus() -> u32 {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    let n: u32 = s
        .trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<u32>().unwrap_or(0) - a.parse::<u32>().unwrap_or(0) + 1,
            None => 1,
        })
        .sum();
    n.max(1)
}

struct Pair {
    spec: MapSpec,
    vm: Map,
    fd: OwnedFd,
    cpus: usize,
}

fn pair(
    map_type: MapType,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    flags: u32,
) -> Option<Pair> {
    let spec = MapSpec {
        name: map_type.name().to_lowercase(),
        map_type,
        key_size,
        value_size,
        max_entries,
        flags,
        initial: Vec::new(),
    };
    let fd = match bpf::map_create(map_type as u32, key_size, value_size, max_entries, flags) {
        Ok(fd) => fd,
        Err(e) if bpf::is_unavailable(&e) => {
            return sift_testkit::oracle_missing("kernel bpf(2) BPF_MAP_CREATE", e);
        }
        Err(e) => panic!("{map_type}: {e}"),
    };
    let cpus = possible_cpus();
    let vm = Map::from_spec_cpus(&spec, cpus).unwrap();
    let cpus = vm.num_cpus() as usize;
    Some(Pair { spec, vm, fd, cpus })
}

impl Pair {
    /// Bytes of a value as the syscall reads and writes it.
    fn value_len(&self) -> usize {
        if self.vm.is_percpu() {
            (self.spec.value_size as usize).div_ceil(8) * 8 * self.cpus
        } else {
            self.spec.value_size as usize
        }
    }

    fn vm_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        if self.vm.is_percpu() {
            let stride = (self.spec.value_size as usize).div_ceil(8) * 8;
            let vals = self.vm.lookup_percpu(key)?;
            let mut out = vec![0u8; stride * self.cpus];
            for (c, v) in vals.iter().enumerate() {
                out[c * stride..c * stride + v.len()].copy_from_slice(v);
            }
            Some(out)
        } else {
            self.vm.lookup(key).map(<[u8]>::to_vec)
        }
    }

    fn kernel_lookup(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut v = vec![0u8; self.value_len()];
        bpf::map_lookup_elem(&self.fd, key, &mut v).ok().map(|()| v)
    }

    /// Every key the kernel iterates, sorted.
    fn kernel_keys(&self) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        let mut key: Option<Vec<u8>> = None;
        loop {
            let mut next = vec![0u8; self.spec.key_size as usize];
            if bpf::map_get_next_key(&self.fd, key.as_deref(), &mut next).is_err() {
                break;
            }
            keys.push(next.clone());
            key = Some(next);
        }
        keys.sort();
        keys
    }
}

/// Runs `ops` random operations with keys from `key` and checks every result.
fn exercise(p: &mut Pair, ops: usize, seed: u64, key: impl Fn(&mut Rng) -> Vec<u8>) -> usize {
    let mut rng = Rng(seed);
    let name = p.spec.name.clone();
    let mut checked = 0;
    for op in 0..ops {
        let k = key(&mut rng);
        match rng.below(4) {
            0 | 1 => {
                let flags = rng.below(4);
                let v: Vec<u8> = (0..p.value_len()).map(|_| rng.next() as u8).collect();
                let want = errno(bpf::map_update_elem(&p.fd, &k, &v, flags));
                let got = vm_errno(p.vm.update(&k, &v, flags));
                assert_eq!(got, want, "{name} op {op}: update {k:02x?} flags {flags}");
            }
            2 => {
                let want = errno(bpf::map_delete_elem(&p.fd, &k));
                let got = vm_errno(p.vm.delete(&k));
                assert_eq!(got, want, "{name} op {op}: delete {k:02x?}");
            }
            _ => {
                assert_eq!(p.vm_lookup(&k), p.kernel_lookup(&k), "{name} op {op}: lookup {k:02x?}");
            }
        }
        checked += 1;
    }
    // LPM tries: the kernel iterates the prefixes with the data bytes they were given, and a
    // lookup of one (its own length bounds the match) finds its value.
    let keys = p.kernel_keys();
    assert_eq!(p.vm.keys(), keys, "{name}: keys at the end");
    for k in &keys {
        assert_eq!(p.vm_lookup(k), p.kernel_lookup(k), "{name}: {k:02x?} at the end");
    }
    checked
}

#[test]
fn hash_array_and_per_cpu_maps_agree_with_the_kernel() {
    let mut total = 0;
    let small = |r: &mut Rng| (r.below(48) as u32).to_le_bytes().to_vec();
    let Some(mut h) = pair(MapType::Hash, 4, 8, 32, 0) else { return };
    total += exercise(&mut h, 20000, 1, small);
    let mut h = pair(MapType::Hash, 4, 8, 32, 1).unwrap();
    total += exercise(&mut h, 20000, 2, small);
    let mut a = pair(MapType::Array, 4, 12, 16, 0).unwrap();
    total += exercise(&mut a, 10000, 3, |r| (r.below(20) as u32).to_le_bytes().to_vec());
    let mut pa = pair(MapType::PerCpuArray, 4, 8, 8, 0).unwrap();
    total += exercise(&mut pa, 10000, 4, |r| (r.below(10) as u32).to_le_bytes().to_vec());
    let mut ph = pair(MapType::PerCpuHash, 2, 16, 16, 0).unwrap();
    total += exercise(&mut ph, 10000, 5, |r| (r.below(24) as u16).to_le_bytes().to_vec());
    eprintln!("hash/array/per-CPU: {total} operations agree");
}

#[test]
fn lpm_tries_agree_with_the_kernel() {
    // Prefix lengths 0…34 (33 and 34 invalid for IPv4), addresses from a few values per
    // byte so that prefixes nest and part.
    let key = |r: &mut Rng| {
        let bytes = [0u8, 10, 128, 192, 255];
        let prefix = r.below(35) as u32;
        let mut k = prefix.to_le_bytes().to_vec();
        for _ in 0..4 {
            k.push(bytes[r.below(5) as usize] ^ (r.below(4) as u8));
        }
        k
    };
    let Some(mut t) = pair(MapType::LpmTrie, 8, 8, 48, 1) else { return };
    let n = exercise(&mut t, 30000, 6, key);
    let mut t2 = pair(MapType::LpmTrie, 5, 1, 200, 1).unwrap();
    let n2 = exercise(&mut t2, 30000, 7, |r| vec![r.below(10) as u8, 0, 0, 0, r.next() as u8]);
    eprintln!("LPM: {} operations agree", n + n2);
}

#[test]
fn queues_and_stacks_agree_with_the_kernel() {
    for (t, seed) in [(MapType::Queue, 8), (MapType::Stack, 9)] {
        let Some(mut p) = pair(t, 0, 8, 6, 0) else { return };
        let mut rng = Rng(seed);
        for op in 0..10000 {
            match rng.below(3) {
                0 => {
                    let flags = rng.below(4);
                    let v = rng.next().to_le_bytes();
                    let want = errno(bpf::map_update_elem(&p.fd, &[], &v, flags));
                    let got = vm_errno(p.vm.push(&v, flags));
                    assert_eq!(got, want, "{t} op {op}: push flags {flags}");
                }
                1 => {
                    let mut v = [0u8; 8];
                    let want = bpf::map_pop_elem(&p.fd, &mut v).ok().map(|()| v.to_vec());
                    assert_eq!(p.vm.pop().ok(), want, "{t} op {op}: pop");
                }
                _ => {
                    let mut v = [0u8; 8];
                    let want = bpf::map_lookup_elem(&p.fd, &[], &mut v).ok().map(|()| v.to_vec());
                    assert_eq!(p.vm.peek().map(<[u8]>::to_vec), want, "{t} op {op}: peek");
                }
            }
        }
    }
    eprintln!("queue/stack: 20000 operations agree");
}
