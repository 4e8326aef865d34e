/* An XDP load balancer: IPv4 packets to a virtual address found in the `backends` hash map
 * get the backend's address (the IPv4 checksum updated incrementally, RFC 1624) and MAC,
 * and go back out (XDP_TX); a per-backend packet count is kept in `hits`. Others pass. */
#include "sift_bpf.h"

struct backend {
	__u32 addr;
	__u8 mac[6];
	__u16 index;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct backend);
} backends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* HC' = ~(~HC + ~m + m') over 16-bit words, for a 32-bit field changing from `from` to `to`. */
static __always_inline __u16 csum_replace4(__u16 check, __u32 from, __u32 to)
{
	__u32 sum = (__u16)~check;
	sum += (__u16)~from + (__u16)~(from >> 16);
	sum += (__u16)to + (__u16)(to >> 16);
	return ~csum_fold(sum);
}

SEC("xdp/lb")
int xdp_lb(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	if ((void *)(ip + 1) > end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return XDP_PASS;
	__u32 vip = ip->daddr;
	struct backend *b = bpf_map_lookup_elem(&backends, &vip);
	if (!b)
		return XDP_PASS;
	ip->check = csum_replace4(ip->check, vip, b->addr);
	ip->daddr = b->addr;
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, b->mac, ETH_ALEN);
	__u32 k = b->index;
	__u64 *n = bpf_map_lookup_elem(&hits, &k);
	if (n)
		*n += 1;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
