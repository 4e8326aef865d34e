//! Deploying eBPF programs on interfaces: XDP (native or generic) and TC (ingress, egress),
//! attached so that they outlive the process, replaced atomically, detached, and listed.
//!
//! This is what `sift xdp attach/detach` and `sift pf load` stand on. An [`Attacher`] works in
//! the calling thread's network namespace and keeps one pin per interface and hook in the BPF
//! file system, `/sys/fs/bpf/sift/<iface>/<hook>` (`xdp`, `tc-ingress`, `tc-egress`): as with
//! `ip link set xdp` and `tc filter add`, the attachment stays when the process ends, and the pin
//! is how sift finds it again.
//!
//! # How programs are attached
//!
//! * **XDP through a `bpf_link`** ([`Mechanism::Link`], the default). A link cannot be taken
//!   over or removed by a tool that does not hold it (`ip link set xdp off` gets `EBUSY`, so
//!   nobody silently replaces the filter), its program is swapped atomically with
//!   `BPF_LINK_UPDATE` naming the program expected to be there, and the pinned link *is* the
//!   attachment: removing it (with [`Attacher::detach`]) detaches. When the interface goes, the
//!   link goes defunct and [`Attachment::attached`] says so.
//! * **TC through TCX links** (Linux 6.6), for the same reasons; sift's program goes first on the
//!   hook (`BPF_F_BEFORE`), ahead of programs other tools attached, which TCX keeps beside it.
//! * **Netlink** ([`Mechanism::Netlink`]) where links are missing (XDP links need 5.9, TCX
//!   6.6): `IFLA_XDP` with `XDP_FLAGS_UPDATE_IF_NOEXIST`, replaced with `XDP_FLAGS_REPLACE` and
//!   the expected program; for TC a `clsact` qdisc and a direct-action `cls_bpf` filter at
//!   priority [`TC_PRIORITY`], handle [`TC_HANDLE`], replaced in place. The pin is then the
//!   program, and the attachment is the interface's. By default a link is tried first and
//!   netlink only when the kernel does not know the link type; [`Attacher::mechanism`] forces
//!   one.
//!
//! Every replacement is atomic: each packet sees the old program or the new one, never none,
//! and maps the programs share (a state table) are untouched. A replacement also checks that
//! the program being replaced is the one sift attached, so two concurrent replacements cannot
//! silently overwrite each other ([`AttachError::Changed`]).
//!
//! # Limits
//!
//! Pins are named by interface name, and the BPF file system is per mount namespace, not per
//! network namespace: two namespaces with an interface of the same name share the pin path
//! (tests use a root of their own, [`Attacher::with_root`]).

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use sift_ebpf::EbpfProgram;
use sift_sys::bpf::{self, ObjKind};
use sift_sys::iface;
use sift_sys::netlink::{self, Rtnetlink, TcDirection, TcFilter};

/// Where the BPF file system is mounted ([`Attacher::new`] mounts it when missing).
pub const BPFFS: &str = "/sys/fs/bpf";
/// sift's directory of pins in it.
pub const DEFAULT_ROOT: &str = "/sys/fs/bpf/sift";
/// The priority of sift's `cls_bpf` filters (netlink TC): first.
pub const TC_PRIORITY: u16 = 1;
/// The handle of sift's `cls_bpf` filters within [`TC_PRIORITY`].
pub const TC_HANDLE: u32 = 0x51f7;

/// Where XDP runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XdpMode {
    /// In the driver, before any socket buffer exists (`xdpdrv`): the fast path, where the
    /// driver supports it (veth does).
    Native,
    /// After the driver, on the socket buffer (`xdpgeneric`): any interface, slower.
    Generic,
}

/// A hook on an interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// XDP: every received frame, before the stack; `XDP_DROP` (1) drops, `XDP_PASS` (2)
    /// passes.
    Xdp {
        /// Native or generic.
        mode: XdpMode,
    },
    /// TC ingress: received packets, as socket buffers; `TC_ACT_SHOT` (2) drops,
    /// `TC_ACT_OK` (0) passes.
    TcIngress,
    /// TC egress: packets the interface sends.
    TcEgress,
}

