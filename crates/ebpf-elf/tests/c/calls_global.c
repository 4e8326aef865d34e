/* bpf-to-bpf calls and global data: `.text` subprograms called from two programs, a counter
 * in `.bss`, a threshold in `.data`, a constant table in `.rodata`. Packets longer than the
 * threshold are dropped; the others pass, with their first byte replaced by a table entry
 * picked by the sum of their first bytes (socket filter: the length to keep). */
#include "sift_bpf.h"

__u64 seen;                      /* .bss */
__u32 max_len = 1000;            /* .data */
const volatile __u8 table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 }; /* .rodata */

__noinline int sum_bytes(__u8 *p, __u8 *end)
{
	int s = 0;
	for (int i = 0; i < 16; i++) {
		if (p + i + 1 > end)
			break;
		s += p[i];
	}
	return s;
}

__noinline int too_long(__u32 len)
{
	seen++;
	return len > max_len;
}

SEC("xdp")
int xdp_calls(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *end = (void *)(long)ctx->data_end;
	if (too_long(end - data))
		return XDP_DROP;
	int s = sum_bytes(data, end);
	if (data + 1 <= end)
		data[0] = table[s & 7];
	return XDP_PASS;
}

SEC("socket")
int socket_calls(struct __sk_buff *skb)
{
	if (too_long(skb->len))
		return 0;
	return skb->len > 64 ? 64 : skb->len;
}

char _license[] SEC("license") = "GPL";
