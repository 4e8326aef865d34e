//! `bpf(2)`: loading eBPF programs into the kernel, running them there, and attaching them.
//!
//! The kernel's verifier and JIT are an engine and an oracle for sift's eBPF: a program is
//! loaded with `BPF_PROG_LOAD` (the verifier's log explains a refusal) and run on a packet with
//! `BPF_PROG_TEST_RUN`, which gives its return value and the kernel's own time per run. The
//! program bytes are opaque here (8 bytes a slot, as `sift-ebpf` encodes them).
//!
//! Deploying a program is the rest of the commands, in two submodules re-exported here:
//!
//! * objects ([`obj_pin`], [`obj_get`], [`prog_info`], [`map_info`], [`link_info`],
//!   [`prog_get_fd_by_id`], [`map_get_fd_by_id`], [`link_get_fd_by_id`], [`mount_bpffs`]):
//!   programs, maps and links outlive the process when pinned in the BPF file system, and are
//!   found again by path or by id;
//! * links ([`link_create`], [`link_update`], [`link_detach`], [`prog_query`]): a program
//!   attached to an interface's XDP or TCX hook through a `bpf_link`, replaced atomically,
//!   detached, and the programs on a TCX hook listed.
//!
//! Netlink's way of attaching (`IFLA_XDP`, `clsact` + `cls_bpf`) is in [`crate::netlink`].

mod link;
mod obj;

pub use link::{
    BPF_F_AFTER, BPF_F_BEFORE, BPF_F_ID, BPF_F_LINK, BPF_F_REPLACE, LinkCreate, ProgQuery,
    link_create, link_detach, link_update, prog_query,
};
pub use obj::{
    BPF_LINK_TYPE_TCX, BPF_LINK_TYPE_XDP, BPFFS_MAGIC, LinkInfo, MapInfo, ObjKind, ProgInfo,
    is_bpffs, link_get_fd_by_id, link_info, map_get_fd_by_id, map_info, mount_bpffs, obj_get,
    obj_kind, obj_pin, prog_get_fd_by_id, prog_info,
};

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// `BPF_PROG_TYPE_SOCKET_FILTER`.
pub const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
/// `BPF_PROG_TYPE_SCHED_CLS` (tc classifier).
pub const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
/// `BPF_PROG_TYPE_XDP`.
pub const BPF_PROG_TYPE_XDP: u32 = 6;

/// `BPF_XDP`: the expected attach type of an XDP program, and the attach type of an XDP link.
pub const BPF_XDP: u32 = 37;
/// `BPF_TCX_INGRESS`: a `SCHED_CLS` program on an interface's TCX ingress hook (Linux 6.6).
pub const BPF_TCX_INGRESS: u32 = 46;
/// `BPF_TCX_EGRESS`: a `SCHED_CLS` program on an interface's TCX egress hook (Linux 6.6).
pub const BPF_TCX_EGRESS: u32 = 47;

/// `BPF_MAP_TYPE_RINGBUF`.
pub const BPF_MAP_TYPE_RINGBUF: u32 = 27;

/// `BPF_OBJ_NAME_LEN`: a program's or map's name has at most 15 bytes (and a NUL).
pub const BPF_OBJ_NAME_LEN: usize = 16;

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

/// A descriptor a `bpf(2)` command just created, owned.
fn new_fd(rc: libc::c_long) -> io::Result<OwnedFd> {
    let fd = libc::c_int::try_from(rc).map_err(|_| io::Error::other("bad fd"))?;
    // SAFETY: the commands that return a descriptor (`*_LOAD`, `*_CREATE`, `*_GET_FD_BY_ID`,
    // `OBJ_GET`) return a new one that nobody else owns.
    unsafe { crate::owned_fd(fd) }
}

/// How many times [`prog_load`] asks the kernel when the verifier is interrupted (libbpf's
/// `PROG_LOAD_ATTEMPTS`).
pub const PROG_LOAD_ATTEMPTS: u32 = 8;

/// What `BPF_PROG_LOAD` needs besides the instructions (see [`prog_load_with`]).
#[derive(Debug)]
pub struct ProgLoad<'a> {
    /// The program type (`BPF_PROG_TYPE_*`).
    pub prog_type: u32,
    /// The expected attach type: [`BPF_XDP`] for XDP programs, 0 where the type has none
    /// (`SCHED_CLS` for TC and TCX, socket filters).
    pub expected_attach_type: u32,
    /// The program's name as `bpftool` and [`ProgInfo`] show it: at most 15 bytes of ASCII
    /// letters, digits, `_` and `.` (what the kernel accepts).
    pub name: &'a str,
    /// The license (`"GPL"` gives access to every helper).
    pub license: &'a str,
    /// Where the verifier's log (level 1) goes, NUL-terminated: ask for it after a refusal
    /// (loading with a log is slower).
    pub log: Option<&'a mut [u8]>,
}