impl Hook {
    /// The pin's file name for this hook (both XDP modes share `xdp`: an interface runs one
    /// sift XDP program).
    pub fn pin_name(self) -> &'static str {
        match self {
            Hook::Xdp { .. } => "xdp",
            Hook::TcIngress => "tc-ingress",
            Hook::TcEgress => "tc-egress",
        }
    }

    /// The program type the hook runs (`BPF_PROG_TYPE_XDP` or `SCHED_CLS`).
    pub fn prog_type(self) -> u32 {
        match self {
            Hook::Xdp { .. } => bpf::BPF_PROG_TYPE_XDP,
            Hook::TcIngress | Hook::TcEgress => bpf::BPF_PROG_TYPE_SCHED_CLS,
        }
    }

    fn tc_direction(self) -> Option<TcDirection> {
        match self {
            Hook::Xdp { .. } => None,
            Hook::TcIngress => Some(TcDirection::Ingress),
            Hook::TcEgress => Some(TcDirection::Egress),
        }
    }

    /// The hooks by pin name (XDP as native: the mode is read from the interface).
    const ALL: [Hook; 3] = [Hook::Xdp { mode: XdpMode::Native }, Hook::TcIngress, Hook::TcEgress];
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Hook::Xdp { mode: XdpMode::Native } => "xdp (native)",
            Hook::Xdp { mode: XdpMode::Generic } => "xdp (generic)",
            Hook::TcIngress => "tc ingress",
            Hook::TcEgress => "tc egress",
        })
    }
}

/// How an attachment is made (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// A `bpf_link` (XDP link, TCX link), pinned.
    Link,
    /// Netlink (`IFLA_XDP`, `clsact` + `cls_bpf`), with the program pinned.
    Netlink,
}

/// What sift has attached at one hook of an interface ([`Attacher::query`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// The interface's name.
    pub iface: String,
    /// Its index (0 when it no longer exists).
    pub ifindex: u32,
    /// The hook (for XDP, the mode the program runs in).
    pub hook: Hook,
    /// How it was attached.
    pub mechanism: Mechanism,
    /// The program's id (`bpftool prog show id N`).
    pub prog_id: u32,
    /// The program's name.
    pub prog_name: String,
    /// The pin in the BPF file system.
    pub pin: PathBuf,
    /// Whether the program is attached now: false when the pin outlived the attachment (the
    /// interface was deleted, or someone removed the program by other means); [`Attacher::detach`]
    /// removes such a pin.
    pub attached: bool,
}

/// Why attaching, replacing, detaching or querying failed, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// Not privileged enough.
    #[error(
        "{what}: not permitted; loading and attaching eBPF programs needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN for bpffs): {source}"
    )]
    NotPermitted {
        /// What was being done.
        what: String,
        /// The error (`EPERM`).
        #[source]
        source: io::Error,
    },
    /// No interface by that name in this network namespace.
    #[error("no interface named {iface:?} in this network namespace (see `ip link`)")]
    NoSuchInterface {
        /// The name.
        iface: String,
    },
    /// Another program (not sift's) holds the hook.
    #[error(
        "{iface} {hook}: {holder} is attached already, not by sift; detach it first (ip link set dev {iface} xdp off / tc filter del)"
    )]
    Busy {
        /// The interface.
        iface: String,
        /// The hook.
        hook: Hook,
        /// What is there, as far as the kernel says.
        holder: String,
    },
    /// sift has a program there already.
    #[error(
        "{iface} {hook}: sift's program {prog_id} is attached already ({pin}); replace it, or detach it first"
    )]
    AlreadyAttached {
        /// The interface.
        iface: String,
        /// The hook.
        hook: Hook,
        /// The program attached.
        prog_id: u32,
        /// Its pin.
        pin: String,
    },
    /// sift has nothing attached there.
    #[error("{iface} {hook}: sift has no program attached ({pin} does not exist)")]
    NotAttached {
        /// The interface.
        iface: String,
        /// The hook.
        hook: Hook,
        /// The pin looked for.
        pin: String,
    },
    /// The program sift attached was replaced or removed by someone else meanwhile.
    #[error(
        "{iface} {hook}: the attached program is no longer the one sift pinned ({detail}); query and try again"
    )]
    Changed {
        /// The interface.
        iface: String,
        /// The hook.
        hook: Hook,
        /// What was found.
        detail: String,
    },
    /// The program was loaded for another type of hook.
    #[error(
        "{hook} runs programs of type {want}; this one is of type {got}: load it for the hook (attach::load)"
    )]
    WrongType {
        /// The hook.
        hook: Hook,
        /// The type it runs (`BPF_PROG_TYPE_*`).
        want: u32,
        /// The program's type.
        got: u32,
    },
    /// The driver has no native XDP.
    #[error("{iface}: the driver does not run XDP programs natively; attach in generic mode")]
    NativeUnsupported {
        /// The interface.
        iface: String,
    },
    /// The kernel's verifier refused the program; `log` is its log.
    #[error("the kernel's verifier refused the program ({errno}):\n{log}")]
    Rejected {
        /// The error `BPF_PROG_LOAD` returned.
        errno: io::Error,
        /// The verifier's log (its tail when longer than the buffer).
        log: String,
    },
    /// A system call failed otherwise.
    #[error("{what}: {source}")]
    Kernel {
        /// What was being done (interface, hook, path).
        what: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A netlink request failed otherwise.
    #[error("{what}: {source}")]
    Netlink {
        /// What was being done.
        what: String,
        /// The error, with the kernel's message.
        #[source]
        source: netlink::Error,
    },
}

