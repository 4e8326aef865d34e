//! Maps: the state eBPF programs keep between runs. This part has array and hash maps with
//! the kernel's update flags and error numbers, and the three helpers that reach them
//! (`map_lookup_elem` 1, `map_update_elem` 2, `map_delete_elem` 3, the kernel's numbers).
//!
//! A map's values live in one buffer of `max_entries` slots, so that the pointer
//! `map_lookup_elem` returns stays valid (and writable in place) as the kernel's does; a hash
//! map keeps its keys beside, each naming a slot.

use std::collections::HashMap;

use thiserror::Error;

use crate::helpers::{Args, HelperOutcome, Helpers};
use crate::memory::Memory;

/// Where map `i`'s values start: `MAP_BASE + (i << 32)`.
pub const MAP_BASE: u64 = 0x1_0000_0000;
/// What `lddw map_fd(i)` loads: a handle helpers recognise, not an address.
pub const MAP_HANDLE_BASE: u64 = 0xf000_0000_0000;

/// `BPF_ANY`: create or replace.
pub const BPF_ANY: u64 = 0;
/// `BPF_NOEXIST`: create only.
pub const BPF_NOEXIST: u64 = 1;
/// `BPF_EXIST`: replace only.
pub const BPF_EXIST: u64 = 2;

const ENOENT: i64 = 2;
const E2BIG: i64 = 7;
const EEXIST: i64 = 17;
const EINVAL: i64 = 22;

/// The map types this VM has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// `BPF_MAP_TYPE_ARRAY`: 4-byte keys 0…max_entries-1, every element exists (zeroed).
    Array,
    /// `BPF_MAP_TYPE_HASH`.
    Hash,
}

/// A map's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapDef {
    /// The type.
    pub kind: MapKind,
    /// Key bytes (4 for arrays).
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Elements at most.
    pub max_entries: u32,
}

/// A map definition the kernel would refuse.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid map: {0}")]
pub struct MapDefError(pub String);

/// One map's contents.
#[derive(Clone, Debug)]
pub struct Map {
    def: MapDef,
    values: Vec<u8>,
    /// Hash maps: key → slot; free slots.
    keys: HashMap<Vec<u8>, u32>,
    free: Vec<u32>,
}

impl Map {
    /// An empty map (arrays: every value zero).
    pub fn new(def: MapDef) -> Result<Map, MapDefError> {
        if def.key_size == 0 || def.value_size == 0 || def.max_entries == 0 {
            return Err(MapDefError(
                "key size, value size and max entries must be non-zero".into(),
            ));
        }
        if def.kind == MapKind::Array && def.key_size != 4 {
            return Err(MapDefError("array keys are 4 bytes".into()));
        }
        let bytes = u64::from(def.value_size) * u64::from(def.max_entries);
        if bytes > 1 << 28 || def.key_size > 512 {
            return Err(MapDefError(format!("{bytes} bytes of values is too large")));
        }
        Ok(Map {
            def,
            values: vec![0; bytes as usize],
            keys: HashMap::new(),
            free: (0..def.max_entries).rev().collect(),
        })
    }

    /// The shape.
    pub fn def(&self) -> MapDef {
        self.def
    }

    fn slot_of(&self, key: &[u8]) -> Option<u32> {
        match self.def.kind {
            MapKind::Array => {
                let i = u32::from_le_bytes(key.try_into().ok()?);
                (i < self.def.max_entries).then_some(i)
            }
            MapKind::Hash => self.keys.get(key).copied(),
        }
    }

    fn value(&self, slot: u32) -> &[u8] {
        let n = self.def.value_size as usize;
        &self.values[slot as usize * n..][..n]
    }

    /// The value for `key`.
    pub fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        self.slot_of(key).map(|s| self.value(s))
    }

    /// Sets `key` to `value` with the kernel's flags; `Err` is the negative errno the helper
    /// returns.
    pub fn update(&mut self, key: &[u8], value: &[u8], flags: u64) -> Result<(), i64> {
        if flags > BPF_EXIST || value.len() != self.def.value_size as usize {
            return Err(-EINVAL);
        }
        let existing = self.slot_of(key);
        let slot = match (self.def.kind, existing, flags) {
            (MapKind::Array, None, _) => return Err(-E2BIG),
            (_, Some(_), BPF_NOEXIST) => return Err(-EEXIST),
            (_, Some(s), _) => s,
            (MapKind::Hash, None, BPF_EXIST) => return Err(-ENOENT),
            (MapKind::Hash, None, _) => {
                let Some(s) = self.free.pop() else { return Err(-E2BIG) };
                self.keys.insert(key.to_vec(), s);
                s
            }
        };
        let n = self.def.value_size as usize;
        self.values[slot as usize * n..][..n].copy_from_slice(value);
        Ok(())
    }

    /// Removes `key` (arrays: `-EINVAL`, their elements cannot be deleted).
    pub fn delete(&mut self, key: &[u8]) -> Result<(), i64> {
        match self.def.kind {
            MapKind::Array => Err(-EINVAL),
            MapKind::Hash => match self.keys.remove(key) {
                Some(s) => {
                    self.free.push(s);
                    Ok(())
                }
                None => Err(-ENOENT),
            },
        }
    }

    /// Every `(key, value)`, keys in ascending byte order.
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut v: Vec<(Vec<u8>, Vec<u8>)> = match self.def.kind {
            MapKind::Array => (0..self.def.max_entries)
                .map(|i| (i.to_le_bytes().to_vec(), self.value(i).to_vec()))
                .collect(),
            MapKind::Hash => {
                self.keys.iter().map(|(k, &s)| (k.clone(), self.value(s).to_vec())).collect()
            }
        };
        v.sort();
        v
    }

    pub(crate) fn byte_len(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.values
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.values
    }

    pub(crate) fn slot_address(&self, index: usize, slot: u32) -> u64 {
        MAP_BASE + ((index as u64) << 32) + u64::from(slot) * u64::from(self.def.value_size)
    }
}

