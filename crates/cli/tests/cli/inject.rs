//! `sift inject` argument checks that need no privileges, refused with tcpdump's status for bad
//! arguments, 1 (the sending itself is tested in `live.rs`, inside network namespaces).

use std::process::Command;

fn sift(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_sift")).args(args).output().expect("run sift");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn rate_must_be_positive_and_excludes_topspeed() {
    for rate in ["0", "-5", "nan"] {
        let arg = format!("--rate={rate}");
        let (code, err) = sift(&["inject", "-i", "lo", "-r", "/dev/null", &arg]);
        assert_ne!(code, Some(0), "--rate {rate}: {err}");
        assert!(err.contains("rate") || err.contains("invalid"), "--rate {rate}: {err}");
    }
    let (code, err) =
        sift(&["inject", "-i", "lo", "-r", "/dev/null", "--rate", "10", "--topspeed"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn interface_and_file_are_required() {
    let (code, err) = sift(&["inject", "-r", "/dev/null"]);
    assert_eq!(code, Some(1), "{err}");
    let (code, err) = sift(&["inject", "-i", "lo"]);
    assert_eq!(code, Some(1), "{err}");
}
