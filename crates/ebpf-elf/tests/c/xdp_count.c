/* An XDP parser that counts packets per IP protocol (key 256: not IPv4 or IPv6; key 257:
 * truncated) in an array map defined in BTF `.maps`; every packet passes. */
#include "sift_bpf.h"
#include <linux/ipv6.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 258);
	__type(key, __u32);
	__type(value, __u64);
} proto_count SEC(".maps");

static __always_inline void count(__u32 key)
{
	__u64 *n = bpf_map_lookup_elem(&proto_count, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end) {
		count(257);
		return XDP_PASS;
	}
	__u16 proto = eth->h_proto;
	void *l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		if (l3 + 4 > end) {
			count(257);
			return XDP_PASS;
		}
		proto = *(__u16 *)(l3 + 2);
		l3 += 4;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		if ((void *)(ip + 1) > end) {
			count(257);
			return XDP_PASS;
		}
		count(ip->protocol);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;
		if ((void *)(ip6 + 1) > end) {
			count(257);
			return XDP_PASS;
		}
		count(ip6->nexthdr);
	} else {
		count(256);
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