/// An `io::Error` from doing `what`, as the variant that says what to do about it.
fn kernel_error(what: impl Into<String>, source: io::Error) -> AttachError {
    let what = what.into();
    match source.raw_os_error() {
        Some(EPERM) => AttachError::NotPermitted { what, source },
        _ => AttachError::Kernel { what, source },
    }
}

fn netlink_error(what: impl Into<String>, source: netlink::Error) -> AttachError {
    if source.raw_os_error() == Some(EPERM) {
        return AttachError::NotPermitted {
            what: what.into(),
            source: io::Error::from_raw_os_error(EPERM),
        };
    }
    AttachError::Netlink { what: what.into(), source }
}

use libc::{EBUSY, EEXIST, EINVAL, ENODEV, ENOENT, ENOLINK, EOPNOTSUPP, EPERM};

/// Loads `program` for `hook`, named `name` (at most 15 letters, digits, `_`, `.`), licensed
/// GPL. A refusal is [`AttachError::Rejected`] with the verifier's log (the program is loaded
/// a second time to get it).
pub fn load(program: &EbpfProgram, hook: Hook, name: &str) -> Result<OwnedFd, AttachError> {
    let prog_type = match hook {
        Hook::Xdp { .. } => sift_ebpf::ProgType::Xdp,
        Hook::TcIngress | Hook::TcEgress => sift_ebpf::ProgType::SchedCls,
    };
    let source =
        crate::object::ProgramSource { name, section: "", prog_type, insns: &program.insns };
    match crate::object::load_program(&source, &program.to_bytes(), "GPL", false) {
        Ok((fd, _)) => Ok(fd),
        Err(crate::object::ObjectError::Rejected { source, log, .. }) => {
            Err(AttachError::Rejected { errno: source, log })
        }
        Err(crate::object::ObjectError::Unavailable { source, .. }) => {
            Err(kernel_error("loading a program", source))
        }
        Err(e) => Err(AttachError::Kernel {
            what: format!("loading {name:?}"),
            source: io::Error::other(e.to_string()),
        }),
    }
}

/// The pin of one attachment, opened.
struct Pinned {
    fd: OwnedFd,
    mechanism: Mechanism,
    prog_id: u32,
    /// For links: the interface the link attaches to (0 when defunct).
    link_ifindex: u32,
}

/// Attaches, replaces, detaches and lists sift's programs on interfaces (see the module docs).
#[derive(Clone, Debug)]
pub struct Attacher {
    root: PathBuf,
    mechanism: Option<Mechanism>,
}

impl Attacher {
    /// sift's attacher: pins under [`DEFAULT_ROOT`], with the BPF file system mounted at
    /// [`BPFFS`] first when nobody has.
    pub fn new() -> Result<Attacher, AttachError> {
        bpf::mount_bpffs(Path::new(BPFFS))
            .map_err(|e| kernel_error(format!("mounting the BPF file system at {BPFFS}"), e))?;
        Ok(Attacher::with_root(DEFAULT_ROOT))
    }

    /// An attacher with its pins under `root`, a directory in a mounted BPF file system
    /// (created when missing).
    pub fn with_root(root: impl Into<PathBuf>) -> Attacher {
        Attacher { root: root.into(), mechanism: None }
    }