impl<'a> ProgLoad<'a> {
    /// A program of type `prog_type` named `sift`, licensed GPL, with no expected attach type
    /// and no log.
    pub fn new(prog_type: u32) -> ProgLoad<'a> {
        ProgLoad { prog_type, expected_attach_type: 0, name: "sift", license: "GPL", log: None }
    }
}

/// A program's or map's name as the kernel takes it (`bpf_obj_name_cpy`): at most 15 bytes,
/// ASCII letters, digits, `_` and `.`; anything else is an `InvalidInput` error before the call.
fn obj_name(name: &str) -> io::Result<[u8; BPF_OBJ_NAME_LEN]> {
    let ok = name.len() < BPF_OBJ_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    if !ok {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "BPF object name {name:?}: at most {} bytes of letters, digits, '_' and '.'",
                BPF_OBJ_NAME_LEN - 1
            ),
        ));
    }
    let mut out = [0u8; BPF_OBJ_NAME_LEN];
    out[..name.len()].copy_from_slice(name.as_bytes());
    Ok(out)
}

/// `BPF_PROG_LOAD` of `insns` (encoded eBPF, 8 bytes per slot; a partial last slot is not
/// passed) as `opts` says. With a log, the verifier's log (level 1) is written into it,
/// NUL-terminated. The verifier gives up with `EAGAIN` when a signal reaches the process while
/// it works (another thread's timer, a child ending); like libbpf, the load is tried again, up
/// to [`PROG_LOAD_ATTEMPTS`] times in all, and so is `ENOMEM`, after 8, 16, 32… ms (at most
/// half a second each: under two seconds in all). A name the kernel would refuse or a license
/// with a NUL inside is an `InvalidInput` error.
pub fn prog_load_with(insns: &[u8], opts: ProgLoad<'_>) -> io::Result<OwnedFd> {
    let license = std::ffi::CString::new(opts.license)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in license"))?;
    let mut attr = ProgLoadAttr {
        prog_type: opts.prog_type,
        insn_cnt: u32::try_from(insns.len() / 8).unwrap_or(u32::MAX),
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        prog_name: obj_name(opts.name)?,
        expected_attach_type: opts.expected_attach_type,
        ..ProgLoadAttr::default()
    };
    if let Some(log) = opts.log {
        attr.log_level = 1;
        attr.log_size = u32::try_from(log.len()).unwrap_or(u32::MAX);
        attr.log_buf = log.as_mut_ptr() as u64;
    }
    load(&mut attr)
}

