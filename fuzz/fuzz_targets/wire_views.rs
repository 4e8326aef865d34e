//! Arbitrary bytes through every sift-wire view: checked constructors, every getter, every
//! option/chunk/extension-header walk, and the setters on a copy. Nothing may panic (a checked
//! view's accessors are total), and every `fill_checksum` must then verify.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The body is shared with sift-wire's property test `views_never_panic`.
include!("../../crates/wire/tests/common/mod.rs");

fuzz_target!(|data: &[u8]| {
    exercise(data);
});