    /// Attaches with this mechanism only (by default: a link, or netlink where the kernel
    /// has no link for the hook).
    pub fn mechanism(mut self, mechanism: Mechanism) -> Attacher {
        self.mechanism = Some(mechanism);
        self
    }

    /// The directory of pins.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The pin of `hook` on `iface`.
    pub fn pin_path(&self, iface: &str, hook: Hook) -> PathBuf {
        self.root.join(iface).join(hook.pin_name())
    }

    /// Attaches `prog` (loaded for the hook's program type, e.g. with [`load`]) to `hook` on
    /// `iface` and pins the attachment. [`AttachError::AlreadyAttached`] when sift has a
    /// program there ([`Attacher::replace`] it), [`AttachError::Busy`] when another tool has.
    pub fn attach(
        &self,
        iface: &str,
        hook: Hook,
        prog: impl AsFd,
    ) -> Result<Attachment, AttachError> {
        let prog = prog.as_fd();
        check_type(prog, hook)?;
        let ifindex = resolve(iface)?;
        let pin = self.pin_path(iface, hook);
        if let Some(p) = self.open_pin(&pin)? {
            let a = self.describe(iface, Some(ifindex), hook, &pin, &p)?;
            if a.attached {
                return Err(AttachError::AlreadyAttached {
                    iface: iface.into(),
                    hook,
                    prog_id: a.prog_id,
                    pin: pin.display().to_string(),
                });
            }
            // A pin that outlived its attachment (the interface was recreated): forget it.
            remove_pin(&pin)?;
        }
        let dir = pin.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)
            .map_err(|e| kernel_error(format!("creating {}", dir.display()), e))?;
        let attached = match self.mechanism {
            Some(Mechanism::Link) => self.attach_link(iface, ifindex, hook, prog, &pin),
            Some(Mechanism::Netlink) => self.attach_netlink(iface, ifindex, hook, prog, &pin),
            None => match self.attach_link(iface, ifindex, hook, prog, &pin) {
                Err(AttachError::Kernel { source, .. })
                    if source.raw_os_error() == Some(EINVAL) =>
                {
                    // The kernel has no link for this hook (XDP before 5.9, TCX before 6.6).
                    self.attach_netlink(iface, ifindex, hook, prog, &pin)
                }
                other => other,
            },
        };
        if let Err(e) = attached {
            let _ = std::fs::remove_dir(dir);
            return Err(e);
        }
        self.query_hook(iface, hook)?.ok_or_else(|| AttachError::Changed {
            iface: iface.into(),
            hook,
            detail: "the pin vanished right after attaching".into(),
        })
    }

    fn attach_link(
        &self,
        iface: &str,
        ifindex: u32,
        hook: Hook,
        prog: BorrowedFd<'_>,
        pin: &Path,
    ) -> Result<(), AttachError> {
        let at = match hook {
            Hook::Xdp { mode } => bpf::LinkCreate {
                ifindex,
                attach_type: bpf::BPF_XDP,
                flags: xdp_mode_flag(mode),
                ..Default::default()
            },
            Hook::TcIngress | Hook::TcEgress => bpf::LinkCreate {
                ifindex,
                attach_type: if hook == Hook::TcIngress {
                    bpf::BPF_TCX_INGRESS
                } else {
                    bpf::BPF_TCX_EGRESS
                },
                flags: bpf::BPF_F_BEFORE,
                ..Default::default()
            },
        };
        let link = bpf::link_create(prog, &at).map_err(|e| match e.raw_os_error() {
            Some(EEXIST) if at.attach_type != bpf::BPF_XDP => {
                // TCX holds other tools' programs beside sift's, but each program once.
                let id = bpf::prog_info(prog).map(|i| i.id).unwrap_or(0);
                AttachError::Busy {
                    iface: iface.into(),
                    hook,
                    holder: format!("program {id} itself (a TCX hook holds a program once)"),
                }
            }
            Some(EBUSY) | Some(EEXIST) => busy(iface, ifindex, hook),
            Some(EOPNOTSUPP) if matches!(hook, Hook::Xdp { mode: XdpMode::Native }) => {
                AttachError::NativeUnsupported { iface: iface.into() }
            }
            _ => kernel_error(format!("attaching a link to {iface} {hook}"), e),
        })?;
        // Dropping the link on failure detaches it.
        bpf::obj_pin(&link, pin).map_err(|e| kernel_error(format!("pinning {}", pin.display()), e))
    }

    fn attach_netlink(
        &self,
        iface: &str,
        ifindex: u32,
        hook: Hook,
        prog: BorrowedFd<'_>,
        pin: &Path,
    ) -> Result<(), AttachError> {
        bpf::obj_pin(prog, pin)
            .map_err(|e| kernel_error(format!("pinning {}", pin.display()), e))?;
        let done = (|| {
            let mut rt = rtnetlink()?;
            let what = format!("attaching to {iface} {hook} by netlink");
            match hook {
                Hook::Xdp { mode } => {
                    let flags = xdp_mode_flag(mode) | netlink::XDP_FLAGS_UPDATE_IF_NOEXIST;
                    rt.xdp_set(ifindex, Some(prog), flags, None).map_err(|e| {
                        match e.raw_os_error() {
                            Some(EBUSY) | Some(EEXIST) => busy(iface, ifindex, hook),
                            Some(EOPNOTSUPP) if mode == XdpMode::Native => {
                                AttachError::NativeUnsupported { iface: iface.into() }
                            }
                            _ => netlink_error(what, e),
                        }
                    })
                }
                Hook::TcIngress | Hook::TcEgress => {
                    let at = tc_filter(hook);
                    rt.clsact_add(ifindex).map_err(|e| netlink_error(what.clone(), e))?;
                    let name = bpf::prog_info(prog).map(|i| i.name).unwrap_or_default();
                    rt.tc_bpf_attach(ifindex, &at, prog, &name, false).map_err(|e| {
                        match e.raw_os_error() {
                            Some(EEXIST) => busy(iface, ifindex, hook),
                            _ => netlink_error(what, e),
                        }
                    })
                }
            }
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(pin);
        }
        done
    }

    /// [`Attacher::replace`] when sift's program is attached at `hook` on `iface`, else
    /// [`Attacher::attach`]; the attachment and whether it replaced one.
    pub fn attach_or_replace(
        &self,
        iface: &str,
        hook: Hook,
        prog: impl AsFd,
    ) -> Result<(Attachment, bool), AttachError> {
        if matches!(self.query_hook(iface, hook)?, Some(a) if a.attached) {
            Ok((self.replace(iface, hook, prog)?, true))
        } else {
            Ok((self.attach(iface, hook, prog)?, false))
        }
    }

    /// Replaces sift's program at `hook` on `iface` with `prog`, atomically (no packet goes
    /// without a program; maps are untouched), provided the program there is still the one
    /// sift pinned ([`AttachError::Changed`] otherwise).
    pub fn replace(
        &self,
        iface: &str,
        hook: Hook,
        prog: impl AsFd,
    ) -> Result<Attachment, AttachError> {
        let prog = prog.as_fd();
        check_type(prog, hook)?;
        let ifindex = resolve(iface)?;
        let pin = self.pin_path(iface, hook);
        let p = self.open_pin(&pin)?.ok_or_else(|| not_attached(iface, hook, &pin))?;
        let cur = self.describe(iface, Some(ifindex), hook, &pin, &p)?;
        if !cur.attached {
            return Err(AttachError::Changed {
                iface: iface.into(),
                hook,
                detail: format!("program {} is pinned but not attached", cur.prog_id),
            });
        }
        let what = format!("replacing the program on {iface} {hook}");
        match p.mechanism {
            Mechanism::Link => {
                let old =
                    bpf::prog_get_fd_by_id(p.prog_id).map_err(|e| kernel_error(what.clone(), e))?;
                bpf::link_update(&p.fd, prog, Some(old.as_fd())).map_err(|e| {
                    match e.raw_os_error() {
                        Some(EPERM) | Some(ENOLINK) => AttachError::Changed {
                            iface: iface.into(),
                            hook,
                            detail: format!("the link no longer holds program {}", p.prog_id),
                        },
                        _ => kernel_error(what, e),
                    }
                })?;
            }
            Mechanism::Netlink => {
                let mut rt = rtnetlink()?;
                match cur.hook {
                    Hook::Xdp { mode } => rt
                        .xdp_set(ifindex, Some(prog), xdp_mode_flag(mode), Some(p.fd.as_fd()))
                        .map_err(|e| match e.raw_os_error() {
                            Some(EEXIST) => AttachError::Changed {
                                iface: iface.into(),
                                hook,
                                detail: e.to_string(),
                            },
                            _ => netlink_error(what, e),
                        })?,
                    Hook::TcIngress | Hook::TcEgress => {
                        let name = bpf::prog_info(prog).map(|i| i.name).unwrap_or_default();
                        rt.tc_bpf_attach(ifindex, &tc_filter(hook), prog, &name, true)
                            .map_err(|e| netlink_error(what, e))?
                    }
                }
                repin(prog, &pin)?;
            }
        }
        self.query_hook(iface, hook)?.ok_or_else(|| not_attached(iface, hook, &pin))
    }

    /// Detaches sift's program from `hook` on `iface` and removes its pin (and the interface's
    /// directory once empty). A pin whose attachment is gone already (the interface was
    /// deleted) is just removed; the interface need not exist then.
    pub fn detach(&self, iface: &str, hook: Hook) -> Result<(), AttachError> {
        let pin = self.pin_path(iface, hook);
        let p = self.open_pin(&pin)?.ok_or_else(|| not_attached(iface, hook, &pin))?;
        let ifindex = resolve(iface).ok();
        let cur = self.describe(iface, ifindex, hook, &pin, &p)?;
        let what = format!("detaching from {iface} {hook}");
        match (p.mechanism, ifindex) {
            (Mechanism::Link, _) => match bpf::link_detach(&p.fd) {
                // Defunct already: nothing to detach.
                Err(e) if matches!(e.raw_os_error(), Some(ENOLINK) | Some(EINVAL)) => {}
                r => r.map_err(|e| kernel_error(what, e))?,
            },
            (Mechanism::Netlink, Some(ifindex)) if cur.attached => {
                let mut rt = rtnetlink()?;
                match cur.hook {
                    Hook::Xdp { mode } => rt
                        .xdp_set(ifindex, None, xdp_mode_flag(mode), Some(p.fd.as_fd()))
                        .map_err(|e| netlink_error(what, e))?,
                    Hook::TcIngress | Hook::TcEgress => {
                        rt.tc_bpf_detach(ifindex, &tc_filter(hook))
                            .map_err(|e| netlink_error(what.clone(), e))?;
                        // A clsact qdisc with no filter left does nothing: remove it.
                        let empty = [TcDirection::Ingress, TcDirection::Egress]
                            .iter()
                            .all(|d| rt.tc_bpf_list(ifindex, *d).is_ok_and(|l| l.is_empty()));
                        if empty {
                            let _ = rt.clsact_delete(ifindex);
                        }
                    }
                }
            }
            (Mechanism::Netlink, _) => {}
        }
        remove_pin(&pin)?;
        if let Some(dir) = pin.parent() {
            // Fails while other hooks of the interface are pinned: that is fine.
            let _ = std::fs::remove_dir(dir);
        }
        Ok(())
    }

    /// What sift has attached on `iface`, by hook (pins whose attachment is gone included, with
    /// [`Attachment::attached`] false). Empty when sift has nothing there.
    pub fn query(&self, iface: &str) -> Result<Vec<Attachment>, AttachError> {
        check_name(iface)?;
        let mut out = Vec::new();
        for hook in Hook::ALL {
            if let Some(a) = self.query_hook(iface, hook)? {
                out.push(a);
            }
        }
        Ok(out)
    }

    /// What sift has attached at `hook` on `iface`, if anything.
    pub fn query_hook(&self, iface: &str, hook: Hook) -> Result<Option<Attachment>, AttachError> {
        check_name(iface)?;
        let pin = self.pin_path(iface, hook);
        let Some(p) = self.open_pin(&pin)? else { return Ok(None) };
        let ifindex = resolve(iface).ok();
        self.describe(iface, ifindex, hook, &pin, &p).map(Some)
    }

    /// The object pinned at `pin`, if any.
    fn open_pin(&self, pin: &Path) -> Result<Option<Pinned>, AttachError> {
        let fd = match bpf::obj_get(pin) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(ENOENT) => return Ok(None),
            Err(e) => return Err(kernel_error(format!("opening {}", pin.display()), e)),
        };
        let what = || format!("reading {}", pin.display());
        match bpf::obj_kind(&fd).map_err(|e| kernel_error(what(), e))? {
            ObjKind::Link => {
                let info = bpf::link_info(&fd).map_err(|e| kernel_error(what(), e))?;
                Ok(Some(Pinned {
                    fd,
                    mechanism: Mechanism::Link,
                    prog_id: info.prog_id,
                    link_ifindex: info.ifindex,
                }))
            }
            ObjKind::Prog => {
                let info = bpf::prog_info(&fd).map_err(|e| kernel_error(what(), e))?;
                Ok(Some(Pinned {
                    fd,
                    mechanism: Mechanism::Netlink,
                    prog_id: info.id,
                    link_ifindex: 0,
                }))
            }
            _ => Err(AttachError::Kernel {
                what: what(),
                source: io::Error::other("not a program or a link: not sift's pin"),
            }),
        }
    }

    /// The attachment a pin stands for, checked against the interface.
    fn describe(
        &self,
        iface: &str,
        ifindex: Option<u32>,
        hook: Hook,
        pin: &Path,
        p: &Pinned,
    ) -> Result<Attachment, AttachError> {
        let prog_name = bpf::prog_get_fd_by_id(p.prog_id)
            .and_then(bpf::prog_info)
            .map(|i| i.name)
            .unwrap_or_default();
        let mut a = Attachment {
            iface: iface.into(),
            ifindex: ifindex.unwrap_or(0),
            hook,
            mechanism: p.mechanism,
            prog_id: p.prog_id,
            prog_name,
            pin: pin.to_path_buf(),
            attached: false,
        };
        let Some(ifindex) = ifindex else { return Ok(a) };
        let what = || format!("querying {iface} {hook}");
        match hook {
            Hook::Xdp { .. } => {
                let st = rtnetlink()?.xdp_query(ifindex).map_err(|e| netlink_error(what(), e))?;
                let mode = if st.skb_prog_id == p.prog_id {
                    Some(XdpMode::Generic)
                } else if st.drv_prog_id == p.prog_id {
                    Some(XdpMode::Native)
                } else {
                    None
                };
                if let Some(mode) = mode {
                    a.hook = Hook::Xdp { mode };
                }
                a.attached = mode.is_some()
                    && (p.mechanism == Mechanism::Netlink || p.link_ifindex == ifindex);
            }
            Hook::TcIngress | Hook::TcEgress => {
                a.attached = match p.mechanism {
                    Mechanism::Link => p.link_ifindex == ifindex,
                    Mechanism::Netlink => {
                        let dir = hook.tc_direction().unwrap_or(TcDirection::Ingress);
                        let list = rtnetlink()?
                            .tc_bpf_list(ifindex, dir)
                            .map_err(|e| netlink_error(what(), e))?;
                        let at = tc_filter(hook);
                        list.iter().any(|f| f.filter == at && f.prog_id == p.prog_id)
                    }
                };
            }
        }
        Ok(a)
    }
}

