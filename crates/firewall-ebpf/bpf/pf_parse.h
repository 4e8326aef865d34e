/* Reading a frame as sift-firewall reads it (frame.rs, then packet.rs): Ethernet with up to two
 * 802.1Q/802.1ad tags, then IPv4 or IPv6 (by the version nibble), IPv6 extension headers
 * walked to the upper layer, the transport fields pf's rules test; the same refusals with
 * pf's reasons (short, bad-offset, normalize). Every packet access is checked against the end
 * of the packet's linear data; a header the IP lengths say is there but that lies past it (a
 * TC packet's paged data) is refused as short. */
#ifndef PF_PARSE_H
#define PF_PARSE_H

#include "pf_common.h"

/* What pf_parse says. */
#define PF_PARSED 0
#define PF_NOT_IP 1
#define PF_REFUSED 2

/* What one step of the IPv6 extension header walk says. */
#define EXT_MORE 0
#define EXT_DONE 1
#define EXT_FRAG 2
#define EXT_REFUSED 3

static __always_inline __u64 pf_refuse(struct pf_scratch *sc, __u8 reason)
{
	sc->reason = reason;
	return PF_REFUSED;
}

static __always_inline int pf_is_ext(__u8 next)
{
	return next == PROTO_HOPOPTS || next == PROTO_ROUTING || next == PROTO_FRAGMENT ||
	       next == PROTO_DSTOPTS || next == PROTO_AH;
}

/* ICMP types: whether an error message (sift-firewall's icmp_kind). */
static __always_inline int pf_icmp_error(__u8 af, __u8 type)
{
	if (af == PF_INET)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/* The offset of the IP header (14, 18 or 22), or 0 when the frame is not IPv4 or IPv6. */
static __noinline __u64 pf_eth(void *data, void *end)
{
	__u8 *eth = data;
	if ((void *)(eth + 14) > end)
		return 0;
	__u16 type = pf_be16(eth + 12);
	__u64 l3 = 14;
	if (type == ETH_P_8021Q_ || type == ETH_P_8021AD_) {
		if ((void *)(eth + 18) > end)
			return 0;
		type = pf_be16(eth + 16);
		l3 = 18;
		if (type == ETH_P_8021Q_ || type == ETH_P_8021AD_) {
			if ((void *)(eth + 22) > end)
				return 0;
			type = pf_be16(eth + 20);
			l3 = 22;
		}
	}
	if (type != ETH_P_IPV4 && type != ETH_P_IPV6_)
		return 0;
	return l3;
}

/* The transport fields (packet.rs `transport`): `l4_len` bytes from `p->l4`. */
static __always_inline __u64 pf_transport(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	__u32 l4 = p->l4;
	if (l4 > PF_MAX_OFF)
		return pf_refuse(sc, PFRES_SHORT);
	__u8 *t = data + pf_forget(l4, sc->zero, PF_MAX_OFF);
	__u32 len = p->l4_len;
	__u8 proto = p->proto;
	if (proto == PROTO_TCP) {
		if (len < 20 || (void *)(t + 20) > end)
			return pf_refuse(sc, PFRES_SHORT);
		__u32 hlen = (t[12] >> 4) * 4;
		if (hlen < 20 || len < hlen)
			return pf_refuse(sc, PFRES_SHORT);
		p->sport = pf_be16(t);
		p->dport = pf_be16(t + 2);
		p->tcp_flags = t[13];
	} else if (proto == PROTO_UDP) {
		if (len < 8 || (void *)(t + 8) > end)
			return pf_refuse(sc, PFRES_SHORT);
		p->sport = pf_be16(t);
		p->dport = pf_be16(t + 2);
	} else if (proto == PROTO_ICMP || proto == PROTO_ICMPV6) {
		if ((proto == PROTO_ICMP) != (p->af == PF_INET))
			return pf_refuse(sc, PFRES_NORM);
		if (len < 8 || (void *)(t + 8) > end)
			return pf_refuse(sc, PFRES_SHORT);
		p->icmp_type = t[0];
		p->icmp_code = t[1];
		p->icmp_error = pf_icmp_error(p->af, t[0]);
	}
	return PF_PARSED;
}

static __noinline __u64 pf_ipv4(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	__u32 l3 = p->l3;
	__u32 avail = sc->wire > l3 ? sc->wire - l3 : 0;
	__u8 *ip = data + pf_forget(l3, sc->zero, PF_L3_MASK);
	if (avail < 20 || (void *)(ip + 20) > end)
		return pf_refuse(sc, PFRES_SHORT);
	__u32 hlen = (ip[0] & 0x0f) * 4;
	if (hlen < 20)
		return pf_refuse(sc, PFRES_BADOFF);
	__u32 total = pf_be16(ip + 2);
	if (total < hlen)
		return pf_refuse(sc, PFRES_BADOFF);
	if (avail < total)
		return pf_refuse(sc, PFRES_SHORT);
	p->af = PF_INET;
	p->proto = ip[9];
	__builtin_memcpy(p->src, ip + 12, 4);
	__builtin_memcpy(p->dst, ip + 16, 4);
	p->tos = ip[1] & ~3;
	p->len = total;
	if (pf_be16(ip + 6) & 0x3fff) {
		/* More fragments or an offset: no transport fields. */
		p->fragment = 1;
		return PF_PARSED;
	}
	p->l4 = l3 + hlen;
	p->l4_len = total - hlen;
	return pf_transport(data, end, sc);
}

/* The extension headers pf walks (hop-by-hop, routing, fragment, AH, destination options),
 * as bits of protocol numbers below 64. */
#define PF_EXT_MASK ((1ULL << PROTO_HOPOPTS) | (1ULL << PROTO_ROUTING) | (1ULL << PROTO_FRAGMENT) | \
		     (1ULL << PROTO_AH) | (1ULL << PROTO_DSTOPTS))

