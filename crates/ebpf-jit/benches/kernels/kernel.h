/* What every benchmark kernel shares: fixed-width types and the entry point's declaration.
 *
 * Each kernel is one C file compiled twice from the same source: `clang -O2 -target bpf -c`
 * (the eBPF engines load it through sift-ebpf-elf; the code is in `.text`, the loader's
 * convention for plain-memory programs) and `clang -O2 -shared -fPIC` (the native reference,
 * called through dlopen). The entry is `u64 bench(u8 *mem, u64 len)`: r1 = the input memory.
 * rbpf passes 0 in r2, so the kernels read their sizes from the input's first 8 bytes (a
 * little-endian u64 count, as the public benchmark's inputs start with one) and never use
 * `len`. No maps, no helpers, no global data; every other function is `static
 * __always_inline`, so each object holds exactly one function (rbpf has no bpf-to-bpf calls). */
#ifndef SIFT_BENCH_KERNEL_H
#define SIFT_BENCH_KERNEL_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define INLINE static inline __attribute__((always_inline))

/* The native build exports `bench`; the eBPF build needs nothing more than a global function. */
#define KERNEL u64 __attribute__((visibility("default"))) bench(u8 *mem, u64 len)

/* The count every input starts with. */
INLINE u64 input_count(const u8 *mem) { return *(const u64 *)mem; }

#endif
