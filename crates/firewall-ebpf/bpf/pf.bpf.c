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
 * CPU; pflog records go through a ring buffer.
 *
 * Build (the object is committed beside this file):
 *   clang -O2 -g -target bpf -I/usr/include/x86_64-linux-gnu -c pf.bpf.c -o pf.bpf.o */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)BPF_FUNC_map_update_elem;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size,
				    __u64 flags) = (void *)BPF_FUNC_ringbuf_reserve;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)BPF_FUNC_ringbuf_submit;

#include "pf.bpf.h"
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

static __always_inline __u32 pf_class_of(__u32 index)
{
	__u32 *c = bpf_map_lookup_elem(&pf_class, &index);
	return c ? *c : 0;
}

static __always_inline __u32 pf_addr_class(void *trie4, void *trie6, const __u8 *addr, __u8 af)
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
	return c ? *c : 0;
}

static __always_inline __u64 *pf_bits_of(__u32 class)
{
	return bpf_map_lookup_elem(&pf_bits, &class);
}

/* The deciding rule's index (PF_NO_RULE: none matches) and, in `*stop`, where the evaluation
 * ended (a quick rule's index, else PF_DEFAULT_SLOT). */
static __always_inline __u32 pf_classify(const struct pf_config *cfg, const struct pf_pkt *p,
					 __u32 dir, __u32 *stop)
{
	__u32 proto = (__u32)p->af * 256 + p->proto;
	int tcp = p->proto == PROTO_TCP && !p->fragment;
	int ports = (p->proto == PROTO_TCP || p->proto == PROTO_UDP) && !p->fragment;
	int icmp = (p->proto == PROTO_ICMP || p->proto == PROTO_ICMPV6) && !p->fragment;
	__u32 sport = ports ? p->sport : PF_NO_PORTS;
	__u32 dport = ports ? p->dport : PF_NO_PORTS;
	__u32 flags = tcp ? p->tcp_flags : PF_NO_FLAGS;
	__u32 icmpi = icmp ? (__u32)p->af * 65536 + (__u32)p->icmp_type * 256 + p->icmp_code
			   : PF_NO_ICMP;
	*stop = PF_DEFAULT_SLOT;
	__u64 *quick = pf_bits_of(cfg->quick);
	__u64 *vdir = pf_bits_of(dir == PF_IN ? cfg->dir[0] : cfg->dir[1]);
	__u64 *vfrag = pf_bits_of(p->fragment ? cfg->frag[1] : cfg->frag[0]);
	__u64 *vproto = pf_bits_of(pf_class_of(PF_CL_PROTO + proto));
	__u64 *vsrc = pf_bits_of(pf_addr_class(&pf_src4, &pf_src6, p->src, p->af));
	__u64 *vdst = pf_bits_of(pf_addr_class(&pf_dst4, &pf_dst6, p->dst, p->af));
	__u64 *vsport = pf_bits_of(pf_class_of(PF_CL_SPORT + sport));
	__u64 *vdport = pf_bits_of(pf_class_of(PF_CL_DPORT + dport));
	__u64 *vflags = pf_bits_of(pf_class_of(PF_CL_TCPFLAGS + flags));
	__u64 *vicmp = pf_bits_of(pf_class_of(PF_CL_ICMP + icmpi));
	__u64 *vtos = pf_bits_of(pf_class_of(PF_CL_TOS + p->tos));
	if (!quick || !vdir || !vfrag || !vproto || !vsrc || !vdst || !vsport || !vdport ||
	    !vflags || !vicmp || !vtos)
		return PF_NO_RULE;
	__u32 nwords = cfg->nwords;
	__u32 last = PF_NO_RULE;
	for (__u32 i = 0; i < PF_MAX_WORDS; i++) {
		if (i >= nwords)
			break;
		__u64 m = vdir[i] & vfrag[i] & vproto[i] & vsrc[i] & vdst[i] & vsport[i] &
			  vdport[i] & vflags[i] & vicmp[i] & vtos[i];
		if (!m)
			continue;
		__u64 q = m & quick[i];
		if (q) {
			__u32 r = i * 64 + pf_lowest(q);
			*stop = r;
			return r;
		}
		last = i * 64 + pf_highest(m);
	}
	return last;
}

/* ---- counters and pflog ----------------------------------------------------------------- */

static __always_inline struct pf_counters *pf_counters_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&pf_counters, &zero);
}

static __always_inline void pf_count_reason(struct pf_counters *c, __u32 reason)
{
	if (c && reason < PFRES_MAX)
		c->reasons[reason]++;
}

