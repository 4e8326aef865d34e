//! Executable memory that is never writable and executable at once.
//!
//! Code is written into a fresh anonymous read-write mapping, which is then turned read-execute
//! (`mprotect`) before anything can call it; the mapping is unmapped when the filter is dropped.

use std::io;

/// A read-execute mapping holding one compiled filter.
pub(crate) struct ExecBuf {
    map: memmap2::Mmap,
    len: usize,
}

impl ExecBuf {
    /// Copies `code` into a new mapping and makes it read-execute.
    pub fn new(code: &[u8]) -> io::Result<ExecBuf> {
        let mut rw = memmap2::MmapMut::map_anon(code.len().max(1))?;
        rw[..code.len()].copy_from_slice(code);
        // RW → RX: from here on the mapping is not writable.
        let map = rw.make_exec()?;
        Ok(ExecBuf { map, len: code.len() })
    }

    /// The code's first byte.
    pub fn entry(&self) -> *const u8 {
        self.map.as_ptr()
    }

    /// The code, for disassembly in tests and size reports.
    pub fn bytes(&self) -> &[u8] {
        &self.map[..self.len]
    }
}
