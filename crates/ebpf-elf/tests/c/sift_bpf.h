/* Small bpf_helpers.h-style declarations for sift's C corpus (libbpf's headers are not
 * installed on every machine; these are the few definitions the corpus needs). */
#ifndef SIFT_BPF_H
#define SIFT_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __noinline __attribute__((noinline))

/* The legacy map definition (a `maps` section). */
struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)BPF_FUNC_map_update_elem;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size,
				  __u64 flags) = (void *)BPF_FUNC_ringbuf_output;

#define bpf_htons(x) __builtin_bswap16(x)
#define bpf_htonl(x) __builtin_bswap32(x)
#define bpf_ntohs(x) __builtin_bswap16(x)

#endif
