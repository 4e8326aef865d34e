/* TC counters: packets and bytes per IP protocol (legacy `maps` section, `struct
 * bpf_map_def`), and a hash map of blocked IPv4 destinations whose packets are shot. */
#include "sift_bpf.h"

struct counter {
	__u64 packets;
	__u64 bytes;
};

struct bpf_map_def SEC("maps") tc_proto = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(struct counter),
	.max_entries = 256,
};

struct bpf_map_def SEC("maps") tc_blocked = {
	.type = BPF_MAP_TYPE_HASH,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u32),
	.max_entries = 128,
	.map_flags = 0,
};

SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	__u32 key = 0;
	if ((void *)(ip + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IP))
		key = ip->protocol;
	struct counter *c = bpf_map_lookup_elem(&tc_proto, &key);
	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, skb->len);
	}
	if ((void *)(ip + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IP)) {
		__u32 dst = ip->daddr;
		if (bpf_map_lookup_elem(&tc_blocked, &dst))
			return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
