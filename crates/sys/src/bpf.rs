//! `bpf(2)`: loading eBPF programs into the kernel and running them there.
//!
//! The kernel's verifier and JIT are an engine and an oracle for sift's eBPF: a program is
//! loaded with `BPF_PROG_LOAD` (the verifier's log explains a refusal) and run on a packet with
//! `BPF_PROG_TEST_RUN`, which gives its return value and the kernel's own time per run. The
//! program bytes are opaque here (8 bytes a slot, as `sift-ebpf` encodes them); attaching
//! programs to hooks will be added next to these commands.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// `BPF_PROG_TYPE_SOCKET_FILTER`.
pub const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
/// `BPF_PROG_TYPE_SCHED_CLS` (tc classifier).
pub const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
/// `BPF_PROG_TYPE_XDP`.
pub const BPF_PROG_TYPE_XDP: u32 = 6;

/// `BPF_PROG_LOAD`.
const BPF_PROG_LOAD: libc::c_long = 5;
/// `BPF_PROG_TEST_RUN`.
const BPF_PROG_TEST_RUN: libc::c_long = 10;

/// `union bpf_attr` for `BPF_PROG_LOAD` (the fields up to `expected_attach_type`).
#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// `union bpf_attr` for `BPF_PROG_TEST_RUN`.
#[repr(C)]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    _pad: u32,
}

/// The command's attribute structs, which [`bpf`] may pass to the kernel.
trait Attr {}
impl Attr for ProgLoadAttr {}
impl Attr for TestRunAttr {}

/// `bpf(cmd, attr, sizeof attr)`, retried when a signal interrupts it.
fn bpf<T: Attr>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    loop {
        // SAFETY: `attr` is a live, initialised #[repr(C)] prefix of `union bpf_attr` for
        // `cmd`, and its size is passed; every pointer inside it points to memory that outlives
        // the call (the callers keep the buffers borrowed).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                cmd,
                (attr as *mut T).cast::<libc::c_void>(),
                std::mem::size_of::<T>() as libc::c_uint,
            )
        };
        if rc >= 0 {
            return Ok(rc);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// How many times [`prog_load`] asks the kernel when the verifier is interrupted (libbpf's
/// `PROG_LOAD_ATTEMPTS`).
pub const PROG_LOAD_ATTEMPTS: u32 = 8;

/// `BPF_PROG_LOAD` of `insns` (encoded eBPF, 8 bytes per slot; a partial last slot is not
/// passed) as a program of type `prog_type`, licensed GPL, named `sift`. With `log`, the
/// verifier's log (level 1) is written into it, NUL-terminated (loading with a log is slower:
/// ask for it after a refusal). The verifier gives up with `EAGAIN` when a signal reaches the
/// process while it works (another thread's timer, a child ending); like libbpf, the load is
/// tried again, up to [`PROG_LOAD_ATTEMPTS`] times in all, and so is `ENOMEM`, after 8, 16,
/// 32… ms (at most half a second each: under two seconds in all).
pub fn prog_load(prog_type: u32, insns: &[u8], log: Option<&mut [u8]>) -> io::Result<OwnedFd> {
    const LICENSE: &[u8] = b"GPL\0";
    let mut attr = ProgLoadAttr {
        prog_type,
        insn_cnt: u32::try_from(insns.len() / 8).unwrap_or(u32::MAX),
        insns: insns.as_ptr() as u64,
        license: LICENSE.as_ptr() as u64,
        ..ProgLoadAttr::default()
    };
    attr.prog_name[..4].copy_from_slice(b"sift");
    if let Some(log) = log {
        attr.log_level = 1;
        attr.log_size = u32::try_from(log.len()).unwrap_or(u32::MAX);
        attr.log_buf = log.as_mut_ptr() as u64;
    }
    load(&mut attr)
}

/// `BPF_PROG_LOAD` with the retries [`prog_load`] describes.
fn load(attr: &mut ProgLoadAttr) -> io::Result<OwnedFd> {
    let mut attempts = 1;
    let fd = loop {
        match bpf(BPF_PROG_LOAD, attr) {
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOMEM))
                    && attempts < PROG_LOAD_ATTEMPTS =>
            {
                // A signal interrupted the verifier (EAGAIN), or closed programs not yet freed
                // after their RCU grace period fill the memory cgroup (ENOMEM): a moment later
                // the load goes through. Busy machines needed more than an immediate retry.
                std::thread::sleep(std::time::Duration::from_millis((4u64 << attempts).min(500)));
                attempts += 1;
            }
            other => break other?,
        }
    };
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("bad fd"))?;
    // SAFETY: BPF_PROG_LOAD returned a new descriptor that nobody else owns.
    unsafe { crate::owned_fd(fd) }
}

/// What a `BPF_PROG_TEST_RUN` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestRun {
    /// The program's return value (`r0`).
    pub retval: u32,
    /// The mean time per repetition, in nanoseconds (the kernel's measure).
    pub duration_ns: u32,
}

