//! Links: a program attached to an interface's XDP or TCX hook by a `bpf_link`.
//!
//! A link is the kernel's handle on an attachment: it is made with [`link_create`], the
//! attachment lasts as long as the link (its descriptors and its pins in bpffs), the program
//! in it is swapped atomically with [`link_update`] (the hook is never without a program, and
//! with the old program given the swap happens only if nobody replaced it meanwhile), and
//! [`link_detach`] ends the attachment while the link object lives on (defunct). Unlike a
//! netlink attachment, a link cannot be replaced or removed by a tool that does not hold it
//! (`ip link set xdp off` gets `EBUSY`). TCX hooks hold several programs in order; [`prog_query`]
//! lists them.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use super::{Attr, bpf, new_fd};

/// `BPF_LINK_CREATE`.
const BPF_LINK_CREATE: libc::c_long = 28;
/// `BPF_LINK_UPDATE`.
const BPF_LINK_UPDATE: libc::c_long = 29;
/// `BPF_LINK_DETACH`.
const BPF_LINK_DETACH: libc::c_long = 34;
/// `BPF_PROG_QUERY`.
const BPF_PROG_QUERY: libc::c_long = 16;

/// `BPF_F_REPLACE`: [`link_update`] only if the link holds the expected old program; for a
/// TCX [`link_create`], take the place of the program `relative` names.
pub const BPF_F_REPLACE: u32 = 1 << 2;
/// `BPF_F_BEFORE`: a TCX link goes before the program or link `relative` names (before all of
/// them when `relative` is 0).
pub const BPF_F_BEFORE: u32 = 1 << 3;
/// `BPF_F_AFTER`: a TCX link goes after the program or link `relative` names (after all when 0).
pub const BPF_F_AFTER: u32 = 1 << 4;
/// `BPF_F_ID`: `relative` is an id, not a descriptor.
pub const BPF_F_ID: u32 = 1 << 5;
/// `BPF_F_LINK`: `relative` names a link, not a program.
pub const BPF_F_LINK: u32 = 1 << 13;

/// The most programs a TCX hook holds (`BPF_MPROG_MAX`).
const MPROG_MAX: usize = 64;

/// `union bpf_attr` for `BPF_LINK_CREATE` (the common fields and the `tcx` member).
#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    relative: u32,
    _pad: u32,
    expected_revision: u64,
}

/// `union bpf_attr` for `BPF_LINK_UPDATE`.
#[repr(C)]
#[derive(Default)]
struct LinkUpdateAttr {
    link_fd: u32,
    new_prog_fd: u32,
    flags: u32,
    old_prog_fd: u32,
}

/// `union bpf_attr` for `BPF_LINK_DETACH`.
#[repr(C)]
#[derive(Default)]
struct LinkDetachAttr {
    link_fd: u32,
}

/// `union bpf_attr` for `BPF_PROG_QUERY`.
#[repr(C)]
#[derive(Default)]
struct QueryAttr {
    target_ifindex: u32,
    attach_type: u32,
    query_flags: u32,
    attach_flags: u32,
    prog_ids: u64,
    count: u32,
    _pad: u32,
    prog_attach_flags: u64,
    link_ids: u64,
    link_attach_flags: u64,
    revision: u64,
}

impl Attr for LinkCreateAttr {}
impl Attr for LinkUpdateAttr {}
impl Attr for LinkDetachAttr {}
impl Attr for QueryAttr {}

/// Where and how [`link_create`] attaches a program to an interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCreate {
    /// The interface.
    pub ifindex: u32,
    /// [`BPF_XDP`](super::BPF_XDP), [`BPF_TCX_INGRESS`](super::BPF_TCX_INGRESS) or
    /// [`BPF_TCX_EGRESS`](super::BPF_TCX_EGRESS).
    pub attach_type: u32,
    /// XDP: `XDP_FLAGS_SKB_MODE` or `XDP_FLAGS_DRV_MODE` ([`crate::netlink`]), 0 for the
    /// driver's mode when it has one. TCX: [`BPF_F_BEFORE`], [`BPF_F_AFTER`], [`BPF_F_ID`],
    /// [`BPF_F_LINK`] (0 appends).
    pub flags: u32,
    /// TCX: the program or link the position is relative to (a descriptor, or an id with
    /// [`BPF_F_ID`]); 0 for none.
    pub relative: u32,
    /// TCX: the hook's revision ([`ProgQuery::revision`]) the attachment expects (0: any);
    /// `ESTALE` when the hook changed since.
    pub expected_revision: u64,
}

