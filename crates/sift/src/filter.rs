//! Filter expressions, compiled once per link type and run on the chosen engine.
//!
//! The same expression means different code on different link types (the link-layer header
//! differs) and snapshot lengths (the accept value), and one pcapng file can mix link types.
//! So a [`Filter`] keeps the expression and compiles it the first time it meets an interface of
//! a new link type; after that, a packet costs a look-up in a list that is almost always one
//! entry long and one run of the engine ([`Engine`]: sift's x86-64 JIT by default, falling back
//! to the interpreter where there is no JIT, or the interpreter by choice).
//!
//! [`compile`] is the one place where an expression becomes a validated program, for files
//! (`sift -r`), live captures, `bench` and `diff` alike.
//!
//! Offline, packets are filtered [`BATCH_PACKETS`] at a time ([`Compiled::run_batch`],
//! [`Filter::run_batch`]): on a capture larger than the CPU caches most of a packet's cost is
//! waiting for its first bytes, and an engine given many packets at once loads those of the
//! packets ahead while it filters the current one, and pays its call overhead once per batch
//! (`sift bench` shows both forms; `crates/jit/examples/batch_figures.rs` how the batch size was
//! chosen).

use std::fmt;

/// The byte order of a capture file ([`Target::savefile`]), from `sift-compile`.
pub use sift_compile::pipeline::ByteOrder;
use sift_compile::{CompileError, pipeline};
use sift_filter::{Resolver, SystemResolver};
use sift_jit::PacketRef;
use sift_pcap::{Interface, LinkType, Packet};
use sift_verify::{Mode, Validated};

/// How many packets the offline paths hand an engine at once: batches of a thousand packets or
/// more keep the cost of starting the engines' loads ahead small (measured on a 114 MB capture,
/// `crates/jit/examples/batch_figures.rs`); a batch's descriptors and verdicts (36 KB) stay in
/// the L2 cache.
pub const BATCH_PACKETS: usize = 1024;

/// A filter engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Native code (x86-64), falling back to the interpreter elsewhere.
    #[default]
    Jit,
    /// The reference interpreter.
    Interp,
}

/// What an expression is compiled for: the packets' link type and snapshot length, and the
/// context tcpdump gives libpcap's compiler for a capture file or a live interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The link type of the packets.
    pub link_type: LinkType,
    /// The snapshot length: the value the program returns for an accepted packet.
    pub snaplen: u32,
    /// The IPv4 netmask for `ip broadcast`; `None` when unknown.
    pub netmask: Option<u32>,
    /// Whether Linux's ancillary loads (`inbound`, `vlan` on a socket…) may be used.
    pub linux_ext: bool,
    /// The byte order of the capture file the packets come from (`None`: not from a file).
    /// tcpdump's compiler reads loopback address families (DLT_NULL, DLT_ENC) in it, and looks
    /// for every system's AF_INET6 in a file (see `sift_compile::pipeline::Options::savefile`).
    pub savefile: Option<ByteOrder>,
    /// Whether the program goes to the kernel (a live capture's socket filter, the eBPF
    /// engines), which runs forward code only: `protochain` walks are then unrolled as deep as
    /// its 4,096 instructions allow, rather than libpcap's loop, which sift's engines and
    /// libpcap run.
    pub kernel: bool,
}

impl Target {
    /// A capture file's packets, as tcpdump compiles for them: netmask 0 (so `ip broadcast`
    /// matches only 255.255.255.255 and 0.0.0.0), no Linux extensions, a little-endian file
    /// (what sift and tcpdump on x86-64 write; [`Target::byte_order`] says otherwise).
    pub fn file(link_type: LinkType, snaplen: u32) -> Target {
        Target {
            link_type,
            snaplen,
            netmask: Some(0),
            linux_ext: false,
            savefile: Some(ByteOrder::Little),
            kernel: false,
        }
    }

    /// The packets of a capture file's interface (a snapshot length of 0 means the largest),
    /// in the byte order of the file (pcapng: of the interface's section).
    pub fn interface(iface: &Interface) -> Target {
        Target::file(iface.link_type, snaplen_or_max(iface.snaplen))
            .byte_order(ByteOrder::from_big_endian(iface.big_endian))
    }