fn xdp_mode_flag(mode: XdpMode) -> u32 {
    match mode {
        XdpMode::Native => netlink::XDP_FLAGS_DRV_MODE,
        XdpMode::Generic => netlink::XDP_FLAGS_SKB_MODE,
    }
}

fn tc_filter(hook: Hook) -> TcFilter {
    TcFilter {
        direction: hook.tc_direction().unwrap_or(TcDirection::Ingress),
        priority: TC_PRIORITY,
        handle: TC_HANDLE,
    }
}

fn rtnetlink() -> Result<Rtnetlink, AttachError> {
    Rtnetlink::open().map_err(|e| kernel_error("opening a netlink socket", e))
}

fn not_attached(iface: &str, hook: Hook, pin: &Path) -> AttachError {
    AttachError::NotAttached { iface: iface.into(), hook, pin: pin.display().to_string() }
}

/// [`AttachError::Busy`], saying what holds the hook as far as the kernel tells.
fn busy(iface: &str, ifindex: u32, hook: Hook) -> AttachError {
    let describe = |id: u32| {
        let name = bpf::prog_get_fd_by_id(id).and_then(bpf::prog_info).map(|i| i.name);
        match name {
            Ok(n) if !n.is_empty() => format!("program {id} ({n})"),
            _ => format!("program {id}"),
        }
    };
    let holder = match hook {
        Hook::Xdp { .. } => {
            match Rtnetlink::open().ok().and_then(|mut rt| rt.xdp_query(ifindex).ok()) {
                Some(st) if st.drv_prog_id != 0 || st.skb_prog_id != 0 => {
                    let id = if st.drv_prog_id != 0 { st.drv_prog_id } else { st.skb_prog_id };
                    let mode = if st.drv_prog_id != 0 { "native" } else { "generic" };
                    format!("{} in {mode} mode", describe(id))
                }
                _ => "another program".into(),
            }
        }
        Hook::TcIngress | Hook::TcEgress => {
            format!("a tc filter at priority {TC_PRIORITY} handle {TC_HANDLE:#x}")
        }
    };
    AttachError::Busy { iface: iface.into(), hook, holder }
}

