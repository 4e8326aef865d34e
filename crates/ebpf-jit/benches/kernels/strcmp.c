/* strcmp: a byte loop with two loads and two branches per byte, on long strings that differ
 * only at the end. Follows eunomia-bpf/bpf-benchmark's strcmp_fail test. Input: u64 n, then
 * string a (n bytes), then string b (n bytes); the comparison stops at the first difference or
 * NUL, as strcmp does, and at n. Returns a[i] - b[i] at the stop and the index, mixed. */
#include "kernel.h"

KERNEL {
    (void)len;
    u64 n = input_count(mem);
    const u8 *a = mem + 8;
    const u8 *b = a + n;
    u64 i = 0;
    for (; i < n; i++) {
        if (a[i] != b[i] || a[i] == 0)
            break;
    }
    if (i == n)
        return 0;
    return ((u64)(int)(a[i] - b[i]) << 32) ^ i;
}
