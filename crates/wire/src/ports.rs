//! Where the ports are: TCP, UDP, SCTP and DCCP all start with the source and destination
//! port, so a flow's 5-tuple can be read without knowing which of them it is.

use crate::bytes::get16;

/// Offset of the source port.
pub const SRC_PORT: usize = 0;
/// Offset of the destination port.
pub const DST_PORT: usize = 2;

/// The source and destination ports at the start of a TCP, UDP, SCTP or DCCP header, if the
/// four bytes are there.
#[inline]
pub fn ports(transport: &[u8]) -> Option<(u16, u16)> {
    (transport.len() >= 4).then(|| (get16(transport, SRC_PORT), get16(transport, DST_PORT)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ports_at_the_start() {
        assert_eq!(super::ports(&[0, 53, 0x9c, 0x40, 0xff]), Some((53, 40000)));
        assert_eq!(super::ports(&[0, 53, 0x9c]), None);
    }
}