/// [`AttachError::WrongType`] unless `prog` is of the type `hook` runs.
fn check_type(prog: BorrowedFd<'_>, hook: Hook) -> Result<(), AttachError> {
    let got =
        bpf::prog_info(prog).map_err(|e| kernel_error("reading the program's type", e))?.prog_type;
    if got == hook.prog_type() {
        Ok(())
    } else {
        Err(AttachError::WrongType { hook, want: hook.prog_type(), got })
    }
}

/// An interface name that can be a path component, or [`AttachError::NoSuchInterface`].
fn check_name(iface: &str) -> Result<(), AttachError> {
    let ok = !iface.is_empty()
        && iface.len() < 16
        && iface != "."
        && iface != ".."
        && !iface.contains(['/', '\0'])
        && !iface.chars().any(char::is_whitespace);
    if ok { Ok(()) } else { Err(AttachError::NoSuchInterface { iface: iface.into() }) }
}

/// The index of `iface` in the calling thread's namespace.
fn resolve(iface: &str) -> Result<u32, AttachError> {
    check_name(iface)?;
    iface::index_of(iface).map_err(|e| match e.raw_os_error() {
        Some(ENODEV) | None => AttachError::NoSuchInterface { iface: iface.into() },
        _ => kernel_error(format!("looking up {iface}"), e),
    })
}

