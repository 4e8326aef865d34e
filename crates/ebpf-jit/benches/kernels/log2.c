/* log2: bit tricks and branches over an array. Follows eunomia-bpf/bpf-benchmark's
 * log2_int.bpf.c: the XOR of floor(log2(x)) over the array, computed with compare-and-shift
 * steps. Input: u64 n, then n u64 values (8,192 in the benchmark). */
#include "kernel.h"

INLINE u64 log2_32(u32 v) {
    u32 shift, r;
    r = (v > 0xFFFF) << 4;
    v >>= r;
    shift = (v > 0xFF) << 3;
    v >>= shift;
    r |= shift;
    shift = (v > 0xF) << 2;
    v >>= shift;
    r |= shift;
    shift = (v > 0x3) << 1;
    v >>= shift;
    r |= shift;
    r |= (v >> 1);
    return r;
}

INLINE u64 log2_64(u64 v) {
    u32 hi = v >> 32;
    if (hi)
        return log2_32(hi) + 32;
    return log2_32((u32)v);
}

KERNEL {
    (void)len;
    u64 n = input_count(mem);
    const u64 *nums = (const u64 *)(mem + 8);
    u64 hash = 0;
    for (u64 i = 0; i < n; i++)
        hash ^= log2_64(nums[i]) << (i & 7);
    return hash;
}