/* Counts a packet on rule `rule` (PF_NO_RULE: the default rule's slot). */
static __always_inline struct pf_rule_counters *pf_rule_count(__u32 rule, __u32 dir, __u32 len)
{
	__u32 slot = rule == PF_NO_RULE ? PF_DEFAULT_SLOT : rule;
	struct pf_rule_counters *rc = bpf_map_lookup_elem(&pf_rule_counters, &slot);
	if (rc) {
		rc->packets[dir & 1]++;
		rc->bytes[dir & 1] += len;
	}
	return rc;
}

/* A pflog record: the decision and the first PF_LOG_SNAP bytes from the IP header on. */
static __always_inline void pf_log_packet(void *data, void *end, const struct pf_pkt *p,
					  __u32 rule, __u8 action, __u8 reason, __u32 dir,
					  __u32 ifindex, struct pf_counters *c)
{
	struct pf_log *rec = bpf_ringbuf_reserve(&pf_log, sizeof(struct pf_log), 0);
	if (!rec) {
		if (c)
			c->log_lost++;
		return;
	}
	rec->ts_ns = bpf_ktime_get_ns();
	rec->rule = rule;
	rec->len = p->len;
	rec->ifindex = ifindex;
	rec->af = p->af;
	rec->action = action;
	rec->reason = reason;
	rec->dir = dir;
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	__u32 n = 0;
	__u32 l3 = p->l3;
	if (l3 <= 22) {
		__u8 *ip = data + l3;
#pragma clang loop unroll(full)
		for (__u32 i = 0; i < PF_LOG_SNAP; i++) {
			if ((void *)(ip + i + 1) > end)
				break;
			rec->data[i] = ip[i];
			n = i + 1;
		}
	}
	rec->caplen = n;
	bpf_ringbuf_submit(rec, 0);
}

/* ---- pf_test ---------------------------------------------------------------------------- */

#define PF_PASS 0
#define PF_DROP 1

/* The state key of a packet with these addresses and ports going `dir`. */
static __always_inline void pf_key(struct pf_state_key *k, __u8 af, __u8 proto, const __u8 *src,
				   const __u8 *dst, __u16 sport, __u16 dport, __u32 dir)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->af = af;
	k->proto = proto;
	if (dir == PF_IN) {
		__builtin_memcpy(k->addr[0], src, 16);
		__builtin_memcpy(k->addr[1], dst, 16);
		k->port[0] = sport;
		k->port[1] = dport;
	} else {
		__builtin_memcpy(k->addr[1], src, 16);
		__builtin_memcpy(k->addr[0], dst, 16);
		k->port[1] = sport;
		k->port[0] = dport;
	}
}

static __always_inline __u64 pf_now(void)
{
	return bpf_ktime_get_ns() / 1000000000ULL;
}

/* The live state of `k`: one past its timeout is removed and not returned (as
 * StateTable::find). */
static __always_inline struct pf_state *pf_find(const struct pf_state_key *k,
						 const struct pf_config *cfg, __u64 now,
						 struct pf_counters *c)
{
	if (c)
		c->searches++;
	struct pf_state *s = bpf_map_lookup_elem(&pf_states, k);
	if (!s)
		return 0;
	__u32 t = s->timeout;
	__u64 timeout = t < PFTM_MAX ? cfg->timeouts[t] : 0;
	if (s->last + timeout <= now) {
		if (bpf_map_delete_elem(&pf_states, k) == 0 && c)
			c->removals++;
		return 0;
	}
	return s;
}

/* Counts a packet on its state (from the creating side, or the other). */
static __always_inline void pf_state_count(struct pf_state *s, int from_src, __u32 len)
{
	int i = from_src ? 0 : 1;
	s->packets[i]++;
	s->bytes[i] += len;
}

/* The ICMP error's quoted packet, as the key of its state (track.rs `quoted`); 0 when it
 * quotes nothing pf can key. `*seq`: a quoted TCP segment's sequence number. */
