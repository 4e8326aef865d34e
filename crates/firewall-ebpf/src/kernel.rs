//! The pf program in the kernel: the committed object loaded through `sift_kernel::object`
//! (maps created and sized for the rule set, every program verified by the kernel), the rule
//! set written into its maps, packets run with `BPF_PROG_TEST_RUN`.
//!
//! Why its own module: this is what gets attached to interfaces (the programs' descriptors),
//! what the equivalence tests run packet by packet, and what the benchmark times with the
//! kernel's own clock.

use std::os::fd::BorrowedFd;
use std::path::Path;

use sift_ebpf_elf::Object;
use sift_firewall::Verdict;
use sift_kernel::object::{KernelMap, KernelObject, ObjectLoader, ProgramSource};

use crate::image::MapsMut;
use crate::layout::LogRecord;
use crate::read::{Entry, MapsRead};
use crate::{Error, Hook, Result, RuleSet};

/// The pf program in the kernel.
#[derive(Debug)]
pub struct KernelPf {
    object: KernelObject,
    /// The pflog ring buffer, mapped on first read.
    log: Option<sift_sys::ringbuf::RingBuf>,
}

/// The most bytes `BPF_PROG_TEST_RUN` hands an XDP program without fragments (a page less
/// the headroom and the shared info; measured on 6.18).
pub const MAX_XDP_FRAME: usize = 3520;

impl KernelPf {
    /// Loads the programs with fresh maps and writes `rules` into them.
    pub fn load(rules: &RuleSet) -> Result<KernelPf> {
        KernelPf::load_with(rules, |l| l)
    }

    /// Loads the programs keeping `old`'s state table and counters (a rule set replaced
    /// without losing its connections), and writes `rules` into the new maps.
    pub fn replace(rules: &RuleSet, mut old: KernelPf) -> Result<KernelPf> {
        use crate::layout::map;
        let states = old.object.take_map(map::STATES)?;
        let counters = old.object.take_map(map::COUNTERS)?;
        KernelPf::load_with(rules, |l| {
            l.reuse_map(map::STATES, states).reuse_map(map::COUNTERS, counters)
        })
    }

    /// Loads the programs keeping the state table and counters pinned under `dir` by an
    /// earlier [`KernelPf::pin`] (another process's rule set, replaced without losing its
    /// connections); with nothing pinned there, as [`KernelPf::load`].
    pub fn load_keeping(rules: &RuleSet, dir: &Path) -> Result<KernelPf> {
        use crate::layout::map;
        let object = crate::object()?;
        let spec = |name: &str| object.maps.iter().find(|m| m.name == name).cloned();
        let mut kept = Vec::new();
        for name in [map::STATES, map::COUNTERS] {
            let path = dir.join(name);
            if let (true, Some(spec)) = (path.exists(), spec(name)) {
                kept.push((name, KernelMap::open_pinned(&path, &spec)?));
            }
        }
        KernelPf::load_from(&object, rules, |mut l| {
            for (name, m) in kept {
                l = l.reuse_map(name, m);
            }
            l
        })
    }

    /// Loads the programs with fresh maps, keeping each program's verifier log (what
    /// `--dry-run` shows), and writes `rules` into them.
    pub fn load_logged(rules: &RuleSet) -> Result<KernelPf> {
        KernelPf::load_with(rules, |l| l.verifier_log(true))
    }

    /// Pins every map under `dir` (created when missing), by its name: how later commands
    /// ([`PinnedPf::open`], [`KernelPf::load_keeping`]) find them.
    pub fn pin(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(Error::Pin)?;
        for m in self.object.maps() {
            m.pin(&dir.join(&m.spec().name))?;
        }
        Ok(())
    }

    /// Loads another build of the program (an object compiled from `bpf/pf.bpf.c`, with the
    /// same maps) with fresh maps, and writes `rules` into them.
    pub fn load_object(object: &Object, rules: &RuleSet) -> Result<KernelPf> {
        KernelPf::load_from(object, rules, |l| l)
    }