/// `BPF_PROG_LOAD` of `insns` as a program of type `prog_type`, licensed GPL, named `sift`
/// ([`prog_load_with`] with [`ProgLoad::new`] and `log`).
pub fn prog_load(prog_type: u32, insns: &[u8], log: Option<&mut [u8]>) -> io::Result<OwnedFd> {
    prog_load_with(insns, ProgLoad { log, ..ProgLoad::new(prog_type) })
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
    new_fd(fd)
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

/// `BPF_F_TEST_XDP_LIVE_FRAMES`: a test run whose frames really go where the program sends
/// them.
pub const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;

/// `BPF_PROG_TEST_RUN` of an XDP program in live-frames mode: `frame` is run through the
/// program `repeat` times, `batch_size` (1 to 256) frames at a time, and what the program does
/// with each copy happens for real: `XDP_TX` and `bpf_redirect` transmit it, `XDP_PASS` hands
/// it to the stack. A traffic generator inside the kernel (the program redirects to an
/// interface): the call returns when every frame was handled. The ingress interface is the
/// calling thread's namespace's loopback, so a redirect's interface index is that
/// namespace's. Interrupted by a signal, the run starts over.
pub fn prog_test_run_xdp_live(
    prog: impl AsFd,
    frame: &[u8],
    repeat: u32,
    batch_size: u32,
) -> io::Result<()> {
    let mut attr = TestRunAttr {
        prog_fd: prog.as_fd().as_raw_fd() as u32,
        data_size_in: u32::try_from(frame.len()).unwrap_or(u32::MAX),
        data_in: frame.as_ptr() as u64,
        repeat,
        flags: BPF_F_TEST_XDP_LIVE_FRAMES,
        batch_size,
        ..TestRunAttr::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr).map(drop)
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

/// What `BPF_MAP_CREATE` needs (see [`map_create_with`]).
#[derive(Clone, Copy, Debug)]
pub struct MapCreate<'a> {
    /// The map type (`BPF_MAP_TYPE_*`, the kernel's number).
    pub map_type: u32,
    /// Key size in bytes (0 for queues, stacks and ring buffers).
    pub key_size: u32,
    /// Value size in bytes (0 for ring buffers).
    pub value_size: u32,
    /// The number of entries (a ring buffer's size in bytes: a power of two, whole pages).
    pub max_entries: u32,
    /// `BPF_F_*` flags.
    pub map_flags: u32,
    /// The map's name (as for programs: at most 15 bytes of letters, digits, `_`, `.`).
    pub name: &'a str,
}

/// `BPF_MAP_CREATE` as `opts` says; a name the kernel would refuse is an `InvalidInput` error.
pub fn map_create_with(opts: &MapCreate<'_>) -> io::Result<OwnedFd> {
    let mut attr = MapCreateAttr {
        map_type: opts.map_type,
        key_size: opts.key_size,
        value_size: opts.value_size,
        max_entries: opts.max_entries,
        map_flags: opts.map_flags,
        map_name: obj_name(opts.name)?,
        ..Default::default()
    };
    new_fd(bpf(BPF_MAP_CREATE, &mut attr)?)
}

/// `BPF_MAP_CREATE`: a map of `map_type` (the kernel's number) named `sift`.
pub fn map_create(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
) -> io::Result<OwnedFd> {
    map_create_with(&MapCreate {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags,
        name: "sift",
    })
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

/// `BPF_PROG_LOAD` as [`prog_load`] with the program's license given: what an ELF object's
/// program needs.
pub fn prog_load_licensed(prog_type: u32, insns: &[u8], license: &str) -> io::Result<OwnedFd> {
    prog_load_with(insns, ProgLoad { license, ..ProgLoad::new(prog_type) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

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

    #[test]
    fn names_the_kernel_refuses_are_refused_first() {
        for bad in ["", "sixteen_chars_xx", "sift-xdp", "a b", "é"] {
            if bad.is_empty() {
                continue; // an empty name is allowed (the kernel's default)
            }
            assert_eq!(obj_name(bad).unwrap_err().kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        assert_eq!(&obj_name("sift_xdp.v2").unwrap()[..12], b"sift_xdp.v2\0");
        assert_eq!(obj_name("").unwrap(), [0; BPF_OBJ_NAME_LEN]);
    }

    /// A named program using a named map: its info names both, the ids open them again, and a
    /// pin in the BPF file system gives the program back after every descriptor is closed.
    #[test]
    fn info_ids_and_pins() {
        let map = match map_create_with(&MapCreate {
            map_type: 2,
            key_size: 4,
            value_size: 8,
            max_entries: 1,
            map_flags: 0,
            name: "sift_counts",
        }) {
            Ok(m) => m,
            Err(e) if is_unavailable(&e) => {
                return sift_testkit::oracle_missing("kernel bpf(2) BPF_MAP_CREATE", e)
                    .unwrap_or(());
            }
            Err(e) => panic!("{e}"),
        };
        // r1 = map (lddw, src 1); r0 = 2; exit
        let fd = map.as_raw_fd() as u8;
        let insns = [
            0x18, 0x11, 0, 0, fd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // lddw r1, map_fd
            0xb7, 0, 0, 0, 2, 0, 0, 0, // r0 = 2
            0x95, 0, 0, 0, 0, 0, 0, 0, // exit
        ];
        let prog = prog_load_with(
            &insns,
            ProgLoad {
                expected_attach_type: BPF_XDP,
                name: "sift_info",
                ..ProgLoad::new(BPF_PROG_TYPE_XDP)
            },
        )
        .unwrap();
        let info = prog_info(&prog).unwrap();
        assert_eq!(info.name, "sift_info");
        assert_eq!(info.prog_type, BPF_PROG_TYPE_XDP);
        let minfo = map_info(&map).unwrap();
        assert_eq!(minfo.name, "sift_counts");
        assert_eq!((minfo.map_type, minfo.key_size, minfo.value_size), (2, 4, 8));
        assert_eq!(info.map_ids, vec![minfo.id]);
        assert_eq!(prog_info(prog_get_fd_by_id(info.id).unwrap()).unwrap(), info);
        assert_eq!(map_info(map_get_fd_by_id(minfo.id).unwrap()).unwrap(), minfo);
        assert_eq!(obj_kind(&prog).unwrap(), ObjKind::Prog);
        assert_eq!(obj_kind(&map).unwrap(), ObjKind::Map);
        assert_eq!(obj_kind(std::io::stdin()).unwrap(), ObjKind::Other);
        assert_eq!(prog_get_fd_by_id(u32::MAX).unwrap_err().raw_os_error(), Some(libc::ENOENT));

        let root = std::path::Path::new("/sys/fs/bpf");
        if let Err(e) = mount_bpffs(root) {
            return sift_testkit::oracle_missing("bpffs at /sys/fs/bpf", e).unwrap_or(());
        }
        assert!(is_bpffs(root).unwrap());
        assert!(!mount_bpffs(root).unwrap(), "mounted once");
        let path = root.join(format!("sift-sys-test-{}", std::process::id()));
        obj_pin(&prog, &path).unwrap();
        assert_eq!(obj_pin(&prog, &path).unwrap_err().raw_os_error(), Some(libc::EEXIST));
        drop(prog);
        let again = obj_get(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(prog_info(&again).unwrap().id, info.id, "the pin kept the program");
        assert_eq!(obj_get(&path).unwrap_err().raw_os_error(), Some(libc::ENOENT));
    }
}