fn map_index(maps: &[Map], handle: u64) -> Result<usize, String> {
    handle
        .checked_sub(MAP_HANDLE_BASE)
        .map(|i| i as usize)
        .filter(|&i| i < maps.len())
        .ok_or_else(|| format!("{handle:#x} is not a map"))
}

fn read(m: &Memory<'_>, addr: u64, len: usize) -> Result<Vec<u8>, String> {
    m.slice(addr, len).map(<[u8]>::to_vec).map_err(|e| e.to_string())
}

/// Adds the map helpers with the kernel's numbers: 1 `map_lookup_elem(map, key)` (a pointer
/// to the value or 0), 2 `map_update_elem(map, key, value, flags)`, 3
/// `map_delete_elem(map, key)` (0 or a negative errno).
pub fn register_map_helpers(h: &mut Helpers) {
    h.register(1, "map_lookup_elem", |m, a: Args| {
        let i = map_index(m.maps(), a.r1())?;
        let key = read(m, a.r2(), m.maps()[i].def.key_size as usize)?;
        let map = &m.maps()[i];
        Ok(HelperOutcome::Return(map.slot_of(&key).map_or(0, |s| map.slot_address(i, s))))
    });
    h.register(2, "map_update_elem", |m, a: Args| {
        let i = map_index(m.maps(), a.r1())?;
        let def = m.maps()[i].def;
        let key = read(m, a.r2(), def.key_size as usize)?;
        let value = read(m, a.r3(), def.value_size as usize)?;
        let r = m.maps_mut()[i].update(&key, &value, a.r4());
        Ok(HelperOutcome::Return(r.map_or_else(|e| e as u64, |()| 0)))
    });
    h.register(3, "map_delete_elem", |m, a: Args| {
        let i = map_index(m.maps(), a.r1())?;
        let key = read(m, a.r2(), m.maps()[i].def.key_size as usize)?;
        let r = m.maps_mut()[i].delete(&key);
        Ok(HelperOutcome::Return(r.map_or_else(|e| e as u64, |()| 0)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_flags_and_errors() {
        let mut h =
            Map::new(MapDef { kind: MapKind::Hash, key_size: 2, value_size: 4, max_entries: 2 })
                .unwrap();
        assert_eq!(h.update(b"ab", &[1, 0, 0, 0], BPF_EXIST), Err(-ENOENT));
        assert_eq!(h.update(b"ab", &[1, 0, 0, 0], BPF_NOEXIST), Ok(()));
        assert_eq!(h.update(b"ab", &[2, 0, 0, 0], BPF_NOEXIST), Err(-EEXIST));
        assert_eq!(h.update(b"ab", &[2, 0, 0, 0], BPF_ANY), Ok(()));
        assert_eq!(h.update(b"cd", &[3, 0, 0, 0], BPF_ANY), Ok(()));
        assert_eq!(h.update(b"ef", &[4, 0, 0, 0], BPF_ANY), Err(-E2BIG));
        assert_eq!(h.lookup(b"ab"), Some(&[2, 0, 0, 0][..]));
        assert_eq!(h.delete(b"ab"), Ok(()));
        assert_eq!(h.delete(b"ab"), Err(-ENOENT));
        assert_eq!(h.update(b"ef", &[4, 0, 0, 0], 4), Err(-EINVAL));
        assert_eq!(h.update(b"ef", &[4, 0, 0, 0], BPF_ANY), Ok(()));
        let mut a =
            Map::new(MapDef { kind: MapKind::Array, key_size: 4, value_size: 8, max_entries: 4 })
                .unwrap();
        assert_eq!(a.lookup(&3u32.to_le_bytes()), Some(&[0; 8][..]));
        assert_eq!(a.lookup(&4u32.to_le_bytes()), None);
        assert_eq!(a.update(&4u32.to_le_bytes(), &[0; 8], BPF_ANY), Err(-E2BIG));
        assert_eq!(a.update(&1u32.to_le_bytes(), &[0; 8], BPF_NOEXIST), Err(-EEXIST));
        assert_eq!(a.delete(&1u32.to_le_bytes()), Err(-EINVAL));
        assert!(
            Map::new(MapDef { kind: MapKind::Array, key_size: 8, value_size: 8, max_entries: 4 })
                .is_err()
        );
    }
}
