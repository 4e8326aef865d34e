//! The kernel's map types (`enum bpf_map_type`) and a map's definition as a program's ELF
//! object or its loader states it ([`MapSpec`]): one table for the ELF loader, the VM's maps,
//! the verifier and the kernel back ends. The numbers are the kernel ABI.

/// `enum bpf_map_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum MapType {
    /// `BPF_MAP_TYPE_UNSPEC`.
    Unspec = 0,
    /// `BPF_MAP_TYPE_HASH`.
    Hash = 1,
    /// `BPF_MAP_TYPE_ARRAY`.
    Array = 2,
    /// `BPF_MAP_TYPE_PROG_ARRAY`.
    ProgArray = 3,
    /// `BPF_MAP_TYPE_PERF_EVENT_ARRAY`.
    PerfEventArray = 4,
    /// `BPF_MAP_TYPE_PERCPU_HASH`.
    PerCpuHash = 5,
    /// `BPF_MAP_TYPE_PERCPU_ARRAY`.
    PerCpuArray = 6,
    /// `BPF_MAP_TYPE_STACK_TRACE`.
    StackTrace = 7,
    /// `BPF_MAP_TYPE_CGROUP_ARRAY`.
    CgroupArray = 8,
    /// `BPF_MAP_TYPE_LRU_HASH`.
    LruHash = 9,
    /// `BPF_MAP_TYPE_LRU_PERCPU_HASH`.
    LruPerCpuHash = 10,
    /// `BPF_MAP_TYPE_LPM_TRIE`.
    LpmTrie = 11,
    /// `BPF_MAP_TYPE_ARRAY_OF_MAPS`.
    ArrayOfMaps = 12,
    /// `BPF_MAP_TYPE_HASH_OF_MAPS`.
    HashOfMaps = 13,
    /// `BPF_MAP_TYPE_DEVMAP`.
    Devmap = 14,
    /// `BPF_MAP_TYPE_SOCKMAP`.
    Sockmap = 15,
    /// `BPF_MAP_TYPE_CPUMAP`.
    Cpumap = 16,
    /// `BPF_MAP_TYPE_XSKMAP`.
    Xskmap = 17,
    /// `BPF_MAP_TYPE_SOCKHASH`.
    Sockhash = 18,
    /// `BPF_MAP_TYPE_CGROUP_STORAGE`.
    CgroupStorage = 19,
    /// `BPF_MAP_TYPE_REUSEPORT_SOCKARRAY`.
    ReuseportSockarray = 20,
    /// `BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE`.
    PerCpuCgroupStorage = 21,
    /// `BPF_MAP_TYPE_QUEUE`.
    Queue = 22,
    /// `BPF_MAP_TYPE_STACK`.
    Stack = 23,
    /// `BPF_MAP_TYPE_SK_STORAGE`.
    SkStorage = 24,
    /// `BPF_MAP_TYPE_DEVMAP_HASH`.
    DevmapHash = 25,
    /// `BPF_MAP_TYPE_STRUCT_OPS`.
    StructOps = 26,
    /// `BPF_MAP_TYPE_RINGBUF`.
    Ringbuf = 27,
    /// `BPF_MAP_TYPE_INODE_STORAGE`.
    InodeStorage = 28,
    /// `BPF_MAP_TYPE_TASK_STORAGE`.
    TaskStorage = 29,
    /// `BPF_MAP_TYPE_BLOOM_FILTER`.
    BloomFilter = 30,
    /// `BPF_MAP_TYPE_USER_RINGBUF`.
    UserRingbuf = 31,
}

