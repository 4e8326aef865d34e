/* Protocol tracking of a state's packets, ported from sift-firewall's track.rs (pf's
 * pf_tcp_track_full and pf_tcp_track_sloppy, UDP and other protocols' pseudo-states, ICMP
 * queries, the TCP segment an ICMP error quotes). Modulated and proxied states are refused
 * before a rule set reaches the kernel, so no sequence number is ever shifted here. */
#ifndef PF_TRACK_H
#define PF_TRACK_H

#include "pf_common.h"

#define PF_WSCALE_FLAG 0x80
#define PF_WSCALE_MASK 0x0f
#define PF_MAX_WINSHIFT 14
#define PF_MAXACKWINDOW (0xffff + 1500)

#define SEQ_GEQ(a, b) ((__s32)((__u32)(a) - (__u32)(b)) >= 0)
#define SEQ_GT(a, b) ((__s32)((__u32)(a) - (__u32)(b)) > 0)

/* What one step of the TCP option walk says. */
#define OPT_MORE 0
#define OPT_STOP 1

/* One TCP option of a SYN (pf_get_wscale), from the copy in `sc->opt`: the window scale is
 * noted, the walk goes on or stops. The path that goes on is branch-free. */
static __noinline __u64 pf_opt_step(struct pf_scratch *sc)
{
	__u64 i = sc->oi;
	__u64 olen = sc->olen;
	if (i >= olen || i >= 40)
		return OPT_STOP;
	__u64 kind = sc->opt[i & 63];
	if (kind == 0)
		return OPT_STOP;
	__u64 nop = pf_eq(kind, 1);
	/* The length byte (0 past the options: their end). */
	__u64 l = sc->opt[(i + 1) & 63];
	if ((1 - nop) & pf_lt(l, 2))
		return OPT_STOP;
	__u64 ws = pf_eq(kind, 3) & (1 - pf_lt(l, 3)) & pf_lt(i + 2, olen);
	__u64 shift = sc->opt[(i + 2) & 63];
	shift = pf_select(pf_lt(PF_MAX_WINSHIFT, shift), PF_MAX_WINSHIFT, shift);
	sc->seg.wscale = pf_select(ws, shift | PF_WSCALE_FLAG, sc->seg.wscale);
	sc->oi = i + pf_select(nop, 1, l);
	return OPT_MORE;
}

/* A SYN's options (`olen` bytes at `t + 20`) into `sc->opt`, zeros after them. */
static __noinline __u64 pf_opt_copy(void *data, void *end, struct pf_scratch *sc)
{
	__builtin_memset(sc->opt, 0, sizeof(sc->opt));
	__u32 olen = sc->olen;
	__u32 l4 = sc->p.l4;
	if (l4 > PF_MAX_OFF)
		return pf_opaque(0);
	__u8 *o = data + pf_forget(l4, sc->zero, PF_MAX_OFF) + 20;
	/* A loop of one path (each test ends it). */
	for (__u32 k = 0; k < 40; k++) {
		if (k >= olen || (void *)(o + k + 1) > end)
			break;
		sc->opt[k] = o[k];
	}
	return pf_opaque(0);
}

/* A SYN's options (`sc->olen` bytes): the window scale into `sc->seg`. */
static __noinline __u64 pf_opt_walk(void *data, void *end, struct pf_scratch *sc)
{
	sc->oi = 0;
	pf_used(pf_opt_copy(data, end, sc));
#pragma clang loop unroll(full)
	for (__u32 n = 0; n < 40; n++) {
		if (pf_forget(pf_opt_step(sc), sc->zero, 1) == OPT_STOP)
			break;
	}
	return pf_opaque(0);
}

