//! Netlink (`AF_NETLINK`, `NETLINK_ROUTE`): configuring interfaces and attaching programs to
//! them.
//!
//! Empty today: the veth pair of the kernel oracle is still made with `ip link`. This is where
//! attaching eBPF programs will live (XDP with `IFLA_XDP`, TC with a `clsact` qdisc and a `bpf`
//! filter), so that they too are safe wrappers over one audited set of system calls.