    fn load_with(
        rules: &RuleSet,
        adjust: impl FnOnce(ObjectLoader<'_>) -> ObjectLoader<'_>,
    ) -> Result<KernelPf> {
        KernelPf::load_from(&crate::object()?, rules, adjust)
    }

    fn load_from(
        object: &Object,
        rules: &RuleSet,
        adjust: impl FnOnce(ObjectLoader<'_>) -> ObjectLoader<'_>,
    ) -> Result<KernelPf> {
        let specs = rules.map_specs(object);
        let programs: Vec<ProgramSource<'_>> = object
            .programs
            .iter()
            .map(|p| ProgramSource {
                name: &p.name,
                section: &p.section,
                prog_type: p.prog_type,
                insns: &p.insns,
            })
            .collect();
        let loader = adjust(ObjectLoader::new(&specs, &programs, &object.license));
        let mut pf = KernelPf { object: loader.load()?, log: None };
        rules.image.write(&mut pf)?;
        Ok(pf)
    }

    /// The object: maps and programs.
    pub fn object(&self) -> &KernelObject {
        &self.object
    }

    /// The descriptor of `hook`'s program (to attach it).
    pub fn program_fd(&self, hook: Hook) -> Result<BorrowedFd<'_>> {
        Ok(self.object.program(hook.program())?.fd())
    }

    /// Runs `hook`'s program once on an Ethernet frame with `BPF_PROG_TEST_RUN`. `None` when
    /// the kernel does not run that frame (shorter than an Ethernet header; for TC, an IP
    /// EtherType without a whole IP header; longer than a test run's page).
    pub fn run(&self, hook: Hook, frame: &[u8]) -> Result<Option<Verdict>> {
        let fd = self.program_fd(hook)?;
        match sift_sys_test_run(fd, frame, 1) {
            Ok((ret, _)) => Ok(Some(
                hook.verdict(u64::from(ret))
                    .ok_or(Error::BadReturn { program: hook.program(), ret: u64::from(ret) })?,
            )),
            Err(e) if e.raw_os_error() == Some(22) => Ok(None),
            Err(e) => Err(Error::TestRun(e)),
        }
    }

    /// The pflog records written since the last call (the ring buffer, mapped on first use:
    /// a record the ring had no room for is counted in `Counters::log_lost`).
    pub fn drain_log(&mut self) -> Result<Vec<LogRecord>> {
        if self.log.is_none() {
            let map = self.object.map(crate::layout::map::LOG)?;
            self.log = Some(sift_sys::ringbuf::RingBuf::new(map.fd()).map_err(Error::Ring)?);
        }
        let mut out = Vec::new();
        if let Some(ring) = &mut self.log {
            ring.consume(|r| out.extend(LogRecord::decode(r)));
        }
        Ok(out)
    }

    /// Waits up to `timeout` for pflog records (`true`: some are there).
    pub fn wait_log(&mut self, timeout: std::time::Duration) -> Result<bool> {
        if self.log.is_none() {
            let map = self.object.map(crate::layout::map::LOG)?;
            self.log = Some(sift_sys::ringbuf::RingBuf::new(map.fd()).map_err(Error::Ring)?);
        }
        match &self.log {
            Some(ring) => ring.wait(timeout).map_err(Error::Ring),
            None => Ok(false),
        }
    }

    /// Removes every state (`pfctl -F states`); returns how many there were. States that
    /// packets create meanwhile stay.
    pub fn flush_states(&self) -> Result<usize> {
        flush(self.object.map(crate::layout::map::STATES)?)
    }

    /// The kernel's own time per run of `hook`'s program on `frame`, in nanoseconds, over
    /// `repeat` runs (one `BPF_PROG_TEST_RUN`: for XDP, use `repeat` ≥ 10^6; a repeated XDP
    /// test run costs about 16 ms to set up).
    pub fn time(&self, hook: Hook, frame: &[u8], repeat: u32) -> Result<u32> {
        let fd = self.program_fd(hook)?;
        sift_sys_test_run(fd, frame, repeat).map(|(_, ns)| ns).map_err(Error::TestRun)
    }
}

/// The maps of a rule set running in the kernel, opened from their pins ([`KernelPf::pin`]):
/// what `sift pf show` and `sift pf flush` read and change.
#[derive(Debug)]
pub struct PinnedPf {
    maps: Vec<KernelMap>,
}

impl PinnedPf {
    /// The maps pinned under `dir` (every map of the object must be there).
    pub fn open(dir: &Path) -> Result<PinnedPf> {
        let object = crate::object()?;
        let maps = object
            .maps
            .iter()
            .map(|spec| Ok(KernelMap::open_pinned(&dir.join(&spec.name), spec)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(PinnedPf { maps })
    }

    fn map(&self, name: &str) -> Result<&KernelMap> {
        self.maps.iter().find(|m| m.spec().name == name).ok_or_else(|| Error::Missing(name.into()))
    }

    /// Removes every state (`pfctl -F states`); returns how many there were.
    pub fn flush_states(&self) -> Result<usize> {
        flush(self.map(crate::layout::map::STATES)?)
    }
}

impl MapsRead for PinnedPf {
    fn entries(&self, name: &str) -> Result<Vec<Entry>> {
        Ok(self.map(name)?.entries()?)
    }

    fn summed(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map(name)?.lookup_summed(key)?)
    }
}

fn flush(m: &KernelMap) -> Result<usize> {
    let mut n = 0;
    for k in m.keys()? {
        n += usize::from(m.delete(&k)?);
    }
    Ok(n)
}

/// The programs' clock now, in seconds (`bpf_ktime_get_ns`'s `CLOCK_MONOTONIC`): what a
/// state's creation, last packet and expiry are on.
pub fn now() -> u64 {
    sift_sys::time::monotonic_ns() / 1_000_000_000
}

/// `BPF_PROG_TEST_RUN`: (return value, ns per run).
fn sift_sys_test_run(fd: BorrowedFd<'_>, frame: &[u8], repeat: u32) -> std::io::Result<(u32, u32)> {
    let r = sift_sys::bpf::prog_test_run(fd, frame, &[], repeat)?;
    Ok((r.retval, r.duration_ns))
}

impl MapsMut for KernelPf {
    fn write(&mut self, name: &str, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.object.map(name)?.update(key, value, 0)?)
    }
}

impl MapsRead for KernelPf {
    fn entries(&self, name: &str) -> Result<Vec<Entry>> {
        Ok(self.object.map(name)?.entries()?)
    }

    fn summed(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.object.map(name)?.lookup_summed(key)?)
    }
}
