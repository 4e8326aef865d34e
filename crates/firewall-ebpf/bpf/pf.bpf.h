/* The layout sift-firewall-ebpf and the pf program (pf.bpf.c) share: map sizes, the offsets
 * of the class array, flag bits, pf's numbers (reasons, timeouts, TCP peer states) and the
 * structures of the maps' keys and values. The Rust side (src/layout.rs) mirrors every
 * `#define` here; a test reads this file and checks each one. */
#ifndef PF_BPF_H
#define PF_BPF_H

/* Rules: a bit vector of PF_MAX_WORDS 64-bit words, bit r = rule index r. */
#define PF_MAX_WORDS 64
#define PF_MAX_RULES 4096
/* The rule index of pf's default rule (pass, no state). */
#define PF_NO_RULE 0xffffffff
/* The slot of the per-rule counters that counts pf's default rule. */
#define PF_DEFAULT_SLOT 4096
/* Bit vectors (classes) the loader makes room for unless told otherwise. */
#define PF_MAX_CLASSES 16384

/* The class array: one region per field the rules test, packet value -> class. */
#define PF_CL_PROTO 0
#define PF_CL_SPORT 512
#define PF_CL_DPORT 66049
#define PF_CL_TCPFLAGS 131586
#define PF_CL_ICMP 131843
#define PF_CL_TOS 262916
#define PF_CL_ENTRIES 263172
/* The index in a region for "no such field" (not TCP/UDP, not TCP, not ICMP, a fragment). */
#define PF_NO_PORTS 65536
#define PF_NO_FLAGS 256
#define PF_NO_ICMP 131072

/* Families as the program numbers them. */
#define PF_INET 0
#define PF_INET6 1

/* Directions. */
#define PF_IN 0
#define PF_OUT 1

/* A rule's flags (struct pf_rule). */
#define PF_R_BLOCK 1
#define PF_R_QUICK 2
#define PF_R_KEEP 4
#define PF_R_SLOPPY 8
#define PF_R_LOG 16
#define PF_R_LOG_ALL 32

/* A state's flags (struct pf_state). */
#define PF_S_SLOPPY 1
#define PF_S_LOG 2
#define PF_S_LOG_ALL 4

/* pf's reasons (PFRES_*). */
#define PFRES_MATCH 0
#define PFRES_BADOFF 1
#define PFRES_FRAG 2
#define PFRES_SHORT 3
#define PFRES_NORM 4
#define PFRES_MEMORY 5
#define PFRES_BADSTATE 10
#define PFRES_STATEINS 11
#define PFRES_MAX 17

/* pf's timeouts (PFTM_*), as sift-firewall's `tm` numbers them. */
#define PFTM_TCP_FIRST 0
#define PFTM_TCP_OPENING 1
#define PFTM_TCP_ESTABLISHED 2
#define PFTM_TCP_CLOSING 3
#define PFTM_TCP_FIN_WAIT 4
#define PFTM_TCP_CLOSED 5
#define PFTM_UDP_FIRST 6
#define PFTM_UDP_SINGLE 7
#define PFTM_UDP_MULTIPLE 8
#define PFTM_ICMP_FIRST 9
#define PFTM_ICMP_ERROR 10
#define PFTM_OTHER_FIRST 11
#define PFTM_OTHER_SINGLE 12
#define PFTM_OTHER_MULTIPLE 13
#define PFTM_MAX 20

/* TCP peer states (TCPS_*) and UDP/other pseudo-states (PFUDPS_*). */
#define TCPS_CLOSED 0
#define TCPS_SYN_SENT 2
#define TCPS_ESTABLISHED 4
#define TCPS_CLOSING 7
#define TCPS_FIN_WAIT_2 9
#define TCPS_TIME_WAIT 10
#define PFUDPS_SINGLE 1
#define PFUDPS_MULTIPLE 2

/* The bytes of a packet a pflog record carries, from its IP header on. */
#define PF_LOG_SNAP 128
/* The ring buffer's size. */
#define PF_LOG_BYTES 262144

