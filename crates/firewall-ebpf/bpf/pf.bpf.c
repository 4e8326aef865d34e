/* pf in the kernel: OpenBSD pf's pf_test as sift-firewall runs it (`Firewall::test`), for XDP
 * (packets going in) and TC ingress and egress, sharing one set of maps.
 *
 * The rule set is data: sift's classifier turns the rules into classes, and this program,
 * fixed code, classifies each packet by bit vectors: every field the rules test maps the
 * packet's value to a class (arrays, LPM tries for addresses), every class is a bit vector of
 * the rules that field lets through, the AND of the packet's vectors are the rules that match
 * and pf's winner is the lowest quick one, else the highest, else pf's default (pass). The
 * cost grows with the rule count only by one word per 64 rules.
 *
 * Before the rules, the state table: an LRU hash keyed by pf's state key, TCP tracked as
 * pf_tcp_track_full / pf_tcp_track_sloppy, states past their timeout (pf's defaults or
 * `set timeout`, against bpf_ktime_get_ns) treated as absent and removed. Counters are per
 * CPU; pflog records go through a ring buffer. How the program is cut so that it verifies:
 * pf_common.h.
 *
 * Build (the object is committed beside this file):
 *   clang -O2 -g -target bpf -I/usr/include/x86_64-linux-gnu -c pf.bpf.c -o pf.bpf.o */
#include "pf_common.h"
#include "pf_parse.h"
#include "pf_track.h"

/* ---- maps ------------------------------------------------------------------------------ */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pf_config);
} pf_config SEC(".maps");

/* Packet value -> class, one region per field (PF_CL_*). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PF_CL_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
} pf_class SEC(".maps");

/* Class -> bit vector of the rules it lets through. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PF_MAX_CLASSES);
	__type(key, __u32);
	__type(value, __u64[PF_MAX_WORDS]);
} pf_bits SEC(".maps");

/* Address -> class, by family and side. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__type(key, struct pf_lpm4);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} pf_src4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__type(key, struct pf_lpm4);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} pf_dst4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__type(key, struct pf_lpm6);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} pf_src6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__type(key, struct pf_lpm6);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} pf_dst6 SEC(".maps");

/* Rule index -> what the rule does. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PF_MAX_RULES);
	__type(key, __u32);
	__type(value, struct pf_rule);
} pf_rules SEC(".maps");

/* The state table (the loader sizes it to `set limit states`). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 100000);
	__type(key, struct pf_state_key);
	__type(value, struct pf_state);
} pf_states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PF_MAX_RULES + 1);
	__type(key, __u32);
	__type(value, struct pf_rule_counters);
} pf_rule_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pf_counters);
} pf_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PF_LOG_BYTES);
} pf_log SEC(".maps");

/* A packet's work (pf_common.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pf_scratch);
} pf_scratch SEC(".maps");

/* ---- the state table -------------------------------------------------------------------- */

/* The state key of a packet with these addresses and ports going `dir`. */
static __always_inline void pf_key(struct pf_state_key *k, const struct pf_pkt *p, __u16 sport,
				   __u16 dport, __u32 dir)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->af = p->af;
	k->proto = p->proto;
	if (dir == PF_IN) {
		__builtin_memcpy(k->addr[0], p->src, 16);
		__builtin_memcpy(k->addr[1], p->dst, 16);
		k->port[0] = sport;
		k->port[1] = dport;
	} else {
		__builtin_memcpy(k->addr[1], p->src, 16);
		__builtin_memcpy(k->addr[0], p->dst, 16);
		k->port[1] = sport;
		k->port[0] = dport;
	}
}

/* The live state of `k`: one past its timeout is removed and not returned (as
 * StateTable::find). */
