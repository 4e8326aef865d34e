/* An XDP firewall: IPv4 sources inside a prefix of the `blocked` LPM trie are dropped and
 * counted per rule (the trie's value is the rule number); the rest pass. */
#include "sift_bpf.h"

struct lpm_v4 {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1024);
	__type(key, struct lpm_v4);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

SEC("xdp")
int xdp_firewall(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	struct lpm_v4 key = { .prefixlen = 32, .addr = ip->saddr };
	__u32 *rule = bpf_map_lookup_elem(&blocked, &key);
	if (!rule)
		return XDP_PASS;
	__u32 r = *rule & 31;
	__u64 *n = bpf_map_lookup_elem(&drops, &r);
	if (n)
		__sync_fetch_and_add(n, 1);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
