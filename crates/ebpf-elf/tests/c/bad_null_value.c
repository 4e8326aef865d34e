/* Refused by the kernel: uses a map lookup's result without checking it for NULL. */
#include "sift_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

SEC("tc")
int bad_null_value(struct __sk_buff *skb)
{
	__u32 key = skb->len;
	__u64 *n = bpf_map_lookup_elem(&seen, &key);
	*n += 1;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
