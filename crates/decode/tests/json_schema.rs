//! `--json` output validates against the committed schema (`schema/packet.schema.json`), for
//! generated traffic on every link type, clean and damaged, and for random bytes. The schema is
//! checked by the `jsonschema` crate (draft 2020-12), an implementation independent of ours.

mod common;

use sift_decode::JsonWriter;
use sift_gen::Link;

fn validator() -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/packet.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).expect("the schema itself is valid")
}

fn check_lines(v: &jsonschema::Validator, out: &[u8], expected_lines: usize) -> usize {
    let text = std::str::from_utf8(out).expect("JSON output is UTF-8");
    let mut n = 0;
    for line in text.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if let Err(e) = v.validate(&value) {
            panic!("schema violation: {e}\n{line}");
        }
        n += 1;
    }
    assert_eq!(n, expected_lines, "one line per packet");
    n
}

#[test]
fn generated_packets_validate() {
    let v = validator();
    let mut w = JsonWriter::new();
    let mut total = 0;
    for link in Link::ALL {
        for damaged in [false, true] {
            let frames = common::frames(link, 1500, 11, damaged);
            let mut out = Vec::new();
            for f in &frames {
                w.write(&mut out, f.link_type, f.ts, f.wire_len, &f.data);
            }
            total += check_lines(&v, &out, frames.len());
        }
    }
    assert_eq!(total, 6 * 2 * 1500);
}

#[test]
fn fields_carry_the_decoded_values() {
    // A known packet: the summary fields and layers hold what the bytes say.
    let frames = common::frames(Link::Ethernet, 200, 11, false);
    let mut w = JsonWriter::new();
    let mut seen_tcp = false;
    for f in &frames {
        let mut out = Vec::new();
        w.write(&mut out, f.link_type, f.ts, f.wire_len, &f.data);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["caplen"], f.data.len());
        assert_eq!(v["len"], f.wire_len);
        assert_eq!(v["ts_sec"], f.ts.secs);
        assert_eq!(v["layers"][0]["proto"], "ether");
        if v["proto"] == "tcp" && v["layers"][1]["proto"] == "ipv4" {
            let tcp = v["layers"][2].clone();
            assert_eq!(tcp["proto"], "tcp");
            let at = 14 + usize::from(f.data[14] & 15) * 4;
            let sport = u16::from_be_bytes([f.data[at], f.data[at + 1]]);
            assert_eq!(tcp["sport"], u64::from(sport));
            assert_eq!(
                v["src"],
                format!("{}.{}.{}.{}", f.data[26], f.data[27], f.data[28], f.data[29])
            );
            assert_eq!(v["sport"], tcp["sport"]);
            seen_tcp = true;
        }
    }
    assert!(seen_tcp);
}

#[test]
fn random_bytes_validate() {
    // Arbitrary bytes under every link type still give schema-valid objects.
    let v = validator();
    let mut w = JsonWriter::new();
    let mut rng = sift_gen::Rng::new(5);
    let mut out = Vec::new();
    let mut n = 0;
    for i in 0..3000 {
        let len = (rng.next_u64() % 120) as usize;
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let lt = [0u16, 1, 101, 108, 113, 228, 229, 276, 147][i % 9];
        w.write(
            &mut out,
            sift_pcap::LinkType::new(lt),
            sift_pcap::Timestamp::new(i as u64, 0),
            len as u32 + 3,
            &data,
        );
        n += 1;
    }
    check_lines(&v, &out, n);
}

#[test]
fn golden_json_lines_validate() {
    // The golden cases include truncated and malformed packets of every protocol.
    let v = validator();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines().filter_map(|l| l.strip_prefix("json: ")) {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Err(e) = v.validate(&value) {
                panic!("schema violation: {e}\n{line}");
            }
            n += 1;
        }
    }
    assert!(n > 400, "only {n} golden JSON lines");
}

#[test]
fn schema_rejects_what_it_should() {
    // The schema is strict enough to catch drift: unknown fields and wrong types fail.
    let v = validator();
    let frames = common::frames(Link::Ethernet, 1, 11, false);
    let mut out = Vec::new();
    let f = &frames[0];
    JsonWriter::new().write(&mut out, f.link_type, f.ts, f.wire_len, &f.data);
    let good: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v.validate(&good).is_ok());
    let mut extra = good.clone();
    extra["layers"][0]["surprise"] = serde_json::json!(1);
    assert!(v.validate(&extra).is_err());
    let mut wrong = good.clone();
    wrong["caplen"] = serde_json::json!("many");
    assert!(v.validate(&wrong).is_err());
    let mut missing = good;
    missing.as_object_mut().unwrap().remove("layers");
    assert!(v.validate(&missing).is_err());
}
