//! The short way in: open a capture, filter it, iterate or save the kept packets.
//!
//! Packets are read and filtered a batch at a time ([`Source::next_batch`],
//! [`Filter::run_batch`]) and then handed out one by one; what a batch read but was not handed
//! out yet (by the iterator, or after the function given to
//! [`for_each_kept`](Capture::for_each_kept) failed) waits in order, so that the packets, the
//! counts and the errors are those of reading one packet at a time.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use sift_pcap::{Interface, LinkType, Packet, Precision, Timestamp, TsResolution};

use crate::Error;
use crate::filter::{BATCH_PACKETS, Filter, FilterError};
use crate::input::{self, Source};
use crate::output::{self, Writer};

/// Packets per batch when iterating: each kept packet of a batch is copied before the first is
/// handed out, so fewer than [`BATCH_PACKETS`], to bound that memory.
const ITER_BATCH: usize = 256;

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
    /// What batches read and filtered but nobody took yet, in order.
    pending: VecDeque<Pending>,
    /// The verdicts on the current batch.
    verdicts: Vec<u32>,
}

/// Something a batch read, waiting to be taken.
#[derive(Debug)]
enum Pending {
    /// Packets read and not kept.
    Rejected(u64),
    /// A packet read and kept.
    Kept(OwnedPacket),
    /// The error that ends the capture (the read or the filter).
    Failed(Error),
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
        Ok(Capture {
            source,
            filter: None,
            read: 0,
            kept: 0,
            failed: false,
            pending: VecDeque::new(),
            verdicts: Vec::new(),
        })
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
        // First what an earlier batch left.
        while let Some(next) = self.take_pending() {
            let packet = next?;
            n += 1;
            f(&packet.as_packet(), self.source.interfaces())?;
        }
        while !self.failed {
            let batch = match self.source.next_batch(BATCH_PACKETS) {
                Ok(batch) if batch.is_empty() => break,
                Ok(batch) => batch,
                Err(e) => {
                    self.failed = true;
                    return Err(Error::from(e).into());
                }
            };
            let (packets, interfaces) = (batch.packets(), batch.interfaces());
            let filtered = verdicts(self.filter.as_mut(), packets, interfaces, &mut self.verdicts);
            for (i, (packet, &verdict)) in packets.iter().zip(&self.verdicts).enumerate() {
                self.read += 1;
                if verdict == 0 {
                    continue;
                }
                self.kept += 1;
                n += 1;
                if let Err(e) = f(packet, interfaces) {
                    // The rest of the batch waits for the next call.
                    let rest = (&packets[i + 1..], &self.verdicts[i + 1..]);
                    queue(&mut self.pending, rest.0, rest.1, filtered);
                    return Err(e);
                }
            }
            if let Err(e) = filtered {
                // As one by one, the packet the filter failed on counts as read.
                self.read += 1;
                self.failed = true;
                return Err(Error::from(e).into());
            }
        }
        Ok(n)
    }

    /// The next pending kept packet or error, counting the packets passed on the way; `None`
    /// when nothing is pending.
    fn take_pending(&mut self) -> Option<Result<OwnedPacket, Error>> {
        while let Some(item) = self.pending.pop_front() {
            match item {
                Pending::Rejected(n) => self.read += n,
                Pending::Kept(p) => {
                    self.read += 1;
                    self.kept += 1;
                    return Some(Ok(p));
                }
                Pending::Failed(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }

    /// Reads and filters a batch of up to `max` packets into `pending`; `false` at the end.
    fn read_batch(&mut self, max: usize) -> bool {
        let batch = match self.source.next_batch(max) {
            Ok(batch) if batch.is_empty() => return false,
            Ok(batch) => batch,
            Err(e) => {
                self.pending.push_back(Pending::Failed(e.into()));
                return true;
            }
        };
        let (packets, interfaces) = (batch.packets(), batch.interfaces());
        let filtered = verdicts(self.filter.as_mut(), packets, interfaces, &mut self.verdicts);
        queue(&mut self.pending, packets, &self.verdicts, filtered);
        true
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
        loop {
            if let Some(next) = self.take_pending() {
                return Some(next);
            }
            if self.failed || !self.read_batch(ITER_BATCH) {
                return None;
            }
        }
    }
}

/// The verdicts of `filter` (none: keep all) on a batch; see [`Filter::run_batch`].
fn verdicts(
    filter: Option<&mut Filter>,
    packets: &[Packet<'_>],
    interfaces: &[Interface],
    verdicts: &mut Vec<u32>,
) -> Result<(), FilterError> {
    match filter {
        Some(f) => f.run_batch(packets, interfaces, verdicts),
        None => {
            verdicts.clear();
            verdicts.resize(packets.len(), 1);
            Ok(())
        }
    }
}

/// Queues `packets` with their `verdicts` (kept ones copied), then the filter's error if it
/// failed on the packet after them (which counts as read, as one by one).
fn queue(
    pending: &mut VecDeque<Pending>,
    packets: &[Packet<'_>],
    verdicts: &[u32],
    filtered: Result<(), FilterError>,
) {
    let mut rejected = 0;
    for (packet, &verdict) in packets.iter().zip(verdicts) {
        if verdict == 0 {
            rejected += 1;
            continue;
        }
        if rejected > 0 {
            pending.push_back(Pending::Rejected(rejected));
            rejected = 0;
        }
        pending.push_back(Pending::Kept(OwnedPacket::from(packet)));
    }
    if let Err(e) = filtered {
        rejected += 1;
        pending.push_back(Pending::Rejected(rejected));
        pending.push_back(Pending::Failed(e.into()));
    } else if rejected > 0 {
        pending.push_back(Pending::Rejected(rejected));
    }
}
