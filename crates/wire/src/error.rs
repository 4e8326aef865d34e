//! The one error type of the header views: which header, where in it, and what was wrong.
//!
//! Views are built over untrusted bytes, so every check a checked constructor or an iterator
//! makes ends in an [`Error`] rather than a panic. The error is `Copy` and allocation-free, so a
//! datapath can return it per packet at no cost.

use std::fmt;

/// Which header (or part of one) an [`Error`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Header {
    /// Ethernet II.
    Ethernet,
    /// An 802.1Q / 802.1ad tag.
    Vlan,
    /// Linux cooked capture v1.
    Sll,
    /// Linux cooked capture v2.
    Sll2,
    /// BSD / OpenBSD loopback.
    Loopback,
    /// An MPLS label stack entry.
    Mpls,
    /// PPPoE.
    Pppoe,
    /// ARP.
    Arp,
    /// IPv4.
    Ipv4,
    /// One IPv4 option.
    Ipv4Option,
    /// IPv6.
    Ipv6,
    /// An IPv6 extension header (or the chain of them).
    Ipv6Ext,
    /// TCP.
    Tcp,
    /// One TCP option.
    TcpOption,
    /// UDP.
    Udp,
    /// ICMP.
    Icmp,
    /// ICMPv6.
    Icmpv6,
    /// SCTP's common header.
    Sctp,
    /// One SCTP chunk.
    SctpChunk,
    /// GRE.
    Gre,
    /// VXLAN.
    Vxlan,
    /// Geneve.
    Geneve,
    /// One Geneve option.
    GeneveOption,
}

impl Header {
    /// A short lower-case name (`ipv4`, `tcp option`…).
    pub fn name(self) -> &'static str {
        match self {
            Header::Ethernet => "ethernet",
            Header::Vlan => "vlan",
            Header::Sll => "sll",
            Header::Sll2 => "sll2",
            Header::Loopback => "loopback",
            Header::Mpls => "mpls",
            Header::Pppoe => "pppoe",
            Header::Arp => "arp",
            Header::Ipv4 => "ipv4",
            Header::Ipv4Option => "ipv4 option",
            Header::Ipv6 => "ipv6",
            Header::Ipv6Ext => "ipv6 extension header",
            Header::Tcp => "tcp",
            Header::TcpOption => "tcp option",
            Header::Udp => "udp",
            Header::Icmp => "icmp",
            Header::Icmpv6 => "icmpv6",
            Header::Sctp => "sctp",
            Header::SctpChunk => "sctp chunk",
            Header::Gre => "gre",
            Header::Vxlan => "vxlan",
            Header::Geneve => "geneve",
            Header::GeneveOption => "geneve option",
        }
    }
}

/// What was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The buffer holds `available` bytes where `needed` are required (the fixed header, or
    /// as many as a length field of the header says).
    Truncated {
        /// Bytes required.
        needed: usize,
        /// Bytes in the buffer.
        available: usize,
    },
    /// A field holds a value the header cannot have (an IPv4 header length below 20, a UDP
    /// length below 8, a version that is not this header's…).
    Invalid {
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: u32,
    },
    /// A chain (IPv6 extension headers, options, chunks) is longer than a walk accepts.
    TooMany {
        /// The most a walk accepts.
        limit: usize,
    },
}

/// An error from a header view: [`Header`], byte offset (from the start of that header's
/// buffer) and [`ErrorKind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    /// The header.
    pub header: Header,
    /// The byte offset in the header's buffer where the problem is.
    pub offset: usize,
    /// What was wrong.
    pub kind: ErrorKind,
}

impl Error {
    /// The buffer of `header` is `available` bytes long where `needed` are required.
    pub const fn truncated(header: Header, needed: usize, available: usize) -> Error {
        Error { header, offset: available, kind: ErrorKind::Truncated { needed, available } }
    }

    /// `field` of `header`, at `offset`, holds the impossible `value`.
    pub const fn invalid(header: Header, offset: usize, field: &'static str, value: u32) -> Error {
        Error { header, offset, kind: ErrorKind::Invalid { field, value } }
    }

    /// A chain of `header`s is longer than `limit`; `offset` is where the walk stopped.
    pub const fn too_many(header: Header, offset: usize, limit: usize) -> Error {
        Error { header, offset, kind: ErrorKind::TooMany { limit } }
    }

    /// The same error, `by` bytes further into an enclosing buffer (an option's error seen
    /// from its header).
    pub const fn shifted(self, by: usize) -> Error {
        Error { offset: self.offset + by, ..self }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.header.name();
        match self.kind {
            ErrorKind::Truncated { needed, available } => {
                write!(f, "{name}: truncated, {available} bytes where {needed} are needed")
            }
            ErrorKind::Invalid { field, value } => {
                write!(f, "{name} at byte {}: invalid `{field}` {value}", self.offset)
            }
            ErrorKind::TooMany { limit } => {
                write!(f, "{name} at byte {}: more than {limit} in a chain", self.offset)
            }
        }
    }
}

impl std::error::Error for Error {}

/// The result of a view operation.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_header_place_and_problem() {
        assert_eq!(
            Error::truncated(Header::Ipv4, 20, 7).to_string(),
            "ipv4: truncated, 7 bytes where 20 are needed"
        );
        assert_eq!(
            Error::invalid(Header::Tcp, 12, "data offset", 3).to_string(),
            "tcp at byte 12: invalid `data offset` 3"
        );
        let e = Error::invalid(Header::TcpOption, 1, "length", 1).shifted(20);
        assert_eq!(e.offset, 21);
        assert_eq!(
            Error::too_many(Header::Ipv6Ext, 88, 8).to_string(),
            "ipv6 extension header at byte 88: more than 8 in a chain"
        );
    }
}
