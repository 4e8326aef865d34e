/* memcpy: memory bandwidth. Follows eunomia-bpf/bpf-benchmark's memcpy test (1 MiB copied
 * with a u64 loop in the program, not a helper). Input: u64 n, then n source words, then n
 * destination words (n = 131,072: 1 MiB each way). Returns n and the last word copied mixed. */
#include "kernel.h"

KERNEL {
    (void)len;
    u64 n = input_count(mem);
    const u64 *src = (const u64 *)(mem + 8);
    u64 *dst = (u64 *)(mem + 8) + n;
    for (u64 i = 0; i < n; i++)
        dst[i] = src[i];
    return n ^ (n ? dst[n - 1] : 0);
}
