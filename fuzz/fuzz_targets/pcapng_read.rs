//! Any bytes as a pcapng capture: the reader never panics, the memory and streaming paths agree
//! packet for packet, and whatever is read survives a write and a re-read unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common {
    include!("read_common.rs");
}

fuzz_target!(|data: &[u8]| {
    // Start from a valid section header and interface half of the time.
    let mut bytes = Vec::with_capacity(data.len() + 48);
    if data.first().is_some_and(|b| b & 1 == 1) {
        let shb: [u8; 28] = [
            0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, //
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0,
        ];
        let idb: [u8; 20] = [1, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0];
        bytes.extend_from_slice(&shb);
        bytes.extend_from_slice(&idb);
        bytes.extend_from_slice(&data[1..]);
    } else {
        bytes.extend_from_slice(data);
    }
    common::check(&bytes);
});