/* The segment at `sc->p.l4` into `sc->seg` (track.rs `Segment::of`). */
static __always_inline void pf_segment(void *data, void *end, struct pf_scratch *sc)
{
	struct pf_seg *s = &sc->seg;
	__builtin_memset(s, 0, sizeof(*s));
	__u32 l4 = sc->p.l4;
	if (l4 > PF_MAX_OFF)
		return;
	__u8 *t = data + pf_forget(l4, sc->zero, PF_MAX_OFF);
	if ((void *)(t + 20) > end)
		return;
	__u32 hlen = (t[12] >> 4) * 4;
	s->seq = pf_be32(t + 4);
	s->ack = pf_be32(t + 8);
	s->win = pf_be16(t + 14);
	s->flags = t[13];
	s->len = sc->p.l4_len - hlen;
	if ((t[13] & TH_SYN) && hlen > 20) {
		sc->olen = hlen - 20;
		pf_used(pf_opt_walk(data, end, sc));
	}
}

/* The TCP timeout the peers' states call for. */
static __always_inline __u8 pf_tcp_timeout(__u8 a, __u8 b)
{
	if (a >= TCPS_FIN_WAIT_2 && b >= TCPS_FIN_WAIT_2)
		return PFTM_TCP_CLOSED;
	if (a >= TCPS_CLOSING && b >= TCPS_CLOSING)
		return PFTM_TCP_FIN_WAIT;
	if (a < TCPS_ESTABLISHED || b < TCPS_ESTABLISHED)
		return PFTM_TCP_OPENING;
	if (a >= TCPS_CLOSING || b >= TCPS_CLOSING)
		return PFTM_TCP_CLOSING;
	return PFTM_TCP_ESTABLISHED;
}

/* The peers of a new TCP state `s` (pf_create_state for TCP). */
static __noinline __u64 pf_tcp_create(struct pf_state *s, struct pf_scratch *sc)
{
	const struct pf_seg *seg = &sc->seg;
	struct pf_peer *src = &s->src;
	src->seqlo = seg->seq;
	src->seqhi = seg->seq + seg->len + 1;
	if (seg->flags & TH_SYN) {
		src->seqhi++;
		src->wscale = seg->wscale;
	}
	src->max_win = seg->win ? seg->win : 1;
	__u8 shift = src->wscale & PF_WSCALE_MASK;
	if (shift) {
		/* Remove the scale factor from the initial window. */
		__u32 win = (__u32)src->max_win + (1u << shift);
		src->max_win = (__u16)((win - 1) >> shift);
	}
	if (seg->flags & TH_FIN)
		src->seqhi++;
	src->state = TCPS_SYN_SENT;
	s->dst.seqlo = 0;
	s->dst.seqhi = 1;
	s->dst.max_win = 1;
	s->dst.wscale = 0;
	s->dst.state = TCPS_CLOSED;
	s->timeout = PFTM_TCP_FIRST;
	return pf_opaque(0);
}

/* What an accepted segment moves (advance_window). */
static __always_inline void pf_advance(struct pf_peer *src, struct pf_peer *dst, __u16 win,
				       __u32 end, __u32 ack, __u8 sws)
{
	if (src->max_win < win)
		src->max_win = win;
	if (SEQ_GT(end, src->seqlo))
		src->seqlo = end;
	__u32 scaled = (__u32)win << sws;
	if (SEQ_GEQ(ack + scaled, dst->seqhi))
		dst->seqhi = ack + (scaled ? scaled : 1);
}

/* The peers' states from the flags (flag_transitions). */
static __noinline __u64 pf_transitions(struct pf_peer *src, struct pf_peer *dst, __u64 flags,
				       __u64 sloppy)
{
	if ((flags & TH_SYN) && src->state < TCPS_SYN_SENT)
		src->state = TCPS_SYN_SENT;
	if ((flags & TH_FIN) && src->state < TCPS_CLOSING)
		src->state = TCPS_CLOSING;
	if (flags & TH_ACK) {
		if (dst->state == TCPS_SYN_SENT) {
			dst->state = TCPS_ESTABLISHED;
		} else if (dst->state == TCPS_CLOSING) {
			dst->state = TCPS_FIN_WAIT_2;
		} else if (sloppy && src->state == TCPS_SYN_SENT && dst->state < TCPS_SYN_SENT) {
			/* Only one half of the connection is seen. */
			src->state = TCPS_ESTABLISHED;
			dst->state = TCPS_ESTABLISHED;
		} else if (sloppy && src->state == TCPS_CLOSING && dst->state == TCPS_ESTABLISHED &&
			   dst->seqlo == 0) {
			/* The close of a half connection. */
			dst->state = TCPS_CLOSING;
		}
	}
	if (flags & TH_RST) {
		src->state = TCPS_TIME_WAIT;
		dst->state = TCPS_TIME_WAIT;
	}
	return pf_opaque(0);
}

