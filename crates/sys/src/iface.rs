//! Network interfaces of the calling thread's namespace: names, indexes, flags, hardware types,
//! MTUs, generic receive offload, receive queues.
//!
//! Capture opens an interface by name and needs its index (to bind), its flags (is it up?), its
//! hardware type (which link type the frames have) and its MTU (for injection); `sift -D` lists
//! them all; the veth oracle looks up the indexes of the interfaces it made.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::{cvt, owned_fd};

/// What the interface ioctls give for a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfInfo {
    /// The interface index (`SIOCGIFINDEX`).
    pub ifindex: u32,
    /// `IFF_*` flags (`SIOCGIFFLAGS`).
    pub flags: u32,
    /// The `ARPHRD_*` hardware type (`SIOCGIFHWADDR`).
    pub hatype: u16,
    /// The MTU (`SIOCGIFMTU`).
    pub mtu: u32,
}

/// A throwaway datagram socket for interface ioctls.
fn ioctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with integer arguments; the descriptor it returns is new and ours.
    unsafe { owned_fd(libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)) }
}

/// An `ifreq` with `name` in it, or `ENODEV` for a name no interface can have (empty, too long
/// for `IFNAMSIZ` with its NUL, or with a NUL inside).
fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    Ok(req)
}

/// `SIOCGIFINDEX`, `SIOCGIFFLAGS`, `SIOCGIFHWADDR` and `SIOCGIFMTU` for `name`; `ENODEV` when
/// there is no such interface.
pub fn info(name: &str) -> io::Result<IfInfo> {
    let sock = ioctl_socket()?;
    let fd = sock.as_raw_fd();
    let mut req = ifreq_for(name)?;
    // SAFETY: `req` is a live ifreq with a NUL-terminated name; the kernel fills the union.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFINDEX, &mut req) })?;
    // SAFETY: SIOCGIFINDEX filled the ifindex member of the union.
    let ifindex = unsafe { req.ifr_ifru.ifru_ifindex } as u32;
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) })?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    let flags = unsafe { req.ifr_ifru.ifru_flags } as u16 as u32;
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR, &mut req) })?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr member; sa_family is the ARPHRD type.
    let hatype = unsafe { req.ifr_ifru.ifru_hwaddr.sa_family };
    let mut req = ifreq_for(name)?;
    // SAFETY: as above.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut req) })?;
    // SAFETY: SIOCGIFMTU filled the mtu member.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu } as u32;
    Ok(IfInfo { ifindex, flags, hatype, mtu })
}

/// The interfaces as `(ifindex, name)`, in ifindex order (`if_nameindex`).
pub fn names() -> io::Result<Vec<(u32, String)>> {
    // SAFETY: if_nameindex returns a heap array terminated by an entry with index 0, or NULL.
    let list = unsafe { libc::if_nameindex() };
    if list.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut at = list;
    loop {
        // SAFETY: `at` points into the array, which ends with an entry whose index is 0.
        let entry = unsafe { &*at };
        if entry.if_index == 0 {
            break;
        }
        // SAFETY: if_name is a NUL-terminated string owned by the array.
        let name = unsafe { CStr::from_ptr(entry.if_name) };
        out.push((entry.if_index, name.to_string_lossy().into_owned()));
        // SAFETY: not past the terminating entry (checked above).
        at = unsafe { at.add(1) };
    }
    // SAFETY: `list` came from if_nameindex and is freed once.
    unsafe { libc::if_freenameindex(list) };
    out.sort();
    Ok(out)
}

