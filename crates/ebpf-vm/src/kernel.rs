//! The kernel's helpers for XDP, TC and socket-filter programs, with the kernel's numbers
//! (`sift_ebpf::helper_ids`), argument rules and return values: maps (lookup, update,
//! delete, push, pop, peek), the ring buffer, the virtual clock and random numbers, tail
//! calls, redirects, packet resizing (`bpf_xdp_adjust_head/meta/tail`), packet bytes and
//! checksums, and `bpf_trace_printk`. [`register_kernel_helpers`] adds them all.
//!
//! A helper used where the kernel's verifier would refuse the program (a lookup in a ring
//! buffer, a push to a hash) ends the run with a fault naming the helper and the map type.

use sift_ebpf::MapType;
use sift_ebpf::helper_ids::{helper_name, id};

use crate::context::xdp;
use crate::csum;
use crate::env::{ProgKind, Redirect};
use crate::helpers::{Args, HelperOutcome, Helpers};
use crate::maps::errno::{EACCES, EAGAIN, EFAULT, EINVAL, ENOENT};
use crate::maps::{MAP_BASE, MAP_HANDLE_BASE, Map};
use crate::memory::{Memory, PacketBounds};

type R = Result<HelperOutcome, String>;

/// Helper `id`'s kernel name (the table in `sift_ebpf::helper_ids`).
fn name(id: u32) -> &'static str {
    helper_name(i64::from(id)).unwrap_or("unknown")
}

fn ret(v: u64) -> R {
    Ok(HelperOutcome::Return(v))
}

fn ret_err(e: i64) -> R {
    Ok(HelperOutcome::Return(e as u64))
}

fn ret_res(r: Result<(), i64>) -> R {
    ret(r.map_or_else(|e| e as u64, |()| 0))
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

/// The map `handle` names, if its type is one of `allowed` (the verifier's
/// `check_map_func_compatibility`).
fn typed_map(
    m: &Memory<'_>,
    handle: u64,
    allowed: &[MapType],
    helper: &str,
) -> Result<usize, String> {
    let i = map_index(m.maps(), handle)?;
    let t = m.maps()[i].map_type();
    if !allowed.contains(&t) {
        return Err(format!("the kernel's verifier refuses {helper} on a {t} map"));
    }
    Ok(i)
}

const LOOKUP_MAPS: &[MapType] = &[
    MapType::Array,
    MapType::PerCpuArray,
    MapType::Hash,
    MapType::PerCpuHash,
    MapType::LruHash,
    MapType::LruPerCpuHash,
    MapType::LpmTrie,
    MapType::Devmap,
    MapType::DevmapHash,
];
const UPDATE_MAPS: &[MapType] = &[
    MapType::Array,
    MapType::PerCpuArray,
    MapType::Hash,
    MapType::PerCpuHash,
    MapType::LruHash,
    MapType::LruPerCpuHash,
    MapType::LpmTrie,
];
const QUEUE_MAPS: &[MapType] = &[MapType::Queue, MapType::Stack];

fn cpu(m: &mut Memory<'_>) -> u32 {
    m.env().map_or(0, |e| e.cpu)
}

/// Adds the map helpers with the kernel's numbers: `map_lookup_elem(map, key)` (a pointer to
/// the value or 0), `map_update_elem(map, key, value, flags)`, `map_delete_elem(map, key)`,
/// `map_push_elem(map, value, flags)`, `map_pop_elem(map, value)`,
/// `map_peek_elem(map, value)` (0 or a negative errno).
pub fn register_map_helpers(h: &mut Helpers) {
    h.register(id::MAP_LOOKUP_ELEM, name(id::MAP_LOOKUP_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), LOOKUP_MAPS, "map_lookup_elem")?;
        let key = read(m, a.r2(), m.maps()[i].spec().key_size as usize)?;
        let c = cpu(m);
        ret(m.maps_mut()[i].lookup_from_prog(i, &key, c).unwrap_or(0))
    });
    h.register(id::MAP_UPDATE_ELEM, name(id::MAP_UPDATE_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), UPDATE_MAPS, "map_update_elem")?;
        let spec = m.maps()[i].spec();
        let (ks, vs) = (spec.key_size as usize, spec.value_size as usize);
        let key = read(m, a.r2(), ks)?;
        let value = read(m, a.r3(), vs)?;
        let c = cpu(m);
        ret_res(m.maps_mut()[i].update_from_prog(&key, &value, a.r4(), c))
    });
    h.register(id::MAP_DELETE_ELEM, name(id::MAP_DELETE_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), UPDATE_MAPS, "map_delete_elem")?;
        let key = read(m, a.r2(), m.maps()[i].spec().key_size as usize)?;
        ret_res(m.maps_mut()[i].delete(&key))
    });
    h.register(id::MAP_PUSH_ELEM, name(id::MAP_PUSH_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), QUEUE_MAPS, "map_push_elem")?;
        let value = read(m, a.r2(), m.maps()[i].spec().value_size as usize)?;
        ret_res(m.maps_mut()[i].push(&value, a.r3()))
    });
    h.register(id::MAP_POP_ELEM, name(id::MAP_POP_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), QUEUE_MAPS, "map_pop_elem")?;
        let n = m.maps()[i].spec().value_size as usize;
        m.slice(a.r2(), n).map_err(|e| e.to_string())?;
        match m.maps_mut()[i].pop() {
            Ok(v) => {
                m.slice_mut(a.r2(), n).map_err(|e| e.to_string())?.copy_from_slice(&v);
                ret(0)
            }
            Err(e) => ret_err(e),
        }
    });
    h.register(id::MAP_PEEK_ELEM, name(id::MAP_PEEK_ELEM), |m, a: Args| {
        let i = typed_map(m, a.r1(), QUEUE_MAPS, "map_peek_elem")?;
        let n = m.maps()[i].spec().value_size as usize;
        match m.maps()[i].peek().map(<[u8]>::to_vec) {
            Some(v) => {
                m.slice_mut(a.r2(), n).map_err(|e| e.to_string())?.copy_from_slice(&v);
                ret(0)
            }
            None => ret_err(-ENOENT),
        }
    });
}

