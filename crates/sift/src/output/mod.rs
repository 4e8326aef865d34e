//! Where kept packets go: pcap or pcapng files as tcpdump writes them, and files rotated by
//! size and time with tcpdump's names ([`Rotating`]).
//!
//! [`Writer`] holds what `sift-pcap`'s writers leave to their caller: a pcap file has one link
//! type, so a packet of another is refused with a [`OutputError::LinkTypeMismatch`] instead
//! of being written under the wrong header; a pcapng file describes every input interface, in
//! order, before the first packet that needs it (so output interface IDs equal input indices),
//! and ends with each interface's statistics.

mod rotate;

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use sift_pcap::{
    Interface, InterfaceStats, LinkType, Packet, PcapWriter, PcapngWriter, Precision, TsResolution,
    WriteError,
};

pub use rotate::{FileFormat, Rotating, Rotation, Written};

/// Why packets cannot be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output file cannot be created.
    #[error("{path}: cannot create")]
    Create {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A packet whose link type differs from the one a pcap file holds.
    #[error(
        "this packet has link type {packet} but the pcap output holds {output} only; write \
         pcapng to keep captures with several link types"
    )]
    LinkTypeMismatch {
        /// The packet's link type.
        packet: LinkType,
        /// The file's.
        output: LinkType,
    },
    /// A rotated file's name cannot be made from the pattern (`strftime` failed).
    #[error("{pattern}: cannot format the file name")]
    FileName {
        /// The pattern.
        pattern: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Rotation by a size of 0 bytes.
    #[error("invalid file size 0")]
    ZeroSize,
    /// Rotation every 0 seconds.
    #[error("invalid number of seconds 0")]
    ZeroSeconds,
    /// A ring of 0 files.
    #[error("invalid number of output files 0")]
    ZeroFiles,
    /// Rotation asked for while writing to standard output.
    #[error("rotated output needs a file name, not standard output")]
    RotateStdout,
    /// The writer refused a packet or could not write it.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl OutputError {
    /// Whether this is a write to a closed pipe (`sift … | head`): for a command-line tool, a
    /// normal end.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            OutputError::Io(e) => e.kind() == io::ErrorKind::BrokenPipe,
            OutputError::Write(WriteError::Io(e)) => e.kind() == io::ErrorKind::BrokenPipe,
            _ => false,
        }
    }
}

/// Whether `error` itself (not its sources) is a write to a closed pipe, whichever of sift's
/// error types carries it; walk a chain of sources with this.
pub fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(e) = error.downcast_ref::<io::Error>() {
        return e.kind() == io::ErrorKind::BrokenPipe;
    }
    if let Some(WriteError::Io(e)) = error.downcast_ref::<WriteError>() {
        return e.kind() == io::ErrorKind::BrokenPipe;
    }
    if let Some(e) = error.downcast_ref::<OutputError>() {
        return e.is_broken_pipe();
    }
    if let Some(crate::parallel::ParallelError::Output(e)) =
        error.downcast_ref::<crate::parallel::ParallelError>()
    {
        return e.is_broken_pipe();
    }
    false
}

/// Opens `path` for writing: `-` is standard output, anything else a file created (or
/// truncated) now.
pub fn create(path: &Path) -> Result<Box<dyn Write + Send>, OutputError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdout()));
    }
    let file = File::create(path)
        .map_err(|source| OutputError::Create { path: path.display().to_string(), source })?;
    Ok(Box::new(file))
}

/// A pcap or pcapng file being written.
pub struct Writer<W: Write> {
    kind: Kind<W>,
}

impl<W: Write> std::fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let format = match self.kind {
            Kind::Pcap { .. } => "pcap",
            Kind::Pcapng { .. } => "pcapng",
        };
        f.debug_struct("Writer").field("format", &format).finish_non_exhaustive()
    }
}

enum Kind<W: Write> {
    Pcap {
        writer: PcapWriter<W>,
        link_type: LinkType,
    },
    Pcapng {
        writer: PcapngWriter<W>,
        /// How many of the reader's interfaces have an IDB in the output.
        described: usize,
        /// Packets seen per interface, written into the statistics blocks.
        received: Vec<u64>,
        /// Forced timestamp resolution, else each interface's own.
        resolution: Option<TsResolution>,
    },
}

