//! Where packets come from: one capture file, or several merged by timestamp as mergecap does.
//!
//! Callers name inputs the way people do on a command line: paths, `-` for standard input, and
//! shell-style patterns (`'day*.pcap'`), which [`expand`] turns into files. [`Source`] then
//! hides how many files there are: it hands out packets one at a time, or a [`Batch`] at a time
//! for filtering them together, with the interface list their `interface` index refers to.
//!
//! A single file is read zero-copy (packets borrow the mapped file). Several files are merged
//! chronologically: each file's next packet is held (copied, since every reader is advanced on
//! its own) and the earliest goes first, the later file first on equal timestamps (as
//! mergecap). Their interfaces are renumbered into one list in order of first appearance, so a
//! pcapng output describes each input interface once and pcap output needs one link type
//! throughout.

use std::path::{Path, PathBuf};

use sift_pcap::split::PcapBytes;
use sift_pcap::{ClippedRecords, Interface, LinkType, Packet, Reader, Timestamp};

/// Why inputs cannot be opened or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// A pattern that is not a valid shell-style pattern.
    #[error("{pattern}: bad file pattern")]
    BadPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        #[source]
        source: glob::PatternError,
    },
    /// A pattern that matches no file.
    #[error("{pattern}: no file matches this pattern")]
    NoMatch {
        /// The pattern.
        pattern: String,
    },
    /// Standard input (`-`) among other inputs: a stream cannot be merged.
    #[error("standard input cannot be merged with other files")]
    StdinWithOthers,
    /// A file that cannot be opened or read from its start (the system's reason).
    #[error("{file}")]
    Open {
        /// The file, as given.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file that cannot be read, or is damaged (the error says at which byte).
    #[error("{file}")]
    Read {
        /// The file, as given.
        file: String,
        /// What went wrong, and where.
        #[source]
        source: sift_pcap::Error,
    },
}

/// The inputs as files: `-` and existing paths as given, and patterns with `*`, `?` or `[`
/// (quoted from the shell) expanded in sorted order. A pattern that matches nothing is an error,
/// and so is `-` with other inputs.
pub fn expand<P: AsRef<Path>>(args: &[P]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for arg in args {
        let arg = arg.as_ref();
        let text = arg.to_string_lossy();
        let is_pattern = text.contains(['*', '?', '[']);
        if arg.as_os_str() == "-" || !is_pattern || arg.exists() {
            out.push(arg.to_path_buf());
            continue;
        }
        let pattern = || text.clone().into_owned();
        let mut matched: Vec<PathBuf> = glob::glob(&text)
            .map_err(|source| InputError::BadPattern { pattern: pattern(), source })?
            .filter_map(Result::ok)
            .collect();
        if matched.is_empty() {
            return Err(InputError::NoMatch { pattern: pattern() });
        }
        matched.sort();
        out.append(&mut matched);
    }
    if out.len() > 1 && out.iter().any(|p| p.as_os_str() == "-") {
        return Err(InputError::StdinWithOthers);
    }
    Ok(out)
}

/// A stream of packets with the interfaces they refer to, from one file or several merged.
#[derive(Debug)]
pub struct Source {
    /// The inputs as shown in messages.
    names: Vec<String>,
    inner: Inner,
    /// Room for a batch's packets, kept (empty) between batches ([`Source::next_batch`]).
    room: Vec<Packet<'static>>,
}

/// Packets read together ([`Source::next_batch`]), with the interface list their `interface`
/// indexes. While it lives, the source is borrowed; dropping it gives its room back to the
/// source for the next batch.
#[derive(Debug)]
pub struct Batch<'s> {
    packets: Vec<Packet<'s>>,
    interfaces: &'s [Interface],
    room: &'s mut Vec<Packet<'static>>,
}

impl<'s> Batch<'s> {
    /// The packets, in order.
    pub fn packets(&self) -> &[Packet<'s>] {
        &self.packets
    }

