//! The eBPF conformance suite's test file format (`.data`: sections started by `-- NAME`
//! lines), as upstream `bpf_conformance` and ubpf write it.
//!
//! It exists so that the assembler's round-trip test, the VM's conformance harness and the
//! CLI read test files one way: [`DataFile::parse`] keeps each section's text; the accessors
//! turn `-- raw` and `-- mem` into bytes and `-- result` into a number.

/// One test file: its sections in order (name after `-- `, and the lines until the next one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataFile {
    /// `(name, body)` pairs; the body keeps its lines (comment lines starting with `#` are
    /// dropped outside `-- asm` and `-- c`, where the assembler and C keep their own).
    pub sections: Vec<(String, String)>,
}

/// A malformed value in a section (a hex byte or a number that does not parse).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("section `-- {section}`: {message}")]
pub struct DataFileError {
    /// The section.
    pub section: String,
    /// What is wrong.
    pub message: String,
}

fn parse_number(t: &str) -> Option<u64> {
    let t = t.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(d) = t.strip_prefix('-') {
        d.parse::<u64>().ok().map(|v| v.wrapping_neg())
    } else {
        t.parse::<u64>().ok()
    }
}

/// Hex bytes separated by white space (`aa bb 11`), as the suite writes memory and as the
/// conformance plugin protocol passes programs and memory.
pub fn parse_hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    text.split_whitespace()
        .map(|b| {
            let b = b.strip_prefix("0x").unwrap_or(b);
            u8::from_str_radix(b, 16).map_err(|_| format!("bad hex byte `{b}`"))
        })
        .collect()
}

impl DataFile {
    /// Splits a file into its sections.
    pub fn parse(text: &str) -> DataFile {
        let mut sections: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("-- ") {
                sections.push((name.trim().to_string(), String::new()));
                continue;
            }
            let Some((name, body)) = sections.last_mut() else { continue };
            let keeps_comments = name.starts_with("asm") || name == "c";
            if !keeps_comments && line.trim_start().starts_with('#') {
                continue;
            }
            body.push_str(line);
            body.push('\n');
        }
        DataFile { sections }
    }

    /// The body of the first section called `name`.
    pub fn section(&self, name: &str) -> Option<&str> {
        self.sections.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_str())
    }

    /// The file a `-- NAME @ FILE` section refers to (ubpf's shared programs and packets).
    pub fn section_file(&self, name: &str) -> Option<&str> {
        self.sections.iter().find_map(|(n, _)| {
            let (head, file) = n.split_once('@')?;
            (head.trim() == name).then(|| file.trim())
        })
    }

    /// The `-- raw` program as bytes: 64-bit words in hex one a line (`0x…`, the slot as a
    /// little-endian number), or hex bytes.
    pub fn raw(&self) -> Option<Result<Vec<u8>, DataFileError>> {
        let body = self.section("raw")?;
        let err = |message: String| DataFileError { section: "raw".into(), message };
        let mut out = Vec::new();
        for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if line.starts_with("0x") && !line.contains(char::is_whitespace) {
                match parse_number(line) {
                    Some(w) => out.extend_from_slice(&w.to_le_bytes()),
                    None => return Some(Err(err(format!("bad word `{line}`")))),
                }
            } else {
                match parse_hex_bytes(line) {
                    Ok(b) => out.extend(b),
                    Err(e) => return Some(Err(err(e))),
                }
            }
        }
        Some(Ok(out))
    }

    /// The `-- mem` bytes (empty without the section).
    pub fn mem(&self) -> Result<Vec<u8>, DataFileError> {
        match self.section("mem") {
            None => Ok(Vec::new()),
            Some(b) => parse_hex_bytes(b)
                .map_err(|message| DataFileError { section: "mem".into(), message }),
        }
    }

    /// The `-- result` value.
    pub fn result(&self) -> Option<Result<u64, DataFileError>> {
        let body = self.section("result")?;
        let t = body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        Some(parse_number(t).ok_or_else(|| DataFileError {
            section: "result".into(),
            message: format!("bad number `{t}`"),
        }))
    }

    /// The `-- error` text (trimmed; possibly empty) when the test expects a refusal.
    pub fn error(&self) -> Option<&str> {
        self.section("error").map(str::trim)
    }

    /// The `-- error pattern` text (ubpf: a regular expression the refusal must match).
    pub fn error_pattern(&self) -> Option<&str> {
        self.section("error pattern").map(str::trim)
    }
}

/// The `.data` files directly in `dir`, sorted by name (a corpus folder of the conformance
/// suite or of ubpf's tests).
pub fn data_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "data") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_raw_words_and_bytes() {
        let f = DataFile::parse(
            "# c\n-- asm\n# kept\nexit\n-- raw\n0x0000000000000095\n95 00 00 00 00 00 00 00\n-- mem\naa  bb\n-- result\n0x10\n-- error\n",
        );
        assert_eq!(f.section("asm"), Some("# kept\nexit\n"));
        assert_eq!(f.raw().unwrap().unwrap(), [[0x95, 0, 0, 0, 0, 0, 0, 0]; 2].concat());
        assert_eq!(f.mem().unwrap(), vec![0xaa, 0xbb]);
        assert_eq!(f.result().unwrap().unwrap(), 16);
        assert_eq!(f.error(), Some(""));
        let f = DataFile::parse("-- asm @ prog.asm\n-- result\n-1\n");
        assert_eq!(f.section_file("asm"), Some("prog.asm"));
        assert_eq!(f.result().unwrap().unwrap(), u64::MAX);
    }
}