static __always_inline struct pf_state *pf_find(const struct pf_state_key *k,
						 const struct pf_config *cfg, __u64 now,
						 struct pf_counters *c)
{
	c->searches++;
	struct pf_state *s = bpf_map_lookup_elem(&pf_states, k);
	if (!s)
		return 0;
	__u32 t = s->timeout;
	__u64 timeout = t < PFTM_MAX ? cfg->timeouts[t] : 0;
	if (s->last + timeout <= now) {
		if (bpf_map_delete_elem(&pf_states, k) == 0)
			c->removals++;
		return 0;
	}
	return s;
}

/* Counts a packet on its state (from the creating side, or the other) and records the
 * decision: the state's rule, pass or `bad` (state-mismatch). */
static __always_inline __u64 pf_state_decided(struct pf_state *s, struct pf_scratch *sc,
					      int from_src, __u64 bad)
{
	int i = from_src ? 0 : 1;
	s->packets[i]++;
	s->bytes[i] += sc->p.len;
	sc->rule = s->rule;
	sc->by_state = 1;
	sc->logged = (s->flags & PF_S_LOG_ALL) != 0;
	sc->action = bad ? PF_DROP : PF_PASS;
	sc->reason = bad ? PFRES_BADSTATE : PFRES_MATCH;
	return 1;
}

/* A TCP segment's state (pf_test_state_tcp): 1 when it decided, 0 when the rules judge. */
static __always_inline __u64 pf_state_tcp(void *data, void *end, struct pf_scratch *sc,
				     struct pf_config *cfg, struct pf_counters *c)
{
	pf_segment(data, end, sc);
	pf_key(&sc->key, &sc->p, sc->p.sport, sc->p.dport, sc->dir);
	struct pf_state *s = pf_find(&sc->key, cfg, sc->now, c);
	if (!s)
		return 0;
	if ((sc->seg.flags & (TH_SYN | TH_ACK)) == TH_SYN && s->src.state >= TCPS_FIN_WAIT_2 &&
	    s->dst.state >= TCPS_FIN_WAIT_2) {
		/* A new connection on a closed state's key: the old state goes and the rules judge
		 * the SYN. */
		if (bpf_map_delete_elem(&pf_states, &sc->key) == 0)
			c->removals++;
		return 0;
	}
	int from_src = s->direction == sc->dir;
	struct pf_peer *src = from_src ? &s->src : &s->dst;
	struct pf_peer *dst = from_src ? &s->dst : &s->src;
	__u64 bad = 0;
	if (s->flags & PF_S_SLOPPY)
		pf_used(pf_tcp_sloppy(s, src, dst, sc));
	else
		bad = pf_forget(pf_tcp_full(s, src, dst, sc), sc->zero, 1);
	return pf_state_decided(s, sc, from_src, bad);
}

/* The packet an ICMP error quotes, as its state's key in `sc->qkey` (track.rs `quoted`): 1,
 * or 0 when it quotes nothing pf can key. */