static __always_inline int pf_quoted_key(void *data, void *end, const struct pf_pkt *p,
					 __u32 dir, struct pf_state_key *k, __u32 *seq)
{
	if (p->l4_len < 9 || p->l4 > PF_MAX_OFF)
		return 0;
	__u32 ilen = p->l4_len - 8;
	__u8 *inner = data + p->l4 + 8;
	if ((void *)(inner + 1) > end)
		return 0;
	__u8 src[16] = {}, dst[16] = {};
	__u8 proto;
	__u32 thl;
	if (p->af == PF_INET && (inner[0] >> 4) == 4) {
		thl = (inner[0] & 0x0f) * 4;
		if (thl < 20 || ilen < thl || (void *)(inner + 20) > end)
			return 0;
		if (pf_be16(inner + 6) & 0x1fff)
			return 0;
		proto = inner[9];
		__builtin_memcpy(src, inner + 12, 4);
		__builtin_memcpy(dst, inner + 16, 4);
	} else if (p->af == PF_INET6 && (inner[0] >> 4) == 6) {
		if (ilen < 40 || (void *)(inner + 40) > end)
			return 0;
		thl = 40;
		proto = inner[6];
		__builtin_memcpy(src, inner + 8, 16);
		__builtin_memcpy(dst, inner + 24, 16);
	} else {
		return 0;
	}
	__u32 tlen = ilen - thl;
	__u8 *t = inner + thl;
	__u16 sport = 0, dport = 0;
	*seq = 0;
	switch (proto) {
	case PROTO_TCP:
		if (tlen < 8 || (void *)(t + 8) > end)
			return 0;
		sport = pf_be16(t);
		dport = pf_be16(t + 2);
		*seq = pf_be32(t + 4);
		break;
	case PROTO_UDP:
		if (tlen < 4 || (void *)(t + 4) > end)
			return 0;
		sport = pf_be16(t);
		dport = pf_be16(t + 2);
		break;
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		if (tlen < 6 || (void *)(t + 6) > end)
			return 0;
		sport = pf_be16(t + 4);
		dport = sport;
		break;
	default:
		break;
	}
	/* The quoted packet went the other way. */
	pf_key(k, p->af, proto, src, dst, sport, dport, dir == PF_IN ? PF_OUT : PF_IN);
	return 1;
}

