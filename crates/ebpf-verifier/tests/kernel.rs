//! The Linux kernel's verifier as the oracle: every golden program is loaded with
//! `BPF_PROG_LOAD` (its maps created with `BPF_MAP_CREATE`, `lddw map_fd(i)` patched to the
//! descriptors) and the kernel's verdict compared with sift's. We load as root, so sift runs
//! with `privileged` as the kernel does for a privileged loader. Prints SKIP without
//! `bpf(2)` privileges; fails then under `SIFT_REQUIRE_ORACLES=1`.

mod common;

use std::os::fd::{AsRawFd, OwnedFd};

use sift_ebpf::{EbpfInsn, ImmKind};
use sift_ebpf_verifier::{Options as VerifyOptions, verify_with};
use sift_sys::bpf;

/// Golden programs where sift and the kernel disagree, each with its cause.
const EXCEPTIONS: &[(&str, &str)] = &[];

fn kernel_verdict(c: &common::Case) -> Result<Result<(), String>, String> {
    let mut fds: Vec<OwnedFd> = Vec::new();
    for m in &c.maps {
        let fd =
            bpf::map_create(m.map_type as u32, m.key_size, m.value_size, m.max_entries, m.flags)
                .map_err(|e| format!("map {}: {e}", m.map_type))?;
        fds.push(fd);
    }
    let mut slots: Vec<EbpfInsn> = c.slots.clone();
    let mut i = 0;
    while i < slots.len() {
        let s = slots[i];
        if s.is_ld_imm64() {
            if matches!(ImmKind::from_src(s.src), Some(ImmKind::MapFd | ImmKind::MapValue)) {
                // A map index with no map: a descriptor that is no map.
                slots[i].imm = fds.get(s.imm as usize).map_or(i32::MAX, |fd| fd.as_raw_fd());
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    let bytes: Vec<u8> = slots.iter().flat_map(|s| s.encode()).collect();
    // The verdict without a log (a long log can run out of space), then the log's last line.
    let first = match bpf::prog_load(c.prog.number(), &bytes, None) {
        Ok(_) => return Ok(Ok(())),
        Err(e) if bpf::is_unavailable(&e) => return Err(e.to_string()),
        Err(e) => e,
    };
    let mut log = vec![0u8; 1 << 20];
    let _ = bpf::prog_load(c.prog.number(), &bytes, Some(&mut log));
    let end = log.iter().position(|&b| b == 0).unwrap_or(0);
    let text = String::from_utf8_lossy(&log[..end]);
    let last = text
        .lines()
        .rev()
        .find(|l| {
            !l.trim().is_empty()
                && !l.starts_with("processed")
                && !l.starts_with("verification time")
                && !l.starts_with("stack depth")
        })
        .unwrap_or("");
    Ok(Err(format!("errno {}: {last}", first.raw_os_error().unwrap_or(0))))
}

#[test]
fn agrees_with_the_kernel_verifier() {
    let cases = common::cases();
    let (mut agree, mut both_accept, mut both_refuse) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for c in &cases {
        let kernel = match kernel_verdict(c) {
            Ok(v) => v,
            Err(e) => {
                return sift_testkit::oracle_missing("kernel bpf(2) BPF_PROG_LOAD", e)
                    .unwrap_or(());
            }
        };
        let ours = verify_with(&c.slots, c.prog, &c.maps, VerifyOptions { privileged: true });
        match (&kernel, &ours) {
            (Ok(()), Ok(_)) => both_accept += 1,
            (Err(_), Err(_)) => both_refuse += 1,
            _ => {
                disagreements.push(format!(
                    "{}: kernel {:?}, sift {}",
                    c.name,
                    kernel,
                    ours.as_ref().map_or_else(|e| e.to_string(), |_| "accepted".into())
                ));
                continue;
            }
        }
        agree += 1;
    }
    eprintln!(
        "kernel agreement: {agree}/{} ({both_accept} accepted by both, {both_refuse} refused by both)",
        cases.len()
    );
    for d in &disagreements {
        eprintln!("  {d}");
    }
    let unexpected: Vec<&String> = disagreements
        .iter()
        .filter(|d| !EXCEPTIONS.iter().any(|(n, _)| d.starts_with(&format!("{n}:"))))
        .collect();
    assert!(unexpected.is_empty(), "disagreements with the kernel: {unexpected:#?}");
}

/// Random programs from the soundness generator, loaded into the kernel as a privileged
/// loader: sift never accepts a program the kernel refuses (the kernel may accept more: it
/// tracks liveness and precision, which prune more, and knows more helpers and fields).
/// `SIFT_KERNEL_RANDOM_PROGRAMS=N` changes the number (default 3,000).
#[test]
fn random_programs_refused_by_the_kernel_are_refused() {
    use common::generator::{Rng, map_spec, program};
    let count: u64 = std::env::var("SIFT_KERNEL_RANDOM_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let spec = map_spec();
    let map = match bpf::map_create(
        spec.map_type as u32,
        spec.key_size,
        spec.value_size,
        spec.max_entries,
        0,
    ) {
        Ok(fd) => fd,
        Err(e) => {
            return sift_testkit::oracle_missing("kernel bpf(2) BPF_MAP_CREATE", e).unwrap_or(());
        }
    };
    let maps = [spec];
    let mut r = Rng(0x00c0_ffee_1234_5679);
    let (mut both_accept, mut both_refuse, mut kernel_only, mut sift_only) =
        (0u64, 0u64, 0u64, Vec::new());
    for _ in 0..count {
        let insns = program(&mut r);
        let slots = sift_ebpf::encode_program(&insns);
        let ours = verify_with(
            &slots,
            sift_ebpf_verifier::ProgType::Xdp,
            &maps,
            VerifyOptions { privileged: true },
        );
        let mut patched = slots.clone();
        for s in patched.iter_mut().filter(|s| s.is_ld_imm64() && s.src == 1) {
            s.imm = map.as_raw_fd();
        }
        let bytes: Vec<u8> = patched.iter().flat_map(|s| s.encode()).collect();
        let kernel = bpf::prog_load(6, &bytes, None);
        match (&kernel, &ours) {
            (Ok(_), Ok(_)) => both_accept += 1,
            (Err(_), Err(_)) => both_refuse += 1,
            (Ok(_), Err(e)) => {
                kernel_only += 1;
                if kernel_only <= 3 {
                    eprintln!(
                        "accepted by the kernel only: {e}\n{}",
                        sift_ebpf::asm::print(&insns)
                    );
                }
            }
            (Err(e), Ok(_)) => {
                let mut log = vec![0u8; 1 << 20];
                let _ = bpf::prog_load(6, &bytes, Some(&mut log));
                let end = log.iter().position(|&b| b == 0).unwrap_or(0);
                let text = String::from_utf8_lossy(&log[..end]).into_owned();
                let tail: Vec<&str> = text.lines().rev().take(3).collect();
                sift_only.push(format!(
                    "errno {:?}: {:?}\n{}",
                    e.raw_os_error(),
                    tail,
                    sift_ebpf::asm::print(&insns)
                ));
            }
        }
    }
    eprintln!(
        "random programs vs the kernel: {count}: {both_accept} accepted by both, {both_refuse} refused by both, {kernel_only} accepted by the kernel only, {} by sift only",
        sift_only.len()
    );
    assert!(
        sift_only.is_empty(),
        "accepted by sift, refused by the kernel:\n{}",
        sift_only.iter().take(5).cloned().collect::<Vec<_>>().join("\n---\n")
    );
}
