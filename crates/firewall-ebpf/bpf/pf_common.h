/* What the pf program's parts share: helper declarations, protocol numbers, the per-CPU
 * scratch record a packet's work is kept in, and the two devices that keep the program
 * verifiable.
 *
 * Verification. Both verifiers (the kernel's, and sift's own, which has no liveness or
 * precision tracking) explore every path and prune a path only where it reaches a state
 * already explored. So that paths meet in the same state:
 *   - everything a packet's work computes lives in the scratch record (a map value, whose
 *     contents a verifier does not track), not in stack variables;
 *   - the work is cut into `__noinline` functions: a call returns with r1-r5 cleared and the
 *     callee's frame gone, and its return value is passed through pf_forget, so every path
 *     through a function continues in one state;
 *   - an offset into the packet computed on different paths goes through pf_forget too;
 *   - loops are unrolled (inside a loop a verifier stores few states, so nothing would be
 *     pruned), and a loop body goes on along one path only: its branches are exits, the rest
 *     is branch-free arithmetic (pf_nz, pf_lt, pf_select), or a function of its own.
 * Where a function's paths end in its return anyway, the function is inlined: on an
 * established connection's path a packet makes six calls. */
#ifndef PF_COMMON_H
#define PF_COMMON_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "pf.bpf.h"

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)BPF_FUNC_map_update_elem;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size,
				    __u64 flags) = (void *)BPF_FUNC_ringbuf_reserve;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)BPF_FUNC_ringbuf_submit;

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6_ 0x86dd
#define ETH_P_8021Q_ 0x8100
#define ETH_P_8021AD_ 0x88a8

#define PROTO_HOPOPTS 0
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ROUTING 43
#define PROTO_FRAGMENT 44
#define PROTO_AH 51
#define PROTO_ICMPV6 58
#define PROTO_DSTOPTS 60

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* The largest offset of a header the parser reads: a header further in is refused as short
 * (keeps packet pointers in the range the verifiers track; a power of 2 less 1). */
#define PF_MAX_OFF 0x7fff
/* The mask of the IP header's offset (at most 22: two VLAN tags). */
#define PF_L3_MASK 31

/* Verdicts. */
#define PF_PASS 0
#define PF_DROP 1

/* The fields of a packet pf's rules and states test (sift-firewall's `Packet`). */
struct pf_pkt {
	__u8 src[16];
	__u8 dst[16];
	__u32 len;      /* the IP total length (IPv6: payload length + 40) */
	__u32 l3;       /* offset of the IP header in the frame */
	__u32 l4;       /* offset of the transport header in the frame */
	__u32 l4_len;   /* transport header and data, up to the IP total length */
	__u16 sport;
	__u16 dport;
	__u8 af;
	__u8 proto;
	__u8 fragment;
	__u8 tcp_flags;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 tos;
	__u8 icmp_error; /* an ICMP error message (icmp_kind) */
};

/* The TCP fields tracking reads (track.rs `Segment`). */
struct pf_seg {
	__u32 seq;
	__u32 ack;
	__u32 len;
	__u16 win;
	__u8 flags;
	__u8 wscale;
};

/* A packet's work (one per CPU: a program runs to its end on one CPU). */
struct pf_scratch {
	struct pf_pkt p;
	struct pf_seg seg;
	struct pf_state_key key;   /* the packet's state key */
	struct pf_state_key qkey;  /* an ICMP error's: the quoted packet's */
	struct pf_state ns;        /* a state to create */
	__u64 now;                 /* seconds of bpf_ktime_get_ns */
	__u32 qseq;                /* a quoted TCP segment's sequence number */
	__u32 wire;                /* the frame's length */
	__u32 dir;                 /* PF_IN, PF_OUT */
	__u32 ifindex;
	__u32 zero;                /* the configuration's `zero` */
	/* The decision. */
	__u32 rule;                /* rule index, PF_NO_RULE for the default rule */
	__u32 stop;                /* where the classification stopped (PF_DEFAULT_SLOT: no quick) */
	__u8 action;               /* PF_PASS, PF_DROP */
	__u8 reason;               /* PFRES_* */
	__u8 logged;
	__u8 by_state;             /* a state decided */
	/* Walks: IPv6 extension headers, TCP options. */
	__u32 xoff;                /* next header's offset after the fixed IPv6 header */
	__u32 xcount;              /* extension headers seen */
	__u32 oi;                  /* option offset */
	__u32 olen;                /* options' length */
	__u8 xnext;                /* the next header's protocol */
	__u8 pad2[7];
	__u8 opt[64];              /* a SYN's TCP options (zero after their end) */
	__u64 m[PF_MAX_WORDS];     /* the classification's matching rules */
};

/* A value the verifiers should see only as "at most `mask`": XORed with the configuration's
 * `zero` (always 0, unknown to a verifier) and masked (the caller has made sure the value is
 * at most `mask`, a power of 2 less 1, so nothing changes). In assembly, so that the compiler
 * can neither fold it nor test the bound on another copy of the value. */
static __always_inline __u64 pf_forget(__u64 x, __u64 zero, const __u64 mask)
{
	asm volatile("%0 ^= %1\n\t%0 &= %2" : "+r"(x) : "r"(zero), "i"(mask));
	return x;
}

/* Branch-free arithmetic for loop bodies: a loop's iteration must go on along one path only
 * (inside a loop a verifier stores few states, so paths that part and meet again within an
 * iteration multiply with every iteration). In assembly, so that the compiler does not turn
 * them back into branches. */

/* 1 if `x` is not 0, else 0 (`x` below 2^63). */
static __always_inline __u64 pf_nz(__u64 x)
{
	__u64 t;
	asm volatile("%1 = %0\n\t%1 = -%1\n\t%1 |= %0\n\t%1 >>= 63" : "+r"(x), "=&r"(t));
	return t;
}

/* 1 if `a` < `b`, else 0 (both below 2^63). */
static __always_inline __u64 pf_lt(__u64 a, __u64 b)
{
	asm volatile("%0 -= %1\n\t%0 >>= 63" : "+r"(a) : "r"(b));
	return a;
}

/* 1 if `x` == `k`, else 0 (`x` below 2^63). */
static __always_inline __u64 pf_eq(__u64 x, __u64 k)
{
	return 1 - pf_nz(x ^ k);
}

/* `a` if `c` (0 or 1), else `b`. */
static __always_inline __u64 pf_select(__u64 c, __u64 a, __u64 b)
{
	return b ^ ((a ^ b) & (0 - c));
}

/* Uses a function's return value (so that the compiler keeps the function setting it: a
 * verifier refuses a function that exits without r0). */
static __always_inline void pf_used(__u64 x)
{
	asm volatile("" : : "r"(x));
}

/* `x`, unknown to the compiler: a function that returns a constant still sets r0 (the
 * compiler would otherwise leave it unset and use the constant at the call). */
static __always_inline __u64 pf_opaque(__u64 x)
{
	asm volatile("" : "+r"(x));
	return x;
}

static __always_inline __u16 pf_be16(const __u8 *p)
{
	return ((__u16)p[0] << 8) | p[1];
}

static __always_inline __u32 pf_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) | ((__u32)p[2] << 8) | p[3];
}

#endif
