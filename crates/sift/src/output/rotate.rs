//! Output files rotated by size and time, with tcpdump's rules and file names (`-C`, `-G`,
//! `-W`).
//!
//! tcpdump's `dump_packet_and_trunc` decides before each packet: first by time (`-G`: a new
//! file every N seconds, its name through `strftime`; with `-W` and no `-C`, stop after N
//! files), then by size (`-C`: a new file once the current one exceeds the size, numbered;
//! with `-W`, a ring of N numbers, zero-padded to the digits of N − 1). The size counted is the
//! file's length so far, headers included, as tcpdump's `pcap_dump_ftell` sees it.

use std::fs::File;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use sift_pcap::{Interface, InterfaceStats, PcapWriter, PcapngWriter, Precision, Timestamp};

use super::OutputError;

/// The format of every output file.
#[derive(Clone, Debug)]
pub struct FileFormat {
    /// pcapng instead of pcap.
    pub pcapng: bool,
    /// pcap's timestamp precision.
    pub precision: Precision,
    /// The one interface packets come from (pcap: its link type and snapshot length).
    pub interface: Interface,
}

/// When to start a new file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rotation {
    /// `-C`: once the file exceeds this many bytes.
    pub max_bytes: Option<u64>,
    /// `-G`: every this many seconds.
    pub seconds: Option<u64>,
    /// `-W`: with `max_bytes`, a ring of this many files; with `seconds` alone, stop after this
    /// many files.
    pub files: Option<u32>,
}

impl Rotation {
    /// Whether any rotation is asked for.
    pub fn any(&self) -> bool {
        self.max_bytes.is_some() || self.seconds.is_some() || self.files.is_some()
    }
}

/// What became of a packet given to [`Rotating::write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// It was written.
    Yes,
    /// `-G` with `-W` (and no `-C`): the file limit is reached; it was not written and no file
    /// is open any more.
    LimitReached,
}

/// One open output file.
enum FileSink {
    Pcap(PcapWriter<Box<dyn Write + Send>>),
    Pcapng(PcapngWriter<Box<dyn Write + Send>>),
}

/// The output files, rotated by size and time with tcpdump's rules and names.
pub struct Rotating {
    pattern: String,
    format: FileFormat,
    c_bytes: Option<u64>,
    g_secs: Option<u64>,
    w_count: Option<u32>,
    w_chars: usize,
    c_count: u32,
    g_count: u32,
    g_time: i64,
    current: Option<FileSink>,
    bytes: u64,
    /// Names of the files opened, in order.
    files: Vec<String>,
}