static __noinline __u64 pf_quoted(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_pkt *p = &sc->p;
	struct pf_state_key *k = &sc->qkey;
	__u32 l4 = p->l4;
	if (p->l4_len < 9 || l4 > PF_MAX_OFF)
		return 0;
	__u32 ilen = p->l4_len - 8;
	__u8 *inner = data + pf_forget(l4, sc->zero, PF_MAX_OFF) + 8;
	if ((void *)(inner + 1) > end)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	/* The quoted packet went the other way: going in, its destination is index 0. */
	int src_at = sc->dir == PF_IN ? 1 : 0;
	__u32 thl;
	if (p->af == PF_INET && (inner[0] >> 4) == 4) {
		thl = (inner[0] & 0x0f) * 4;
		if (thl < 20 || ilen < thl || (void *)(inner + 20) > end)
			return 0;
		if (pf_be16(inner + 6) & 0x1fff)
			return 0;
		k->proto = inner[9];
		__builtin_memcpy(k->addr[src_at], inner + 12, 4);
		__builtin_memcpy(k->addr[1 - src_at], inner + 16, 4);
	} else if (p->af == PF_INET6 && (inner[0] >> 4) == 6) {
		if (ilen < 40 || (void *)(inner + 40) > end)
			return 0;
		thl = 40;
		k->proto = inner[6];
		__builtin_memcpy(k->addr[src_at], inner + 8, 16);
		__builtin_memcpy(k->addr[1 - src_at], inner + 24, 16);
	} else {
		return 0;
	}
	k->af = p->af;
	__u32 tlen = ilen - thl;
	__u8 *t = inner + thl;
	sc->qseq = 0;
	if (k->proto == PROTO_TCP) {
		if (tlen < 8 || (void *)(t + 8) > end)
			return 0;
		k->port[src_at] = pf_be16(t);
		k->port[1 - src_at] = pf_be16(t + 2);
		sc->qseq = pf_be32(t + 4);
	} else if (k->proto == PROTO_UDP) {
		if (tlen < 4 || (void *)(t + 4) > end)
			return 0;
		k->port[src_at] = pf_be16(t);
		k->port[1 - src_at] = pf_be16(t + 2);
	} else if (k->proto == PROTO_ICMP || k->proto == PROTO_ICMPV6) {
		if (tlen < 6 || (void *)(t + 6) > end)
			return 0;
		__u16 id = pf_be16(t + 4);
		k->port[0] = id;
		k->port[1] = id;
	}
	return 1;
}

/* An ICMP error's state: the state of the packet it quotes (pf_test_state_icmp). */
static __noinline __u64 pf_state_icmp_error(void *data, void *end, struct pf_scratch *sc,
					    struct pf_config *cfg, struct pf_counters *c)
{
	if (pf_forget(pf_quoted(data, end, sc), sc->zero, 1) == 0)
		return 0;
	struct pf_state *s = pf_find(&sc->qkey, cfg, sc->now, c);
	if (!s)
		return 0;
	/* The quoted packet's sender is the state's creating side if the state was created
	 * going the quoted packet's way. */
	int sender_is_src = s->direction != sc->dir;
	__u64 bad = 0;
	if (sc->qkey.proto == PROTO_TCP) {
		struct pf_peer *src = sender_is_src ? &s->src : &s->dst;
		struct pf_peer *dst = sender_is_src ? &s->dst : &s->src;
		bad = !pf_forget(pf_quoted_fits(s, src, dst, sc), sc->zero, 1);
	}
	return pf_state_decided(s, sc, s->direction == sc->dir, bad);
}

/* An ICMP query's or another protocol's state. */
static __noinline __u64 pf_state_other(void *data, void *end, struct pf_scratch *sc,
				       struct pf_config *cfg, struct pf_counters *c)
{
	struct pf_pkt *p = &sc->p;
	int icmp = p->proto == PROTO_ICMP || p->proto == PROTO_ICMPV6;
	__u16 sport = p->sport, dport = p->dport;
	if (icmp) {
		/* A query: its id in both ports. */
		__u32 l4 = p->l4;
		if (l4 > PF_MAX_OFF)
			return 0;
		__u8 *t = data + pf_forget(l4, sc->zero, PF_MAX_OFF);
		if ((void *)(t + 8) > end)
			return 0;
		sport = pf_be16(t + 4);
		dport = sport;
	}
	pf_key(&sc->key, p, sport, dport, sc->dir);
	struct pf_state *s = pf_find(&sc->key, cfg, sc->now, c);
	if (!s)
		return 0;
	int from_src = s->direction == sc->dir;
	if (icmp) {
		s->timeout = PFTM_ICMP_ERROR;
		s->last = sc->now;
	} else {
		struct pf_peer *src = from_src ? &s->src : &s->dst;
		struct pf_peer *dst = from_src ? &s->dst : &s->src;
		pf_used(pf_datagram(s, src, dst, sc));
	}
	return pf_state_decided(s, sc, from_src, 0);
}

