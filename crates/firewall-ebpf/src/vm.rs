//! The pf program in sift's eBPF VM: the committed object's programs loaded with the kernel's
//! helpers, one set of maps shared by the three hooks, the clock set by the caller.
//!
//! Why its own module: the VM is where the program is checked without a kernel (equivalence
//! with the userspace engine packet by packet, with expiry on a clock the test moves; the fuzz
//! target) and runs where there is no kernel to load it into.
//!
//! A `Vm` runs one program over the maps it holds; the hooks' programs are loaded on first use
//! and the one set of maps moves to whichever runs (the others hold placeholders).

use sift_ebpf::{MapSpec, MapType};
use sift_ebpf_elf::Object;
use sift_ebpf_vm::{Helpers, Map, SkbInfo, Vm, register_kernel_helpers};
use sift_firewall::Verdict;

use crate::image::MapsMut;
use crate::layout::{LogRecord, map};
use crate::read::{Entry, MapsRead};
use crate::{Error, Hook, Result, RuleSet};

/// The pf program in sift's VM.
pub struct VmPf {
    object: Object,
    specs: Vec<MapSpec>,
    /// By hook: Xdp, TcIngress, TcEgress.
    vms: [Option<Vm>; 3],
    /// The hook whose VM holds the maps.
    owner: usize,
    ifindex: u32,
}

impl std::fmt::Debug for VmPf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmPf").field("owner", &self.owner).finish_non_exhaustive()
    }
}

fn slot(hook: Hook) -> usize {
    match hook {
        Hook::Xdp => 0,
        Hook::TcIngress => 1,
        Hook::TcEgress => 2,
    }
}

/// A map of `spec`'s shape that holds (almost) nothing: what a hook's VM keeps while another
/// hook's VM holds the real maps.
fn placeholder(spec: &MapSpec) -> MapSpec {
    let mut s = spec.clone();
    s.max_entries = if s.map_type == MapType::Ringbuf { 4096 } else { 1 };
    s.initial.clear();
    s
}

impl VmPf {
    /// The program with `rules` written into fresh maps; packets arrive on interface
    /// `ifindex` (what pflog records and states note).
    pub fn new(rules: &RuleSet, ifindex: u32) -> Result<VmPf> {
        let object = crate::object()?;
        let specs = rules.map_specs(&object);
        let mut pf = VmPf { object, specs, vms: [None, None, None], owner: 0, ifindex };
        let maps = pf.specs.iter().map(Map::from_spec).collect::<std::result::Result<_, _>>()?;
        pf.vms[0] = Some(pf.load(Hook::Xdp, maps)?);
        rules.image.write(&mut pf)?;
        Ok(pf)
    }

    fn load(&self, hook: Hook, maps: Vec<Map>) -> Result<Vm> {
        let p = self
            .object
            .programs
            .iter()
            .find(|p| p.name == hook.program())
            .ok_or_else(|| Error::Missing(format!("program {}", hook.program())))?;
        let mut helpers = Helpers::new();
        register_kernel_helpers(&mut helpers);
        let mut vm = Vm::load_with_maps(&p.insns, helpers, maps)?;
        vm.env_mut().set_trace_output(std::io::sink());
        Ok(vm)
    }

    /// The VM of `hook`, holding the maps.
    fn vm(&mut self, hook: Hook) -> Result<&mut Vm> {
        let i = slot(hook);
        if self.vms[i].is_none() {
            let maps = self
                .specs
                .iter()
                .map(|s| Map::from_spec(&placeholder(s)))
                .collect::<std::result::Result<_, _>>()?;
            self.vms[i] = Some(self.load(hook, maps)?);
        }
        if i != self.owner {
            let (a, b) = (i.min(self.owner), i.max(self.owner));
            let (lo, hi) = self.vms.split_at_mut(b);
            let (Some(x), Some(y)) = (lo[a].as_mut(), hi[0].as_mut()) else {
                return Err(Error::Missing("a hook's VM".into()));
            };
            x.maps_mut().swap_with_slice(y.maps_mut());
            self.owner = i;
        }
        self.vms[i].as_mut().ok_or_else(|| Error::Missing("a hook's VM".into()))
    }

    fn maps(&self) -> &[Map] {
        self.vms[self.owner].as_ref().map_or(&[], |vm| vm.maps())
    }

    fn map_index(&self, name: &str) -> Result<usize> {
        self.specs
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::Missing(format!("map {name}")))
    }

    /// Runs the program of `hook` on an Ethernet frame (rewritten in place: the program
    /// never rewrites) at `now_ns` on the clock `bpf_ktime_get_ns` reads.
    pub fn run(&mut self, hook: Hook, frame: &mut [u8], now_ns: u64) -> Result<Verdict> {
        let ifindex = self.ifindex;
        let vm = self.vm(hook)?;
        vm.env_mut().clock_ns = now_ns;
        let ret = match hook {
            Hook::Xdp => vm.run_xdp(frame, ifindex)?,
            Hook::TcIngress | Hook::TcEgress => {
                let info = SkbInfo { ifindex, ingress_ifindex: ifindex, ..SkbInfo::default() };
                vm.run_tc(frame, &info)?
            }
        };
        hook.verdict(ret).ok_or(Error::BadReturn { program: hook.program(), ret })
    }

    /// Instructions the last run executed.
    pub fn executed(&self) -> u64 {
        self.vms[self.owner].as_ref().map_or(0, Vm::executed)
    }

    /// Removes every state (`pfctl -F states`).
    pub fn flush_states(&mut self) -> Result<()> {
        let i = self.map_index(map::STATES)?;
        let fresh = Map::from_spec(&self.specs[i])?;
        let vm = self.vms[self.owner].as_mut().ok_or_else(|| Error::Missing("the VM".into()))?;
        vm.maps_mut()[i] = fresh;
        Ok(())
    }

    /// The pflog records written since the last call.
    pub fn drain_log(&mut self) -> Vec<LogRecord> {
        let Ok(i) = self.map_index(map::LOG) else { return Vec::new() };
        let Some(vm) = self.vms[self.owner].as_mut() else { return Vec::new() };
        vm.maps_mut()[i].ringbuf_drain().iter().filter_map(|r| LogRecord::decode(r)).collect()
    }
}

impl MapsMut for VmPf {
    fn write(&mut self, name: &str, key: &[u8], value: &[u8]) -> Result<()> {
        let i = self.map_index(name)?;
        let owner = self.owner;
        let vm = self.vms[owner].as_mut().ok_or_else(|| Error::Missing("the VM".into()))?;
        vm.maps_mut()[i]
            .update(key, value, 0)
            .map_err(|errno| Error::VmUpdate { map: name.to_string(), errno })
    }
}

impl MapsRead for VmPf {
    fn entries(&self, name: &str) -> Result<Vec<Entry>> {
        let i = self.map_index(name)?;
        Ok(self.maps().get(i).map(Map::entries).unwrap_or_default())
    }

    fn summed(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let i = self.map_index(name)?;
        let Some(m) = self.maps().get(i) else { return Ok(None) };
        let Some(values) = m.lookup_percpu(key) else { return Ok(None) };
        let size = m.spec().value_size as usize;
        let mut sum = vec![0u64; size / 8];
        for v in values {
            for (s, w) in sum.iter_mut().zip(v.chunks_exact(8)) {
                *s = s.wrapping_add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
            }
        }
        Ok(Some(sum.iter().flat_map(|x| x.to_le_bytes()).collect()))
    }
}
