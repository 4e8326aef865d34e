/* A ring-buffer logger: every IPv4 packet's addresses, protocol, a letter for it (from a
 * string literal: `.rodata.str1.1`) and length go to a ring buffer as an event; all packets
 * pass. */
#include "sift_bpf.h"

struct event {
	__u32 saddr;
	__u32 daddr;
	__u32 len;
	__u8 protocol;
	char letter;
	__u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("xdp")
int xdp_log(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	struct event e = {
		.saddr = ip->saddr,
		.daddr = ip->daddr,
		.len = (__u32)(end - data),
		.protocol = ip->protocol,
		.letter = "?ITU"[(ip->protocol == 1) + 2 * (ip->protocol == 6) + 3 * (ip->protocol == 17)],
	};
	bpf_ringbuf_output(&events, &e, sizeof(e), 0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
