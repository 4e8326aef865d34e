//! Any bytes as a classic pcap capture: the reader never panics, the memory and streaming paths
//! agree packet for packet, and whatever is read survives a write and a re-read unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common {
    include!("read_common.rs");
}

fuzz_target!(|data: &[u8]| {
    // Give the fuzzer a valid pcap header to start from half of the time.
    let mut bytes = Vec::with_capacity(data.len() + 24);
    if data.first().is_some_and(|b| b & 1 == 1) {
        bytes.extend_from_slice(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
        bytes.extend_from_slice(&data[1..]);
    } else {
        bytes.extend_from_slice(data);
    }
    common::check(&bytes);
});
