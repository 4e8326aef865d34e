//! Files that are not captures, read whole and bounded: filter expressions (`-F`), BPF
//! programs (`sift bpf`), lists of expressions (`sift diff`), and the rule sets to come.
//!
//! A capture is mapped or streamed, whatever its size. These files are read into memory in one
//! piece, so a path that names something endless (`/dev/zero`, a pipe that never closes) or
//! merely huge would grow the process without limit. Every such read goes through [`read`],
//! which stops after [`MAX_TEXT_BYTES`] and says so, naming the file and the limit. `-` is
//! standard input.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// The most bytes a text input may hold: 16 MiB, a thousand times the largest filter or
/// program written by hand, and far more than any generated one sift has met.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// What a text file is for, in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextKind {
    /// A filter expression (`-F`).
    Filter,
    /// A classic BPF program in any text form.
    Program,
    /// A list of filter expressions, one a line.
    Expressions,
    /// A filter set: named filters, one a line (`--split`, `bench --filters`).
    FilterSet,
}

impl fmt::Display for TextKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextKind::Filter => "filter file",
            TextKind::Program => "program file",
            TextKind::Expressions => "list of expressions",
            TextKind::FilterSet => "filter set",
        })
    }
}

/// Why a text file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// Opening or reading failed.
    #[error("{file}")]
    Read {
        /// The file, as given (`standard input` for `-`).
        file: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file holds more than the limit.
    #[error("{file}: more than {limit} bytes, the limit for a {kind}")]
    TooLarge {
        /// The file.
        file: String,
        /// What it is for.
        kind: TextKind,
        /// The limit in bytes ([`MAX_TEXT_BYTES`]).
        limit: u64,
    },
    /// A byte that is not UTF-8 text, where text is needed.
    #[error("{file}: line {line}, column {column}: byte 0x{byte:02x} is not UTF-8 text")]
    NotUtf8 {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in bytes.
        column: usize,
        /// The first byte that is not part of a UTF-8 character.
        byte: u8,
    },
}

/// The name of `path` in messages.
fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" { "standard input".into() } else { path.display().to_string() }
}

/// Reads all of `path` (`-`: standard input), at most [`MAX_TEXT_BYTES`].
pub fn read(path: &Path, kind: TextKind) -> Result<Vec<u8>, TextError> {
    read_limited(path, kind, MAX_TEXT_BYTES)
}

/// [`read`] with another limit.
pub fn read_limited(path: &Path, kind: TextKind, limit: u64) -> Result<Vec<u8>, TextError> {
    let file = || shown(path);
    let source: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(path).map_err(|source| TextError::Read { file: file(), source })?,
        )
    };
    let mut bytes = Vec::new();
    source
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| TextError::Read { file: file(), source })?;
    if bytes.len() as u64 > limit {
        return Err(TextError::TooLarge { file: file(), kind, limit });
    }
    Ok(bytes)
}

/// Reads `path` as UTF-8 text ([`read`], then a located error at the first byte that is not
/// UTF-8).
pub fn read_string(path: &Path, kind: TextKind) -> Result<String, TextError> {
    let bytes = read(path, kind)?;
    into_string(bytes, &shown(path))
}

/// `bytes` as a string, or [`TextError::NotUtf8`] at the first byte that is not UTF-8.
pub(crate) fn into_string(bytes: Vec<u8>, file: &str) -> Result<String, TextError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        TextError::NotUtf8 { file: file.to_owned(), line, column, byte: bytes[at] }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_and_large_files_stop_at_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), TextKind::Filter, 1000).unwrap_err();
        assert_eq!(e.to_string(), "/dev/zero: more than 1000 bytes, the limit for a filter file");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 1000]).unwrap();
        assert_eq!(read_limited(&path, TextKind::Program, 1000).unwrap().len(), 1000);
        let e = read_limited(&path, TextKind::Program, 999).unwrap_err();
        assert!(matches!(e, TextError::TooLarge { limit: 999, .. }), "{e}");
    }

    #[test]
    fn bad_bytes_are_located() {
        let e = into_string(b"tcp\nand \xe9x".to_vec(), "f").unwrap_err();
        assert_eq!(e.to_string(), "f: line 2, column 5: byte 0xe9 is not UTF-8 text");
        assert_eq!(into_string("é\n".as_bytes().to_vec(), "f").unwrap(), "é\n");
    }

    #[test]
    fn a_missing_file_is_named_once() {
        let e = read(Path::new("/nonexistent/f"), TextKind::Filter).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/f");
        assert!(std::error::Error::source(&e).is_some());
    }
}