impl<W: Write> Writer<W> {
    /// A pcap file for packets like those of `first` (its link type and snapshot length, 0
    /// meaning the largest), with timestamps of `precision`.
    pub fn pcap(out: W, first: &Interface, precision: Precision) -> Result<Self, OutputError> {
        let snaplen = crate::filter::snaplen_or_max(first.snaplen);
        let writer =
            PcapWriter::new(out, first.link_type, first.link_type_ext, snaplen, precision)?;
        Ok(Writer { kind: Kind::Pcap { writer, link_type: first.link_type } })
    }

    /// A pcapng file; `resolution` forces every interface's timestamp resolution (otherwise
    /// each keeps its own).
    pub fn pcapng(out: W, resolution: Option<TsResolution>) -> Result<Self, OutputError> {
        let writer = PcapngWriter::new(out)?;
        Ok(Writer { kind: Kind::Pcapng { writer, described: 0, received: Vec::new(), resolution } })
    }

    /// Appends `packet`, whose `interface` indexes `interfaces` (the reader's list so far).
    #[inline]
    pub fn write(
        &mut self,
        packet: &Packet<'_>,
        interfaces: &[Interface],
    ) -> Result<(), OutputError> {
        match &mut self.kind {
            Kind::Pcap { writer, link_type } => {
                if packet.link_type != *link_type {
                    return Err(OutputError::LinkTypeMismatch {
                        packet: packet.link_type,
                        output: *link_type,
                    });
                }
                writer.write(packet.timestamp, packet.wire_len, packet.data)?;
            }
            Kind::Pcapng { writer, described, received, resolution } => {
                // Describe every interface the reader knows, in order, so output IDs equal
                // input indices.
                while *described < interfaces.len() {
                    let mut iface = interfaces[*described].clone();
                    iface.ts_resolution = resolution.unwrap_or(iface.ts_resolution);
                    writer.add_interface(&iface)?;
                    *described += 1;
                    received.push(0);
                }
                received[packet.interface as usize] += 1;
                writer.write(packet.interface, packet.timestamp, packet.wire_len, packet.data)?;
            }
        }
        Ok(())
    }

    /// Writes out what is buffered, so that a reader of the file sees every packet written
    /// so far (tcpdump's `-U`, and SIGUSR2 during a live capture).
    pub fn flush(&mut self) -> Result<(), OutputError> {
        match &mut self.kind {
            Kind::Pcap { writer, .. } => writer.flush()?,
            Kind::Pcapng { writer, .. } => writer.flush()?,
        }
        Ok(())
    }

    /// Packets written so far with a time the format cannot hold as given, for a warning
    /// (once, with the count): pcap writes it modulo 2^32 seconds, as tcpdump does
    /// ([`PcapWriter::wrapped`]); pcapng, the nearest time it can count
    /// ([`PcapngWriter::clamped`]). The format's name says which.
    pub fn changed_times(&self) -> (&'static str, sift_pcap::ChangedTimestamps) {
        match &self.kind {
            Kind::Pcap { writer, .. } => ("pcap", writer.wrapped()),
            Kind::Pcapng { writer, .. } => ("pcapng", writer.clamped()),
        }
    }

    /// The pcap writer underneath, for [`crate::parallel::copy`]; `None` for pcapng.
    pub fn pcap_writer(&mut self) -> Option<&mut PcapWriter<W>> {
        match &mut self.kind {
            Kind::Pcap { writer, .. } => Some(writer),
            Kind::Pcapng { .. } => None,
        }
    }

    /// Ends the file (pcapng: a statistics block per interface, counting the packets written
    /// as received and accepted), flushes it and returns the inner writer.
    pub fn finish(self) -> Result<W, OutputError> {
        let mut out = match self.kind {
            Kind::Pcap { writer, .. } => writer.finish()?,
            Kind::Pcapng { mut writer, received, .. } => {
                for (id, n) in received.iter().enumerate() {
                    let stats = InterfaceStats {
                        received: Some(*n),
                        filter_accepted: Some(*n),
                        ..Default::default()
                    };
                    writer.set_stats(id as u32, stats)?;
                }
                writer.finish()?
            }
        };
        out.flush()?;
        Ok(out)
    }
}