    /// A live capture's packets, as libpcap compiles for a Linux socket: netmask unknown,
    /// Linux's ancillary loads available, no capture file, and the program for the kernel.
    pub fn live(link_type: LinkType, snaplen: u32) -> Target {
        Target { link_type, snaplen, netmask: None, linux_ext: true, savefile: None, kernel: true }
    }

    /// The same file's packets, written in byte order `order`.
    pub fn byte_order(self, order: ByteOrder) -> Target {
        Target { savefile: Some(order), ..self }
    }

    /// The compiler's options for these packets, as tcpdump gives them to libpcap's:
    /// `protochain` walks as libpcap's loop (`Mode::LibpcapLoops`), or unrolled for the kernel.
    pub fn options<'r>(&self, optimize: bool, resolver: &'r dyn Resolver) -> pipeline::Options<'r> {
        pipeline::Options::new(self.link_type, resolver)
            .snaplen(self.snaplen)
            .netmask(self.netmask)
            .linux_ext(self.linux_ext)
            .optimize(optimize)
            .mode(if self.kernel { Mode::Libpcap } else { Mode::LibpcapLoops })
            .savefile(self.savefile)
    }

    /// The same packets, the program for the kernel (see [`Target::kernel`]).
    pub fn for_kernel(self) -> Target {
        Target { kernel: true, ..self }
    }
}

/// A snapshot length of 0 (pcapng: "no limit") as the largest one sift accepts.
pub(crate) fn snaplen_or_max(snaplen: u32) -> u32 {
    if snaplen == 0 { sift_pcap::MAX_CAPLEN } else { snaplen }
}

/// Why an expression gives no filter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The expression does not compile; shown with a caret under the offending text.
    #[error("{}", .error.render(.expr).trim_end())]
    Compile {
        /// The expression.
        expr: String,
        /// The compiler's error (what went wrong, as data, and where); boxed, so that results
        /// carrying a `FilterError` stay small.
        error: Box<CompileError>,
    },
}

impl FilterError {
    /// Whether the failure is sift's own (a compiled program its validator refuses), not the
    /// expression's.
    pub fn is_internal(&self) -> bool {
        matches!(self, FilterError::Compile { error, .. } if error.is_internal())
    }

    /// Whether the optimizer proved that the expression can never match ("expression rejects
    /// all packets", as libpcap says): an answer, not a mistake in the expression.
    pub fn rejects_all(&self) -> bool {
        matches!(self, FilterError::Compile { error, .. } if error.is_rejects_all())
    }
}

/// Compiles `expr` for `target` (optimized when `optimize`, as tcpdump does unless `-O`)
/// through [`sift_compile::pipeline`], validated with libpcap's rules. Names in the expression
/// are looked up with `resolver`.
///
/// `protochain` walks are libpcap's loop (`Mode::LibpcapLoops`: the program may jump back,
/// which sift's engines bound), unless the program is for the kernel ([`Target::kernel`]):
/// then they are unrolled (`Mode::Libpcap`: forward jumps only, within 4,096 instructions
/// when the rest of the program leaves room).
pub fn compile(
    expr: &str,
    target: &Target,
    optimize: bool,
    resolver: &dyn Resolver,
) -> Result<Validated, FilterError> {
    let opts = target.options(optimize, resolver);
    match pipeline::compile(expr, &opts) {
        Ok(compiled) => Ok(compiled.program),
        // libpcap only says "rejects all packets" after running its optimizer, which it skips
        // for some programs: there tcpdump runs a program that keeps nothing, and so does sift.
        Err(error)
            if error.is_rejects_all() && !libpcap_optimizes(expr, target.link_type, resolver) =>
        {
            // The empty filter with a snapshot length of 0 is `ret #0`; unoptimized, or the
            // optimizer would call it "rejects all packets" again.
            Ok(pipeline::compile("", &opts.snaplen(0).optimize(false))
                .map_err(|error| FilterError::Compile {
                    expr: String::new(),
                    error: Box::new(error),
                })?
                .program)
        }
        Err(error) => Err(FilterError::Compile { expr: expr.to_owned(), error: Box::new(error) }),
    }
}