/* The state table (pf_test's first step): 1 when a state decided, 0 when the rules judge. */
static __noinline __u64 pf_states_step(void *data, void *end, struct pf_scratch *sc,
				       struct pf_config *cfg, struct pf_counters *c)
{
	if (sc->p.fragment)
		return 0;
	sc->now = bpf_ktime_get_ns() / 1000000000ULL;
	if (sc->p.proto == PROTO_TCP)
		return pf_state_tcp(data, end, sc, cfg, c);
	if (sc->p.icmp_error)
		return pf_forget(pf_state_icmp_error(data, end, sc, cfg, c), sc->zero, 1);
	return pf_forget(pf_state_other(data, end, sc, cfg, c), sc->zero, 1);
}

/* ---- classification --------------------------------------------------------------------- */

/* Bits set in `x`. */
static __always_inline __u32 pf_popcount(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* The lowest set bit of `x` (not 0). */
static __always_inline __u32 pf_lowest(__u64 x)
{
	return pf_popcount((x & -x) - 1);
}

/* The highest set bit of `x` (not 0). */
static __always_inline __u32 pf_highest(__u64 x)
{
	x |= x >> 1;
	x |= x >> 2;
	x |= x >> 4;
	x |= x >> 8;
	x |= x >> 16;
	x |= x >> 32;
	return pf_popcount(x) - 1;
}

/* The bit vector of the class a field's value has (a region's entry `index`). */
static __always_inline __u64 *pf_vector(__u32 index)
{
	__u32 *c = bpf_map_lookup_elem(&pf_class, &index);
	if (!c)
		return 0;
	__u32 class = *c;
	return bpf_map_lookup_elem(&pf_bits, &class);
}

static __always_inline __u64 *pf_bits_of(__u32 class)
{
	return bpf_map_lookup_elem(&pf_bits, &class);
}

/* The bit vector of an address's class. */
static __always_inline __u64 *pf_addr_vector(void *trie4, void *trie6, const __u8 *addr, __u8 af)
{
	__u32 *c;
	if (af == PF_INET) {
		struct pf_lpm4 k = { .prefixlen = 32 };
		__builtin_memcpy(k.addr, addr, 4);
		c = bpf_map_lookup_elem(trie4, &k);
	} else {
		struct pf_lpm6 k = { .prefixlen = 128 };
		__builtin_memcpy(k.addr, addr, 16);
		c = bpf_map_lookup_elem(trie6, &k);
	}
	if (!c)
		return 0;
	__u32 class = *c;
	return bpf_map_lookup_elem(&pf_bits, &class);
}

/* What pf_match says besides the number of words it ANDed: a quick rule decided. */
#define PF_QUICK_FOUND 128

/* The rules that match, word by word (the AND of the packet's classes' vectors) into
 * `sc->m`; the first quick rule among them decides (`sc->rule`, `sc->stop`, and
 * PF_QUICK_FOUND). Otherwise the number of words. */
static __noinline __u64 pf_match(struct pf_scratch *sc, struct pf_config *cfg)
{
	const struct pf_pkt *p = &sc->p;
	int frag = p->fragment;
	int tcp = p->proto == PROTO_TCP && !frag;
	int ports = (p->proto == PROTO_TCP || p->proto == PROTO_UDP) && !frag;
	int icmp = (p->proto == (p->af == PF_INET ? PROTO_ICMP : PROTO_ICMPV6)) && !frag;
	__u32 proto = (__u32)p->af * 256 + p->proto;
	__u32 sport = ports ? p->sport : PF_NO_PORTS;
	__u32 dport = ports ? p->dport : PF_NO_PORTS;
	__u32 flags = tcp ? p->tcp_flags : PF_NO_FLAGS;
	__u32 icmpi = icmp ? (__u32)p->af * 65536 + (__u32)p->icmp_type * 256 + p->icmp_code
			   : PF_NO_ICMP;
	__u32 fragi = !frag ? 0 : p->proto == PROTO_TCP ? 1 : 2;
	__u64 *quick = pf_bits_of(cfg->quick);
	if (!quick)
		return pf_opaque(0);
	__u64 *vdir = pf_bits_of(sc->dir == PF_IN ? cfg->dir[0] : cfg->dir[1]);
	if (!vdir)
		return pf_opaque(0);
	__u64 *vfrag = pf_bits_of(cfg->frag[fragi]);
	if (!vfrag)
		return pf_opaque(0);
	__u64 *vproto = pf_vector(PF_CL_PROTO + proto);
	if (!vproto)
		return pf_opaque(0);
	__u64 *vsrc = pf_addr_vector(&pf_src4, &pf_src6, p->src, p->af);
	if (!vsrc)
		return pf_opaque(0);
	__u64 *vdst = pf_addr_vector(&pf_dst4, &pf_dst6, p->dst, p->af);
	if (!vdst)
		return pf_opaque(0);
	__u64 *vsport = pf_vector(PF_CL_SPORT + sport);
	if (!vsport)
		return pf_opaque(0);
	__u64 *vdport = pf_vector(PF_CL_DPORT + dport);
	if (!vdport)
		return pf_opaque(0);
	__u64 *vflags = pf_vector(PF_CL_TCPFLAGS + flags);
	if (!vflags)
		return pf_opaque(0);
	__u64 *vicmp = pf_vector(PF_CL_ICMP + icmpi);
	if (!vicmp)
		return pf_opaque(0);
	__u64 *vtos = pf_vector(PF_CL_TOS + p->tos);
	if (!vtos)
		return pf_opaque(0);
	__u32 nwords = cfg->nwords;
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < PF_MAX_WORDS; i++) {
		if (i >= nwords)
			return i;
		__u64 m = vdir[i] & vfrag[i] & vproto[i] & vsrc[i] & vdst[i] & vsport[i] &
			  vdport[i] & vflags[i] & vicmp[i] & vtos[i];
		__u64 q = m & quick[i];
		if (q) {
			sc->rule = i * 64 + pf_lowest(q);
			sc->stop = sc->rule;
			return PF_QUICK_FOUND;
		}
		sc->m[i] = m;
	}
	return PF_MAX_WORDS;
}