/* One IPv6 extension header (if the next header is one): the walk goes on, is done (an upper
 * layer), found a fragment, or refuses the packet. The path that goes on is branch-free. */
static __noinline __u64 pf_ext_step(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	__u64 next = sc->xnext;
	if (next >= 64 || !((PF_EXT_MASK >> next) & 1))
		return EXT_DONE;
	sc->xcount++;
	if (sc->xcount > PF_MAX_EXT) {
		sc->reason = PFRES_BADOFF;
		return EXT_REFUSED;
	}
	__u32 dlen = p->len - 40;
	__u32 off = sc->xoff;
	sc->reason = PFRES_SHORT;
	if (off > PF_MAX_OFF || dlen < off || dlen - off < 2)
		return EXT_REFUSED;
	__u8 *h = data + pf_forget(p->l3, sc->zero, PF_L3_MASK) + 40 +
		  pf_forget(off, sc->zero, PF_MAX_OFF);
	/* Every kind is at least 8 bytes long. */
	if ((void *)(h + 8) > end)
		return EXT_REFUSED;
	__u64 len = h[1];
	__u64 is_frag = pf_eq(next, PROTO_FRAGMENT);
	__u64 is_ah = pf_eq(next, PROTO_AH);
	/* Fragment: 8 bytes; AH: (len + 2) * 4, its 12 fixed bytes at least there; others:
	 * (len + 1) * 8. */
	__u64 hl = pf_select(is_frag, 8, pf_select(is_ah, (len + 2) * 4, (len + 1) * 8));
	__u64 need = hl + is_ah * pf_lt(hl, 12) * (12 - hl);
	if (dlen - off < need)
		return EXT_REFUSED;
	sc->xnext = h[0];
	if (is_frag & pf_nz(pf_be16(h + 2) & 0xfff9)) {
		/* An offset or more fragments: no transport fields. */
		p->fragment = 1;
		p->proto = h[0];
		return EXT_FRAG;
	}
	if (off + hl > PF_MAX_OFF)
		return EXT_REFUSED;
	sc->xoff = off + hl;
	return EXT_MORE;
}

static __noinline __u64 pf_ipv6(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	__u32 l3 = p->l3;
	__u32 avail = sc->wire > l3 ? sc->wire - l3 : 0;
	__u8 *ip = data + pf_forget(l3, sc->zero, PF_L3_MASK);
	if (avail < 40 || (void *)(ip + 40) > end)
		return pf_refuse(sc, PFRES_SHORT);
	__u32 total = 40 + (__u32)pf_be16(ip + 4);
	if (avail < total)
		return pf_refuse(sc, PFRES_SHORT);
	p->af = PF_INET6;
	__builtin_memcpy(p->src, ip + 8, 16);
	__builtin_memcpy(p->dst, ip + 24, 16);
	p->tos = ((pf_be16(ip) >> 4) & 0xff) & ~3;
	p->len = total;
	sc->xnext = ip[6];
	sc->xoff = 0;
	sc->xcount = 0;
	/* The extension headers pf walks, to the upper layer or a fragment (at most
	 * PF_MAX_EXT of them, and one step that refuses the next). */
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < PF_MAX_EXT + 2; i++) {
		__u64 r = pf_forget(pf_ext_step(data, end, sc), sc->zero, 3);
		if (r == EXT_MORE)
			continue;
		if (r == EXT_FRAG)
			return PF_PARSED;
		if (r == EXT_REFUSED)
			return PF_REFUSED;
		break;
	}
	if (sc->xcount > PF_MAX_EXT)
		return pf_refuse(sc, PFRES_BADOFF);
	p->proto = sc->xnext;
	p->l4 = l3 + 40 + sc->xoff;
	p->l4_len = total - 40 - sc->xoff;
	return pf_transport(data, end, sc);
}

/* Reads the frame (`sc->wire` bytes; its linear part ends at `end`) into `sc->p`: PF_NOT_IP
 * (not pf's to judge: it passes), PF_PARSED, or PF_REFUSED with pf's reason in `sc->reason`. */
static __noinline __u64 pf_parse(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	__builtin_memset(p, 0, sizeof(*p));
	__u64 l3 = pf_forget(pf_eth(data, end), sc->zero, PF_L3_MASK);
	if (l3 == 0)
		return PF_NOT_IP;
	p->l3 = l3;
	__u8 *ip = data + l3;
	if (sc->wire <= l3 || (void *)(ip + 1) > end)
		return pf_refuse(sc, PFRES_SHORT);
	__u8 v = ip[0] >> 4;
	if (v == 4)
		return pf_forget(pf_ipv4(data, end, sc), sc->zero, 3);
	if (v == 6)
		return pf_forget(pf_ipv6(data, end, sc), sc->zero, 3);
	return pf_refuse(sc, PFRES_NORM);
}

#endif
