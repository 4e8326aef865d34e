//! The AF_XDP datapath: frames from an interface's queues straight into user memory, a
//! caller's pipeline deciding each packet's fate in batches, and batched transmission.
//!
//! Why it exists: `AF_PACKET` tops out near a million frames a second per socket; an XDP
//! program that redirects frames into `AF_XDP` sockets skips the socket buffer and the copy
//! into a packet ring (see `sift_sys::xsk`). The seed's OVS work (`../shared/seeds/002_…`
//! §4) turned such sockets into a datapath and measured which design choices matter; this
//! crate is that datapath for sift's capture over AF_XDP (`sift -i IFACE --xdp`) and its
//! switch (`sift switch`), with each of those choices kept selectable so that the figure can
//! be reproduced (`benches/afxdp-steps.sh`, `examples/xdpsock.rs`).
//!
//! The pieces:
//!
//! * [`PortConfig`]: an interface, its queues and how its sockets are set up: copy or
//!   zero-copy ([`BindMode::Auto`] tries zero-copy first and reports what it got,
//!   [`PortInfo::mode`]), need-wakeup, ring sizes, frames per queue, and the XDP program in
//!   front of them ([`XdpProgram`]: sift's own [`redirect_program`] built from `sift-ebpf`
//!   instructions, or the caller's program with the name of its `XSKMAP`), attached through
//!   a `bpf_link` that is not pinned (nothing outlives the process).
//! * [`Datapath::start`]: opens the ports (each queue's socket with a UMEM and a free-frame
//!   pool of its own, [`PoolKind`]), attaches the programs and starts one thread per queue
//!   index; thread `q` polls queue `q` of every port ([`PollMode`]) and hands each batch to
//!   its [`Pipeline`].
//! * [`Pipeline`] and [`Batch`]: the caller's code sees the received packets of one port
//!   ([`Packet`]: the bytes, writable, with at least 256 bytes of headroom to push headers;
//!   [`Packet::output`] to any port including the one it came in on, or nothing: dropped).
//!   The engine then sends each packet: the same frame back out of the port it came from, a
//!   copy into the other ports' UMEMs, with kicks batched ([`Kick`]). Where each packet's
//!   metadata lives is [`MetaMode`].
//! * Counters per port ([`PortStats`]: received, transmitted, completed, each kind of drop,
//!   the kernel's `XDP_STATISTICS`) and per thread ([`ThreadStats`]: CPU time), readable while
//!   running; [`Datapath::stop`] drains what was received and waits for what was sent, so
//!   nothing counted is lost.
//!
//! ```no_run
//! use sift_xdp::{Batch, Datapath, Options, PortConfig};
//!
//! // Every frame of eth0 back out where it came from, MAC addresses swapped.
//! let port = PortConfig::new("eth0");
//! let dp = Datapath::start(&[port], &Options::default(), |_queue| {
//!     |batch: &mut Batch<'_>| {
//!         batch.for_each(|mut p| {
//!             let d = p.data_mut();
//!             if d.len() >= 12 {
//!                 let (dst, src) = d[..12].split_at_mut(6);
//!                 dst.swap_with_slice(src);
//!             }
//!             p.output(p.in_port());
//!         })
//!     }
//! })?;
//! std::thread::sleep(std::time::Duration::from_secs(10));
//! let report = dp.stop()?;
//! println!("{:?}", report.ports[0]);
//! # Ok::<(), sift_xdp::Error>(())
//! ```
#![forbid(unsafe_code)]

mod batch;
mod engine;
mod error;
mod pool;
mod port;
mod program;

pub use batch::{Batch, MAX_PORTS, MetaMode, Packet, PortId};
pub use engine::{
    Baseline, DRAIN_LIMIT, Datapath, Kick, MAX_BATCH, Options, Pipeline, PollMode, PortStats,
    Report, ThreadStats,
};
pub use error::Error;
pub use pool::PoolKind;
pub use port::{BindMode, Bound, MAX_RING, PortConfig, PortInfo, RingSizes};
pub use program::{CustomProgram, Fallback, XSKMAP, XdpProgram, redirect_program, xskmap_spec};
/// XDP's attachment modes (native or generic), as [`sift_kernel::attach`] names them.
pub use sift_kernel::attach::XdpMode;
/// The kernel's per-socket drop counters (`XDP_STATISTICS`).
pub use sift_sys::xsk::Statistics as XdpStatistics;
