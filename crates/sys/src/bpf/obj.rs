//! BPF objects (programs, maps, links) by path and by id, and what the kernel says about them.
//!
//! An attachment that must outlive the process is a link (or a program) pinned in the BPF file
//! system: [`obj_pin`] names it by a path, [`obj_get`] opens it again, [`mount_bpffs`] mounts
//! the file system where distributions do (`/sys/fs/bpf`) when nobody has. What is attached is
//! then described by ids: [`prog_info`], [`map_info`] and [`link_info`] read an object's
//! (`BPF_OBJ_GET_INFO_BY_FD`), and the `*_get_fd_by_id` commands open an object by its id.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Attr, BPF_OBJ_NAME_LEN, bpf, new_fd};
use crate::cvt;

/// `BPF_OBJ_PIN`.
const BPF_OBJ_PIN: libc::c_long = 6;
/// `BPF_OBJ_GET`.
const BPF_OBJ_GET: libc::c_long = 7;
/// `BPF_PROG_GET_FD_BY_ID`.
const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
/// `BPF_MAP_GET_FD_BY_ID`.
const BPF_MAP_GET_FD_BY_ID: libc::c_long = 14;
/// `BPF_OBJ_GET_INFO_BY_FD`.
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
/// `BPF_LINK_GET_FD_BY_ID`.
const BPF_LINK_GET_FD_BY_ID: libc::c_long = 30;

/// `BPF_LINK_TYPE_XDP`: [`LinkInfo::link_type`] of an XDP link.
pub const BPF_LINK_TYPE_XDP: u32 = 6;
/// `BPF_LINK_TYPE_TCX`: [`LinkInfo::link_type`] of a TCX link.
pub const BPF_LINK_TYPE_TCX: u32 = 11;

/// `BPF_FS_MAGIC`: `statfs`'s file system type of the BPF file system.
pub const BPFFS_MAGIC: i64 = 0xcafe_4a11;

/// `union bpf_attr` for `BPF_OBJ_PIN` and `BPF_OBJ_GET`.
#[repr(C)]
#[derive(Default)]
struct ObjAttr {
    pathname: u64,
    bpf_fd: u32,
    file_flags: u32,
}

/// `union bpf_attr` for the `*_GET_FD_BY_ID` commands.
#[repr(C)]
#[derive(Default)]
struct GetIdAttr {
    id: u32,
    next_id: u32,
    open_flags: u32,
}

/// `union bpf_attr` for `BPF_OBJ_GET_INFO_BY_FD`.
#[repr(C)]
#[derive(Default)]
struct InfoAttr {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

impl Attr for ObjAttr {}
impl Attr for GetIdAttr {}
impl Attr for InfoAttr {}

/// A path as the kernel takes it: NUL-terminated; a NUL inside is an `InvalidInput` error.
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// `BPF_OBJ_PIN`: names the program, map or link `fd` by `path` in a BPF file system (the
/// directory must exist; `EEXIST` when the name is taken). The object lives as long as the
/// name does, after every descriptor is closed; `unlink` removes the name.
pub fn obj_pin(fd: impl AsFd, path: &Path) -> io::Result<()> {
    let path = c_path(path)?;
    let mut attr = ObjAttr {
        pathname: path.as_ptr() as u64,
        bpf_fd: fd.as_fd().as_raw_fd() as u32,
        ..ObjAttr::default()
    };
    bpf(BPF_OBJ_PIN, &mut attr).map(drop)
}

/// `BPF_OBJ_GET`: a new descriptor (read-write) of the object pinned at `path`.
pub fn obj_get(path: &Path) -> io::Result<OwnedFd> {
    let path = c_path(path)?;
    let mut attr = ObjAttr { pathname: path.as_ptr() as u64, ..ObjAttr::default() };
    new_fd(bpf(BPF_OBJ_GET, &mut attr)?)
}

fn get_fd_by_id(cmd: libc::c_long, id: u32) -> io::Result<OwnedFd> {
    let mut attr = GetIdAttr { id, ..GetIdAttr::default() };
    new_fd(bpf(cmd, &mut attr)?)
}

/// `BPF_PROG_GET_FD_BY_ID`: a descriptor of the loaded program `id` (`ENOENT`: none).
pub fn prog_get_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    get_fd_by_id(BPF_PROG_GET_FD_BY_ID, id)
}

