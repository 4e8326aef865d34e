/* Refused by the kernel: a socket filter has no direct packet access. */
#include "sift_bpf.h"

SEC("socket")
int bad_socket_direct(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	if (data + 1 > end)
		return 0;
	return *(__u8 *)data == 0x45 ? -1 : 0;
}

char _license[] SEC("license") = "GPL";
