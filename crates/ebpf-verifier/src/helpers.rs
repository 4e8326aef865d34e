//! Helper prototypes: what each helper the verifier knows takes in `r1`–`r5` and gives in
//! `r0`, which program types may call it, and which map types it takes (the kernel's
//! `bpf_func_proto` tables and `check_map_func_compatibility`).

use sift_ebpf::MapType;
use sift_ebpf::helper_ids::id;

use crate::ProgType;

/// An argument's type (`enum bpf_arg_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// Not used.
    None,
    /// Any initialised value (a scalar, or any pointer when privileged).
    Anything,
    /// A map (`lddw map_fd`).
    MapPtr,
    /// Readable memory of the map's key size.
    MapKey,
    /// Readable memory of the map's value size.
    MapValue,
    /// Writable memory of the map's value size (need not be initialised).
    UninitMapValue,
    /// The context, unmodified.
    Ctx,
    /// Readable memory whose size is the next argument.
    Mem,
    /// Readable memory or null (0) whose size is the next argument.
    MemOrNull,
    /// Writable memory whose size is the next argument.
    UninitMem,
    /// The size of the memory before (not 0).
    Size,
    /// The size of the memory before (may be 0).
    SizeOrZero,
    /// A constant allocation size (may be 0).
    AllocSize,
    /// A ring buffer reservation, released by the call.
    RingbufRelease,
}

/// What `r0` holds after the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// A number.
    Integer,
    /// Nothing (`r0` is not initialised).
    Void,
    /// A pointer to a value of the map in `r1`, or null.
    MapValueOrNull,
    /// A ring buffer reservation of the size in `r2`, or null.
    RingbufMemOrNull,
}

/// A helper's prototype.
#[derive(Clone, Copy, Debug)]
pub struct Proto {
    /// `r1`–`r5`.
    pub args: [Arg; 5],
    /// `r0`.
    pub ret: Ret,
    /// Whether the call may move the packet (packet pointers become invalid).
    pub changes_packet: bool,
}

const fn p(args: [Arg; 5], ret: Ret) -> Proto {
    Proto { args, ret, changes_packet: false }
}

const fn pkt(args: [Arg; 5]) -> Proto {
    Proto { args, ret: Ret::Integer, changes_packet: true }
}

use Arg::{
    AllocSize, Anything as Any, Ctx, MapKey, MapPtr, MapValue, Mem, MemOrNull, None as No,
    RingbufRelease, Size, SizeOrZero, UninitMapValue, UninitMem,
};

/// The helper's prototype, or `None` when this verifier does not model it.
pub fn proto(helper: u32) -> Option<Proto> {
    Some(match helper {
        id::MAP_LOOKUP_ELEM => p([MapPtr, MapKey, No, No, No], Ret::MapValueOrNull),
        id::MAP_UPDATE_ELEM => p([MapPtr, MapKey, MapValue, Any, No], Ret::Integer),
        id::MAP_DELETE_ELEM => p([MapPtr, MapKey, No, No, No], Ret::Integer),
        id::KTIME_GET_NS | id::GET_PRANDOM_U32 | id::GET_SMP_PROCESSOR_ID => {
            p([No; 5], Ret::Integer)
        }
        id::TRACE_PRINTK => p([Mem, Size, Any, Any, Any], Ret::Integer),
        id::L3_CSUM_REPLACE | id::L4_CSUM_REPLACE => pkt([Ctx, Any, Any, Any, Any]),
        id::SKB_STORE_BYTES => pkt([Ctx, Any, Mem, Size, Any]),
        id::TAIL_CALL => p([Ctx, MapPtr, Any, No, No], Ret::Void),
        id::REDIRECT => p([Any, Any, No, No, No], Ret::Integer),
        id::SKB_LOAD_BYTES => p([Ctx, Any, UninitMem, Size, No], Ret::Integer),
        id::CSUM_DIFF => p([MemOrNull, SizeOrZero, MemOrNull, SizeOrZero, Any], Ret::Integer),
        id::XDP_ADJUST_HEAD | id::XDP_ADJUST_META | id::XDP_ADJUST_TAIL => {
            pkt([Ctx, Any, No, No, No])
        }
        id::REDIRECT_MAP => p([MapPtr, Any, Any, No, No], Ret::Integer),
        id::MAP_PUSH_ELEM => p([MapPtr, MapValue, Any, No, No], Ret::Integer),
        id::MAP_POP_ELEM | id::MAP_PEEK_ELEM => {
            p([MapPtr, UninitMapValue, No, No, No], Ret::Integer)
        }
        id::RINGBUF_OUTPUT => p([MapPtr, Mem, SizeOrZero, Any, No], Ret::Integer),
        id::RINGBUF_RESERVE => p([MapPtr, AllocSize, Any, No, No], Ret::RingbufMemOrNull),
        id::RINGBUF_SUBMIT | id::RINGBUF_DISCARD => p([RingbufRelease, Any, No, No, No], Ret::Void),
        _ => return None,
    })
}

