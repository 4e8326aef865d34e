/* Reading a frame as sift-firewall reads it (frame.rs, then packet.rs): Ethernet with up to two
 * 802.1Q/802.1ad tags, then IPv4 or IPv6 (by the version nibble), IPv6 extension headers
 * walked to the upper layer, the transport fields pf's rules test; the same refusals with
 * pf's reasons (short, bad-offset, normalize). Every packet access is checked against the end
 * of the packet's linear data; a header the IP lengths say is there but that lies past it (a
 * TC packet's paged data) is refused as short. */
#ifndef PF_PARSE_H
#define PF_PARSE_H

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6_ 0x86dd
#define ETH_P_8021Q_ 0x8100
#define ETH_P_8021AD_ 0x88a8

#define PROTO_HOPOPTS 0
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ROUTING 43
#define PROTO_FRAGMENT 44
#define PROTO_AH 51
#define PROTO_ICMPV6 58
#define PROTO_DSTOPTS 60

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* The largest offset of a header the parser reads (keeps packet pointers in the range the
 * verifier tracks). */
#define PF_MAX_OFF 0xff00

/* What pf_parse says. */
#define PF_PARSED 0
#define PF_NOT_IP 1
#define PF_REFUSED 2

/* The fields of a packet pf's rules and states test (sift-firewall's `Packet`). */
struct pf_pkt {
	__u8 src[16];
	__u8 dst[16];
	__u32 len;      /* the IP total length (IPv6: payload length + 40) */
	__u32 l3;       /* offset of the IP header in the frame */
	__u32 l4;       /* offset of the transport header in the frame */
	__u32 l4_len;   /* transport header and data, up to the IP total length */
	__u16 sport;
	__u16 dport;
	__u8 af;
	__u8 proto;
	__u8 fragment;
	__u8 tcp_flags;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 tos;
	__u8 reason;    /* PF_REFUSED: why */
};

static __always_inline __u16 pf_be16(const __u8 *p)
{
	return ((__u16)p[0] << 8) | p[1];
}

static __always_inline __u32 pf_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) | ((__u32)p[2] << 8) | p[3];
}

static __always_inline int pf_refuse(struct pf_pkt *p, __u8 reason)
{
	p->reason = reason;
	return PF_REFUSED;
}

static __always_inline int pf_is_ext(__u8 next)
{
	return next == PROTO_HOPOPTS || next == PROTO_ROUTING || next == PROTO_FRAGMENT ||
	       next == PROTO_DSTOPTS || next == PROTO_AH;
}

/* The transport fields (packet.rs `transport`): `l4_len` bytes from `p->l4`. */
static __always_inline int pf_transport(void *data, void *end, struct pf_pkt *p)
{
	__u32 off = p->l4;
	if (off > PF_MAX_OFF)
		return pf_refuse(p, PFRES_SHORT);
	__u8 *t = data + off;
	switch (p->proto) {
	case PROTO_TCP: {
		if (p->l4_len < 20 || (void *)(t + 20) > end)
			return pf_refuse(p, PFRES_SHORT);
		__u32 hlen = (t[12] >> 4) * 4;
		if (hlen < 20 || p->l4_len < hlen)
			return pf_refuse(p, PFRES_SHORT);
		p->sport = pf_be16(t);
		p->dport = pf_be16(t + 2);
		p->tcp_flags = t[13];
		break;
	}
	case PROTO_UDP:
		if (p->l4_len < 8 || (void *)(t + 8) > end)
			return pf_refuse(p, PFRES_SHORT);
		p->sport = pf_be16(t);
		p->dport = pf_be16(t + 2);
		break;
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		if ((p->proto == PROTO_ICMP) != (p->af == PF_INET))
			return pf_refuse(p, PFRES_NORM);
		if (p->l4_len < 8 || (void *)(t + 8) > end)
			return pf_refuse(p, PFRES_SHORT);
		p->icmp_type = t[0];
		p->icmp_code = t[1];
		break;
	default:
		break;
	}
	return PF_PARSED;
}

static __always_inline int pf_parse_v4(void *data, void *end, __u32 avail, struct pf_pkt *p)
{
	__u8 *ip = data + p->l3;
	if (avail < 20 || (void *)(ip + 20) > end)
		return pf_refuse(p, PFRES_SHORT);
	__u32 hlen = (ip[0] & 0x0f) * 4;
	if (hlen < 20)
		return pf_refuse(p, PFRES_BADOFF);
	__u32 total = pf_be16(ip + 2);
	if (total < hlen)
		return pf_refuse(p, PFRES_BADOFF);
	if (avail < total)
		return pf_refuse(p, PFRES_SHORT);
	p->af = PF_INET;
	p->proto = ip[9];
	__builtin_memcpy(p->src, ip + 12, 4);
	__builtin_memcpy(p->dst, ip + 16, 4);
	p->tos = ip[1] & ~3;
	p->fragment = (pf_be16(ip + 6) & 0x3fff) != 0;
	p->len = total;
	if (p->fragment)
		return PF_PARSED;
	p->l4 = p->l3 + hlen;
	p->l4_len = total - hlen;
	return pf_transport(data, end, p);
}