/* The IPv6 extension headers the parser walks at most (more: bad-offset, as sift-firewall). */
#define PF_MAX_EXT 64

/* The global counters (struct pf_counters), one per CPU. */
struct pf_counters {
	__u64 reasons[PFRES_MAX];   /* decisions by reason (not counted: passes by a state) */
	__u64 searches;             /* state lookups */
	__u64 inserts;              /* states created */
	__u64 removals;             /* states removed (expired, or a closed one reused) */
	__u64 packets[2][2];        /* [direction][blocked] */
	__u64 bytes[2][2];          /* the IP total lengths, as packets */
	__u64 not_ip;               /* frames that are not pf's (not IPv4/IPv6): passed */
	__u64 log_lost;             /* pflog records the ring buffer had no room for */
};

/* The configuration (one element). */
struct pf_config {
	__u32 nwords;               /* words of the bit vectors in use: ceil(rules / 64) */
	__u32 quick;                /* class of the quick rules */
	__u32 dir[2];               /* classes of the rules for this interface: in, out */
	__u32 frag[3];              /* classes: not a fragment, a TCP fragment, another fragment */
	__u32 timeouts[PFTM_MAX];   /* seconds, by PFTM_* */
	__u32 zero;                 /* always 0: see pf_forget (pf_parse.h) */
};

/* A rule (by rule index). */
struct pf_rule {
	__u32 nr;                   /* pf's rule number */
	__u32 flags;                /* PF_R_* */
};

/* A rule's counters (by rule index; PF_DEFAULT_SLOT for the default rule), one per CPU. */
struct pf_rule_counters {
	__u64 stops;                /* classifications that ended here (a quick rule matched;
	                               the default slot: no quick rule matched) */
	__u64 packets[2];           /* packets it decided or its states passed, by direction */
	__u64 bytes[2];
	__u64 states;               /* states it created */
};

/* An address in an LPM trie. */
struct pf_lpm4 {
	__u32 prefixlen;
	__u8 addr[4];
};
struct pf_lpm6 {
	__u32 prefixlen;
	__u8 addr[16];
};

/* pf's state key: the addresses and ports oriented as pf orients them (for a packet going in,
 * index 0 is its source; going out, its destination), the protocol and the family. */
struct pf_state_key {
	__u8 addr[2][16];           /* network order; IPv4 in the first 4 bytes */
	__u16 port[2];              /* host order; an ICMP query's id in both */
	__u8 af;                    /* PF_INET, PF_INET6 */
	__u8 proto;
	__u8 pad[2];
};

/* One side of a state (pf's pf_state_peer). */
struct pf_peer {
	__u32 seqlo;
	__u32 seqhi;
	__u16 max_win;
	__u8 wscale;
	__u8 state;
};

/* A state. */
struct pf_state {
	struct pf_peer src;         /* the side that created it */
	struct pf_peer dst;
	__u64 creation;             /* seconds of bpf_ktime_get_ns */
	__u64 last;                 /* when the timeout counts from */
	__u64 packets[2];           /* from the creating side, from the other */
	__u64 bytes[2];
	__u32 rule;                 /* rule index (PF_NO_RULE: the default rule) */
	__u8 timeout;               /* PFTM_* */
	__u8 direction;             /* PF_IN, PF_OUT: of the packet that created it */
	__u8 flags;                 /* PF_S_* */
	__u8 pad;
	__u32 ifindex;              /* where it was created */
	__u32 pad2;
};

/* A pflog record (the ring buffer's). */
struct pf_log {
	__u64 ts_ns;                /* bpf_ktime_get_ns */
	__u32 rule;                 /* rule index (PF_NO_RULE: the default rule) */
	__u32 len;                  /* the IP total length */
	__u32 caplen;               /* bytes in data */
	__u32 ifindex;
	__u8 af;
	__u8 action;                /* 0 pass, 1 block */
	__u8 reason;                /* PFRES_* */
	__u8 dir;                   /* PF_IN, PF_OUT */
	__u8 pad[4];
	__u8 data[PF_LOG_SNAP];     /* from the IP header on */
};

#endif
