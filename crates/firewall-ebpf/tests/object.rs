//! The committed object (`bpf/pf.bpf.o`) is what the C beside it compiles to: clang rebuilds it
//! (`clang -O2 -g -target bpf`; SKIP without clang, a failure under `SIFT_REQUIRE_ORACLES=1`)
//! and every program has the same instructions and the object the same maps. `BLESS=1`
//! writes the rebuilt object over the committed one (after a change to the C).

use std::path::{Path, PathBuf};

use sift_ebpf_elf::Object;

/// The directory holding `asm/types.h` (`/usr/include/x86_64-linux-gnu`): `linux/types.h`
/// includes it, and `-target bpf` does not know the host's multiarch path.
fn multiarch_include() -> Option<PathBuf> {
    std::fs::read_dir("/usr/include")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("asm/types.h").is_file())
}

#[test]
fn committed_object_is_the_source() {
    let Some(clang) = sift_testkit::tool("clang") else { return };
    let bpf = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pf.bpf.o");
    let mut cmd = std::process::Command::new(clang);
    cmd.args(["-O2", "-g", "-target", "bpf", "-Werror", "-c"]).arg(bpf.join("pf.bpf.c"));
    if let Some(inc) = multiarch_include() {
        cmd.arg("-I").arg(inc);
    }
    let status = cmd.arg("-o").arg(&out).status().expect("run clang");
    assert!(status.success(), "clang failed on pf.bpf.c");
    let fresh_bytes = std::fs::read(&out).unwrap();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(bpf.join("pf.bpf.o"), &fresh_bytes).unwrap();
        return;
    }
    let fresh = Object::parse(&fresh_bytes).unwrap();
    let committed = sift_firewall_ebpf::object().unwrap();
    assert_eq!(fresh.maps, committed.maps, "maps (BLESS=1 rewrites bpf/pf.bpf.o)");
    assert_eq!(fresh.license, committed.license);
    assert_eq!(fresh.programs.len(), committed.programs.len());
    for (f, c) in fresh.programs.iter().zip(&committed.programs) {
        assert_eq!((&f.name, &f.section, f.prog_type), (&c.name, &c.section, c.prog_type));
        assert!(
            f.insns == c.insns,
            "program {}: the committed object's instructions are not the source's (a \
             different clang gives different code; BLESS=1 rewrites bpf/pf.bpf.o)",
            f.name
        );
    }
}