/// `BPF_LINK_CREATE`: attaches `prog` as `at` says and returns the link. XDP: `EBUSY` when a
/// program is attached already (by netlink or by another link), `EEXIST` when one is in the
/// other mode. TCX: `EINVAL` for an unknown attach type (a kernel before 6.6).
pub fn link_create(prog: impl AsFd, at: &LinkCreate) -> io::Result<OwnedFd> {
    let mut attr = LinkCreateAttr {
        prog_fd: prog.as_fd().as_raw_fd() as u32,
        target_ifindex: at.ifindex,
        attach_type: at.attach_type,
        flags: at.flags,
        relative: at.relative,
        expected_revision: at.expected_revision,
        ..LinkCreateAttr::default()
    };
    new_fd(bpf(BPF_LINK_CREATE, &mut attr)?)
}

/// `BPF_LINK_UPDATE`: the link holds `new_prog` from now on, atomically (packets see the old
/// program or the new one, never none). With `old_prog`, only if the link holds that program
/// now (`BPF_F_REPLACE`; `EPERM` otherwise). `ENOLINK` when the link is defunct (its
/// interface is gone or it was detached).
pub fn link_update(
    link: impl AsFd,
    new_prog: impl AsFd,
    old_prog: Option<BorrowedFd<'_>>,
) -> io::Result<()> {
    let mut attr = LinkUpdateAttr {
        link_fd: link.as_fd().as_raw_fd() as u32,
        new_prog_fd: new_prog.as_fd().as_raw_fd() as u32,
        flags: if old_prog.is_some() { BPF_F_REPLACE } else { 0 },
        old_prog_fd: old_prog.map_or(0, |fd| fd.as_raw_fd() as u32),
    };
    bpf(BPF_LINK_UPDATE, &mut attr).map(drop)
}

/// `BPF_LINK_DETACH`: ends the link's attachment now, whoever else holds the link (its pins,
/// other descriptors); the link object stays, defunct, until the last of them goes.
pub fn link_detach(link: impl AsFd) -> io::Result<()> {
    let mut attr = LinkDetachAttr { link_fd: link.as_fd().as_raw_fd() as u32 };
    bpf(BPF_LINK_DETACH, &mut attr).map(drop)
}

/// What is attached to a TCX hook ([`prog_query`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgQuery {
    /// The programs' ids in the order they run.
    pub prog_ids: Vec<u32>,
    /// For each program, the id of the link that holds it (0: attached without a link).
    pub link_ids: Vec<u32>,
    /// The hook's revision: it changes with every attachment, replacement and detachment.
    pub revision: u64,
}

/// `BPF_PROG_QUERY` of interface `ifindex`'s hook `attach_type` (TCX ingress or egress).
pub fn prog_query(ifindex: u32, attach_type: u32) -> io::Result<ProgQuery> {
    let mut prog_ids = vec![0u32; MPROG_MAX];
    let mut link_ids = vec![0u32; MPROG_MAX];
    let mut attr = QueryAttr {
        target_ifindex: ifindex,
        attach_type,
        prog_ids: prog_ids.as_mut_ptr() as u64,
        link_ids: link_ids.as_mut_ptr() as u64,
        count: MPROG_MAX as u32,
        ..QueryAttr::default()
    };
    bpf(BPF_PROG_QUERY, &mut attr)?;
    let n = (attr.count as usize).min(MPROG_MAX);
    prog_ids.truncate(n);
    link_ids.truncate(n);
    Ok(ProgQuery { prog_ids, link_ids, revision: attr.revision })
}

