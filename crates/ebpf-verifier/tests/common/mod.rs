//! The golden programs' header: `# prog=xdp|tc|socket maps=TYPE:KEY:VALUE:ENTRIES[:FLAGS],… [privileged]`
//! on the first line, the program in the conformance assembly syntax below it.
#![allow(dead_code)]

pub mod generator;

use std::path::{Path, PathBuf};

use sift_ebpf::{EbpfInsn, MapSpec, MapType};
use sift_ebpf_verifier::{Options, ProgType};

/// One golden program.
pub struct Case {
    pub name: String,
    pub path: PathBuf,
    pub prog: ProgType,
    pub maps: Vec<MapSpec>,
    pub options: Options,
    pub slots: Vec<EbpfInsn>,
}

fn map(spec: &str) -> MapSpec {
    let f: Vec<&str> = spec.split(':').collect();
    let t = MapType::ALL
        .iter()
        .copied()
        .find(|t| t.name().eq_ignore_ascii_case(f[0]))
        .unwrap_or_else(|| panic!("map type {}", f[0]));
    let n = |i: usize| f.get(i).map_or(0, |v| v.parse::<u32>().unwrap());
    MapSpec {
        name: format!("m{}", f[0]),
        map_type: t,
        key_size: n(1),
        value_size: n(2),
        max_entries: n(3),
        flags: n(4),
        initial: Vec::new(),
    }
}

pub fn parse(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().next().unwrap_or("");
    let mut prog = ProgType::Xdp;
    let mut maps = Vec::new();
    let mut options = Options::default();
    for word in header.trim_start_matches('#').split_whitespace() {
        if let Some(p) = word.strip_prefix("prog=") {
            prog = ProgType::from_name(p).unwrap_or_else(|| panic!("prog {p}"));
        } else if let Some(m) = word.strip_prefix("maps=") {
            maps = m.split(',').map(map).collect();
        } else if word == "privileged" {
            options.privileged = true;
        }
    }
    let insns =
        sift_ebpf::asm::assemble(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        path: path.to_path_buf(),
        prog,
        maps,
        options,
        slots: sift_ebpf::encode_program(&insns),
    }
}

pub fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "asm"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse(p)).collect()
}