/// Whether libpcap runs its optimizer on `expr` for `link_type`. Its code generator turns the
/// optimizer off (`no_optimize`) for code the optimizer cannot handle: `protochain`'s loop, and
/// the run-time computation of the 802.11 header length, which every test above the link layer
/// needs on the 802.11 link types (and every test on Prism, whose header is sniffed at run
/// time).
fn libpcap_optimizes(expr: &str, link_type: LinkType, resolver: &dyn Resolver) -> bool {
    let Ok(Some(ast)) = sift_filter::parse_with(expr, resolver) else { return true };
    if link_type == LinkType::PRISM_HEADER {
        return false;
    }
    let wlan = [
        LinkType::IEEE802_11,
        LinkType::IEEE802_11_RADIO,
        LinkType::IEEE802_11_RADIO_AVS,
        LinkType::PPI,
    ]
    .contains(&link_type);
    let mut optimizes = true;
    walk(&ast, &mut |prim| {
        use sift_filter::ast::{Primitive as P, QualType};
        let payload = match prim {
            Prim::Rel(lhs, rhs) => !link_level_arith(lhs) || !link_level_arith(rhs),
            Prim::P(P::Id { quals, .. })
                if quals.ty.is_some_and(|(t, _)| t == QualType::Protochain) =>
            {
                optimizes = false;
                return;
            }
            Prim::P(p) => !link_level(p),
        };
        if wlan && payload {
            optimizes = false;
        }
    });
    optimizes
}

/// A primitive or a relation, as [`walk`] hands them out.
enum Prim<'a> {
    P(&'a sift_filter::ast::Primitive),
    Rel(&'a sift_filter::ast::Arith, &'a sift_filter::ast::Arith),
}

fn walk(e: &sift_filter::ast::Expr, f: &mut dyn FnMut(Prim<'_>)) {
    use sift_filter::ast::ExprKind;
    match &e.kind {
        ExprKind::Chain { first, rest } => {
            walk(first, f);
            for (_, _, e) in rest {
                walk(e, f);
            }
        }
        ExprKind::Not(e) => walk(e, f),
        ExprKind::Prim(p) => f(Prim::P(p)),
        ExprKind::Rel { lhs, rhs, .. } => f(Prim::Rel(lhs, rhs)),
    }
}

/// Whether a primitive tests only the 802.11 link-layer header (or lengths): MAC addresses,
/// link-layer broadcast and multicast, frame type, subtype and direction.
fn link_level(p: &sift_filter::ast::Primitive) -> bool {
    use sift_filter::ast::{Id, Primitive as P, Proto, QualType};
    let link = |proto: Option<Proto>| {
        proto.is_none_or(|p| matches!(p, Proto::Link | Proto::Ether | Proto::Wlan))
    };
    match p {
        P::Id { quals, id, .. } => {
            let mac = matches!(id, Id::Mac(_))
                || matches!(quals.proto, Some((Proto::Ether | Proto::Wlan | Proto::Link, _)));
            mac && quals.ty.is_none_or(|(t, _)| t == QualType::Host)
        }
        P::Broadcast(proto) | P::Multicast(proto) => link(*proto),
        P::Less(_) | P::Greater(_) => true,
        P::WlanType { .. } | P::WlanSubtype { .. } | P::WlanDir { .. } => true,
        _ => false,
    }
}

/// Whether an arithmetic expression loads only from the link-layer header (or the radio
/// header before it).
fn link_level_arith(a: &sift_filter::ast::Arith) -> bool {
    use sift_filter::ast::{ArithKind, Proto};
    match &a.kind {
        ArithKind::Num(_) | ArithKind::Len => true,
        ArithKind::Load { proto, index, .. } => {
            matches!(proto, Proto::Link | Proto::Ether | Proto::Wlan | Proto::Radio)
                && link_level_arith(index)
        }
        ArithKind::Neg(a) => link_level_arith(a),
        ArithKind::Bin { lhs, rhs, .. } => link_level_arith(lhs) && link_level_arith(rhs),
    }
}

/// Reads a filter file (`-F`) as tcpdump does: a `#` starts a comment that runs to the end of
/// its line, whatever bytes it holds (each becomes a space, so columns stay where they were);
/// the rest must be UTF-8 text, or the error says where it is not. Bounded by
/// [`crate::text::MAX_TEXT_BYTES`].
pub fn read_file(path: &std::path::Path) -> Result<String, crate::text::TextError> {
    let mut bytes = crate::text::read(path, crate::text::TextKind::Filter)?;
    let mut in_comment = false;
    for b in &mut bytes {
        if *b == b'\n' {
            in_comment = false;
        } else if in_comment || *b == b'#' {
            in_comment = true;
            *b = b' ';
        }
    }
    crate::text::into_string(bytes, &path.display().to_string())
}

/// A validated program ready to run on one engine.
#[derive(Debug)]
pub struct Compiled {
    filter: sift_jit::Filter,
}

impl Compiled {
    /// `program` on `engine`.
    pub fn new(program: &Validated, engine: Engine) -> Compiled {
        let filter = match engine {
            Engine::Jit => sift_jit::Filter::new(program),
            Engine::Interp => sift_jit::Filter::interpreter(program),
        };
        Compiled { filter }
    }

    /// The program's return value on a packet of `wire_len` bytes of which `data` was captured
    /// (0: reject; otherwise how many bytes to keep).
    #[inline]
    pub fn run(&self, data: &[u8], wire_len: u32) -> u32 {
        self.filter.run(data, wire_len)
    }

    /// Whether the program accepts the packet.
    #[inline]
    pub fn accepts(&self, data: &[u8], wire_len: u32) -> bool {
        self.run(data, wire_len) != 0
    }

    /// The program's return value on every packet of a batch: `verdicts` is cleared and gets
    /// one value per packet, what [`run`](Self::run) returns for it; returns how many packets
    /// were accepted. One call of the engine for the whole batch (see the module
    /// documentation); a batch of one packet runs as [`run`](Self::run).
    pub fn run_batch(&self, packets: &[PacketRef<'_>], verdicts: &mut Vec<u32>) -> usize {
        if let [p] = packets {
            verdicts.clear();
            verdicts.push(self.run(p.data(), p.wire_len()));
            return usize::from(verdicts[0] != 0);
        }
        self.filter.run_batch(packets, verdicts)
    }

    /// The engine that runs: `jit` or `interp` (also when the JIT fell back).
    pub fn engine_name(&self) -> &'static str {
        self.filter.engine_name()
    }
}

/// An expression compiled for each link type (and file byte order) it meets, on first use.
pub struct Filter {
    expr: String,
    engine: Engine,
    optimize: bool,
    resolver: Box<dyn Resolver + Send>,
    /// The programs so far, by link type and the byte order of the interface's file (in the
    /// order met; nearly always one).
    compiled: Vec<((LinkType, bool), Compiled)>,
    /// Room for a batch's descriptors, kept (empty) from one [`Filter::run_batch`] to the next.
    refs: Vec<PacketRef<'static>>,
    /// Room for the verdicts on a part of a batch, for batches of several link types.
    part: Vec<u32>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("expr", &self.expr)
            .field("engine", &self.engine)
            .field("optimize", &self.optimize)
            .field("compiled", &self.compiled)
            .finish_non_exhaustive()
    }
}

