//! What is on the wire: the numbers and headers every layer of sift agrees on.
//!
//! **Why it exists.** Reading a file, compiling a filter, printing a packet, generating traffic
//! and (later) rewriting addresses in a firewall all need the same facts: which link type a
//! number is, what an EtherType or IP protocol number means, where a header's fields are.
//! This crate holds each of those facts once. It is a leaf: it depends on nothing in sift.
//!
//! - [`LinkType`]: link-layer header types, LINKTYPE and DLT numbers, names.
//! - [`ethertype`], [`ipproto`]: the numbers.
#![forbid(unsafe_code)]

pub mod ethertype;
pub mod ipproto;
pub mod link;

pub use link::LinkType;