/// The ring buffer map `handle` names and the buffer offset of `addr` in it, for
/// submit/discard: the record must be one this map reserved.
fn ring_record(m: &Memory<'_>, addr: u64) -> Result<(usize, usize), String> {
    let i = addr.checked_sub(MAP_BASE).map(|o| (o >> 32) as usize);
    match i {
        Some(i) if i < m.maps().len() && m.maps()[i].map_type() == MapType::Ringbuf => {
            Ok((i, (addr - MAP_BASE - ((i as u64) << 32)) as usize))
        }
        _ => Err(format!("{addr:#x} is no ring buffer record")),
    }
}

/// Adds the ring buffer helpers: `ringbuf_output(rb, data, size, flags)` (0, `-EINVAL` for
/// unknown flags, `-EAGAIN` when full), `ringbuf_reserve(rb, size, flags)` (a pointer or
/// 0), `ringbuf_submit(data, flags)`, `ringbuf_discard(data, flags)`,
/// `ringbuf_query(rb, flags)`.
pub fn register_ringbuf_helpers(h: &mut Helpers) {
    use crate::maps::ringbuf::{BPF_RB_FORCE_WAKEUP, BPF_RB_NO_WAKEUP};
    const RB: &[MapType] = &[MapType::Ringbuf];
    h.register(id::RINGBUF_OUTPUT, name(id::RINGBUF_OUTPUT), |m, a: Args| {
        let i = typed_map(m, a.r1(), RB, "ringbuf_output")?;
        if a.r4() & !(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP) != 0 {
            return ret_err(-EINVAL);
        }
        let data = read(m, a.r2(), a.r3() as usize)?;
        let Some(addr) = m.maps_mut()[i].ringbuf_reserve(i, a.r3()) else {
            return ret_err(-EAGAIN);
        };
        m.slice_mut(addr, data.len()).map_err(|e| e.to_string())?.copy_from_slice(&data);
        let (_, off) = ring_record(m, addr)?;
        m.maps_mut()[i].ringbuf_commit(off, false);
        ret(0)
    });
    h.register(id::RINGBUF_RESERVE, name(id::RINGBUF_RESERVE), |m, a: Args| {
        let i = typed_map(m, a.r1(), RB, "ringbuf_reserve")?;
        if a.r3() != 0 || a.r2() > u64::from(u32::MAX / 4) {
            return ret(0);
        }
        ret(m.maps_mut()[i].ringbuf_reserve(i, a.r2()).unwrap_or(0))
    });
    for (hid, discard) in [(id::RINGBUF_SUBMIT, false), (id::RINGBUF_DISCARD, true)] {
        h.register(hid, name(hid), move |m, a: Args| {
            let (i, off) = ring_record(m, a.r1())?;
            if !m.maps_mut()[i].ringbuf_commit(off, discard) {
                return Err(format!("{:#x} is no reserved ring buffer record", a.r1()));
            }
            ret(0)
        });
    }
    h.register(id::RINGBUF_QUERY, name(id::RINGBUF_QUERY), |m, a: Args| {
        let i = typed_map(m, a.r1(), RB, "ringbuf_query")?;
        ret(m.maps()[i].ringbuf_query(a.r2()))
    });
}