impl std::fmt::Debug for Rotating {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotating")
            .field("pattern", &self.pattern)
            .field("files", &self.files)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl Rotating {
    /// Opens the first file: `pattern` (`-` for standard output when there is no rotation;
    /// with `-G` a `strftime` pattern; with `-C` and `-W` numbered from 0).
    pub fn new(
        pattern: String,
        format: FileFormat,
        rotation: Rotation,
    ) -> Result<Rotating, OutputError> {
        if rotation.max_bytes == Some(0) {
            return Err(OutputError::ZeroSize);
        }
        if rotation.seconds == Some(0) {
            return Err(OutputError::ZeroSeconds);
        }
        if rotation.files == Some(0) {
            return Err(OutputError::ZeroFiles);
        }
        if pattern == "-" && (rotation.max_bytes.is_some() || rotation.seconds.is_some()) {
            return Err(OutputError::RotateStdout);
        }
        let mut r = Rotating {
            pattern,
            format,
            c_bytes: rotation.max_bytes,
            g_secs: rotation.seconds,
            w_count: rotation.files,
            w_chars: rotation.files.map(w_chars).unwrap_or(0),
            c_count: 0,
            g_count: 0,
            g_time: now_secs(),
            current: None,
            bytes: 0,
            files: Vec::new(),
        };
        let chars = if r.c_bytes.is_some() { r.w_chars } else { 0 };
        let name = r.file_name(0, chars)?;
        r.open(name)?;
        Ok(r)
    }

    /// The names of the files opened so far, in order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// tcpdump's `MakeFilename`: strftime with `-G`, then the number when asked for.
    fn file_name(&self, count: u32, chars: usize) -> Result<String, OutputError> {
        let base = if self.g_secs.is_some() {
            sift_capture::strftime_local(&self.pattern, self.g_time)
                .map_err(|source| OutputError::FileName { pattern: self.pattern.clone(), source })?
        } else {
            self.pattern.clone()
        };
        Ok(if count == 0 && chars == 0 { base } else { format!("{base}{count:0chars$}") })
    }

    fn open(&mut self, name: String) -> Result<(), OutputError> {
        let out: Box<dyn Write + Send> = if name == "-" {
            Box::new(io::stdout())
        } else {
            let file = File::create(&name)
                .map_err(|source| OutputError::Create { path: name.clone(), source })?;
            Box::new(file)
        };
        let f = &self.format;
        let iface = &f.interface;
        self.current = Some(if f.pcapng {
            let mut w = PcapngWriter::new(out)?;
            w.add_interface(iface)?;
            self.bytes = pcapng_header_len(iface);
            FileSink::Pcapng(w)
        } else {
            self.bytes = 24;
            FileSink::Pcap(PcapWriter::new(out, iface.link_type, 0, iface.snaplen, f.precision)?)
        });
        self.files.push(name);
        Ok(())
    }

    /// Writes out what is buffered for the current file (tcpdump's `-U`, and SIGUSR2).
    pub fn flush(&mut self) -> Result<(), OutputError> {
        match self.current.as_mut() {
            Some(FileSink::Pcap(w)) => w.flush()?,
            Some(FileSink::Pcapng(w)) => w.flush()?,
            None => {}
        }
        Ok(())
    }

    /// Ends the current file (pcapng: with `stats` in its statistics block) and flushes it.
    pub fn close(&mut self, stats: Option<InterfaceStats>) -> Result<(), OutputError> {
        match self.current.take() {
            Some(FileSink::Pcap(w)) => w.finish()?.flush()?,
            Some(FileSink::Pcapng(mut w)) => {
                if let Some(s) = stats {
                    w.set_stats(0, s)?;
                }
                w.finish()?.flush()?;
            }
            None => {}
        }
        Ok(())
    }

    /// tcpdump's `dump_packet_and_trunc`: rotate by time, then by size, then write.
    pub fn write(
        &mut self,
        ts: Timestamp,
        wire_len: u32,
        data: &[u8],
    ) -> Result<Written, OutputError> {
        if let Some(g) = self.g_secs {
            let t = now_secs();
            if t - self.g_time >= g as i64 {
                self.g_time = t;
                self.g_count += 1;
                self.close(None)?;
                if self.c_bytes.is_none() && self.w_count.is_some_and(|w| self.g_count >= w) {
                    return Ok(Written::LimitReached);
                }
                self.c_count = 0;
                let chars = if self.c_bytes.is_some() { self.w_chars } else { 0 };
                let name = self.file_name(0, chars)?;
                self.open(name)?;
            }
        }
        if let Some(c) = self.c_bytes
            && self.bytes > c
        {
            self.c_count += 1;
            if self.w_count.is_some_and(|w| self.c_count >= w) {
                self.c_count = 0;
            }
            self.close(None)?;
            let name = self.file_name(self.c_count, self.w_chars)?;
            self.open(name)?;
        }
        match self.current.as_mut() {
            Some(FileSink::Pcap(w)) => {
                w.write(ts, wire_len, data)?;
                self.bytes += 16 + data.len() as u64;
            }
            Some(FileSink::Pcapng(w)) => {
                w.write(0, ts, wire_len, data)?;
                self.bytes += 32 + data.len().next_multiple_of(4) as u64;
            }
            None => unreachable!("a file is open between rotations"),
        }
        Ok(Written::Yes)
    }
}

/// Digits of `count - 1`: tcpdump's zero padding of `-W` file numbers.
fn w_chars(count: u32) -> usize {
    let mut x = count.saturating_sub(1);
    let mut c = 0;
    while x > 0 {
        c += 1;
        x /= 10;
    }
    c
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Bytes of the section header and interface description blocks `PcapngWriter` writes.
fn pcapng_header_len(iface: &Interface) -> u64 {
    let opt = |len: usize| 4 + len.next_multiple_of(4) as u64;
    let shb = 12 + 16 + opt(concat!("sift ", env!("CARGO_PKG_VERSION")).len()) + 4;
    let mut idb = 12 + 8 + 4;
    if let Some(n) = &iface.name {
        idb += opt(n.len());
    }
    if iface.ts_resolution != sift_pcap::TsResolution::MICRO {
        idb += opt(1);
    }
    shb + idb
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_pcap::LinkType;

    #[test]
    fn pcapng_header_length_is_what_the_writer_writes() {
        for (name, res) in [
            (Some("cap0"), sift_pcap::TsResolution::MICRO),
            (Some("a-longer-name"), sift_pcap::TsResolution::NANO),
            (None, sift_pcap::TsResolution::MICRO),
        ] {
            let mut iface = Interface::new(LinkType::EN10MB, 262_144, res);
            iface.name = name.map(str::to_string);
            let mut w = PcapngWriter::new(Vec::new()).unwrap();
            w.add_interface(&iface).unwrap();
            let bytes = w.finish().unwrap();
            let block_len = |at: usize| {
                u64::from(u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()))
            };
            let shb = block_len(0);
            let idb = block_len(shb as usize);
            assert_eq!(pcapng_header_len(&iface), shb + idb, "{name:?}");
        }
    }

    #[test]
    fn w_padding_is_the_digits_of_count_minus_one() {
        assert_eq!(w_chars(1), 0);
        assert_eq!(w_chars(3), 1);
        assert_eq!(w_chars(10), 1);
        assert_eq!(w_chars(11), 2);
        assert_eq!(w_chars(101), 3);
    }

    #[test]
    fn size_rotation_numbers_a_ring_of_files() {
        let dir = tempfile::tempdir().unwrap();
        let pattern = dir.path().join("ring.pcap").to_string_lossy().into_owned();
        let format = FileFormat {
            pcapng: false,
            precision: Precision::Micro,
            interface: Interface::new(LinkType::EN10MB, 262_144, sift_pcap::TsResolution::MICRO),
        };
        let rotation = Rotation { max_bytes: Some(100), seconds: None, files: Some(3) };
        let mut r = Rotating::new(pattern.clone(), format, rotation).unwrap();
        // 24 + 3 × (16 + 40) = 192 bytes: each file past 100 bytes after two packets.
        for i in 0..8u64 {
            assert_eq!(r.write(Timestamp::new(i, 0), 40, &[0; 40]).unwrap(), Written::Yes);
        }
        r.close(None).unwrap();
        let names: Vec<String> = r.files().iter().map(|f| f[pattern.len()..].to_owned()).collect();
        assert_eq!(names, ["0", "1", "2", "0"]);
        assert!(matches!(
            Rotating::new("-".into(), r.format.clone(), rotation),
            Err(OutputError::RotateStdout)
        ));
    }
}
