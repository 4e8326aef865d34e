//! The interfaces one could capture on (`sift -D`), as libpcap's `pcap_findalldevs` lists them
//! on Linux: every interface of the network namespace with its state, plus `any`.

use std::io;

use sift_sys::iface;

use crate::capture::link_type_for_hatype;

/// One entry of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceInfo {
    /// Interface index (0 for `any`).
    pub index: u32,
    /// Name.
    pub name: String,
    /// `IFF_UP`.
    pub up: bool,
    /// `IFF_RUNNING`.
    pub running: bool,
    /// `IFF_LOOPBACK`.
    pub loopback: bool,
    /// The link type a capture on it delivers.
    pub link_type: u16,
}

impl InterfaceInfo {
    /// tcpdump's `-D` flags text: `[Up, Running, Loopback]`.
    pub fn flags_text(&self) -> String {
        let mut flags = Vec::new();
        if self.up {
            flags.push("Up");
        }
        if self.running {
            flags.push("Running");
        }
        if self.loopback {
            flags.push("Loopback");
        }
        format!("[{}]", flags.join(", "))
    }
}

/// The interfaces of this network namespace: running ones first, then the rest, `any` after
/// the last running one, loopback last among its group (libpcap's order, roughly).
pub fn list() -> io::Result<Vec<InterfaceInfo>> {
    let mut out = Vec::new();
    for (index, name) in iface::names()? {
        let Ok(info) = iface::info(&name) else { continue };
        out.push(InterfaceInfo {
            index,
            name,
            up: info.flags & libc::IFF_UP as u32 != 0,
            running: info.flags & libc::IFF_RUNNING as u32 != 0,
            loopback: info.flags & libc::IFF_LOOPBACK as u32 != 0,
            link_type: link_type_for_hatype(info.hatype).unwrap_or(113),
        });
    }
    out.sort_by_key(|i| (!(i.up && i.running), i.loopback, i.index));
    let any = InterfaceInfo {
        index: 0,
        name: "any".into(),
        up: true,
        running: true,
        loopback: false,
        link_type: 276,
    };
    let at = out.iter().position(|i| i.loopback || !(i.up && i.running)).unwrap_or(out.len());
    out.insert(at, any);
    Ok(out)
}

/// The name of interface `ifindex` in this namespace.
pub fn name_of(ifindex: u32) -> Option<String> {
    iface::name_of(ifindex)
}
