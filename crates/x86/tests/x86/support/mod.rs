//! Random instruction sequences, assembled with sift-x86 and decoded with iced-x86.
//!
//! Shared by the property test (`tests/encode_props.rs`, seeded) and the fuzz target
//! `x86_encode` (which includes this file with `#[path]`, from arbitrary bytes): one model of
//! what each instruction must decode to, one generator, one checker.
//!
//! * [`model`]: the instructions as data, and what each must decode to (or that it must be
//!   refused), written from the Intel SDM independently of the assembler's code.
//! * [`generate`]: random sequences from any source of numbers.
//! * [`check`]: assemble, decode, compare.

#![allow(dead_code)] // Each user takes what it needs.

pub mod check;
pub mod generate;
pub mod model;
