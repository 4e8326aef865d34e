//! Sending packets: the write path of the 1987 packet filter, and sift's own traffic generator.
//!
//! An [`Injector`] is an `AF_PACKET` `SOCK_RAW` socket bound to one interface with protocol 0,
//! so it never receives anything; each [`Injector::send`] puts one complete link-layer frame on
//! the wire. A full transmit queue (`ENOBUFS`/`EAGAIN`) is waited out and retried rather than
//! counted as an error.

use std::io;
use std::os::fd::OwnedFd;

use sift_sys::{packet, socket};

use crate::capture::{interface_info, link_type_for_hatype, open_packet_socket};
use crate::{CaptureError, ErrorKind};

/// A socket that sends frames on one interface.
pub struct Injector {
    fd: OwnedFd,
    name: String,
    link_type: u16,
    mtu: u32,
}

impl Injector {
    /// Opens an injector on `interface`. With `qdisc_bypass`, frames skip the queueing
    /// discipline (`PACKET_QDISC_BYPASS`), as pktgen and trafgen do.
    pub fn open(interface: &str, qdisc_bypass: bool) -> Result<Injector, CaptureError> {
        let err = |kind, what: &str| {
            let name = interface.to_string();
            let what = what.to_string();
            move |source| CaptureError { interface: name, kind, what, source }
        };
        if interface == "any" {
            return Err(err(ErrorKind::Io, "cannot send on the `any` pseudo-device")(
                io::Error::from_raw_os_error(libc::EINVAL),
            ));
        }
        let info = interface_info(interface)?;
        let Some(link_type) = link_type_for_hatype(info.hatype) else {
            return Err(err(ErrorKind::Io, "sending on this kind of device is not supported")(
                io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            ));
        };
        let fd = open_packet_socket(interface, packet::SockType::Raw)?;
        packet::bind(&fd, info.ifindex, 0).map_err(err(ErrorKind::Io, "cannot bind"))?;
        if qdisc_bypass {
            packet::qdisc_bypass(&fd).map_err(err(ErrorKind::Io, "PACKET_QDISC_BYPASS"))?;
        }
        Ok(Injector { fd, name: interface.to_string(), link_type, mtu: info.mtu })
    }

    /// The pcap link type frames must have.
    pub fn link_type(&self) -> u16 {
        self.link_type
    }

    /// The interface MTU.
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// The interface name.
    pub fn interface(&self) -> &str {
        &self.name
    }

    /// Sends one frame, waiting while the transmit queue is full.
    pub fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        let mut waits = 0;
        loop {
            match socket::send(&self.fd, frame) {
                Ok(n) if n == frame.len() => return Ok(()),
                Ok(n) => {
                    return Err(io::Error::other(format!(
                        "short send: {n} of {} bytes",
                        frame.len()
                    )));
                }
                // (`socket::send` retries an interrupted call itself.)
                Err(e)
                    if matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::EAGAIN))
                        && waits < 1000 =>
                {
                    waits += 1;
                    socket::poll_writable(&self.fd, 1);
                }
                Err(e) => return Err(e),
            }
        }
    }
}