// The kernel's offsets (`link_create.tcx`, `query.revision`), without implicit padding.
const _: () = assert!(std::mem::offset_of!(LinkCreateAttr, expected_revision) == 24);
const _: () = assert!(std::mem::size_of::<LinkCreateAttr>() == 32);
const _: () = assert!(std::mem::offset_of!(QueryAttr, revision) == 56);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::{
        BPF_LINK_TYPE_TCX, BPF_LINK_TYPE_XDP, BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP,
        BPF_TCX_INGRESS, BPF_XDP, ObjKind, ProgLoad, link_info, obj_kind, prog_info,
        prog_load_with,
    };

    /// `r0 = ret; exit`.
    fn ret_prog(prog_type: u32, ret: u8) -> OwnedFd {
        let insns = [0xb7, 0, 0, 0, ret, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0];
        let attach = if prog_type == BPF_PROG_TYPE_XDP { BPF_XDP } else { 0 };
        let opts = ProgLoad { expected_attach_type: attach, ..ProgLoad::new(prog_type) };
        prog_load_with(&insns, opts).unwrap()
    }

    fn id(fd: &OwnedFd) -> u32 {
        prog_info(fd).unwrap().id
    }

    /// Links on `lo` in a private namespace: an XDP link (generic) updated only with the
    /// right old program, exclusive, detached into a defunct link; TCX links placed before,
    /// after and relative to each other, as `BPF_PROG_QUERY` lists them.
    #[test]
    fn xdp_and_tcx_links_on_loopback() {
        let run = std::thread::spawn(|| -> Result<(), String> {
            crate::netns::unshare_net().map_err(|e| format!("unshare: {e}"))?;
            let lo = crate::iface::index_of("lo").unwrap();
            let (a, b) = (ret_prog(BPF_PROG_TYPE_XDP, 2), ret_prog(BPF_PROG_TYPE_XDP, 2));
            let xdp = LinkCreate {
                ifindex: lo,
                attach_type: BPF_XDP,
                flags: crate::netlink::XDP_FLAGS_SKB_MODE,
                ..LinkCreate::default()
            };
            let link = link_create(&a, &xdp).unwrap();
            assert_eq!(obj_kind(&link).unwrap(), ObjKind::Link);
            let info = link_info(&link).unwrap();
            assert_eq!(
                (info.link_type, info.prog_id, info.ifindex),
                (BPF_LINK_TYPE_XDP, id(&a), lo)
            );
            let e = link_update(&link, &b, Some(b.as_fd())).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EPERM), "not the program there");
            link_update(&link, &b, Some(a.as_fd())).unwrap();
            assert_eq!(link_info(&link).unwrap().prog_id, id(&b));
            let e = link_create(&a, &xdp).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EBUSY), "one XDP link per interface");
            link_detach(&link).unwrap();
            assert_eq!(link_info(&link).unwrap().ifindex, 0, "defunct");
            let e = link_update(&link, &a, None).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOLINK));

            let [p, q, r] = [0, 1, 2].map(|_| ret_prog(BPF_PROG_TYPE_SCHED_CLS, 0));
            let tcx =
                LinkCreate { ifindex: lo, attach_type: BPF_TCX_INGRESS, ..LinkCreate::default() };
            let rev0 = prog_query(lo, BPF_TCX_INGRESS).unwrap().revision;
            let lp = link_create(&p, &tcx).unwrap();
            let lq = link_create(&q, &LinkCreate { flags: BPF_F_BEFORE, ..tcx }).unwrap();
            let before_p = LinkCreate { flags: BPF_F_BEFORE | BPF_F_ID, relative: id(&p), ..tcx };
            let lr = link_create(&r, &before_p).unwrap();
            let chain = prog_query(lo, BPF_TCX_INGRESS).unwrap();
            assert_eq!(chain.prog_ids, vec![id(&q), id(&r), id(&p)]);
            let link_ids: Vec<u32> =
                [&lq, &lr, &lp].iter().map(|l| link_info(l).unwrap().id).collect();
            assert_eq!(chain.link_ids, link_ids);
            assert_eq!(chain.revision, rev0 + 3, "one revision per change");
            let info = link_info(&lp).unwrap();
            assert_eq!(
                (info.link_type, info.attach_type, info.ifindex),
                (BPF_LINK_TYPE_TCX, BPF_TCX_INGRESS, lo)
            );
            let e = link_create(&p, &tcx).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EEXIST), "a program once per hook");
            drop((lp, lq, lr));
            assert!(prog_query(lo, BPF_TCX_INGRESS).unwrap().prog_ids.is_empty());
            Ok(())
        });
        if let Err(why) = run.join().unwrap() {
            sift_testkit::oracle_missing::<()>("private network namespace and bpf(2)", why);
        }
    }
}
