//! Big-endian field access and the boilerplate every view shares.
//!
//! Every multi-byte field on the wire is big-endian; reading and writing go through these
//! helpers so the byte order is written once and never the host's.

/// The big-endian `u16` at `at`.
#[inline]
pub(crate) fn get16(data: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([data[at], data[at + 1]])
}

/// The big-endian `u32` at `at`.
#[inline]
pub(crate) fn get32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// The big-endian 24-bit value at `at` (VXLAN and Geneve network identifiers).
#[inline]
pub(crate) fn get24(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([0, data[at], data[at + 1], data[at + 2]])
}

/// `N` bytes at `at`.
#[inline]
pub(crate) fn array<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&data[at..at + N]);
    a
}

/// Writes `v` big-endian at `at`.
#[inline]
pub(crate) fn set16(data: &mut [u8], at: usize, v: u16) {
    data[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes `v` big-endian at `at`.
#[inline]
pub(crate) fn set32(data: &mut [u8], at: usize, v: u32) {
    data[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Writes the low 24 bits of `v` big-endian at `at`.
#[inline]
pub(crate) fn set24(data: &mut [u8], at: usize, v: u32) {
    data[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

/// Fails with [`crate::ErrorKind::Truncated`] unless `data` holds `needed` bytes.
#[inline]
pub(crate) fn need(header: crate::Header, data: &[u8], needed: usize) -> crate::Result<()> {
    if data.len() < needed {
        Err(crate::Error::truncated(header, needed, data.len()))
    } else {
        Ok(())
    }
}

/// Fails unless `data` holds the `fixed` bytes before a length field, then the length the
/// field at `at` says (`len` of them, read once the fixed part is known to fit), which must be
/// at least `fixed`.
#[inline]
pub(crate) fn need_length(
    header: crate::Header,
    data: &[u8],
    fixed: usize,
    at: usize,
    name: &'static str,
    len: impl FnOnce(&[u8]) -> usize,
) -> crate::Result<()> {
    need(header, data, fixed)?;
    let len = len(data);
    if len < fixed {
        return Err(crate::Error::invalid(header, at, name, len as u32));
    }
    need(header, data, len)
}

/// One option of a type-length-value list at `at` in `data`: its kind, its value and where the
/// next one starts. Kinds in `single` are one byte with no length; the length byte counts the
/// kind and length bytes when `counted` (IPv4, TCP), only the value otherwise (IPv6). `None`
/// at the end of the data; a missing, too short or too long length is an error.
#[inline]
pub(crate) fn tlv<'a>(
    data: &'a [u8],
    at: usize,
    header: crate::Header,
    single: &[u8],
    counted: bool,
) -> Option<crate::Result<(u8, &'a [u8], usize)>> {
    let kind = *data.get(at)?;
    if single.contains(&kind) {
        return Some(Ok((kind, &[], at + 1)));
    }
    let Some(&len) = data.get(at + 1) else {
        return Some(Err(crate::Error::truncated(header, at + 2, data.len())));
    };
    let end = if counted {
        if len < 2 {
            return Some(Err(crate::Error::invalid(header, at + 1, "length", len.into())));
        }
        at + usize::from(len)
    } else {
        at + 2 + usize::from(len)
    };
    match data.get(at + 2..end) {
        Some(value) => Some(Ok((kind, value, end))),
        None => Some(Err(crate::Error::truncated(header, end, data.len()))),
    }
}

/// Declares a walk `$name<'a>` over a list in a byte slice: `step(data, at)` reads the item at
/// `at` and says where the next starts; the first error ends the walk.
macro_rules! walk {
    ($(#[$doc:meta])* $name:ident => $item:ty, $step:path) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name<'a> {
            data: &'a [u8],
            at: usize,
        }

        impl<'a> $name<'a> {
            /// A walk over `data` from its first byte.
            pub fn new(data: &'a [u8]) -> $name<'a> {
                $name { data, at: 0 }
            }
        }

        impl<'a> Iterator for $name<'a> {
            type Item = $crate::Result<$item>;

            fn next(&mut self) -> Option<Self::Item> {
                match $step(self.data, self.at)? {
                    Ok((item, next)) => {
                        self.at = next;
                        Some(Ok(item))
                    }
                    Err(e) => {
                        self.at = self.data.len();
                        Some(Err(e))
                    }
                }
            }
        }
    };
}

/// The source and destination port accessors of a transport header that starts with them
/// (TCP, UDP, SCTP): one place for where a flow's ports are.
macro_rules! ports {
    ($name:ident) => {
        impl<T: AsRef<[u8]>> $name<T> {
            /// Source port.
            #[inline]
            pub fn src_port(&self) -> u16 {
                $crate::bytes::get16(self.buffer.as_ref(), $crate::ports::SRC_PORT)
            }

            /// Destination port.
            #[inline]
            pub fn dst_port(&self) -> u16 {
                $crate::bytes::get16(self.buffer.as_ref(), $crate::ports::DST_PORT)
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            /// Sets the source port.
            #[inline]
            pub fn set_src_port(&mut self, port: u16) {
                $crate::bytes::set16(self.buffer.as_mut(), $crate::ports::SRC_PORT, port);
            }

            /// Sets the destination port.
            #[inline]
            pub fn set_dst_port(&mut self, port: u16) {
                $crate::bytes::set16(self.buffer.as_mut(), $crate::ports::DST_PORT, port);
            }
        }
    };
}

/// The accessors of an options area between a fixed part of `HEADER_LEN` bytes and
/// `header_len()`, walked by `$walk`.
macro_rules! options_area {
    ($name:ident, $walk:ident) => {
        impl<'a, T: AsRef<[u8]> + ?Sized> $name<&'a T> {
            /// The options area.
            #[inline]
            pub fn options(&self) -> &'a [u8] {
                &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
            }

            /// The options, one by one.
            pub fn option_iter(&self) -> $walk<'a> {
                $walk::new(self.options())
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            /// The options area, writable.
            #[inline]
            pub fn options_mut(&mut self) -> &mut [u8] {
                let end = self.header_len();
                &mut self.buffer.as_mut()[HEADER_LEN..end]
            }
        }
    };
}

/// Declares a view `$name<T: AsRef<[u8]>>` with the constructors and buffer accessors every
/// view has. The module defines `check_len` (what `new_checked` runs) and the field accessors.
macro_rules! view {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps `buffer` without checking it, for callers that checked its length: the
            /// fixed-field getters need the fixed header, and the accessors of variable parts
            /// (options, payload) what `check_len` checks. Accessors panic past the buffer's end.
            #[inline]
            pub const fn new_unchecked(buffer: T) -> Self {
                $name { buffer }
            }

            /// Wraps `buffer` after `check_len`: no accessor of the result panics.
            #[inline]
            pub fn new_checked(buffer: T) -> $crate::Result<Self> {
                let view = Self::new_unchecked(buffer);
                view.check_len()?;
                Ok(view)
            }

            /// The buffer, given back.
            #[inline]
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The whole buffer, from this header on.
            #[inline]
            pub fn as_bytes(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            /// The whole buffer, writable.
            #[inline]
            pub fn as_bytes_mut(&mut self) -> &mut [u8] {
                self.buffer.as_mut()
            }
        }
    };
}

pub(crate) use {options_area, ports, view, walk};