    /// The interfaces the packets' `interface` indexes.
    pub fn interfaces(&self) -> &'s [Interface] {
        self.interfaces
    }

    /// How many packets there are.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// Whether there are none: the input has ended.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        *self.room = reuse_packets(std::mem::take(&mut self.packets));
    }
}

/// An empty vector with `v`'s allocation, for packets that borrow something else (collecting
/// an emptied vector's iterator into a vector of an element of the same size and alignment
/// reuses its allocation).
// `filter` would keep the element type: `filter_map` is what changes its lifetime.
#[allow(clippy::unnecessary_filter_map)]
fn reuse_packets<'b>(mut v: Vec<Packet<'_>>) -> Vec<Packet<'b>> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

// One input is the common case and is read once per packet: it stays inline, and the rare
// merge is boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Inner {
    One(Input),
    Merged(Box<Merge>),
}

impl Source {
    /// Opens `inputs` (files, `-` for standard input; see [`expand`] for patterns): one reader,
    /// or a merge of several.
    pub fn open<P: AsRef<Path>>(inputs: &[P]) -> Result<Source, InputError> {
        let mut readers = Vec::new();
        for path in inputs {
            let path = path.as_ref();
            let shown = path.display().to_string();
            let reader = sift_pcap::open(path).map_err(|source| match source {
                sift_pcap::Error { offset: 0, kind: sift_pcap::ErrorKind::Io(e) } => {
                    InputError::Open { file: shown.clone(), source: e }
                }
                source => InputError::Read { file: shown.clone(), source },
            })?;
            let size = if path.as_os_str() == "-" {
                0
            } else {
                std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
            };
            readers.push(Input { reader, shown, size });
        }
        let names = readers.iter().map(|r| r.shown.clone()).collect();
        let inner = match readers.len() {
            1 => Inner::One(readers.pop().expect("one reader")),
            n => Inner::Merged(Box::new(Merge {
                inputs: readers,
                heads: (0..n).map(|_| None).collect(),
                local_to_global: vec![Vec::new(); n],
                interfaces: Vec::new(),
                current: Held::default(),
                started: false,
            })),
        };
        Ok(Source { names, inner, room: Vec::new() })
    }

    /// The next packet in order and the interface list its `interface` indexes; `None` at the
    /// end. After an error (damage, located in the file), nothing more is read.
    #[inline]
    pub fn next_packet(&mut self) -> Result<Option<(Packet<'_>, &[Interface])>, InputError> {
        match &mut self.inner {
            Inner::One(input) => input.next(),
            Inner::Merged(merge) => merge.next(),
        }
    }