impl MapType {
    /// Every map type, by number.
    pub const ALL: &[MapType] = &[
        MapType::Unspec,
        MapType::Hash,
        MapType::Array,
        MapType::ProgArray,
        MapType::PerfEventArray,
        MapType::PerCpuHash,
        MapType::PerCpuArray,
        MapType::StackTrace,
        MapType::CgroupArray,
        MapType::LruHash,
        MapType::LruPerCpuHash,
        MapType::LpmTrie,
        MapType::ArrayOfMaps,
        MapType::HashOfMaps,
        MapType::Devmap,
        MapType::Sockmap,
        MapType::Cpumap,
        MapType::Xskmap,
        MapType::Sockhash,
        MapType::CgroupStorage,
        MapType::ReuseportSockarray,
        MapType::PerCpuCgroupStorage,
        MapType::Queue,
        MapType::Stack,
        MapType::SkStorage,
        MapType::DevmapHash,
        MapType::StructOps,
        MapType::Ringbuf,
        MapType::InodeStorage,
        MapType::TaskStorage,
        MapType::BloomFilter,
        MapType::UserRingbuf,
    ];

    /// The map type numbered `n`.
    pub fn from_u32(n: u32) -> Option<MapType> {
        MapType::ALL.get(n as usize).copied()
    }

    /// The kernel's name without `BPF_MAP_TYPE_` (`HASH`, `LPM_TRIE`).
    pub fn name(self) -> &'static str {
        match self {
            MapType::Unspec => "UNSPEC",
            MapType::Hash => "HASH",
            MapType::Array => "ARRAY",
            MapType::ProgArray => "PROG_ARRAY",
            MapType::PerfEventArray => "PERF_EVENT_ARRAY",
            MapType::PerCpuHash => "PERCPU_HASH",
            MapType::PerCpuArray => "PERCPU_ARRAY",
            MapType::StackTrace => "STACK_TRACE",
            MapType::CgroupArray => "CGROUP_ARRAY",
            MapType::LruHash => "LRU_HASH",
            MapType::LruPerCpuHash => "LRU_PERCPU_HASH",
            MapType::LpmTrie => "LPM_TRIE",
            MapType::ArrayOfMaps => "ARRAY_OF_MAPS",
            MapType::HashOfMaps => "HASH_OF_MAPS",
            MapType::Devmap => "DEVMAP",
            MapType::Sockmap => "SOCKMAP",
            MapType::Cpumap => "CPUMAP",
            MapType::Xskmap => "XSKMAP",
            MapType::Sockhash => "SOCKHASH",
            MapType::CgroupStorage => "CGROUP_STORAGE",
            MapType::ReuseportSockarray => "REUSEPORT_SOCKARRAY",
            MapType::PerCpuCgroupStorage => "PERCPU_CGROUP_STORAGE",
            MapType::Queue => "QUEUE",
            MapType::Stack => "STACK",
            MapType::SkStorage => "SK_STORAGE",
            MapType::DevmapHash => "DEVMAP_HASH",
            MapType::StructOps => "STRUCT_OPS",
            MapType::Ringbuf => "RINGBUF",
            MapType::InodeStorage => "INODE_STORAGE",
            MapType::TaskStorage => "TASK_STORAGE",
            MapType::BloomFilter => "BLOOM_FILTER",
            MapType::UserRingbuf => "USER_RINGBUF",
        }
    }
}

impl std::fmt::Display for MapType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A map as a program declares it: `struct bpf_map_def` in a legacy `maps` section, a
/// BTF-defined map in `.maps`, or a global data section (`.data`, `.rodata`, `.bss`: a
/// one-element array whose value is the section, `initial` its contents).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    /// The symbol (or section) name.
    pub name: String,
    /// The type.
    pub map_type: MapType,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Elements at most.
    pub max_entries: u32,
    /// `map_flags` (`BPF_F_NO_PREALLOC`, `BPF_F_RDONLY_PROG`…).
    pub flags: u32,
    /// The first value's initial bytes (global data sections); empty otherwise.
    pub initial: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for (i, t) in MapType::ALL.iter().enumerate() {
            assert_eq!(*t as u32, i as u32);
            assert_eq!(MapType::from_u32(i as u32), Some(*t));
        }
        assert_eq!(MapType::from_u32(MapType::ALL.len() as u32), None);
        assert_eq!(MapType::LpmTrie.name(), "LPM_TRIE");
        assert_eq!(MapType::Ringbuf as u32, 27);
    }
}
