/* parse: a packet parser over a batch of packets, every header access checked against the
 * packet's length as an XDP program checks against data_end. Ethernet, up to two VLAN tags
 * (802.1Q, 802.1ad), IPv4 (IHL, non-first fragments), IPv6 (fixed header), TCP, UDP; it counts
 * packets per protocol, truncated ones and TCP SYNs, and sums destination ports. The public
 * benchmark has no parser; this is the packet-filter workload sift exists for, in the style of
 * its other kernels. Input: u64 n, then n slots of 128 bytes, each a little-endian u16 length
 * and the frame (at most 126 bytes). Returns the counts folded into one u64. */
#include "kernel.h"

#define SLOT 128
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8

INLINE u64 be16(const u8 *p) { return ((u64)p[0] << 8) | p[1]; }

struct counts {
    u64 ipv4, ipv6, other_l3, vlan, tcp, udp, other_l4, fragments, truncated, syn, ports;
};

/* One VLAN tag if there is one: moves *off past it and returns the inner EtherType; 0 if
 * truncated. */
INLINE u64 skip_vlan(const u8 *d, u64 plen, u64 *off, u64 type, struct counts *c) {
    if (type != ETH_P_8021Q && type != ETH_P_8021AD)
        return type;
    if (*off + 4 > plen)
        return 0;
    c->vlan++;
    type = be16(d + *off + 2);
    *off += 4;
    return type;
}

INLINE void parse_one(const u8 *slot, struct counts *c) {
    u64 plen = slot[0] | ((u64)slot[1] << 8);
    if (plen > SLOT - 2)
        plen = SLOT - 2;
    const u8 *d = slot + 2;
    if (plen < 14) {
        c->truncated++;
        return;
    }
    u64 off = 14;
    u64 type = be16(d + 12);
    type = skip_vlan(d, plen, &off, type, c);
    type = skip_vlan(d, plen, &off, type, c);
    u64 proto;
    if (type == ETH_P_IP) {
        if (off + 20 > plen) {
            c->truncated++;
            return;
        }
        u64 ihl = (u64)(d[off] & 0xf) * 4;
        if ((d[off] >> 4) != 4 || ihl < 20 || off + ihl > plen) {
            c->truncated++;
            return;
        }
        c->ipv4++;
        proto = d[off + 9];
        if (be16(d + off + 6) & 0x1fff) {
            c->fragments++;
            return;
        }
        off += ihl;
    } else if (type == ETH_P_IPV6) {
        if (off + 40 > plen) {
            c->truncated++;
            return;
        }
        c->ipv6++;
        proto = d[off + 6];
        off += 40;
    } else {
        if (type == 0)
            c->truncated++;
        else
            c->other_l3++;
        return;
    }
    if (proto == 6) {
        if (off + 20 > plen) {
            c->truncated++;
            return;
        }
        c->tcp++;
        c->ports += be16(d + off + 2);
        if (d[off + 13] & 0x02)
            c->syn++;
    } else if (proto == 17) {
        if (off + 8 > plen) {
            c->truncated++;
            return;
        }
        c->udp++;
        c->ports += be16(d + off + 2);
    } else {
        c->other_l4++;
    }
}

KERNEL {
    (void)len;
    u64 n = input_count(mem);
    struct counts c = {0};
    for (u64 i = 0; i < n; i++)
        parse_one(mem + 8 + i * SLOT, &c);
    u64 h = 0;
    u64 all[] = {c.ipv4, c.ipv6, c.other_l3, c.vlan, c.tcp, c.udp,
                 c.other_l4, c.fragments, c.truncated, c.syn, c.ports};
    for (u64 k = 0; k < sizeof(all) / sizeof(all[0]); k++)
        h = h * 1000003 + all[k];
    return h;
}
