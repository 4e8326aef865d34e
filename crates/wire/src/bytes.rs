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

pub(crate) use view;
