/* Refused by the kernel: proves 14 bytes, then reads two bytes at offset 14. */
#include "sift_bpf.h"

SEC("xdp")
int bad_off_by_one(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + 14 > end)
		return XDP_PASS;
	volatile __u16 *after = data + 14;
	return *after == 0x45 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