/// `BPF_F_INGRESS` (redirect to the device's ingress, TC).
pub const BPF_F_INGRESS: u64 = 1;
/// `bpf_redirect_map`'s flags: the low 2 bits are the result when the key has no target.
pub const BPF_F_ACTION_MASK: u64 = 3;
/// `BPF_F_BROADCAST`.
pub const BPF_F_BROADCAST: u64 = 8;
/// `BPF_F_EXCLUDE_INGRESS`.
pub const BPF_F_EXCLUDE_INGRESS: u64 = 16;

/// Adds tail calls and redirects: `tail_call(ctx, prog_array, index)` (the VM continues in
/// the program the array names, or falls through), `redirect(ifindex, flags)` (XDP:
/// `XDP_REDIRECT`, or `XDP_ABORTED` for any flag; TC: `TC_ACT_REDIRECT`, or `TC_ACT_SHOT`
/// for a flag other than `BPF_F_INGRESS`), `redirect_map(map, key, flags)` (a device map:
/// `XDP_REDIRECT`, or the flags' low 2 bits when the key has no target). The target is kept
/// in [`VmEnv::redirect`](crate::VmEnv).
pub fn register_flow_helpers(h: &mut Helpers) {
    h.register(id::TAIL_CALL, name(id::TAIL_CALL), |m, a: Args| {
        let i = typed_map(m, a.r2(), &[MapType::ProgArray], "tail_call")?;
        match u32::try_from(a.r3()).ok().and_then(|k| m.maps()[i].prog_at(k)) {
            Some(p) => Ok(HelperOutcome::TailCall(p)),
            None => ret(0),
        }
    });
    h.register(id::REDIRECT, name(id::REDIRECT), |m, a: Args| {
        let env = m.env()?;
        let tc = matches!(env.kind, ProgKind::Tc);
        let bad = if tc { a.r2() & !BPF_F_INGRESS != 0 } else { a.r2() != 0 };
        if bad {
            return ret(if tc { crate::context::tc::SHOT } else { xdp::ABORTED });
        }
        env.redirect = Some(Redirect::Ifindex { ifindex: a.r1() as u32, flags: a.r2() });
        ret(if tc { crate::context::tc::REDIRECT } else { xdp::REDIRECT })
    });
    h.register(id::REDIRECT_MAP, name(id::REDIRECT_MAP), |m, a: Args| {
        let i = typed_map(m, a.r1(), &[MapType::Devmap, MapType::DevmapHash], "redirect_map")?;
        let flags = a.r3();
        if flags & !(BPF_F_ACTION_MASK | BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS) != 0 {
            return ret(xdp::ABORTED);
        }
        let key = a.r2() as u32;
        let target = m.maps()[i]
            .lookup(&key.to_le_bytes())
            .map(|v| u32::from_le_bytes(v[..4].try_into().unwrap_or([0; 4])));
        match target {
            Some(target) => {
                m.env()?.redirect = Some(Redirect::Map { map: i, key, target });
                ret(xdp::REDIRECT)
            }
            None => ret(flags & BPF_F_ACTION_MASK),
        }
    });
}