/* The last matching rule of the `n` words pf_match left (`sc->rule`). */
static __noinline __u64 pf_last(struct pf_scratch *sc, __u64 n)
{
#pragma clang loop unroll(full)
	for (__u32 k = 0; k < PF_MAX_WORDS; k++) {
		if (k >= n)
			break;
		__u32 i = (n - 1 - k) & (PF_MAX_WORDS - 1);
		__u64 m = sc->m[i];
		if (m) {
			sc->rule = i * 64 + pf_highest(m);
			return pf_opaque(0);
		}
	}
	return pf_opaque(0);
}

/* pf's winner among the rules that match (`sc->rule`; PF_NO_RULE: none) and where the
 * evaluation ended (`sc->stop`: a quick rule's index, else PF_DEFAULT_SLOT). */
static __noinline __u64 pf_classify(struct pf_scratch *sc, struct pf_config *cfg)
{
	sc->rule = PF_NO_RULE;
	sc->stop = PF_DEFAULT_SLOT;
	__u64 r = pf_forget(pf_match(sc, cfg), sc->zero, 255);
	if (r & PF_QUICK_FOUND)
		return pf_opaque(0);
	return pf_last(sc, r & 127);
}

/* The rules (pf_test_rule): the winner's action; `keep state` creates the state. */
static __noinline __u64 pf_rules_step(void *data, void *end, struct pf_scratch *sc,
				      struct pf_config *cfg, struct pf_counters *c)
{
	pf_used(pf_classify(sc, cfg));
	__u32 stop = sc->stop;
	struct pf_rule_counters *sr = bpf_map_lookup_elem(&pf_rule_counters, &stop);
	if (sr)
		sr->stops++;
	__u32 rule = sc->rule;
	__u32 rflags = 0;
	if (rule != PF_NO_RULE) {
		struct pf_rule *r = bpf_map_lookup_elem(&pf_rules, &rule);
		if (r)
			rflags = r->flags;
	}
	sc->logged = (rflags & PF_R_LOG) != 0;
	if (rflags & PF_R_BLOCK) {
		sc->action = PF_DROP;
		return pf_opaque(0);
	}
	struct pf_pkt *p = &sc->p;
	if (!(rflags & PF_R_KEEP) || p->fragment || p->icmp_error)
		return pf_opaque(0);
	/* keep state: pf_create_state. */
	struct pf_state *ns = &sc->ns;
	__builtin_memset(ns, 0, sizeof(*ns));
	if (p->proto == PROTO_ICMP || p->proto == PROTO_ICMPV6) {
		__u16 id = 0;
		__u32 l4 = p->l4;
		if (l4 <= PF_MAX_OFF) {
			__u8 *t = data + pf_forget(l4, sc->zero, PF_MAX_OFF);
			if ((void *)(t + 8) <= end)
				id = pf_be16(t + 4);
		}
		pf_key(&sc->key, p, id, id, sc->dir);
		ns->timeout = PFTM_ICMP_FIRST;
	} else {
		pf_key(&sc->key, p, p->sport, p->dport, sc->dir);
		if (p->proto == PROTO_TCP) {
			pf_used(pf_tcp_create(ns, sc));
		} else {
			ns->src.state = PFUDPS_SINGLE;
			ns->timeout = p->proto == PROTO_UDP ? PFTM_UDP_FIRST : PFTM_OTHER_FIRST;
		}
	}
	ns->creation = sc->now;
	ns->last = sc->now;
	ns->packets[0] = 1;
	ns->bytes[0] = p->len;
	ns->rule = rule;
	ns->direction = sc->dir;
	ns->ifindex = sc->ifindex;
	ns->flags = ((rflags & PF_R_SLOPPY) ? PF_S_SLOPPY : 0) |
		    ((rflags & PF_R_LOG) ? PF_S_LOG : 0) | ((rflags & PF_R_LOG_ALL) ? PF_S_LOG_ALL : 0);
	if (bpf_map_update_elem(&pf_states, &sc->key, ns, BPF_NOEXIST) == 0) {
		c->inserts++;
		struct pf_rule_counters *rc = bpf_map_lookup_elem(&pf_rule_counters, &rule);
		if (rc)
			rc->states++;
	} else {
		/* Another CPU created it since the lookup: pf's state-insert failure. */
		sc->action = PF_DROP;
		sc->reason = PFRES_STATEINS;
	}
	return pf_opaque(0);
}

