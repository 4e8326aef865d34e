/* Protocol tracking of a state's packets, ported from sift-firewall's track.rs (pf's
 * pf_tcp_track_full and pf_tcp_track_sloppy, UDP and other protocols' pseudo-states, ICMP
 * queries, the TCP segment an ICMP error quotes). Modulated and proxied states are refused
 * before a rule set reaches the kernel, so no sequence number is ever shifted here. */
#ifndef PF_TRACK_H
#define PF_TRACK_H

#define PF_WSCALE_FLAG 0x80
#define PF_WSCALE_MASK 0x0f
#define PF_MAX_WINSHIFT 14
#define PF_MAXACKWINDOW (0xffff + 1500)

#define SEQ_GEQ(a, b) ((__s32)((__u32)(a) - (__u32)(b)) >= 0)
#define SEQ_GT(a, b) ((__s32)((__u32)(a) - (__u32)(b)) > 0)

/* The TCP fields tracking reads (track.rs `Segment`). */
struct pf_seg {
	__u32 seq;
	__u32 ack;
	__u32 len;
	__u16 win;
	__u8 flags;
	__u8 wscale;
};

/* Reads the segment at `p->l4`; a SYN's window scale option as pf_get_wscale reads it. */
static __always_inline void pf_segment(void *data, void *end, struct pf_pkt *p, struct pf_seg *s)
{
	__u32 off = p->l4;
	s->seq = 0;
	s->ack = 0;
	s->len = 0;
	s->win = 0;
	s->flags = 0;
	s->wscale = 0;
	if (off > PF_MAX_OFF)
		return;
	__u8 *t = data + off;
	if ((void *)(t + 20) > end)
		return;
	__u32 hlen = (t[12] >> 4) * 4;
	s->seq = pf_be32(t + 4);
	s->ack = pf_be32(t + 8);
	s->win = pf_be16(t + 14);
	s->flags = t[13];
	s->len = p->l4_len - hlen;
	if (!(s->flags & TH_SYN) || hlen <= 20)
		return;
	/* The options: kind 0 ends them, 1 is one byte, others have a length of at least 2. */
	__u32 olen = hlen - 20;
	__u32 i = 0;
	for (__u32 n = 0; n < 40; n++) {
		if (i >= olen || i >= 40)
			break;
		__u8 *o = t + 20 + i;
		if ((void *)(o + 1) > end)
			break;
		__u8 kind = o[0];
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= olen || (void *)(o + 2) > end)
			break;
		__u8 l = o[1];
		if (l < 2)
			break;
		if (kind == 3 && l >= 3 && i + 2 < olen) {
			if ((void *)(o + 3) > end)
				break;
			__u8 shift = o[2];
			if (shift > PF_MAX_WINSHIFT)
				shift = PF_MAX_WINSHIFT;
			s->wscale = shift | PF_WSCALE_FLAG;
		}
		i += l;
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

/* The peers of a new TCP state (pf_create_state for TCP). */
static __always_inline void pf_tcp_create(struct pf_state *s, const struct pf_seg *seg)
{
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

/* The peers' states from the flags (flag_transitions); returns whether the handshake just
 * completed. */
static __always_inline int pf_transitions(struct pf_peer *src, struct pf_peer *dst, __u8 flags,
					  int sloppy)
{
	int established = 0;
	if ((flags & TH_SYN) && src->state < TCPS_SYN_SENT)
		src->state = TCPS_SYN_SENT;
	if ((flags & TH_FIN) && src->state < TCPS_CLOSING)
		src->state = TCPS_CLOSING;
	if (flags & TH_ACK) {
		if (dst->state == TCPS_SYN_SENT) {
			dst->state = TCPS_ESTABLISHED;
			if (src->state == TCPS_ESTABLISHED)
				established = 1;
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
	return established;
}

/* pf_tcp_track_sloppy. */
static __always_inline void pf_tcp_sloppy(struct pf_state *s, const struct pf_seg *seg,
					  int from_src, __u64 now)
{
	struct pf_peer *src = from_src ? &s->src : &s->dst;
	struct pf_peer *dst = from_src ? &s->dst : &s->src;
	pf_transitions(src, dst, seg->flags, 1);
	s->timeout = pf_tcp_timeout(s->src.state, s->dst.state);
	s->last = now;
}

/* pf_tcp_track_full: 0 when the segment fits the windows (they and the peers' states move),
 * -1 for pf's state-mismatch. */
static __always_inline int pf_tcp_full(struct pf_state *s, const struct pf_seg *seg,
				       int from_src, __u64 now)
{
	struct pf_peer *src = from_src ? &s->src : &s->dst;
	struct pf_peer *dst = from_src ? &s->dst : &s->src;
	__u8 flags = seg->flags;
	__u32 orig_seq = seg->seq;
	__u32 seq = seg->seq;
	__u32 ack = seg->ack;
	__u16 win = seg->win;
	__u8 sws = 0, dws = 0;
	__u32 end;
	if (src->wscale && dst->wscale && !(flags & TH_SYN)) {
		sws = src->wscale & PF_WSCALE_MASK;
		dws = dst->wscale & PF_WSCALE_MASK;
	}
	if (src->seqlo == 0) {
		/* The first packet from this side. */
		end = seq + seg->len;
		if (flags & TH_SYN) {
			end++;
			if (dst->wscale & PF_WSCALE_FLAG) {
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
		}
		if (flags & TH_FIN)
			end++;
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
	} else {
		end = seq + seg->len;
		if (flags & TH_SYN)
			end++;
		if (flags & TH_FIN)
			end++;
	}
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
	int in_window = SEQ_GEQ(src->seqhi, end) && SEQ_GEQ(seq, src->seqlo - back) &&
			ackskew >= -(__s64)PF_MAXACKWINDOW &&
			ackskew <= ((__s64)PF_MAXACKWINDOW << sws) &&
			(!(flags & TH_RST) || orig_seq == src->seqlo || orig_seq == src->seqlo + 1 ||
			 orig_seq + 1 == src->seqlo);
	if (in_window) {
		pf_advance(src, dst, win, end, ack, sws);
		pf_transitions(src, dst, flags, 0);
		s->timeout = pf_tcp_timeout(src->state, dst->state);
		s->last = now;
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
	return -1;
}

/* A UDP or other protocol's packet on its state (PFUDPS_* / PFOTHERS_*). */
static __always_inline void pf_datagram(struct pf_state *s, int from_src, __u8 proto, __u64 now)
{
	struct pf_peer *src = from_src ? &s->src : &s->dst;
	struct pf_peer *dst = from_src ? &s->dst : &s->src;
	if (src->state < PFUDPS_SINGLE)
		src->state = PFUDPS_SINGLE;
	if (dst->state == PFUDPS_SINGLE)
		dst->state = PFUDPS_MULTIPLE;
	int multiple = s->src.state == PFUDPS_MULTIPLE && s->dst.state == PFUDPS_MULTIPLE;
	if (proto == PROTO_UDP)
		s->timeout = multiple ? PFTM_UDP_MULTIPLE : PFTM_UDP_SINGLE;
	else
		s->timeout = multiple ? PFTM_OTHER_MULTIPLE : PFTM_OTHER_SINGLE;
	s->last = now;
}

/* Whether a quoted TCP segment's sequence number fits the window of its sender
 * (quoted_tcp_fits). */
static __always_inline int pf_quoted_fits(const struct pf_state *s, __u32 seq, int sender_is_src)
{
	if (s->flags & PF_S_SLOPPY)
		return 1;
	const struct pf_peer *src = sender_is_src ? &s->src : &s->dst;
	const struct pf_peer *dst = sender_is_src ? &s->dst : &s->src;
	__u8 dws = (src->wscale && dst->wscale) ? (dst->wscale & PF_WSCALE_MASK) : 0;
	return SEQ_GEQ(src->seqhi, seq) &&
	       SEQ_GEQ(seq, src->seqlo - ((__u32)dst->max_win << dws));
}

#endif
