//! The kernel's helper function numbers (`enum bpf_func_id`, `include/uapi/linux/bpf.h`): one
//! table for everything that names or checks a helper call (the VM's helper table, the
//! verifier's prototypes, listings). The numbers are the kernel ABI and never change; the
//! test below compares the table with the system's `linux/bpf.h` when it is installed.

/// Helper names by number: `HELPER_NAMES[n]` is helper `n`'s name without the `bpf_` prefix
/// (`0` is `unspec`, not a helper).
pub const HELPER_NAMES: &[&str] = &[
    "unspec",
    "map_lookup_elem",
    "map_update_elem",
    "map_delete_elem",
    "probe_read",
    "ktime_get_ns",
    "trace_printk",
    "get_prandom_u32",
    "get_smp_processor_id",
    "skb_store_bytes",
    "l3_csum_replace",
    "l4_csum_replace",
    "tail_call",
    "clone_redirect",
    "get_current_pid_tgid",
    "get_current_uid_gid",
    "get_current_comm",
    "get_cgroup_classid",
    "skb_vlan_push",
    "skb_vlan_pop",
    "skb_get_tunnel_key",
    "skb_set_tunnel_key",
    "perf_event_read",
    "redirect",
    "get_route_realm",
    "perf_event_output",
    "skb_load_bytes",
    "get_stackid",
    "csum_diff",
    "skb_get_tunnel_opt",
    "skb_set_tunnel_opt",
    "skb_change_proto",
    "skb_change_type",
    "skb_under_cgroup",
    "get_hash_recalc",
    "get_current_task",
    "probe_write_user",
    "current_task_under_cgroup",
    "skb_change_tail",
    "skb_pull_data",
    "csum_update",
    "set_hash_invalid",
    "get_numa_node_id",
    "skb_change_head",
    "xdp_adjust_head",
    "probe_read_str",
    "get_socket_cookie",
    "get_socket_uid",
    "set_hash",
    "setsockopt",
    "skb_adjust_room",
    "redirect_map",
    "sk_redirect_map",
    "sock_map_update",
    "xdp_adjust_meta",
    "perf_event_read_value",
    "perf_prog_read_value",
    "getsockopt",
    "override_return",
    "sock_ops_cb_flags_set",
    "msg_redirect_map",
    "msg_apply_bytes",
    "msg_cork_bytes",
    "msg_pull_data",
    "bind",
    "xdp_adjust_tail",
    "skb_get_xfrm_state",
    "get_stack",
    "skb_load_bytes_relative",
    "fib_lookup",
    "sock_hash_update",
    "msg_redirect_hash",
    "sk_redirect_hash",
    "lwt_push_encap",
    "lwt_seg6_store_bytes",
    "lwt_seg6_adjust_srh",
    "lwt_seg6_action",
    "rc_repeat",
    "rc_keydown",
    "skb_cgroup_id",
    "get_current_cgroup_id",
    "get_local_storage",
    "sk_select_reuseport",
    "skb_ancestor_cgroup_id",
    "sk_lookup_tcp",
    "sk_lookup_udp",
    "sk_release",
    "map_push_elem",
    "map_pop_elem",
    "map_peek_elem",
    "msg_push_data",
    "msg_pop_data",
    "rc_pointer_rel",
    "spin_lock",
    "spin_unlock",
    "sk_fullsock",
    "tcp_sock",
    "skb_ecn_set_ce",
    "get_listener_sock",
    "skc_lookup_tcp",
    "tcp_check_syncookie",
    "sysctl_get_name",
    "sysctl_get_current_value",
    "sysctl_get_new_value",
    "sysctl_set_new_value",
    "strtol",
    "strtoul",
    "sk_storage_get",
    "sk_storage_delete",
    "send_signal",
    "tcp_gen_syncookie",
    "skb_output",
    "probe_read_user",
    "probe_read_kernel",
    "probe_read_user_str",
    "probe_read_kernel_str",
    "tcp_send_ack",
    "send_signal_thread",
    "jiffies64",
    "read_branch_records",
    "get_ns_current_pid_tgid",
    "xdp_output",
    "get_netns_cookie",
    "get_current_ancestor_cgroup_id",
    "sk_assign",
    "ktime_get_boot_ns",
    "seq_printf",
    "seq_write",
    "sk_cgroup_id",
    "sk_ancestor_cgroup_id",
    "ringbuf_output",
    "ringbuf_reserve",
    "ringbuf_submit",
    "ringbuf_discard",
    "ringbuf_query",
    "csum_level",
    "skc_to_tcp6_sock",
    "skc_to_tcp_sock",
    "skc_to_tcp_timewait_sock",
    "skc_to_tcp_request_sock",
    "skc_to_udp6_sock",
    "get_task_stack",
    "load_hdr_opt",
    "store_hdr_opt",
    "reserve_hdr_opt",
    "inode_storage_get",
    "inode_storage_delete",
    "d_path",
    "copy_from_user",
    "snprintf_btf",
    "seq_printf_btf",
    "skb_cgroup_classid",
    "redirect_neigh",
    "per_cpu_ptr",
    "this_cpu_ptr",
    "redirect_peer",
    "task_storage_get",
    "task_storage_delete",
    "get_current_task_btf",
    "bprm_opts_set",
    "ktime_get_coarse_ns",
    "ima_inode_hash",
    "sock_from_file",
    "check_mtu",
    "for_each_map_elem",
    "snprintf",
    "sys_bpf",
    "btf_find_by_name_kind",
    "sys_close",
    "timer_init",
    "timer_set_callback",
    "timer_start",
    "timer_cancel",
    "get_func_ip",
    "get_attach_cookie",
    "task_pt_regs",
    "get_branch_snapshot",
    "trace_vprintk",
    "skc_to_unix_sock",
    "kallsyms_lookup_name",
    "find_vma",
    "loop",
    "strncmp",
    "get_func_arg",
    "get_func_ret",
    "get_func_arg_cnt",
    "get_retval",
    "set_retval",
    "xdp_get_buff_len",
    "xdp_load_bytes",
    "xdp_store_bytes",
    "copy_from_user_task",
    "skb_set_tstamp",
    "ima_file_hash",
    "kptr_xchg",
    "map_lookup_percpu_elem",
    "skc_to_mptcp_sock",
    "dynptr_from_mem",
    "ringbuf_reserve_dynptr",
    "ringbuf_submit_dynptr",
    "ringbuf_discard_dynptr",
    "dynptr_read",
    "dynptr_write",
    "dynptr_data",
    "tcp_raw_gen_syncookie_ipv4",
    "tcp_raw_gen_syncookie_ipv6",
    "tcp_raw_check_syncookie_ipv4",
    "tcp_raw_check_syncookie_ipv6",
    "ktime_get_tai_ns",
    "user_ringbuf_drain",
];