/* pf_tcp_track_sloppy: the peers' states from the flags alone. */
static __noinline __u64 pf_tcp_sloppy(struct pf_state *s, struct pf_peer *src,
				      struct pf_peer *dst, struct pf_scratch *sc)
{
	pf_used(pf_transitions(src, dst, sc->seg.flags, 1));
	s->timeout = pf_tcp_timeout(s->src.state, s->dst.state);
	s->last = sc->now;
	return pf_opaque(0);
}

/* The window a segment's numbers are judged against (the first half of pf_tcp_track_full,
 * inlined in it: it costs a call less per packet of an established connection):
 * the sender's first segment sets its side up; `sc->seg` gets the segment's end in `len`'s
 * place and the numbers as pf compares them. Returns the scale shifts (sws << 4 | dws). */
static __always_inline __u64 pf_tcp_window(struct pf_peer *src, struct pf_peer *dst,
				      struct pf_scratch *sc)
{
	struct pf_seg *seg = &sc->seg;
	__u8 flags = seg->flags;
	__u32 seq = seg->seq;
	__u16 win = seg->win;
	__u8 sws = 0, dws = 0;
	__u32 end = seq + seg->len;
	if (src->wscale && dst->wscale && !(flags & TH_SYN)) {
		sws = src->wscale & PF_WSCALE_MASK;
		dws = dst->wscale & PF_WSCALE_MASK;
	}
	if (flags & TH_SYN)
		end++;
	if (flags & TH_FIN)
		end++;
	if (src->seqlo == 0) {
		/* The first packet from this side. */
		if ((flags & TH_SYN) && (dst->wscale & PF_WSCALE_FLAG)) {
			src->wscale = seg->wscale;
			if (src->wscale & PF_WSCALE_FLAG) {
				/* Remove the scale factor from the initial window. */
				sws = src->wscale & PF_WSCALE_MASK;
				win = (__u16)(((__u32)win + (1u << sws) - 1) >> sws);
				dws = dst->wscale & PF_WSCALE_MASK;
			} else {
				/* The other side's window was scaled for nothing. */
				__u32 w = (__u32)dst->max_win << (dst->wscale & PF_WSCALE_MASK);
				dst->max_win = w > 0xffff ? 0xffff : (__u16)w;
				dst->wscale = 0;
			}
		}
		src->seqlo = seq;
		if (src->state < TCPS_SYN_SENT)
			src->state = TCPS_SYN_SENT;
		__u32 reach = (__u32)dst->max_win << dws;
		if (reach == 0)
			reach = 1;
		if (src->seqhi == 1 || SEQ_GEQ(end + reach, src->seqhi))
			src->seqhi = end + reach;
		if (win > src->max_win)
			src->max_win = win;
	}
	seg->win = win;
	seg->len = end;
	return ((__u64)sws << 4) | dws;
}

/* pf_tcp_track_full: 0 when the segment fits the windows (they and the peers' states move),
 * 1 for pf's state-mismatch. */