/// Writes the packet's bounds into the `xdp_md` after a resize.
fn set_xdp_bounds(m: &mut Memory<'_>, b: PacketBounds) {
    if !m.set_packet_bounds(b) {
        return;
    }
    let fields = [
        (xdp::DATA, m.packet_address(b.data)),
        (xdp::DATA_END, m.packet_address(b.end)),
        (xdp::DATA_META, m.packet_address(b.meta)),
    ];
    let ctx = m.ctx_mut();
    if ctx.len() >= xdp::MD_SIZE {
        for (off, v) in fields {
            ctx[off..off + 4].copy_from_slice(&(v as u32).to_le_bytes());
        }
    }
}

/// Adds XDP's packet resizing: `xdp_adjust_head(ctx, delta)`, `xdp_adjust_meta(ctx,
/// delta)`, `xdp_adjust_tail(ctx, delta)` within the frame (the kernel's limits: the packet
/// keeps 14 bytes, the head stays past `struct xdp_frame`, the tail before
/// `skb_shared_info`, metadata a multiple of 4 up to 252 bytes); 0 or `-EINVAL`
/// (`-EACCES` for bad metadata lengths).
pub fn register_xdp_helpers(h: &mut Helpers) {
    h.register(id::XDP_ADJUST_HEAD, name(id::XDP_ADJUST_HEAD), |m, a: Args| {
        let b = m.packet_bounds();
        let delta = i64::from(a.r2() as i32);
        let metalen = b.data - b.meta;
        let data = b.data as i64 + delta;
        if data < (xdp::FRAME_HEADER + metalen) as i64 || data > b.end as i64 - xdp::ETH_HLEN as i64
        {
            return ret_err(-EINVAL);
        }
        let data = data as usize;
        let meta = data - metalen;
        if metalen > 0 {
            m.frame_mut().copy_within(b.meta..b.data, meta);
        }
        set_xdp_bounds(m, PacketBounds { meta, data, end: b.end });
        ret(0)
    });
    h.register(id::XDP_ADJUST_META, name(id::XDP_ADJUST_META), |m, a: Args| {
        let b = m.packet_bounds();
        let meta = b.meta as i64 + i64::from(a.r2() as i32);
        if meta < xdp::FRAME_HEADER as i64 || meta > b.data as i64 {
            return ret_err(-EINVAL);
        }
        let metalen = b.data - meta as usize;
        if !metalen.is_multiple_of(4) || metalen > xdp::MAX_META {
            return ret_err(-EACCES);
        }
        set_xdp_bounds(m, PacketBounds { meta: meta as usize, ..b });
        ret(0)
    });
    h.register(id::XDP_ADJUST_TAIL, name(id::XDP_ADJUST_TAIL), |m, a: Args| {
        let b = m.packet_bounds();
        let hard_end = m.frame_mut().len().saturating_sub(xdp::SHARED_INFO);
        let end = b.end as i64 + i64::from(a.r2() as i32);
        if end > hard_end as i64 || end < (b.data + xdp::ETH_HLEN) as i64 {
            return ret_err(-EINVAL);
        }
        let end = end as usize;
        if end > b.end {
            m.frame_mut()[b.end..end].fill(0);
        }
        set_xdp_bounds(m, PacketBounds { end, ..b });
        ret(0)
    });
}

