/* Refused by the kernel: reads the EtherType without comparing against data_end. */
#include "sift_bpf.h"

SEC("xdp")
int bad_no_bounds(struct xdp_md *ctx)
{
	struct ethhdr *eth = (void *)(long)ctx->data;
	return eth->h_proto == bpf_htons(ETH_P_IP) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