/// Helper `id`'s name (`map_lookup_elem`), if the kernel has such a helper.
pub fn helper_name(id: i64) -> Option<&'static str> {
    usize::try_from(id).ok().filter(|&i| i > 0).and_then(|i| HELPER_NAMES.get(i)).copied()
}

/// The number of the helper called `name` (without `bpf_`).
pub fn helper_id(name: &str) -> Option<u32> {
    HELPER_NAMES.iter().skip(1).position(|&n| n == name).map(|i| i as u32 + 1)
}

/// The numbers of the helpers sift's VM and verifier know by name.
pub mod id {
    /// `bpf_map_lookup_elem`.
    pub const MAP_LOOKUP_ELEM: u32 = 1;
    /// `bpf_map_update_elem`.
    pub const MAP_UPDATE_ELEM: u32 = 2;
    /// `bpf_map_delete_elem`.
    pub const MAP_DELETE_ELEM: u32 = 3;
    /// `bpf_ktime_get_ns`.
    pub const KTIME_GET_NS: u32 = 5;
    /// `bpf_trace_printk`.
    pub const TRACE_PRINTK: u32 = 6;
    /// `bpf_get_prandom_u32`.
    pub const GET_PRANDOM_U32: u32 = 7;
    /// `bpf_get_smp_processor_id`.
    pub const GET_SMP_PROCESSOR_ID: u32 = 8;
    /// `bpf_skb_store_bytes`.
    pub const SKB_STORE_BYTES: u32 = 9;
    /// `bpf_l3_csum_replace`.
    pub const L3_CSUM_REPLACE: u32 = 10;
    /// `bpf_l4_csum_replace`.
    pub const L4_CSUM_REPLACE: u32 = 11;
    /// `bpf_tail_call`.
    pub const TAIL_CALL: u32 = 12;
    /// `bpf_redirect`.
    pub const REDIRECT: u32 = 23;
    /// `bpf_skb_load_bytes`.
    pub const SKB_LOAD_BYTES: u32 = 26;
    /// `bpf_csum_diff`.
    pub const CSUM_DIFF: u32 = 28;
    /// `bpf_xdp_adjust_head`.
    pub const XDP_ADJUST_HEAD: u32 = 44;
    /// `bpf_redirect_map`.
    pub const REDIRECT_MAP: u32 = 51;
    /// `bpf_xdp_adjust_meta`.
    pub const XDP_ADJUST_META: u32 = 54;
    /// `bpf_xdp_adjust_tail`.
    pub const XDP_ADJUST_TAIL: u32 = 65;
    /// `bpf_map_push_elem`.
    pub const MAP_PUSH_ELEM: u32 = 87;
    /// `bpf_map_pop_elem`.
    pub const MAP_POP_ELEM: u32 = 88;
    /// `bpf_map_peek_elem`.
    pub const MAP_PEEK_ELEM: u32 = 89;
    /// `bpf_ringbuf_output`.
    pub const RINGBUF_OUTPUT: u32 = 130;
    /// `bpf_ringbuf_reserve`.
    pub const RINGBUF_RESERVE: u32 = 131;
    /// `bpf_ringbuf_submit`.
    pub const RINGBUF_SUBMIT: u32 = 132;
    /// `bpf_ringbuf_discard`.
    pub const RINGBUF_DISCARD: u32 = 133;
    /// `bpf_ringbuf_query`.
    pub const RINGBUF_QUERY: u32 = 134;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree() {
        assert_eq!(helper_name(1), Some("map_lookup_elem"));
        assert_eq!(helper_id("map_lookup_elem"), Some(id::MAP_LOOKUP_ELEM));
        assert_eq!(helper_name(0), None);
        assert_eq!(helper_name(-1), None);
        assert_eq!(helper_name(HELPER_NAMES.len() as i64), None);
        for (i, n) in HELPER_NAMES.iter().enumerate().skip(1) {
            assert_eq!(helper_id(n), Some(i as u32), "{n}");
        }
    }

    /// The system header, when installed, lists the same helpers in the same order (newer
    /// headers may list more at the end).
    #[test]
    fn the_table_is_the_kernel_header() {
        let Ok(h) = std::fs::read_to_string("/usr/include/linux/bpf.h") else {
            sift_testkit::oracle_missing::<()>("linux/bpf.h", "not installed");
            return;
        };
        let start = h.find("FN(unspec").expect("the helper list");
        let names: Vec<&str> = h[start..]
            .split("FN(")
            .skip(1)
            .map_while(|s| s.split([')', ',']).next())
            .take_while(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        assert!(names.len() >= 200, "{} helpers read", names.len());
        let n = names.len().min(HELPER_NAMES.len());
        assert_eq!(&names[..n], &HELPER_NAMES[..n]);
    }
}