/// `BPF_F_RECOMPUTE_CSUM` (`skb_store_bytes`).
pub const BPF_F_RECOMPUTE_CSUM: u64 = 1;
/// `BPF_F_INVALIDATE_HASH` (`skb_store_bytes`).
pub const BPF_F_INVALIDATE_HASH: u64 = 2;
/// `BPF_F_HDR_FIELD_MASK`: the field size (0, 2 or 4) of the checksum helpers.
pub const BPF_F_HDR_FIELD_MASK: u64 = 0xf;
/// `BPF_F_PSEUDO_HDR`: the field is part of the pseudo header (it changes nothing in the
/// packet's bytes unless the checksum is offloaded, which it never is here).
pub const BPF_F_PSEUDO_HDR: u64 = 0x10;
/// `BPF_F_MARK_MANGLED_0`: a zero UDP checksum stays zero; a result of zero becomes 0xffff.
pub const BPF_F_MARK_MANGLED_0: u64 = 0x20;
/// `BPF_F_MARK_ENFORCE`: with `BPF_F_MARK_MANGLED_0`, update a zero checksum too.
pub const BPF_F_MARK_ENFORCE: u64 = 0x40;
/// `BPF_F_IPV6`: the pseudo header is IPv6 (no effect on the bytes here).
pub const BPF_F_IPV6: u64 = 0x80;

/// The checksum field at packet offset `off`, or the helper's `-EFAULT`.
fn csum_field(m: &Memory<'_>, off: u64) -> Result<usize, i64> {
    if off > 0xffff || off & 1 != 0 || off as usize + 2 > m.packet().len() {
        return Err(-EFAULT);
    }
    Ok(off as usize)
}

/// Adds the packet helpers: `skb_load_bytes(skb, off, to, len)` (0, or `-EFAULT` with
/// `to` zeroed), `skb_store_bytes(skb, off, from, len, flags)`, `csum_diff(from,
/// from_size, to, to_size, seed)`, `l3_csum_replace(skb, off, from, to, flags)`,
/// `l4_csum_replace(skb, off, from, to, flags)` (sizes 0 — `to` is a `csum_diff` —, 2 and
/// 4; `BPF_F_PSEUDO_HDR`, `BPF_F_MARK_MANGLED_0`, `BPF_F_MARK_ENFORCE`, `BPF_F_IPV6`).
pub fn register_packet_helpers(h: &mut Helpers) {
    h.register(id::SKB_LOAD_BYTES, name(id::SKB_LOAD_BYTES), |m, a: Args| {
        let (off, len) = (a.r2() as u32 as usize, a.r4() as u32 as usize);
        m.slice(a.r3(), len).map_err(|e| e.to_string())?;
        let p = m.packet();
        let src = (off <= 0xffff && off + len <= p.len()).then(|| p[off..off + len].to_vec());
        let to = m.slice_mut(a.r3(), len).map_err(|e| e.to_string())?;
        match src {
            Some(s) => {
                to.copy_from_slice(&s);
                ret(0)
            }
            None => {
                to.fill(0);
                ret_err(-EFAULT)
            }
        }
    });
    h.register(id::SKB_STORE_BYTES, name(id::SKB_STORE_BYTES), |m, a: Args| {
        let (off, len) = (a.r2() as u32 as usize, a.r4() as u32 as usize);
        let data = read(m, a.r3(), len)?;
        if a.r5() & !(BPF_F_RECOMPUTE_CSUM | BPF_F_INVALIDATE_HASH) != 0 {
            return ret_err(-EINVAL);
        }
        let p = m.packet_mut();
        if off > i32::MAX as usize || off + len > p.len() {
            return ret_err(-EFAULT);
        }
        p[off..off + len].copy_from_slice(&data);
        ret(0)
    });
    h.register(id::CSUM_DIFF, name(id::CSUM_DIFF), |m, a: Args| {
        let (fs, ts) = (a.r2() as u32, a.r4() as u32);
        if !(fs | ts).is_multiple_of(4) || u64::from(fs) + u64::from(ts) > 512 {
            return ret_err(-EINVAL);
        }
        let from = if fs > 0 { read(m, a.r1(), fs as usize)? } else { Vec::new() };
        let to = if ts > 0 { read(m, a.r3(), ts as usize)? } else { Vec::new() };
        ret(csum::csum_diff(&from, &to, a.r5() as u32))
    });
    h.register(id::L3_CSUM_REPLACE, name(id::L3_CSUM_REPLACE), |m, a: Args| {
        let flags = a.r5();
        if flags & !BPF_F_HDR_FIELD_MASK != 0 {
            return ret_err(-EINVAL);
        }
        let off = match csum_field(m, a.r2()) {
            Ok(o) => o,
            Err(e) => return ret_err(e),
        };
        let p = m.packet_mut();
        let sum = u16::from_le_bytes([p[off], p[off + 1]]);
        let new = match flags & BPF_F_HDR_FIELD_MASK {
            0 if a.r3() != 0 => return ret_err(-EINVAL),
            0 => csum::replace_by_diff(sum, a.r4() as u32),
            2 => csum::replace2(sum, a.r3() as u16, a.r4() as u16),
            4 => csum::replace4(sum, a.r3() as u32, a.r4() as u32),
            _ => return ret_err(-EINVAL),
        };
        p[off..off + 2].copy_from_slice(&new.to_le_bytes());
        ret(0)
    });
    h.register(id::L4_CSUM_REPLACE, name(id::L4_CSUM_REPLACE), |m, a: Args| {
        let flags = a.r5();
        let known = BPF_F_MARK_MANGLED_0
            | BPF_F_MARK_ENFORCE
            | BPF_F_PSEUDO_HDR
            | BPF_F_HDR_FIELD_MASK
            | BPF_F_IPV6;
        if flags & !known != 0 {
            return ret_err(-EINVAL);
        }
        let off = match csum_field(m, a.r2()) {
            Ok(o) => o,
            Err(e) => return ret_err(e),
        };
        let p = m.packet_mut();
        let sum = u16::from_le_bytes([p[off], p[off + 1]]);
        let mmzero = flags & BPF_F_MARK_MANGLED_0 != 0;
        if mmzero && flags & BPF_F_MARK_ENFORCE == 0 && sum == 0 {
            return ret(0);
        }
        let mut new = match flags & BPF_F_HDR_FIELD_MASK {
            0 if a.r3() != 0 => return ret_err(-EINVAL),
            0 => csum::replace_by_diff(sum, a.r4() as u32),
            2 => csum::replace4(sum, u32::from(a.r3() as u16), u32::from(a.r4() as u16)),
            4 => csum::replace4(sum, a.r3() as u32, a.r4() as u32),
            _ => return ret_err(-EINVAL),
        };
        if mmzero && new == 0 {
            new = 0xffff;
        }
        p[off..off + 2].copy_from_slice(&new.to_le_bytes());
        ret(0)
    });
}