/* ---- counters, pflog, the verdict -------------------------------------------------------- */

/* A pflog record: the decision and the first PF_LOG_SNAP bytes from the IP header on. */
static __noinline __u64 pf_log_packet(void *data, void *end, struct pf_scratch *sc,
				      struct pf_counters *c)
{
	struct pf_log *rec = bpf_ringbuf_reserve(&pf_log, sizeof(struct pf_log), 0);
	if (!rec) {
		c->log_lost++;
		return pf_opaque(0);
	}
	rec->ts_ns = bpf_ktime_get_ns();
	rec->rule = sc->rule;
	rec->len = sc->p.len;
	rec->ifindex = sc->ifindex;
	rec->af = sc->p.af;
	rec->action = sc->action;
	rec->reason = sc->reason;
	rec->dir = sc->dir;
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	__u32 n = 0;
	__u8 *ip = data + pf_forget(sc->p.l3, sc->zero, PF_L3_MASK);
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < PF_LOG_SNAP; i++) {
		if ((void *)(ip + i + 1) > end)
			break;
		rec->data[i] = ip[i];
		n = i + 1;
	}
	rec->caplen = n;
	bpf_ringbuf_submit(rec, 0);
	return pf_opaque(0);
}

/* The counters of the decision, its pflog record; the verdict. */
static __always_inline __u64 pf_finish(void *data, void *end, struct pf_scratch *sc,
				  struct pf_counters *c, __u64 judged)
{
	__u32 d = sc->dir & 1;
	__u32 len = sc->p.len;
	__u32 reason = sc->reason;
	/* pf counts a reason for every decision but a state's pass. */
	if (reason < PFRES_MAX && !(sc->by_state && sc->action == PF_PASS))
		c->reasons[reason]++;
	if (sc->action == PF_DROP) {
		c->packets[d][1]++;
		c->bytes[d][1] += len;
	} else {
		c->packets[d][0]++;
		c->bytes[d][0] += len;
	}
	if (judged) {
		__u32 rule = sc->rule;
		__u32 slot = rule == PF_NO_RULE ? PF_DEFAULT_SLOT : rule;
		struct pf_rule_counters *rc = bpf_map_lookup_elem(&pf_rule_counters, &slot);
		if (rc) {
			rc->packets[d]++;
			rc->bytes[d] += len;
		}
	}
	if (sc->logged)
		pf_used(pf_log_packet(data, end, sc, c));
	return sc->action == PF_DROP ? PF_DROP : PF_PASS;
}