/// `BPF_PROG_TEST_RUN` of a loaded program on `data`, with the context `ctx` (empty: the
/// kernel's default), `repeat` times (0 counts as 1).
pub fn prog_test_run(prog: impl AsFd, data: &[u8], ctx: &[u8], repeat: u32) -> io::Result<TestRun> {
    let mut attr = TestRunAttr {
        prog_fd: prog.as_fd().as_raw_fd() as u32,
        data_size_in: u32::try_from(data.len()).unwrap_or(u32::MAX),
        data_in: data.as_ptr() as u64,
        repeat,
        ctx_size_in: u32::try_from(ctx.len()).unwrap_or(u32::MAX),
        ctx_in: if ctx.is_empty() { 0 } else { ctx.as_ptr() as u64 },
        ..TestRunAttr::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr)?;
    Ok(TestRun { retval: attr.retval, duration_ns: attr.duration })
}

/// Whether an error from [`prog_load`] means the kernel cannot be asked at all rather than a
/// refusal of the program: `EPERM` (no privilege, `unprivileged_bpf_disabled`) or `ENOSYS` (no
/// `bpf(2)`). Not `EACCES`, which is the verifier refusing an access.
pub fn is_unavailable(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EPERM) | Some(libc::ENOSYS))
}

/// Whether an error from [`prog_load`] with a log is `ENOSPC`: the log was longer than its
/// buffer (the kernel keeps its tail). Since Linux 6.4 the verifier finishes first, so the
/// program itself may be fine.
pub fn is_log_truncated(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ENOSPC)
}

// ---- maps, and test runs that return the packet ----------------------------------------------
// What running eBPF objects in the kernel next to sift's VM needs: the VM's and the ELF
// loader's differential tests create maps, fill and read them, and compare output packets.

/// `BPF_MAP_CREATE`.
const BPF_MAP_CREATE: libc::c_long = 0;
/// `BPF_MAP_LOOKUP_ELEM`.
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
/// `BPF_MAP_UPDATE_ELEM`.
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
/// `BPF_MAP_DELETE_ELEM`.
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
/// `BPF_MAP_GET_NEXT_KEY`.
const BPF_MAP_GET_NEXT_KEY: libc::c_long = 4;
/// `BPF_MAP_LOOKUP_AND_DELETE_ELEM`.
const BPF_MAP_LOOKUP_AND_DELETE_ELEM: libc::c_long = 21;

/// `union bpf_attr` for `BPF_MAP_CREATE` (the fields up to `map_name`).
#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// `union bpf_attr` for the element commands.
#[repr(C)]
#[derive(Default)]
struct MapElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

impl Attr for MapCreateAttr {}
impl Attr for MapElemAttr {}

/// `BPF_MAP_CREATE`: a map of `map_type` (the kernel's number) named `sift`.
pub fn map_create(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
) -> io::Result<OwnedFd> {
    let mut attr = MapCreateAttr {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags,
        ..Default::default()
    };
    attr.map_name[..4].copy_from_slice(b"sift");
    let fd = bpf(BPF_MAP_CREATE, &mut attr)?;
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("bad fd"))?;
    // SAFETY: BPF_MAP_CREATE returned a new descriptor that nobody else owns.
    unsafe { crate::owned_fd(fd) }
}

fn map_elem(
    cmd: libc::c_long,
    map: impl AsFd,
    key: Option<&[u8]>,
    value: u64,
    flags: u64,
) -> io::Result<()> {
    let mut attr = MapElemAttr {
        map_fd: map.as_fd().as_raw_fd() as u32,
        key: key.map_or(0, |k| k.as_ptr() as u64),
        value,
        flags,
        ..Default::default()
    };
    bpf(cmd, &mut attr).map(|_| ())
}

/// `BPF_MAP_LOOKUP_ELEM`: the value of `key` into `value` (its size is the map's value size;
/// per-CPU maps: one value per possible CPU, each rounded up to 8 bytes). Queues and stacks
/// (empty `key`) peek.
pub fn map_lookup_elem(map: impl AsFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    let key = (!key.is_empty()).then_some(key);
    map_elem(BPF_MAP_LOOKUP_ELEM, map, key, value.as_mut_ptr() as u64, 0)
}

/// `BPF_MAP_UPDATE_ELEM` with `flags` (`BPF_ANY` 0, `BPF_NOEXIST` 1, `BPF_EXIST` 2); queues
/// and stacks (empty `key`) push.
pub fn map_update_elem(map: impl AsFd, key: &[u8], value: &[u8], flags: u64) -> io::Result<()> {
    let key = (!key.is_empty()).then_some(key);
    map_elem(BPF_MAP_UPDATE_ELEM, map, key, value.as_ptr() as u64, flags)
}