/* ICMP types: whether an error (icmp_kind). */
static __always_inline int pf_icmp_error(__u8 af, __u8 type)
{
	if (af == PF_INET)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/* pf_test: PF_PASS or PF_DROP for the frame `data`..`end` of `wire` bytes. */
static __always_inline int pf_test(void *data, void *end, __u32 wire, __u32 dir, __u32 ifindex)
{
	struct pf_counters *c = pf_counters_get();
	struct pf_pkt p = {};
	int parsed = pf_parse(data, end, wire, &p);
	if (parsed == PF_NOT_IP) {
		if (c)
			c->not_ip++;
		return PF_PASS;
	}
	if (parsed == PF_REFUSED) {
		pf_count_reason(c, p.reason);
		if (c) {
			c->packets[dir & 1][1]++;
			c->bytes[dir & 1][1] += p.len;
		}
		return PF_DROP;
	}
	__u32 zero = 0;
	struct pf_config *cfg = bpf_map_lookup_elem(&pf_config, &zero);
	if (!cfg)
		return PF_PASS;

	int icmp = p.proto == PROTO_ICMP || p.proto == PROTO_ICMPV6;
	int icmp_error = icmp && pf_icmp_error(p.af, p.icmp_type);
	struct pf_seg seg = {};
	struct pf_state_key key;
	__u64 now = 0;
	__u32 rule;
	__u8 action = PF_PASS;
	__u8 reason = PFRES_MATCH;
	int logged;

	/* The state table first. */
	if (!p.fragment) {
		struct pf_state *s = 0;
		int found = 0;
		now = pf_now();
		if (p.proto == PROTO_TCP) {
			pf_segment(data, end, &p, &seg);
			pf_key(&key, p.af, p.proto, p.src, p.dst, p.sport, p.dport, dir);
			s = pf_find(&key, cfg, now, c);
			if (s && (seg.flags & (TH_SYN | TH_ACK)) == TH_SYN &&
			    s->src.state >= TCPS_FIN_WAIT_2 && s->dst.state >= TCPS_FIN_WAIT_2) {
				/* A new connection on a closed state's key: the old state goes and the
				 * rules judge the SYN. */
				if (bpf_map_delete_elem(&pf_states, &key) == 0 && c)
					c->removals++;
				s = 0;
			}
			if (s) {
				int from_src = s->direction == dir;
				int bad;
				if (s->flags & PF_S_SLOPPY) {
					pf_tcp_sloppy(s, &seg, from_src, now);
					bad = 0;
				} else {
					bad = pf_tcp_full(s, &seg, from_src, now);
				}
				pf_state_count(s, from_src, p.len);
				if (bad) {
					action = PF_DROP;
					reason = PFRES_BADSTATE;
				}
				found = 1;
			}
		} else if (icmp && icmp_error) {
			struct pf_state_key q;
			__u32 seq = 0;
			if (pf_quoted_key(data, end, &p, dir, &q, &seq)) {
				s = pf_find(&q, cfg, now, c);
				if (s) {
					/* The quoted packet's sender went the quoted way: the state's
					 * creating side if the state was created going that way. */
					int sender_is_src = s->direction != dir;
					pf_state_count(s, s->direction == dir, p.len);
					if (q.proto == PROTO_TCP && !pf_quoted_fits(s, seq, sender_is_src)) {
						action = PF_DROP;
						reason = PFRES_BADSTATE;
					}
					found = 1;
				}
			}
		} else {
			__u16 sport = p.sport, dport = p.dport;
			if (icmp) {
				/* An ICMP query: its id in both ports. */
				__u8 *t = data + (p.l4 & 0xffff);
				if (p.l4 <= PF_MAX_OFF && (void *)(t + 8) <= end) {
					sport = pf_be16(t + 4);
					dport = sport;
				}
			}
			pf_key(&key, p.af, p.proto, p.src, p.dst, sport, dport, dir);
			s = pf_find(&key, cfg, now, c);
			if (s) {
				int from_src = s->direction == dir;
				if (icmp) {
					s->timeout = PFTM_ICMP_ERROR;
					s->last = now;
				} else {
					pf_datagram(s, from_src, p.proto, now);
				}
				pf_state_count(s, from_src, p.len);
				found = 1;
			}
		}
		if (found) {
			rule = s->rule;
			logged = (s->flags & PF_S_LOG_ALL) != 0;
			pf_rule_count(rule, dir, p.len);
			if (action == PF_DROP)
				pf_count_reason(c, reason);
			goto done;
		}
	}

	/* The rules. */
	__u32 stop;
	rule = pf_classify(cfg, &p, dir, &stop);
	{
		struct pf_rule_counters *sc = bpf_map_lookup_elem(&pf_rule_counters, &stop);
		if (sc)
			sc->stops++;
	}
	__u32 rflags = 0;
	if (rule != PF_NO_RULE) {
		struct pf_rule *r = bpf_map_lookup_elem(&pf_rules, &rule);
		if (r)
			rflags = r->flags;
	}
	struct pf_rule_counters *rc = pf_rule_count(rule, dir, p.len);
	logged = (rflags & PF_R_LOG) != 0;
	if (rflags & PF_R_BLOCK) {
		action = PF_DROP;
	} else if ((rflags & PF_R_KEEP) && !p.fragment && !icmp_error) {
		/* keep state: pf_create_state. */
		struct pf_state ns = {};
		if (p.proto == PROTO_ICMP || p.proto == PROTO_ICMPV6) {
			__u8 *t = data + (p.l4 & 0xffff);
			__u16 id = 0;
			if (p.l4 <= PF_MAX_OFF && (void *)(t + 8) <= end)
				id = pf_be16(t + 4);
			pf_key(&key, p.af, p.proto, p.src, p.dst, id, id, dir);
			ns.timeout = PFTM_ICMP_FIRST;
		} else {
			pf_key(&key, p.af, p.proto, p.src, p.dst, p.sport, p.dport, dir);
			if (p.proto == PROTO_TCP) {
				pf_tcp_create(&ns, &seg);
			} else {
				ns.src.state = PFUDPS_SINGLE;
				ns.timeout = p.proto == PROTO_UDP ? PFTM_UDP_FIRST : PFTM_OTHER_FIRST;
			}
		}
		ns.creation = now;
		ns.last = now;
		ns.packets[0] = 1;
		ns.bytes[0] = p.len;
		ns.rule = rule;
		ns.direction = dir;
		ns.ifindex = ifindex;
		ns.flags = ((rflags & PF_R_SLOPPY) ? PF_S_SLOPPY : 0) |
			   ((rflags & PF_R_LOG) ? PF_S_LOG : 0) |
			   ((rflags & PF_R_LOG_ALL) ? PF_S_LOG_ALL : 0);
		if (bpf_map_update_elem(&pf_states, &key, &ns, BPF_NOEXIST) == 0) {
			if (c)
				c->inserts++;
			if (rc)
				rc->states++;
		} else {
			/* Another CPU created it since the lookup: pf's state-insert failure. */
			action = PF_DROP;
			reason = PFRES_STATEINS;
		}
	}
	pf_count_reason(c, reason);

done:
	if (c) {
		c->packets[dir & 1][action]++;
		c->bytes[dir & 1][action] += p.len;
	}
	if (logged)
		pf_log_packet(data, end, &p, rule, action, reason, dir, ifindex, c);
	return action;
}

/* ---- entry points ----------------------------------------------------------------------- */

SEC("xdp")
int pf_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	int v = pf_test(data, end, (__u32)(end - data), PF_IN, ctx->ingress_ifindex);
	return v == PF_PASS ? XDP_PASS : XDP_DROP;
}

SEC("tc/ingress")
int pf_tc_in(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	int v = pf_test(data, end, skb->len, PF_IN, skb->ifindex);
	return v == PF_PASS ? TC_ACT_OK : TC_ACT_SHOT;
}

SEC("tc/egress")
int pf_tc_out(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	int v = pf_test(data, end, skb->len, PF_OUT, skb->ifindex);
	return v == PF_PASS ? TC_ACT_OK : TC_ACT_SHOT;
}

char _license[] SEC("license") = "GPL";