/// `BPF_MAP_GET_FD_BY_ID`: a descriptor of map `id` (`ENOENT`: none).
pub fn map_get_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    get_fd_by_id(BPF_MAP_GET_FD_BY_ID, id)
}

/// `BPF_LINK_GET_FD_BY_ID`: a descriptor of link `id` (`ENOENT`: none).
pub fn link_get_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    get_fd_by_id(BPF_LINK_GET_FD_BY_ID, id)
}

/// The info structures `BPF_OBJ_GET_INFO_BY_FD` fills.
///
/// # Safety
///
/// Implemented only for `#[repr(C)]` structs of integers and byte arrays that are a prefix of
/// the kernel's `struct bpf_*_info`, in which any bit pattern is valid, and without implicit
/// padding (uninitialised bytes the kernel would read).
unsafe trait Info: Default {}

/// `BPF_OBJ_GET_INFO_BY_FD` into `info` (whose pointer fields, if set, point to buffers that
/// outlive the call). The kernel takes and fills a prefix as long as `T`.
fn get_info<T: Info>(fd: impl AsFd, info: &mut T) -> io::Result<()> {
    let mut attr = InfoAttr {
        bpf_fd: fd.as_fd().as_raw_fd() as u32,
        info_len: std::mem::size_of::<T>() as u32,
        info: (info as *mut T) as u64,
    };
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr).map(drop)
}

/// `struct bpf_prog_info` (through `attach_btf_id`).
#[repr(C)]
#[derive(Default)]
struct RawProgInfo {
    prog_type: u32,
    id: u32,
    tag: [u8; 8],
    jited_prog_len: u32,
    xlated_prog_len: u32,
    jited_prog_insns: u64,
    xlated_prog_insns: u64,
    load_time: u64,
    created_by_uid: u32,
    nr_map_ids: u32,
    map_ids: u64,
    name: [u8; BPF_OBJ_NAME_LEN],
    ifindex: u32,
    gpl_compatible: u32,
    netns_dev: u64,
    netns_ino: u64,
    nr_jited_ksyms: u32,
    nr_jited_func_lens: u32,
    jited_ksyms: u64,
    jited_func_lens: u64,
    btf_id: u32,
    func_info_rec_size: u32,
    func_info: u64,
    nr_func_info: u32,
    nr_line_info: u32,
    line_info: u64,
    jited_line_info: u64,
    nr_jited_line_info: u32,
    line_info_rec_size: u32,
    jited_line_info_rec_size: u32,
    nr_prog_tags: u32,
    prog_tags: u64,
    run_time_ns: u64,
    run_cnt: u64,
    recursion_misses: u64,
    verified_insns: u32,
    attach_btf_obj_id: u32,
    attach_btf_id: u32,
    /// Explicit, so that it is zero: the kernel refuses (`E2BIG`) a tail it does not know
    /// unless it is all zeros.
    _pad: u32,
}

/// `struct bpf_map_info` (through `map_extra`).
#[repr(C)]
#[derive(Default)]
struct RawMapInfo {
    map_type: u32,
    id: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    name: [u8; BPF_OBJ_NAME_LEN],
    ifindex: u32,
    btf_vmlinux_value_type_id: u32,
    netns_dev: u64,
    netns_ino: u64,
    btf_id: u32,
    btf_key_type_id: u32,
    btf_value_type_id: u32,
    btf_vmlinux_id: u32,
    map_extra: u64,
}