    /// Up to `max` next packets at once, for filtering them in one call
    /// ([`crate::filter::Filter::run_batch`]): what as many calls of
    /// [`next_packet`](Self::next_packet) would give. Empty at the end.
    ///
    /// One file read whole (a mapped file, pcap or pcapng) gives up to `max` packets per batch;
    /// standard input or a pipe, and a merge of several files, one (their packets are not all in
    /// memory at once: a merge copies each packet as it goes). Damage after some packets of a
    /// batch ends the batch; the next call returns the error, so that the packets before it
    /// are handled first, as one by one.
    pub fn next_batch(&mut self, max: usize) -> Result<Batch<'_>, InputError> {
        let mut packets = reuse_packets(std::mem::take(&mut self.room));
        let interfaces = match &mut self.inner {
            Inner::One(input) => {
                let shown = &input.shown;
                input
                    .reader
                    .next_batch(max.max(1), &mut packets)
                    .map_err(|source| InputError::Read { file: shown.clone(), source })?
            }
            Inner::Merged(merge) => match merge.next()? {
                Some((packet, interfaces)) => {
                    packets.push(packet);
                    interfaces
                }
                None => &[],
            },
        };
        Ok(Batch { packets, interfaces, room: &mut self.room })
    }

    /// The interfaces known so far (before the first packet of a merge: the first input's).
    pub fn interfaces(&self) -> &[Interface] {
        match &self.inner {
            Inner::One(input) => input.reader.interfaces(),
            Inner::Merged(merge) => merge.interfaces(),
        }
    }

    /// Records cut to the snapshot length so far, per input (as shown in messages).
    pub fn clipped(&self) -> Vec<(String, ClippedRecords)> {
        let inputs = match &self.inner {
            Inner::One(input) => std::slice::from_ref(input),
            Inner::Merged(merge) => &merge.inputs[..],
        };
        inputs.iter().map(|i| (i.shown.clone(), i.reader.clipped_records())).collect()
    }

    /// Per input, the damaged blocks the reader skipped where libpcap reads on (pcapng statistics
    /// blocks and the like: [`sift_pcap::SkippedDamage`]), for a warning.
    pub fn skipped_damage(&self) -> Vec<(String, sift_pcap::SkippedDamage)> {
        let inputs = match &self.inner {
            Inner::One(input) => std::slice::from_ref(input),
            Inner::Merged(merge) => &merge.inputs[..],
        };
        inputs.iter().map(|i| (i.shown.clone(), i.reader.skipped_damage())).collect()
    }

    /// Bytes consumed so far and in all (0 when unknown, as for a pipe), for progress displays.
    pub fn progress(&self) -> (u64, u64) {
        match &self.inner {
            Inner::One(i) => (i.reader.position(), i.size),
            Inner::Merged(merge) => {
                merge.inputs.iter().fold((0, 0), |(d, t), i| (d + i.reader.position(), t + i.size))
            }
        }
    }

    /// The whole input as one mapped classic pcap file, for [`crate::parallel`]; `None` for a
    /// merge, a pipe or pcapng.
    pub fn pcap_bytes(&self) -> Option<PcapBytes<'_>> {
        match &self.inner {
            Inner::One(input) => input.reader.pcap_bytes(),
            Inner::Merged(_) => None,
        }
    }

    /// The line tcpdump prints before reading (on standard error): `reading from file F,
    /// link-type T (description), snapshot length N`.
    pub fn describe(&self) -> String {
        let file = if self.names.len() == 1 {
            format!("reading from file {}", self.names[0])
        } else {
            format!(
                "reading from {} files ({}), merged by time",
                self.names.len(),
                self.names.join(", ")
            )
        };
        match self.interfaces().first() {
            Some(first) => format!(
                "{file}, link-type {} ({}), snapshot length {}",
                first.link_type,
                first.link_type.description().unwrap_or("unknown"),
                // pcapng's 0 ("no limit") is libpcap's largest, as tcpdump shows it.
                crate::filter::snaplen_or_max(first.snaplen)
            ),
            None => format!("{file}, pcapng"),
        }
    }
}

/// One input file.
struct Input {
    reader: Reader,
    shown: String,
    size: u64,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").field("shown", &self.shown).field("size", &self.size).finish()
    }
}

impl Input {
    fn next(&mut self) -> Result<Option<(Packet<'_>, &[Interface])>, InputError> {
        let shown = &self.shown;
        self.reader
            .next_with_interfaces()
            .map_err(|source| InputError::Read { file: shown.clone(), source })
    }
}

/// A packet held while the other inputs catch up.
#[derive(Debug)]
struct Held {
    timestamp: Timestamp,
    wire_len: u32,
    data: Vec<u8>,
    interface: u32,
    link_type: LinkType,
    offset: u64,
}

impl Default for Held {
    fn default() -> Held {
        Held {
            timestamp: Timestamp::default(),
            wire_len: 0,
            data: Vec::new(),
            interface: 0,
            link_type: LinkType::EN10MB,
            offset: 0,
        }
    }
}

/// Several inputs merged by timestamp.
#[derive(Debug)]
struct Merge {
    inputs: Vec<Input>,
    /// Each input's next packet; `None` once it is exhausted (or before the first read).
    heads: Vec<Option<Held>>,
    /// Per input, its interface indices in `interfaces`.
    local_to_global: Vec<Vec<u32>>,
    interfaces: Vec<Interface>,
    /// The packet last returned (its bytes are borrowed by the caller).
    current: Held,
    started: bool,
}