impl Filter {
    /// `expr` (pcap-filter syntax), optimized, on the JIT, with names looked up in the system's
    /// `/etc` files (never DNS). Nothing is compiled before the first interface is met.
    pub fn new(expr: impl Into<String>) -> Filter {
        Filter {
            expr: expr.into(),
            engine: Engine::default(),
            optimize: true,
            resolver: Box::new(SystemResolver::new()),
            compiled: Vec::new(),
            refs: Vec::new(),
            part: Vec::new(),
        }
    }

    /// Runs on `engine` instead.
    pub fn with_engine(mut self, engine: Engine) -> Filter {
        self.engine = engine;
        self
    }

    /// Whether to run sift's optimizer (the default; it never changes a verdict).
    pub fn with_optimizer(mut self, optimize: bool) -> Filter {
        self.optimize = optimize;
        self
    }

    /// Looks names up with `resolver` instead of the system's files.
    pub fn with_resolver(mut self, resolver: Box<dyn Resolver + Send>) -> Filter {
        self.resolver = resolver;
        self
    }

    /// The expression.
    pub fn expression(&self) -> &str {
        &self.expr
    }

    /// The program for the packets of `iface`, compiled now unless its link type (in a file
    /// of the same byte order) was met before.
    pub fn prepare(&mut self, iface: &Interface) -> Result<&Compiled, FilterError> {
        let index = self.index(iface)?;
        Ok(&self.compiled[index].1)
    }

    /// Where the program for `iface`'s link type (in its file's byte order) is in `compiled`
    /// (compiled now if new).
    fn index(&mut self, iface: &Interface) -> Result<usize, FilterError> {
        let key = (iface.link_type, iface.big_endian);
        if let Some(i) = self.compiled.iter().position(|(k, _)| *k == key) {
            return Ok(i);
        }
        let target = Target::interface(iface);
        let program = compile(&self.expr, &target, self.optimize, self.resolver.as_ref())?;
        self.compiled.push((key, Compiled::new(&program, self.engine)));
        Ok(self.compiled.len() - 1)
    }