/* pf_test: PF_PASS or PF_DROP for the frame `data`..`end` of `wire` bytes. */
static __always_inline __u64 pf_test(void *data, void *end, __u32 wire, __u32 dir, __u32 ifindex)
{
	__u32 zero = 0;
	struct pf_scratch *sc = bpf_map_lookup_elem(&pf_scratch, &zero);
	struct pf_config *cfg = bpf_map_lookup_elem(&pf_config, &zero);
	struct pf_counters *c = bpf_map_lookup_elem(&pf_counters, &zero);
	if (!sc || !cfg || !c)
		return PF_PASS;
	sc->zero = cfg->zero;
	sc->wire = wire;
	sc->dir = dir;
	sc->ifindex = ifindex;
	sc->rule = PF_NO_RULE;
	sc->stop = PF_DEFAULT_SLOT;
	sc->action = PF_PASS;
	sc->logged = 0;
	sc->by_state = 0;
	sc->now = 0;
	__u64 r = pf_forget(pf_parse(data, end, sc), sc->zero, 3);
	if (r == PF_NOT_IP) {
		c->not_ip++;
		return PF_PASS;
	}
	__u64 judged = 0;
	if (r == PF_PARSED) {
		judged = 1;
		sc->reason = PFRES_MATCH;
		if (pf_forget(pf_states_step(data, end, sc, cfg, c), sc->zero, 1) == 0)
			pf_used(pf_rules_step(data, end, sc, cfg, c));
	} else {
		sc->action = PF_DROP;
	}
	return pf_finish(data, end, sc, c, judged);
}

/* ---- entry points ----------------------------------------------------------------------- */

SEC("xdp")
int pf_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 v = pf_test(data, end, (__u32)(end - data), PF_IN, ctx->ingress_ifindex);
	return v == PF_PASS ? XDP_PASS : XDP_DROP;
}

SEC("tc/ingress")
int pf_tc_in(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u64 v = pf_test(data, end, skb->len, PF_IN, skb->ifindex);
	return v == PF_PASS ? TC_ACT_OK : TC_ACT_SHOT;
}

SEC("tc/egress")
int pf_tc_out(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u64 v = pf_test(data, end, skb->len, PF_OUT, skb->ifindex);
	return v == PF_PASS ? TC_ACT_OK : TC_ACT_SHOT;
}

char _license[] SEC("license") = "GPL";