/// Whether `prog` may call `helper` (the program types' `get_func_proto`).
pub fn allowed(prog: ProgType, helper: u32) -> bool {
    match helper {
        // bpf_base_func_proto: every type.
        id::MAP_LOOKUP_ELEM
        | id::MAP_UPDATE_ELEM
        | id::MAP_DELETE_ELEM
        | id::MAP_PUSH_ELEM
        | id::MAP_POP_ELEM
        | id::MAP_PEEK_ELEM
        | id::KTIME_GET_NS
        | id::GET_PRANDOM_U32
        | id::GET_SMP_PROCESSOR_ID
        | id::TAIL_CALL
        | id::TRACE_PRINTK
        | id::RINGBUF_OUTPUT
        | id::RINGBUF_RESERVE
        | id::RINGBUF_SUBMIT
        | id::RINGBUF_DISCARD => true,
        id::SKB_LOAD_BYTES => matches!(prog, ProgType::SchedCls | ProgType::SocketFilter),
        id::SKB_STORE_BYTES | id::L3_CSUM_REPLACE | id::L4_CSUM_REPLACE => {
            prog == ProgType::SchedCls
        }
        id::CSUM_DIFF | id::REDIRECT => matches!(prog, ProgType::SchedCls | ProgType::Xdp),
        id::XDP_ADJUST_HEAD | id::XDP_ADJUST_META | id::XDP_ADJUST_TAIL | id::REDIRECT_MAP => {
            prog == ProgType::Xdp
        }
        _ => false,
    }
}

/// Whether `map` may be passed to `helper` (both directions of the kernel's
/// `check_map_func_compatibility`).
pub fn map_compatible(map: MapType, helper: u32) -> bool {
    // Maps that only some helpers take.
    let map_ok = match map {
        MapType::ProgArray => helper == id::TAIL_CALL,
        MapType::Ringbuf => matches!(helper, id::RINGBUF_OUTPUT | id::RINGBUF_RESERVE),
        MapType::Queue | MapType::Stack => {
            matches!(helper, id::MAP_PUSH_ELEM | id::MAP_POP_ELEM | id::MAP_PEEK_ELEM)
        }
        MapType::Devmap | MapType::DevmapHash | MapType::Xskmap => {
            matches!(helper, id::REDIRECT_MAP | id::MAP_LOOKUP_ELEM)
        }
        MapType::Cpumap => helper == id::REDIRECT_MAP,
        MapType::PerfEventArray
        | MapType::StackTrace
        | MapType::CgroupArray
        | MapType::ArrayOfMaps
        | MapType::HashOfMaps
        | MapType::Sockmap
        | MapType::Sockhash
        | MapType::CgroupStorage
        | MapType::PerCpuCgroupStorage
        | MapType::ReuseportSockarray
        | MapType::SkStorage
        | MapType::StructOps
        | MapType::InodeStorage
        | MapType::TaskStorage
        | MapType::UserRingbuf
        | MapType::Unspec => false,
        MapType::BloomFilter => matches!(helper, id::MAP_PUSH_ELEM | id::MAP_PEEK_ELEM),
        MapType::Hash
        | MapType::Array
        | MapType::PerCpuHash
        | MapType::PerCpuArray
        | MapType::LruHash
        | MapType::LruPerCpuHash
        | MapType::LpmTrie => true,
    };
    // Helpers that only some maps go with.
    let helper_ok = match helper {
        id::TAIL_CALL => map == MapType::ProgArray,
        id::RINGBUF_OUTPUT | id::RINGBUF_RESERVE => map == MapType::Ringbuf,
        id::MAP_PUSH_ELEM | id::MAP_PEEK_ELEM => {
            matches!(map, MapType::Queue | MapType::Stack | MapType::BloomFilter)
        }
        id::MAP_POP_ELEM => matches!(map, MapType::Queue | MapType::Stack),
        id::REDIRECT_MAP => {
            matches!(map, MapType::Devmap | MapType::DevmapHash | MapType::Cpumap | MapType::Xskmap)
        }
        _ => true,
    };
    map_ok && helper_ok
}
