//! Where the default mode's packets come from: one capture file, or several merged by
//! timestamp as mergecap does.
//!
//! A single file is read zero-copy (packets borrow the mapped file). Several files are merged
//! chronologically: each file's next packet is held (copied, since every reader is advanced on
//! its own) and the earliest goes first, the later file first on equal timestamps (as
//! mergecap). Their
//! interfaces are renumbered into one list in order of first appearance, so a pcapng output
//! describes each input interface once and pcap output needs one link type throughout.

use std::path::PathBuf;

use anyhow::{Context, bail};
use sift_pcap::{ClippedRecords, Interface, Packet, Reader, Timestamp};

/// The `-r` arguments expanded: `-` and existing paths as given, and patterns with `*`, `?` or
/// `[` (quoted from the shell) expanded in sorted order. A pattern that matches nothing is an
/// error, as is an empty list.
pub fn expand_inputs(args: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for arg in args {
        let text = arg.to_string_lossy();
        let is_pattern = text.contains(['*', '?', '[']);
        if arg.as_os_str() == "-" || !is_pattern || arg.exists() {
            out.push(arg.clone());
            continue;
        }
        let mut matched: Vec<PathBuf> = glob::glob(&text)
            .with_context(|| format!("{text}: bad file pattern"))?
            .filter_map(Result::ok)
            .collect();
        if matched.is_empty() {
            bail!("{text}: no file matches this pattern");
        }
        matched.sort();
        out.append(&mut matched);
    }
    if out.iter().filter(|p| p.as_os_str() == "-").count() > 0 && out.len() > 1 {
        bail!("standard input (-r -) cannot be merged with other files");
    }
    Ok(out)
}

/// A stream of packets with the interfaces they refer to.
pub trait Source {
    /// The next packet in order and the interface list its `interface` indexes.
    fn next(&mut self) -> anyhow::Result<Option<(Packet<'_>, &[Interface])>>;
    /// The interfaces known so far.
    fn interfaces(&self) -> &[Interface];
    /// Records cut to the snapshot length, per input file.
    fn clipped(&self) -> Vec<(String, ClippedRecords)>;
    /// Bytes consumed so far and in all (0 when unknown), for the progress display.
    fn progress(&self) -> (u64, u64);
    /// The whole input as one mapped classic pcap file, for the parallel path.
    fn pcap_bytes(&self) -> Option<sift_pcap::split::PcapBytes<'_>> {
        None
    }
}

/// Opens the inputs: one reader, or a merge of several.
pub fn open(inputs: &[PathBuf]) -> anyhow::Result<Box<dyn Source>> {
    let mut readers = Vec::new();
    for path in inputs {
        let shown = path.display().to_string();
        let reader = sift_pcap::open(path).with_context(|| shown.clone())?;
        let size = if path.as_os_str() == "-" {
            0
        } else {
            std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
        };
        readers.push(Input { reader, shown, size });
    }
    if readers.len() == 1 {
        return Ok(Box::new(readers.pop().expect("one reader")));
    }
    let n = readers.len();
    Ok(Box::new(Merge {
        inputs: readers,
        heads: (0..n).map(|_| None).collect(),
        local_to_global: vec![Vec::new(); n],
        interfaces: Vec::new(),
        current: Held::default(),
        started: false,
    }))
}

/// The header line tcpdump prints before reading (on standard error).
pub fn describe(inputs: &[PathBuf], source: &dyn Source) -> String {
    let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    let file = if names.len() == 1 {
        format!("reading from file {}", names[0])
    } else {
        format!("reading from {} files ({}), merged by time", names.len(), names.join(", "))
    };
    match source.interfaces().first() {
        Some(first) => format!(
            "{file}, link-type {} ({}), snapshot length {}",
            first.link_type,
            first.link_type.description().unwrap_or("unknown"),
            first.snaplen
        ),
        None => format!("{file}, pcapng"),
    }
}

/// One input file.
struct Input {
    reader: Reader,
    shown: String,
    size: u64,
}

impl Source for Input {
    fn next(&mut self) -> anyhow::Result<Option<(Packet<'_>, &[Interface])>> {
        let shown = &self.shown;
        self.reader.next_with_interfaces().with_context(|| shown.clone())
    }

    fn interfaces(&self) -> &[Interface] {
        self.reader.interfaces()
    }

    fn clipped(&self) -> Vec<(String, ClippedRecords)> {
        vec![(self.shown.clone(), self.reader.clipped_records())]
    }

    fn progress(&self) -> (u64, u64) {
        (self.reader.position(), self.size)
    }

    fn pcap_bytes(&self) -> Option<sift_pcap::split::PcapBytes<'_>> {
        self.reader.pcap_bytes()
    }
}

/// A packet held while the other inputs catch up.
struct Held {
    timestamp: Timestamp,
    wire_len: u32,
    data: Vec<u8>,
    interface: u32,
    link_type: sift_pcap::LinkType,
    offset: u64,
}

impl Default for Held {
    fn default() -> Held {
        Held {
            timestamp: Timestamp::default(),
            wire_len: 0,
            data: Vec::new(),
            interface: 0,
            link_type: sift_pcap::LinkType::EN10MB,
            offset: 0,
        }
    }
}

/// Several inputs merged by timestamp.
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
    fn pull(&mut self, i: usize) -> anyhow::Result<()> {
        let input = &mut self.inputs[i];
        let shown = &input.shown;
        let next = input.reader.next_with_interfaces().with_context(|| shown.clone())?;
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
}

impl Source for Merge {
    fn next(&mut self) -> anyhow::Result<Option<(Packet<'_>, &[Interface])>> {
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

    fn clipped(&self) -> Vec<(String, ClippedRecords)> {
        self.inputs.iter().flat_map(|i| i.clipped()).collect()
    }

    fn progress(&self) -> (u64, u64) {
        self.inputs.iter().fold((0, 0), |(d, t), i| (d + i.reader.position(), t + i.size))
    }
}