/// `struct bpf_link_info`: the common fields and the union by link type (`xdp.ifindex`,
/// `tcx.ifindex`, `tcx.attach_type` are its first two words).
#[repr(C)]
#[derive(Default)]
struct RawLinkInfo {
    link_type: u32,
    id: u32,
    prog_id: u32,
    _pad: u32,
    union: [u32; 12],
}

// SAFETY: #[repr(C)] prefixes of the kernel's structs, integers and byte arrays only.
unsafe impl Info for RawProgInfo {}
// SAFETY: as above.
unsafe impl Info for RawMapInfo {}
// SAFETY: as above.
unsafe impl Info for RawLinkInfo {}

/// A name from a NUL-padded kernel array.
fn name_of(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// What the kernel says about a loaded program ([`prog_info`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgInfo {
    /// The program type (`BPF_PROG_TYPE_*`).
    pub prog_type: u32,
    /// The program's id (system-wide, for [`prog_get_fd_by_id`] and `bpftool prog show id`).
    pub id: u32,
    /// The program's tag: a hash of its instructions (`bpftool`'s `tag`).
    pub tag: [u8; 8],
    /// The name given at load time.
    pub name: String,
    /// The ids of the maps the program uses.
    pub map_ids: Vec<u32>,
    /// The length of the program as the kernel rewrote it, in bytes.
    pub xlated_len: u32,
    /// How many instructions the verifier went through.
    pub verified_insns: u32,
}

/// `BPF_OBJ_GET_INFO_BY_FD` of program `fd`: its id, type, name and the ids of its maps.
pub fn prog_info(fd: impl AsFd) -> io::Result<ProgInfo> {
    let fd = fd.as_fd();
    let mut raw = RawProgInfo::default();
    get_info(fd, &mut raw)?;
    let mut map_ids = vec![0u32; raw.nr_map_ids as usize];
    // Maps are fixed at load time; a second call fills the ids.
    while !map_ids.is_empty() {
        let mut again = RawProgInfo {
            nr_map_ids: map_ids.len() as u32,
            map_ids: map_ids.as_mut_ptr() as u64,
            ..RawProgInfo::default()
        };
        get_info(fd, &mut again)?;
        let n = again.nr_map_ids as usize;
        if n <= map_ids.len() {
            map_ids.truncate(n);
            break;
        }
        map_ids = vec![0; n];
    }
    Ok(ProgInfo {
        prog_type: raw.prog_type,
        id: raw.id,
        tag: raw.tag,
        name: name_of(&raw.name),
        map_ids,
        xlated_len: raw.xlated_prog_len,
        verified_insns: raw.verified_insns,
    })
}

/// What the kernel says about a map ([`map_info`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapInfo {
    /// The map type (`BPF_MAP_TYPE_*`).
    pub map_type: u32,
    /// The map's id.
    pub id: u32,
    /// Key size in bytes.
    pub key_size: u32,
    /// Value size in bytes.
    pub value_size: u32,
    /// Entries (a ring buffer's size in bytes).
    pub max_entries: u32,
    /// `BPF_F_*` flags.
    pub map_flags: u32,
    /// The name given at creation.
    pub name: String,
}

/// `BPF_OBJ_GET_INFO_BY_FD` of map `fd`.
pub fn map_info(fd: impl AsFd) -> io::Result<MapInfo> {
    let mut raw = RawMapInfo::default();
    get_info(fd, &mut raw)?;
    Ok(MapInfo {
        map_type: raw.map_type,
        id: raw.id,
        key_size: raw.key_size,
        value_size: raw.value_size,
        max_entries: raw.max_entries,
        map_flags: raw.map_flags,
        name: name_of(&raw.name),
    })
}

/// What the kernel says about a link ([`link_info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// The link type ([`BPF_LINK_TYPE_XDP`], [`BPF_LINK_TYPE_TCX`]…).
    pub link_type: u32,
    /// The link's id.
    pub id: u32,
    /// The id of the program it holds.
    pub prog_id: u32,
    /// For XDP and TCX links: the interface, 0 once the interface is gone (the link is then
    /// defunct: it holds the program but attaches it nowhere).
    pub ifindex: u32,
    /// For TCX links: [`BPF_TCX_INGRESS`](super::BPF_TCX_INGRESS) or
    /// [`BPF_TCX_EGRESS`](super::BPF_TCX_EGRESS); 0 otherwise.
    pub attach_type: u32,
}