    /// Whether `packet`, from interface `iface`, passes.
    #[inline]
    pub fn accepts(&mut self, packet: &Packet<'_>, iface: &Interface) -> Result<bool, FilterError> {
        Ok(self.prepare(iface)?.accepts(packet.data, packet.wire_len))
    }

    /// The program's return value on every packet of a batch (0: reject), each run by the
    /// program for its interface's link type (`interfaces` is the list the packets'
    /// `interface` indexes): `verdicts` is cleared and gets one value per packet. Consecutive
    /// packets of one link type (all of them, but in a pcapng file mixing link types) are one
    /// call of the engine ([`Compiled::run_batch`]).
    ///
    /// When the program for a packet's link type cannot be compiled, `verdicts` holds the
    /// values of the packets before it, and the error is returned: handle those packets first,
    /// as one by one.
    pub fn run_batch(
        &mut self,
        packets: &[Packet<'_>],
        interfaces: &[Interface],
        verdicts: &mut Vec<u32>,
    ) -> Result<(), FilterError> {
        verdicts.clear();
        let mut refs = reuse_refs(std::mem::take(&mut self.refs));
        let mut result = Ok(());
        let mut rest = packets;
        while let Some(first) = rest.first() {
            let key = |p: &Packet<'_>| (p.link_type, interfaces[p.interface as usize].big_endian);
            let run = rest.iter().position(|p| key(p) != key(first)).unwrap_or(rest.len());
            let (part, after) = rest.split_at(run);
            rest = after;
            let index = match self.index(&interfaces[first.interface as usize]) {
                Ok(i) => i,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let compiled = &self.compiled[index].1;
            refs.clear();
            refs.extend(part.iter().map(|p| PacketRef::new(p.data, p.wire_len)));
            if verdicts.is_empty() {
                compiled.run_batch(&refs, verdicts);
            } else {
                compiled.run_batch(&refs, &mut self.part);
                verdicts.extend_from_slice(&self.part);
            }
        }
        self.refs = reuse_refs(refs);
        result
    }

    /// The engine of the programs compiled so far (`jit` or `interp`; `none` before the first).
    pub fn engine_name(&self) -> &'static str {
        self.compiled.first().map_or("none", |(_, c)| c.engine_name())
    }
}

/// An empty vector with `v`'s allocation, for descriptors that borrow something else: a
/// batch's descriptors borrow its packets only while it is filtered, but their room is kept.
/// (Collecting an emptied vector's iterator into a vector of an element of the same size and
/// alignment reuses its allocation.)
// `filter` would keep the element type: `filter_map` is what changes its lifetime.
#[allow(clippy::unnecessary_filter_map)]
fn reuse_refs<'b>(mut v: Vec<PacketRef<'_>>) -> Vec<PacketRef<'b>> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_pcap::{Timestamp, TsResolution};

    fn packet(link_type: LinkType, data: &[u8]) -> Packet<'_> {
        Packet {
            timestamp: Timestamp::default(),
            wire_len: data.len() as u32,
            data,
            interface: 0,
            link_type,
            offset: 0,
        }
    }

    #[test]
    fn compiles_once_per_link_type() {
        let en = Interface::new(LinkType::EN10MB, 65_535, TsResolution::MICRO);
        let raw = Interface::new(LinkType::RAW, 0, TsResolution::MICRO);
        let mut f = Filter::new("ip").with_resolver(Box::new(sift_filter::TableResolver::empty()));
        assert_eq!(f.engine_name(), "none");
        // An IPv4 header: IPv4 on a raw-IP link, nonsense as an Ethernet frame.
        let mut ipv4 = [0u8; 20];
        ipv4[0] = 0x45;
        assert!(f.accepts(&packet(LinkType::RAW, &ipv4), &raw).unwrap());
        assert!(!f.accepts(&packet(LinkType::EN10MB, &ipv4), &en).unwrap());
        assert!(f.accepts(&packet(LinkType::RAW, &ipv4), &raw).unwrap());
        assert_eq!(f.compiled.len(), 2, "one program per link type, compiled once");
        // The accept value is the snapshot length (0 read as the largest).
        assert_eq!(f.prepare(&raw).unwrap().run(&ipv4, 20), sift_pcap::MAX_CAPLEN);
    }

    /// A DLT_NULL record holding an IPv6 header after the address family `af` in `order`.
    fn null_ipv6(af: u32, order: ByteOrder) -> Vec<u8> {
        let mut p = match order {
            ByteOrder::Little => af.to_le_bytes().to_vec(),
            ByteOrder::Big => af.to_be_bytes().to_vec(),
        };
        p.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, 59, 64]);
        p.extend_from_slice(&[0; 32]);
        p
    }

    /// A classic pcap file of link type NULL, written in `order`, holding `record`.
    fn null_file(order: ByteOrder, record: &[u8]) -> Vec<u8> {
        let w = |v: u32| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let version: [u8; 4] = match order {
            ByteOrder::Little => [2, 0, 4, 0],
            ByteOrder::Big => [0, 2, 0, 4],
        };
        let mut f = w(0xa1b2_c3d4).to_vec();
        f.extend_from_slice(&version);
        for v in [0, 0, 65_535, 0, 1_700_000_000, 0, record.len() as u32, record.len() as u32] {
            f.extend_from_slice(&w(v));
        }
        f.extend_from_slice(record);
        f
    }

    /// tcpdump compiles for the file it reads: DLT_NULL's address family in the file's byte
    /// order, IPv6 as any BSD's AF_INET6 (macOS writes 30). The reader says which order.
    #[test]
    fn loopback_families_follow_the_file_byte_order() {
        let mut f = Filter::new("ip6").with_resolver(Box::new(sift_filter::TableResolver::empty()));
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut reader = sift_pcap::Reader::from_bytes(null_file(order, &null_ipv6(30, order)))
                .expect("a pcap file");
            let (p, interfaces) = reader.next_with_interfaces().unwrap().expect("a record");
            let iface = &interfaces[p.interface as usize];
            assert_eq!(iface.big_endian, order == ByteOrder::Big);
            assert!(f.accepts(&p, iface).unwrap(), "{order:?} file");
        }
        assert_eq!(f.compiled.len(), 2, "one program per byte order");
        // The same bytes in a file of the other order hold another family.
        let le = Interface::new(LinkType::NULL, 65_535, TsResolution::MICRO);
        let be = Interface { big_endian: true, ..le.clone() };
        let record = null_ipv6(30, ByteOrder::Little);
        assert!(!f.accepts(&packet(LinkType::NULL, &record), &be).unwrap());
        // Linux's AF_INET6 (10) is not a BSD loopback value: tcpdump does not match it in a file.
        let linux = null_ipv6(10, ByteOrder::Little);
        assert!(!f.accepts(&packet(LinkType::NULL, &linux), &le).unwrap());
        // A live capture has no file: this system's AF_INET6.
        let live = compile(
            "ip6",
            &Target::live(LinkType::NULL, 65_535),
            true,
            &sift_filter::TableResolver::empty(),
        )
        .unwrap();
        let vm = sift_vm::Interpreter::new(&live);
        assert_ne!(vm.run(&linux, linux.len() as u32), 0);
        assert_eq!(vm.run(&record, record.len() as u32), 0);
    }

    #[test]
    fn descriptor_room_is_kept_between_batches() {
        let data = [0u8; 4];
        let refs: Vec<PacketRef<'_>> = vec![PacketRef::new(&data, 4); 1000];
        let (capacity, at) = (refs.capacity(), refs.as_ptr() as usize);
        let room = reuse_refs(refs);
        assert!(room.is_empty());
        assert_eq!(
            (room.capacity(), room.as_ptr() as usize),
            (capacity, at),
            "the same allocation"
        );
    }

    #[test]
    fn errors_say_what_and_where() {
        let raw = Interface::new(LinkType::RAW, 0, TsResolution::MICRO);
        let mut f = Filter::new("ip and tcp port");
        let e = f.prepare(&raw).unwrap_err();
        assert!(!e.rejects_all());
        assert!(e.to_string().contains("ip and tcp port\n"), "{e}");
        let mut f = Filter::new("tcp and not tcp");
        assert!(f.prepare(&raw).unwrap_err().rejects_all());
        let mut f = Filter::new("tcp and not tcp").with_optimizer(false);
        assert!(f.prepare(&raw).is_ok(), "only the optimizer proves it");
    }
}