static __always_inline int pf_parse_v6(void *data, void *end, __u32 avail, struct pf_pkt *p)
{
	__u8 *ip = data + p->l3;
	if (avail < 40 || (void *)(ip + 40) > end)
		return pf_refuse(p, PFRES_SHORT);
	__u32 total = 40 + (__u32)pf_be16(ip + 4);
	if (avail < total)
		return pf_refuse(p, PFRES_SHORT);
	p->af = PF_INET6;
	__builtin_memcpy(p->src, ip + 8, 16);
	__builtin_memcpy(p->dst, ip + 24, 16);
	p->tos = ((pf_be16(ip) >> 4) & 0xff) & ~3;
	p->len = total;
	__u32 dlen = total - 40;
	__u8 next = ip[6];
	__u32 off = 0;
	/* The extension headers pf walks, to the upper layer or a fragment. */
	for (__u32 i = 0; i <= PF_MAX_EXT; i++) {
		if (!pf_is_ext(next))
			break;
		if (i == PF_MAX_EXT)
			return pf_refuse(p, PFRES_BADOFF);
		if (dlen - off < 2)
			return pf_refuse(p, PFRES_SHORT);
		__u32 at = p->l3 + 40 + off;
		if (at > PF_MAX_OFF)
			return pf_refuse(p, PFRES_SHORT);
		__u8 *h = data + at;
		if ((void *)(h + 2) > end)
			return pf_refuse(p, PFRES_SHORT);
		__u32 hl;
		__u32 need;
		if (next == PROTO_FRAGMENT) {
			hl = 8;
			need = 8;
		} else if (next == PROTO_AH) {
			hl = ((__u32)h[1] + 2) * 4;
			need = hl < 12 ? 12 : hl;
		} else {
			hl = ((__u32)h[1] + 1) * 8;
			need = hl;
		}
		if (dlen - off < need)
			return pf_refuse(p, PFRES_SHORT);
		__u8 kind = next;
		next = h[0];
		if (kind == PROTO_FRAGMENT) {
			if ((void *)(h + 8) > end)
				return pf_refuse(p, PFRES_SHORT);
			if ((pf_be16(h + 2) & 0xfff9) != 0) {
				/* An offset or more-fragments: no transport fields. */
				p->fragment = 1;
				p->proto = next;
				return PF_PARSED;
			}
		}
		off += hl;
	}
	p->proto = next;
	p->l4 = p->l3 + 40 + off;
	p->l4_len = dlen - off;
	return pf_transport(data, end, p);
}

/* Reads a frame of `wire` bytes (the linear part ends at `end`): PF_NOT_IP (not pf's to
 * judge: it passes), PF_PARSED, or PF_REFUSED with pf's reason in `p->reason`. */
static __always_inline int pf_parse(void *data, void *end, __u32 wire, struct pf_pkt *p)
{
	__u8 *eth = data;
	if ((void *)(eth + 14) > end)
		return PF_NOT_IP;
	__u16 type = pf_be16(eth + 12);
	__u32 l3 = 14;
	if (type == ETH_P_8021Q_ || type == ETH_P_8021AD_) {
		if ((void *)(eth + 18) > end)
			return PF_NOT_IP;
		type = pf_be16(eth + 16);
		l3 = 18;
		if (type == ETH_P_8021Q_ || type == ETH_P_8021AD_) {
			if ((void *)(eth + 22) > end)
				return PF_NOT_IP;
			type = pf_be16(eth + 20);
			l3 = 22;
		}
	}
	if (type != ETH_P_IPV4 && type != ETH_P_IPV6_)
		return PF_NOT_IP;
	p->l3 = l3;
	__u32 avail = wire > l3 ? wire - l3 : 0;
	__u8 *ip = data + l3;
	if (avail == 0 || (void *)(ip + 1) > end)
		return pf_refuse(p, PFRES_SHORT);
	switch (ip[0] >> 4) {
	case 4:
		return pf_parse_v4(data, end, avail, p);
	case 6:
		return pf_parse_v6(data, end, avail, p);
	default:
		return pf_refuse(p, PFRES_NORM);
	}
}

#endif