/// `BPF_MAP_DELETE_ELEM`.
pub fn map_delete_elem(map: impl AsFd, key: &[u8]) -> io::Result<()> {
    map_elem(BPF_MAP_DELETE_ELEM, map, Some(key), 0, 0)
}

/// `BPF_MAP_GET_NEXT_KEY`: the key after `key` (the first for `None`) into `next`; `ENOENT`
/// after the last.
pub fn map_get_next_key(map: impl AsFd, key: Option<&[u8]>, next: &mut [u8]) -> io::Result<()> {
    map_elem(BPF_MAP_GET_NEXT_KEY, map, key, next.as_mut_ptr() as u64, 0)
}

/// `BPF_MAP_LOOKUP_AND_DELETE_ELEM` without a key: a queue's or stack's pop into `value`.
pub fn map_pop_elem(map: impl AsFd, value: &mut [u8]) -> io::Result<()> {
    map_elem(BPF_MAP_LOOKUP_AND_DELETE_ELEM, map, None, value.as_mut_ptr() as u64, 0)
}

/// What [`prog_test_run_data`] reports: the return value and the packet and context as the
/// program left them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestRunOut {
    /// The program's return value (`r0`).
    pub retval: u32,
    /// The packet afterwards (`data_out`).
    pub data: Vec<u8>,
}

/// `BPF_PROG_TEST_RUN` once on `data` with the context `ctx` (empty: the kernel's default),
/// returning the packet as the program left it (up to `out_capacity` bytes).
pub fn prog_test_run_data(
    prog: impl AsFd,
    data: &[u8],
    ctx: &[u8],
    out_capacity: usize,
) -> io::Result<TestRunOut> {
    let mut out = vec![0u8; out_capacity];
    let mut attr = TestRunAttr {
        prog_fd: prog.as_fd().as_raw_fd() as u32,
        data_size_in: u32::try_from(data.len()).unwrap_or(u32::MAX),
        data_in: data.as_ptr() as u64,
        data_size_out: u32::try_from(out.len()).unwrap_or(u32::MAX),
        data_out: out.as_mut_ptr() as u64,
        repeat: 1,
        ctx_size_in: u32::try_from(ctx.len()).unwrap_or(u32::MAX),
        ctx_in: if ctx.is_empty() { 0 } else { ctx.as_ptr() as u64 },
        ..TestRunAttr::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr)?;
    out.truncate((attr.data_size_out as usize).min(out_capacity));
    Ok(TestRunOut { retval: attr.retval, data: out })
}

/// `BPF_PROG_LOAD` as [`prog_load`] with the program's type, license and (for XDP, 0) expected
/// attach type given: what an ELF object's program needs.
pub fn prog_load_licensed(prog_type: u32, insns: &[u8], license: &str) -> io::Result<OwnedFd> {
    let license =
        std::ffi::CString::new(license).map_err(|_| io::Error::other("NUL in license"))?;
    let mut attr = ProgLoadAttr {
        prog_type,
        insn_cnt: u32::try_from(insns.len() / 8).unwrap_or(u32::MAX),
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        ..ProgLoadAttr::default()
    };
    attr.prog_name[..4].copy_from_slice(b"sift");
    load(&mut attr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_is_eperm_or_enosys_only() {
        let e = io::Error::from_raw_os_error;
        assert!(is_unavailable(&e(libc::EPERM)));
        assert!(is_unavailable(&e(libc::ENOSYS)));
        for refusal in [libc::EACCES, libc::EINVAL, libc::E2BIG, libc::ENOSPC, libc::EFAULT] {
            assert!(!is_unavailable(&e(refusal)), "errno {refusal}");
        }
        assert!(!is_unavailable(&io::Error::other("not an errno")));
    }

    /// `r0 = 7; exit` loaded and run, and a program the verifier refuses, with its log.
    #[test]
    fn load_and_run() {
        // b7 00 0000 07000000: r0 = 7 (64-bit mov); 95 00 0000 00000000: exit.
        let ret7 = [0xb7, 0, 0, 0, 7, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0];
        let prog = match prog_load(BPF_PROG_TYPE_SOCKET_FILTER, &ret7, None) {
            Ok(fd) => fd,
            Err(e) if is_unavailable(&e) => {
                return sift_testkit::oracle_missing("kernel bpf(2) BPF_PROG_LOAD", e)
                    .unwrap_or(());
            }
            Err(e) => panic!("{e}"),
        };
        let run = prog_test_run(&prog, &[0u8; 64], &[], 3).unwrap();
        assert_eq!(run.retval, 7);
        // exit without setting r0: refused, and the log says why.
        let mut log = vec![0u8; 1 << 16];
        let err = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, &ret7[8..], Some(&mut log)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EACCES));
        let end = log.iter().position(|&b| b == 0).unwrap();
        let log = String::from_utf8_lossy(&log[..end]);
        assert!(log.contains("R0 !read_ok"), "{log}");
    }
}