impl Merge {
    /// Reads input `i`'s next packet into its head slot, renumbering its interface.
    fn pull(&mut self, i: usize) -> Result<(), InputError> {
        let next = self.inputs[i].next()?;
        self.heads[i] = match next {
            None => None,
            Some((p, ifaces)) => {
                let map = &mut self.local_to_global[i];
                while map.len() < ifaces.len() {
                    map.push(self.interfaces.len() as u32);
                    self.interfaces.push(ifaces[map.len() - 1].clone());
                }
                let mut held = self.heads[i].take().unwrap_or_default();
                held.data.clear();
                held.data.extend_from_slice(p.data);
                held.timestamp = p.timestamp;
                held.wire_len = p.wire_len;
                held.interface = map[p.interface as usize];
                held.link_type = p.link_type;
                held.offset = p.offset;
                Some(held)
            }
        };
        Ok(())
    }

    fn next(&mut self) -> Result<Option<(Packet<'_>, &[Interface])>, InputError> {
        if !self.started {
            self.started = true;
            for i in 0..self.inputs.len() {
                self.pull(i)?;
            }
        }
        // The earliest head. On equal timestamps the *later* input goes first: that is what
        // mergecap does (its "is earlier" test is `<=`), and merging the same files must give
        // the same file.
        let mut best: Option<(usize, Timestamp)> = None;
        for (i, head) in self.heads.iter().enumerate() {
            if let Some(h) = head
                && best.is_none_or(|(_, t)| h.timestamp <= t)
            {
                best = Some((i, h.timestamp));
            }
        }
        let Some((i, _)) = best else {
            return Ok(None);
        };
        let taken = self.heads[i].take().expect("a head");
        // Reuse the previous packet's buffer for this input's next read.
        self.heads[i] = Some(std::mem::replace(&mut self.current, taken));
        self.pull(i)?;
        let c = &self.current;
        let packet = Packet {
            timestamp: c.timestamp,
            wire_len: c.wire_len,
            data: &c.data,
            interface: c.interface,
            link_type: c.link_type,
            offset: c.offset,
        };
        Ok(Some((packet, &self.interfaces)))
    }

    fn interfaces(&self) -> &[Interface] {
        if self.interfaces.is_empty() {
            // Before the first packet: the first input's own list, for the header line.
            return self.inputs.first().map(|i| i.reader.interfaces()).unwrap_or(&[]);
        }
        &self.interfaces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_sorted_and_must_match() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.pcap", "a.pcap", "c.txt"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let pattern = dir.path().join("*.pcap");
        let got = expand(&[pattern]).unwrap();
        assert_eq!(got, vec![dir.path().join("a.pcap"), dir.path().join("b.pcap")]);
        let none = dir.path().join("x*.pcap");
        assert!(matches!(expand(&[none]), Err(InputError::NoMatch { .. })));
        let bad = dir.path().join("[");
        assert!(matches!(expand(&[bad]), Err(InputError::BadPattern { .. })));
        // A path that merely contains pattern characters and exists is taken as it is.
        let odd = dir.path().join("odd[1].pcap");
        std::fs::write(&odd, b"").unwrap();
        assert_eq!(expand(std::slice::from_ref(&odd)).unwrap(), vec![odd]);
    }

    #[test]
    fn packet_room_is_kept_between_batches() {
        let data = [0u8; 4];
        let packet = Packet {
            timestamp: Timestamp::default(),
            wire_len: 4,
            data: &data,
            interface: 0,
            link_type: LinkType::RAW,
            offset: 24,
        };
        let packets = vec![packet; 1000];
        let (capacity, at) = (packets.capacity(), packets.as_ptr() as usize);
        let room = reuse_packets(packets);
        assert!(room.is_empty());
        assert_eq!(
            (room.capacity(), room.as_ptr() as usize),
            (capacity, at),
            "the same allocation"
        );
    }

    #[test]
    fn standard_input_stands_alone() {
        assert_eq!(expand(&["-"]).unwrap(), vec![PathBuf::from("-")]);
        assert!(matches!(expand(&["-", "x.pcap"]), Err(InputError::StdinWithOthers)));
    }
}
