//! Support shared by the pf tests that make their own traffic (`pf_netns.rs`,
//! `pf_nft_oracle.rs`): namespaces and captures ([`netns`]), packets built and read by hand
//! ([`packets`]), and captures written for and replayed through `sift pf` ([`replay`]).
#![allow(dead_code)]

pub mod netns;
pub mod packets;
pub mod replay;