/// `BPF_OBJ_GET_INFO_BY_FD` of link `fd`.
pub fn link_info(fd: impl AsFd) -> io::Result<LinkInfo> {
    let mut raw = RawLinkInfo::default();
    get_info(fd, &mut raw)?;
    let (ifindex, attach_type) = match raw.link_type {
        BPF_LINK_TYPE_XDP => (raw.union[0], 0),
        BPF_LINK_TYPE_TCX => (raw.union[0], raw.union[1]),
        _ => (0, 0),
    };
    Ok(LinkInfo {
        link_type: raw.link_type,
        id: raw.id,
        prog_id: raw.prog_id,
        ifindex,
        attach_type,
    })
}

/// Whether `path` is on a BPF file system (`statfs`).
pub fn is_bpffs(path: &Path) -> io::Result<bool> {
    let c = c_path(path)?;
    // SAFETY: statfs is plain data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a live statfs, both for the whole call.
    cvt(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    Ok(st.f_type as i64 == BPFFS_MAGIC)
}

/// Mounts a BPF file system at `path` (normally `/sys/fs/bpf`) unless one is there already,
/// as `mount -t bpf bpf PATH` (`mode=0700`); the directory must exist. `Ok(true)` when it was
/// mounted now. Needs `CAP_SYS_ADMIN`; the mount is the calling process's mount namespace's.
pub fn mount_bpffs(path: &Path) -> io::Result<bool> {
    if is_bpffs(path)? {
        return Ok(false);
    }
    let target = c_path(path)?;
    let mode = c"mode=0700";
    // SAFETY: every pointer is a NUL-terminated string that outlives the call.
    let rc = unsafe {
        libc::mount(
            c"bpf".as_ptr(),
            target.as_ptr(),
            c"bpf".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            mode.as_ptr().cast(),
        )
    };
    match cvt(rc) {
        Ok(_) => Ok(true),
        // Someone else mounted it meanwhile: EBUSY is not a failure then.
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) && is_bpffs(path)? => Ok(false),
        Err(e) => Err(e),
    }
}

/// What a BPF descriptor holds ([`obj_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjKind {
    /// A program.
    Prog,
    /// A map.
    Map,
    /// A link.
    Link,
    /// Something else (BTF, a token, not a BPF object at all).
    Other,
}

/// What `fd` (say, from [`obj_get`]) holds: the kernel names a BPF descriptor's file
/// `anon_inode:bpf-prog`, `anon_inode:bpf-map`, or for a link `anon_inode:bpf_link` (from
/// `BPF_LINK_CREATE`) or `anon_inode:bpf-link` (from `BPF_OBJ_GET`, `*_GET_FD_BY_ID`), in
/// `/proc/self/fd`.
pub fn obj_kind(fd: impl AsFd) -> io::Result<ObjKind> {
    let target = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))?;
    Ok(match target.as_os_str().as_bytes() {
        b"anon_inode:bpf-prog" => ObjKind::Prog,
        b"anon_inode:bpf-map" => ObjKind::Map,
        b"anon_inode:bpf_link" | b"anon_inode:bpf-link" => ObjKind::Link,
        _ => ObjKind::Other,
    })
}

// The layouts have no implicit padding (see `Info`) and the kernel's offsets.
const _: () = assert!(std::mem::size_of::<RawProgInfo>() == 232);
const _: () = assert!(std::mem::offset_of!(RawProgInfo, name) == 64);
const _: () = assert!(std::mem::offset_of!(RawProgInfo, verified_insns) == 216);
const _: () = assert!(std::mem::size_of::<RawMapInfo>() == 88);
const _: () = assert!(std::mem::size_of::<RawLinkInfo>() == 64);