static __noinline __u64 pf_tcp_full(struct pf_state *s, struct pf_peer *src, struct pf_peer *dst,
				    struct pf_scratch *sc)
{
	__u64 shifts = pf_forget(pf_tcp_window(src, dst, sc), sc->zero, 0xff);
	struct pf_seg *seg = &sc->seg;
	__u8 sws = (shifts >> 4) & PF_WSCALE_MASK;
	__u8 dws = shifts & PF_WSCALE_MASK;
	__u8 flags = seg->flags;
	__u32 orig_seq = seg->seq;
	__u32 seq = seg->seq;
	__u32 end = seg->len;
	__u32 ack = seg->ack;
	__u16 win = seg->win;
	if (!(flags & TH_ACK)) {
		/* Let it pass the acknowledgement test. */
		ack = dst->seqlo;
	} else if ((ack == 0 && (flags & (TH_ACK | TH_RST)) == (TH_ACK | TH_RST)) ||
		   dst->state < TCPS_SYN_SENT) {
		/* Broken stacks acknowledge 0 in resets; nothing sent yet to acknowledge. */
		ack = dst->seqlo;
	}
	if (seq == end) {
		/* No data: ease the sequencing restrictions. */
		seq = src->seqlo;
		end = seq;
	}
	__s64 ackskew = (__s32)(dst->seqlo - ack);
	__u32 back = (__u32)dst->max_win << dws;
	if (SEQ_GEQ(src->seqhi, end) && SEQ_GEQ(seq, src->seqlo - back) &&
	    ackskew >= -(__s64)PF_MAXACKWINDOW && ackskew <= ((__s64)PF_MAXACKWINDOW << sws) &&
	    (!(flags & TH_RST) || orig_seq == src->seqlo || orig_seq == src->seqlo + 1 ||
	     orig_seq + 1 == src->seqlo)) {
		pf_advance(src, dst, win, end, ack, sws);
		pf_used(pf_transitions(src, dst, flags, 0));
		s->timeout = pf_tcp_timeout(src->state, dst->state);
		s->last = sc->now;
		return 0;
	}
	if ((dst->state < TCPS_SYN_SENT || dst->state >= TCPS_FIN_WAIT_2 ||
	     src->state >= TCPS_FIN_WAIT_2) &&
	    SEQ_GEQ(src->seqhi + PF_MAXACKWINDOW, end) &&
	    SEQ_GEQ(seq, src->seqlo - PF_MAXACKWINDOW)) {
		/* pf's loose path: SYNs shotgunned before the peer answers, a connection picked up
		 * after the table was flushed, stray packets after a close. */
		pf_advance(src, dst, win, end, ack, sws);
		if ((flags & TH_FIN) && src->state < TCPS_CLOSING)
			src->state = TCPS_CLOSING;
		if (flags & TH_RST) {
			src->state = TCPS_TIME_WAIT;
			dst->state = TCPS_TIME_WAIT;
		}
		return 0;
	}
	return 1;
}

/* A UDP or other protocol's packet on its state (PFUDPS_* / PFOTHERS_*). */
static __noinline __u64 pf_datagram(struct pf_state *s, struct pf_peer *src, struct pf_peer *dst,
				    struct pf_scratch *sc)
{
	if (src->state < PFUDPS_SINGLE)
		src->state = PFUDPS_SINGLE;
	if (dst->state == PFUDPS_SINGLE)
		dst->state = PFUDPS_MULTIPLE;
	int multiple = s->src.state == PFUDPS_MULTIPLE && s->dst.state == PFUDPS_MULTIPLE;
	if (sc->p.proto == PROTO_UDP)
		s->timeout = multiple ? PFTM_UDP_MULTIPLE : PFTM_UDP_SINGLE;
	else
		s->timeout = multiple ? PFTM_OTHER_MULTIPLE : PFTM_OTHER_SINGLE;
	s->last = sc->now;
	return pf_opaque(0);
}

/* Whether a quoted TCP segment's sequence number fits its sender's window
 * (quoted_tcp_fits): 1 or 0. */
static __noinline __u64 pf_quoted_fits(struct pf_state *s, struct pf_peer *src,
				       struct pf_peer *dst, struct pf_scratch *sc)
{
	if (s->flags & PF_S_SLOPPY)
		return 1;
	__u32 seq = sc->qseq;
	__u8 dws = (src->wscale && dst->wscale) ? (dst->wscale & PF_WSCALE_MASK) : 0;
	return SEQ_GEQ(src->seqhi, seq) &&
	       SEQ_GEQ(seq, src->seqlo - ((__u32)dst->max_win << dws));
}

#endif
