/* Refused by the kernel: XDP may not write its context. */
#include "sift_bpf.h"

SEC("xdp")
int bad_ctx_write(struct xdp_md *ctx)
{
	*(volatile __u32 *)&ctx->rx_queue_index = 7;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