/// Adds `ktime_get_ns()` (the virtual clock), `get_prandom_u32()` (seeded),
/// `get_smp_processor_id()` (the virtual CPU) and `trace_printk(fmt, fmt_size, a1, a2, a3)`
/// (to the environment's trace output; returns the line's length or `-EINVAL`).
pub fn register_env_helpers(h: &mut Helpers) {
    h.register(id::KTIME_GET_NS, name(id::KTIME_GET_NS), |m, _| ret(m.env()?.clock_ns));
    h.register(id::GET_PRANDOM_U32, name(id::GET_PRANDOM_U32), |m, _| {
        ret(u64::from(m.env()?.next_random()))
    });
    h.register(id::GET_SMP_PROCESSOR_ID, name(id::GET_SMP_PROCESSOR_ID), |m, _| {
        ret(u64::from(m.env()?.cpu))
    });
    h.register(id::TRACE_PRINTK, name(id::TRACE_PRINTK), |m, a: Args| {
        let size = a.r2() as u32 as usize;
        if size == 0 {
            return ret_err(-EINVAL);
        }
        let fmt = read(m, a.r1(), size)?;
        match crate::printk::format(m, &fmt, [a.r3(), a.r4(), a.r5()]) {
            Ok(line) => {
                let n = line.len();
                m.env()?.trace(&line);
                ret(n as u64)
            }
            Err(()) => ret_err(-EINVAL),
        }
    });
}

/// Every kernel helper of this module, for XDP, TC and socket-filter programs.
pub fn register_kernel_helpers(h: &mut Helpers) {
    register_map_helpers(h);
    register_ringbuf_helpers(h);
    register_flow_helpers(h);
    register_xdp_helpers(h);
    register_packet_helpers(h);
    register_env_helpers(h);
}