fn remove_pin(pin: &Path) -> Result<(), AttachError> {
    match std::fs::remove_file(pin) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(kernel_error(format!("removing {}", pin.display()), e))
        }
        _ => Ok(()),
    }
}

/// Pins `prog` at `pin` in place of what is there: pinned beside it, then renamed over it (one
/// step for anyone reading the pin); where the file system cannot rename, unlinked and pinned.
fn repin(prog: BorrowedFd<'_>, pin: &Path) -> Result<(), AttachError> {
    let tmp = pin.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    let pinned = bpf::obj_pin(prog, &tmp).and_then(|()| std::fs::rename(&tmp, pin));
    if pinned.is_ok() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&tmp);
    remove_pin(pin)?;
    bpf::obj_pin(prog, pin).map_err(|e| kernel_error(format!("pinning {}", pin.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_paths_and_names() {
        let a = Attacher::with_root("/sys/fs/bpf/t");
        assert_eq!(
            a.pin_path("veth0", Hook::Xdp { mode: XdpMode::Generic }),
            Path::new("/sys/fs/bpf/t/veth0/xdp")
        );
        assert_eq!(a.pin_path("veth0", Hook::TcEgress), Path::new("/sys/fs/bpf/t/veth0/tc-egress"));
        for bad in ["", "..", ".", "a/b", "sixteen-chars-ab", "a b"] {
            assert!(matches!(check_name(bad), Err(AttachError::NoSuchInterface { .. })), "{bad:?}");
        }
        assert!(check_name("eth0.100").is_ok());
        assert_eq!(Hook::TcIngress.to_string(), "tc ingress");
        assert_eq!(Hook::Xdp { mode: XdpMode::Native }.prog_type(), bpf::BPF_PROG_TYPE_XDP);
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = kernel_error("attaching", io::Error::from_raw_os_error(EPERM));
        assert!(e.to_string().contains("needs root"), "{e}");
        let e = AttachError::Busy {
            iface: "eth0".into(),
            hook: Hook::Xdp { mode: XdpMode::Native },
            holder: "program 7 (xdp_pass) in native mode".into(),
        };
        assert!(e.to_string().contains("detach it first"), "{e}");
    }
}
