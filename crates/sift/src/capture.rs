//! The short way in: open a capture, filter it, iterate or save the kept packets.

use std::path::{Path, PathBuf};

use sift_pcap::{Interface, LinkType, Packet, Precision, Timestamp, TsResolution};

use crate::Error;
use crate::filter::Filter;
use crate::input::{self, Source};
use crate::output::{self, Writer};

/// A capture file (or several merged by time) with an optional filter: the kept packets, one
/// by one.
///
/// Iterating yields each kept packet as an [`OwnedPacket`] (a copy);
/// [`for_each_kept`](Capture::for_each_kept) hands out borrowed packets without copying, and
/// [`save`](Capture::save) writes them to a pcap file.
#[derive(Debug)]
pub struct Capture {
    source: Source,
    filter: Option<Filter>,
    read: u64,
    kept: u64,
    /// Set after an error: nothing more is read.
    failed: bool,
}

/// A packet copied out of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedPacket {
    /// When it was captured.
    pub timestamp: Timestamp,
    /// Its length on the wire (may exceed `data.len()`).
    pub wire_len: u32,
    /// The captured bytes.
    pub data: Vec<u8>,
    /// Index of its interface in [`Capture::interfaces`].
    pub interface: u32,
    /// The link type of that interface.
    pub link_type: LinkType,
    /// Byte offset of its record in the file (in its own file, for a merge).
    pub offset: u64,
}

impl OwnedPacket {
    /// The packet, borrowed.
    pub fn as_packet(&self) -> Packet<'_> {
        Packet {
            timestamp: self.timestamp,
            wire_len: self.wire_len,
            data: &self.data,
            interface: self.interface,
            link_type: self.link_type,
            offset: self.offset,
        }
    }
}

impl From<&Packet<'_>> for OwnedPacket {
    fn from(p: &Packet<'_>) -> OwnedPacket {
        OwnedPacket {
            timestamp: p.timestamp,
            wire_len: p.wire_len,
            data: p.data.to_vec(),
            interface: p.interface,
            link_type: p.link_type,
            offset: p.offset,
        }
    }
}

/// What [`Capture::save`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Packets read.
    pub read: u64,
    /// Packets kept and written.
    pub written: u64,
}

impl Capture {
    /// Opens a capture file (pcap or pcapng; `-` for standard input), or every file a
    /// shell-style pattern such as `day*.pcap` matches, merged by time.
    pub fn open(path: impl AsRef<Path>) -> Result<Capture, Error> {
        Capture::open_all(&[path.as_ref()])
    }

    /// Opens several captures (or patterns), merged by time as mergecap does.
    pub fn open_all<P: AsRef<Path>>(paths: &[P]) -> Result<Capture, Error> {
        let inputs: Vec<PathBuf> = input::expand(paths)?;
        let source = Source::open(&inputs)?;
        Ok(Capture { source, filter: None, read: 0, kept: 0, failed: false })
    }

    /// Keeps only the packets `expr` (pcap-filter syntax, as tcpdump) accepts, compiled and run
    /// in the JIT. A mistake in the expression is reported now, with a caret under it.
    pub fn filter(self, expr: &str) -> Result<Capture, Error> {
        self.with_filter(Filter::new(expr))
    }

    /// Keeps only the packets `filter` accepts (a [`Filter`] set up with another engine or
    /// resolver).
    pub fn with_filter(mut self, mut filter: Filter) -> Result<Capture, Error> {
        if let Some(first) = self.source.interfaces().first() {
            filter.prepare(first)?;
        }
        self.filter = Some(filter);
        Ok(self)
    }

    /// The interfaces known so far (their index is a packet's `interface`).
    pub fn interfaces(&self) -> &[Interface] {
        self.source.interfaces()
    }

    /// tcpdump's line about what is read: `reading from file F, link-type …`.
    pub fn describe(&self) -> String {
        self.source.describe()
    }

    /// Packets read and kept so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.read, self.kept)
    }

    /// Calls `f` with each kept packet (borrowed: no copy) and the interface list it indexes,
    /// until the end, an error from the capture, or an error from `f`. Returns how many packets
    /// `f` got.
    pub fn for_each_kept<E: From<Error>>(
        &mut self,
        mut f: impl FnMut(&Packet<'_>, &[Interface]) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut n = 0;
        while !self.failed {
            let (packet, interfaces) = match self.source.next_packet() {
                Ok(Some(next)) => next,
                Ok(None) => break,
                Err(e) => {
                    self.failed = true;
                    return Err(Error::from(e).into());
                }
            };
            self.read += 1;
            if let Some(filter) = &mut self.filter {
                match filter.accepts(&packet, &interfaces[packet.interface as usize]) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        self.failed = true;
                        return Err(Error::from(e).into());
                    }
                }
            }
            self.kept += 1;
            n += 1;
            f(&packet, interfaces)?;
        }
        Ok(n)
    }

    /// Writes the kept packets to a new pcap file at `path` (`-` for standard output), with
    /// the link type and snapshot length of the first packet's interface, as
    /// `tcpdump -r IN -w OUT EXPR` does. All packets must have that link type.
    pub fn save(mut self, path: impl AsRef<Path>) -> Result<Saved, Error> {
        let path = path.as_ref();
        let mut writer = None;
        let written = self.for_each_kept(|packet, interfaces| -> Result<(), Error> {
            let w = match &mut writer {
                Some(w) => w,
                None => {
                    let iface = &interfaces[packet.interface as usize];
                    writer.insert(Writer::pcap(output::create(path)?, iface, Precision::Micro)?)
                }
            };
            Ok(w.write(packet, interfaces)?)
        })?;
        let writer = match writer {
            Some(w) => w,
            // No packet kept: an empty file with the first interface's header, as tcpdump.
            None => {
                let first = self.source.interfaces().first().cloned().unwrap_or_else(|| {
                    Interface::new(LinkType::EN10MB, sift_pcap::MAX_CAPLEN, TsResolution::MICRO)
                });
                Writer::pcap(output::create(path)?, &first, Precision::Micro)?
            }
        };
        writer.finish()?;
        Ok(Saved { read: self.read, written })
    }
}

impl Iterator for Capture {
    type Item = Result<OwnedPacket, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            let (packet, interfaces) = match self.source.next_packet() {
                Ok(Some(next)) => next,
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.into()));
                }
            };
            self.read += 1;
            if let Some(filter) = &mut self.filter {
                match filter.accepts(&packet, &interfaces[packet.interface as usize]) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(e.into()));
                    }
                }
            }
            self.kept += 1;
            return Some(Ok(OwnedPacket::from(&packet)));
        }
        None
    }
}