/// The name of interface `ifindex` (`if_indextoname`), or `None` when there is none.
pub fn name_of(ifindex: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IFNAMSIZ];
    // SAFETY: `buf` holds IFNAMSIZ bytes as if_indextoname requires.
    let p = unsafe { libc::if_indextoname(ifindex, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success `buf` holds a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// The index of interface `name` (`if_nametoindex`): `ENODEV` when there is no such interface,
/// an `Other` error for a name with a NUL inside.
pub fn index_of(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(io::Error::other)?;
    // SAFETY: `c` is a NUL-terminated string that lives through the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i)
}

/// `SIOCETHTOOL`.
const SIOCETHTOOL: libc::c_ulong = 0x8946;
/// `ETHTOOL_GGRO`, `ETHTOOL_SGRO`: read and set generic receive offload.
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// An `ETHTOOL_*` command with a value, on interface `name`.
fn ethtool_value(name: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let sock = ioctl_socket()?;
    let mut value = EthtoolValue { cmd, data };
    let mut req = ifreq_for(name)?;
    req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
    // SAFETY: `req` names the interface and points at `value`, a live ethtool_value the kernel
    // reads and writes during the call only.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL, &mut req) })?;
    Ok(value.data)
}

/// Whether generic receive offload is on for interface `name` (`ethtool -k`'s
/// `generic-receive-offload`).
pub fn gro(name: &str) -> io::Result<bool> {
    ethtool_value(name, ETHTOOL_GGRO, 0).map(|v| v != 0)
}

/// Turns generic receive offload on or off for interface `name` (`ethtool -K NAME gro on`;
/// needs `CAP_NET_ADMIN`). On a veth device it also switches its NAPI receive path on or off,
/// without which frames sent to it by XDP (`bpf_redirect`, `XDP_TX` on the peer) are dropped.
pub fn set_gro(name: &str, on: bool) -> io::Result<()> {
    ethtool_value(name, ETHTOOL_SGRO, u32::from(on)).map(drop)
}

/// `ETHTOOL_GCHANNELS`: read the channel counts.
const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// The number of receive queues of interface `name` (`ethtool -l`: receive-only plus combined
/// channels), what an `AF_XDP` socket's queue must be below; `EOPNOTSUPP` when the driver does
/// not say (loopback; it has one).
pub fn rx_queues(name: &str) -> io::Result<u32> {
    let sock = ioctl_socket()?;
    let mut ch = EthtoolChannels { cmd: ETHTOOL_GCHANNELS, ..EthtoolChannels::default() };
    let mut req = ifreq_for(name)?;
    req.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    // SAFETY: `req` names the interface and points at `ch`, a live ethtool_channels the kernel
    // reads and writes during the call only.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL, &mut req) })?;
    Ok(ch.rx_count + ch.combined_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_names_are_no_such_device() {
        // Refused before any ioctl: empty, 16 bytes (no room for the NUL), a NUL inside.
        for name in ["", "a-name-of-16-chr", "lo\0"] {
            let err = info(name).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{name:?}");
        }
        // 15 bytes fit (with the NUL); no such interface all the same.
        assert_eq!(info("no-such-iface15").unwrap_err().raw_os_error(), Some(libc::ENODEV));
        assert_eq!(index_of("no-such-iface").unwrap_err().raw_os_error(), Some(libc::ENODEV));
        assert_eq!(index_of("lo\0").unwrap_err().kind(), io::ErrorKind::Other);
    }

    #[test]
    fn loopback_is_everywhere() {
        // Every network namespace has `lo`, up or down, of type ARPHRD_LOOPBACK.
        let lo = info("lo").unwrap();
        assert_eq!(lo.hatype, 772);
        assert_eq!(lo.flags & libc::IFF_LOOPBACK as u32, libc::IFF_LOOPBACK as u32);
        assert_eq!(index_of("lo").unwrap(), lo.ifindex);
        assert_eq!(name_of(lo.ifindex).as_deref(), Some("lo"));
        assert!(names().unwrap().contains(&(lo.ifindex, "lo".to_string())));
        assert_eq!(name_of(0), None);
    }

    /// GRO read and switched on `lo` of a private namespace (a thread of its own).
    #[test]
    fn gro_on_and_off() {
        let run = std::thread::spawn(|| -> Result<(), String> {
            crate::netns::unshare_net().map_err(|e| format!("unshare: {e}"))?;
            let before = gro("lo").map_err(|e| format!("ETHTOOL_GGRO: {e}"))?;
            set_gro("lo", !before).unwrap();
            assert_eq!(gro("lo").unwrap(), !before);
            set_gro("lo", before).unwrap();
            assert_eq!(gro("lo").unwrap(), before);
            assert_eq!(set_gro("nosuch0", true).unwrap_err().raw_os_error(), Some(libc::ENODEV));
            Ok(())
        });
        if let Err(why) = run.join().unwrap() {
            sift_testkit::oracle_missing::<()>("private network namespace", why);
        }
    }
}
