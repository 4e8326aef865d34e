//! Executable memory that is never writable and executable at once.
//!
//! Code is written into a read-write mapping, which is then turned read-execute (`mprotect`)
//! before anything can call it. Mappings of one page are recycled: when a filter is dropped its
//! page goes, still read-execute, onto a small free list; the next compile turns it read-write,
//! writes, and turns it read-execute again. That saves the `mmap`, the first-touch page fault
//! and the `munmap` (about two thirds of a small filter's compile time) without ever having a
//! page writable and executable at the same time. Larger programs get mappings of their own.
//!
//! Everything here goes through memmap2's safe API; turning [`ExecBuf::entry`] into a function
//! pointer and calling it is the user's `unsafe` (in `sift-jit`, its only one).

use std::io;
use std::sync::Mutex;

/// The size of recycled mappings.
const PAGE: usize = 4096;
/// At most this many free pages are kept.
const POOL_MAX: usize = 64;

static POOL: Mutex<Vec<memmap2::Mmap>> = Mutex::new(Vec::new());

/// A read-execute mapping holding one piece of generated code.
#[derive(Debug)]
pub struct ExecBuf {
    /// Always `Some` until drop hands the mapping back to the pool.
    map: Option<memmap2::Mmap>,
    len: usize,
}

impl ExecBuf {
    /// Copies `code` into a mapping (recycled when it fits in a page) and makes it
    /// read-execute.
    pub fn new(code: &[u8]) -> io::Result<ExecBuf> {
        let recycled = if code.len() <= PAGE {
            POOL.lock().unwrap_or_else(|e| e.into_inner()).pop()
        } else {
            None
        };
        let mut rw = match recycled {
            // RX → RW: from here until `make_exec` the page is not executable.
            Some(map) => map.make_mut()?,
            None => memmap2::MmapMut::map_anon(code.len().max(PAGE))?,
        };
        rw[..code.len()].copy_from_slice(code);
        // RW → RX: from here on the mapping is not writable.
        let map = rw.make_exec()?;
        Ok(ExecBuf { map: Some(map), len: code.len() })
    }

    /// The code's first byte (null only for a buffer whose mapping is gone, which cannot be
    /// observed: the mapping is released on drop).
    pub fn entry(&self) -> *const u8 {
        self.map.as_ref().map_or(std::ptr::null(), |m| m.as_ptr())
    }

    /// The code, for disassembly in tests and size reports.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_ref().map_or(&[], |m| &m[..self.len])
    }
}

impl Drop for ExecBuf {
    fn drop(&mut self) {
        if let Some(map) = self.map.take()
            && map.len() == PAGE
        {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            if pool.len() < POOL_MAX {
                pool.push(map);
            }
        }
    }
}
