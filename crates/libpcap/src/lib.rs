//! The system libpcap, loaded at run time with `dlopen`: an oracle and a reference engine.
//!
//! sift re-implements what libpcap does (the filter compiler, the BPF interpreter, the savefile
//! reader), so the most useful test of sift is to ask libpcap the same question and compare. This
//! crate wraps just the entry points those comparisons need: `pcap_compile` (on a dead handle,
//! or on a savefile's handle as tcpdump compiles for a file), `bpf_filter`, `bpf_validate` and
//! the offline reader.
//!
//! **Why `dlopen` and not a link-time dependency.** sift itself must build and run on machines
//! without libpcap; only tests and benchmarks want it. Loading it at run time keeps it out of the
//! build entirely: when it is missing, [`Libpcap::load`] returns an error that tests turn into a
//! SKIP (or a failure under `SIFT_REQUIRE_ORACLES=1`, see `sift-testkit`).
//!
//! **Safety of running arbitrary programs.** libpcap's `bpf_filter` trusts its program: it has
//! no length argument, so a jump past the end reads out of bounds, and an opcode it does not know
//! calls `abort()`. [`Libpcap::filter`] therefore checks every program first (in Rust, with the
//! rules of libpcap's `bpf_validate` plus the exact opcode set `bpf_filter` implements) and
//! returns 0 for one it would not run; [`Libpcap::try_filter`] says why. One hazard remains, as
//! in libpcap: `ja` is sign-extended (libpcap needs backward jumps for `protochain`), so a
//! program with a backward jump can loop forever. For tight loops, [`Libpcap::prepare`] checks
//! once and [`PreparedFilter::run`] is a single indirect call.
//!
//! ```no_run
//! let pcap = sift_libpcap::Libpcap::load()?;
//! let prog = pcap.compile(sift_wire::LinkType::EN10MB, 262144, "tcp port 80", true, 0xffff_ffff).map_err(std::io::Error::other)?;
//! let frame = [0u8; 60];
//! assert_eq!(pcap.filter(&prog, &frame, 60), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_long, c_uint};
use std::path::Path;
use std::sync::Mutex;

/// One classic BPF instruction: sift-insn's [`Insn`](sift_insn::Insn), which is laid out
/// exactly like C's `struct bpf_insn`.
pub use sift_insn::Insn as RawInsn;

/// libpcap's `bpf_filter`: `(program, packet, wirelen, buflen) -> return value`.
///
/// # Safety contract
///
/// Calling it is `unsafe`. The caller must guarantee that
/// * the program pointer points to a program that [`Libpcap::check_runnable`] accepted (or one
///   produced by [`Libpcap::compile`]), still alive and unmodified for the whole call;
/// * the packet pointer is valid for reads of `buflen` bytes;
/// * the [`Libpcap`] the pointer came from is still alive (the library stays mapped while it is).
///
/// A program that fails the check may read out of bounds, `abort()` the process or loop forever.
pub type BpfFilterFn = unsafe extern "C" fn(*const RawInsn, *const u8, c_uint, c_uint) -> c_uint;

type BpfValidateFn = unsafe extern "C" fn(*const RawInsn, c_int) -> c_int;
type LibVersionFn = unsafe extern "C" fn() -> *const c_char;
type BpfImageFn = unsafe extern "C" fn(*const RawInsn, c_int) -> *const c_char;
type OpenDeadFn = unsafe extern "C" fn(c_int, c_int) -> *mut PcapT;
type CompileFn =
    unsafe extern "C" fn(*mut PcapT, *mut BpfProgram, *const c_char, c_int, u32) -> c_int;
type FreecodeFn = unsafe extern "C" fn(*mut BpfProgram);
type GeterrFn = unsafe extern "C" fn(*mut PcapT) -> *mut c_char;
type CloseFn = unsafe extern "C" fn(*mut PcapT);
type OpenOfflinePrecFn = unsafe extern "C" fn(*const c_char, c_uint, *mut c_char) -> *mut PcapT;
type FopenOfflinePrecFn = unsafe extern "C" fn(*mut libc::FILE, c_uint, *mut c_char) -> *mut PcapT;
type NextExFn = unsafe extern "C" fn(*mut PcapT, *mut *mut PktHdr, *mut *const u8) -> c_int;
type IntOfPcapFn = unsafe extern "C" fn(*mut PcapT) -> c_int;

/// Opaque `pcap_t`.
#[repr(C)]
struct PcapT {
    _private: [u8; 0],
}

/// C's `struct bpf_program { u_int bf_len; struct bpf_insn *bf_insns; }`.
#[repr(C)]
struct BpfProgram {
    bf_len: c_uint,
    bf_insns: *mut RawInsn,
}

/// C's `struct timeval` on Linux (two `long`s).
#[repr(C)]
#[derive(Clone, Copy)]
struct Timeval {
    tv_sec: c_long,
    tv_usec: c_long,
}

/// C's `struct pcap_pkthdr`.
#[repr(C)]
#[derive(Clone, Copy)]
struct PktHdr {
    ts: Timeval,
    caplen: u32,
    len: u32,
}

const PCAP_ERRBUF_SIZE: usize = 256;
const PCAP_TSTAMP_PRECISION_MICRO: c_uint = 0;
const PCAP_TSTAMP_PRECISION_NANO: c_uint = 1;
/// Number of scratch memory words (`BPF_MEMWORDS`).
const BPF_MEMWORDS: u32 = 16;

/// The library names tried by [`Libpcap::load`], in order.
pub const LIBRARY_NAMES: [&str; 3] = ["libpcap.so.1", "libpcap.so.0.8", "libpcap.so"];

/// Errors from loading libpcap or reading a capture with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No library could be loaded; says which names were tried and why each failed.
    #[error("cannot load the system libpcap; tried {0}")]
    Load(String),
    /// The library loaded but lacks a function sift needs.
    #[error("libpcap ({library}) lacks the symbol {symbol}: {detail}")]
    Symbol {
        /// The file name that was loaded.
        library: String,
        /// The missing symbol.
        symbol: &'static str,
        /// The loader's message.
        detail: String,
    },
    /// `pcap_open_offline_with_tstamp_precision` failed; holds libpcap's message.
    #[error("libpcap cannot open the capture: {0}")]
    Open(String),
}

/// Why [`Libpcap::try_filter`] refused to run a program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unrunnable {
    /// The program has no instructions.
    #[error("empty program")]
    Empty,
    /// The program is longer than a C `int` can count.
    #[error("program of {0} instructions is too long")]
    TooLong(usize),
    /// An opcode that libpcap's `bpf_filter` does not implement (it would `abort()`).
    #[error("instruction {index}: opcode {code:#06x} is not implemented by libpcap's bpf_filter")]
    Opcode {
        /// Instruction index.
        index: usize,
        /// The opcode.
        code: u16,
    },
    /// A scratch memory index of 16 or more.
    #[error("instruction {index}: scratch memory index {k} out of range")]
    Memory {
        /// Instruction index.
        index: usize,
        /// The index.
        k: u32,
    },
    /// Division or modulus by the constant 0.
    #[error("instruction {index}: division by constant zero")]
    DivideByZero {
        /// Instruction index.
        index: usize,
    },
    /// A jump whose target lies outside the program.
    #[error("instruction {index}: jump out of the program")]
    Jump {
        /// Instruction index.
        index: usize,
    },
    /// The last instruction is not a return.
    #[error("the last instruction is not a return")]
    NoFinalReturn,
}

/// The system libpcap, loaded with `dlopen`. `Send + Sync`; cheap to share behind an `Arc` or a
/// `static`.
pub struct Libpcap {
    bpf_filter: BpfFilterFn,
    bpf_validate: BpfValidateFn,
    bpf_image: BpfImageFn,
    /// `bpf_image` formats into one static buffer: one call at a time.
    image_lock: Mutex<()>,
    lib_version: LibVersionFn,
    open_dead: OpenDeadFn,
    compile: CompileFn,
    freecode: FreecodeFn,
    geterr: GeterrFn,
    close: CloseFn,
    open_offline: OpenOfflinePrecFn,
    fopen_offline: FopenOfflinePrecFn,
    next_ex: NextExFn,
    datalink: IntOfPcapFn,
    snapshot: IntOfPcapFn,
    /// libpcap 1.10's compiler keeps global state: one compile at a time.
    compile_lock: Mutex<()>,
    /// Which file was loaded.
    library_name: &'static str,
    /// Keeps the library mapped for as long as the function pointers above live. Declared last
    /// so it is dropped last.
    _library: libloading::Library,
}

impl std::fmt::Debug for Libpcap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libpcap").field("library", &self.library_name).finish_non_exhaustive()
    }
}

#[allow(unsafe_code)]
mod ffi {
    //! Every `unsafe` block of the crate: loading the library and calling into it.

    use super::*;

    /// Looks `name` up in `lib` as a function pointer of type `T`.
    ///
    /// # Safety
    ///
    /// `T` must be the exact C signature of the symbol.
    unsafe fn symbol<T: Copy>(
        lib: &libloading::Library,
        library: &str,
        name: &'static str,
    ) -> Result<T, Error> {
        let cname = format!("{name}\0");
        // SAFETY: the caller guarantees that `T` matches the C declaration of `name`.
        let sym = unsafe { lib.get::<T>(cname.as_bytes()) };
        match sym {
            Ok(s) => Ok(*s),
            Err(e) => Err(Error::Symbol {
                library: library.to_owned(),
                symbol: name,
                detail: e.to_string(),
            }),
        }
    }

    impl Libpcap {
        /// Loads the system libpcap, trying [`LIBRARY_NAMES`] in order.
        ///
        /// The error lists every name tried with the loader's reason.
        pub fn load() -> Result<Libpcap, Error> {
            let mut tried = Vec::new();
            for name in LIBRARY_NAMES {
                // SAFETY: loading libpcap runs its ELF initialisers; libpcap has none with
                // preconditions (it is routinely loaded into arbitrary processes).
                match unsafe { libloading::Library::new(name) } {
                    Ok(lib) => return Self::from_library(lib, name),
                    Err(e) => tried.push(format!("{name} ({e})")),
                }
            }
            Err(Error::Load(tried.join("; ")))
        }

        fn from_library(lib: libloading::Library, name: &'static str) -> Result<Libpcap, Error> {
            // SAFETY: each type alias used below transcribes the C declaration of its symbol
            // in <pcap/pcap.h> and <pcap/bpf.h> (unchanged from libpcap 0.8 to 1.10).
            unsafe {
                Ok(Libpcap {
                    bpf_filter: symbol(&lib, name, "bpf_filter")?,
                    bpf_validate: symbol(&lib, name, "bpf_validate")?,
                    bpf_image: symbol(&lib, name, "bpf_image")?,
                    image_lock: Mutex::new(()),
                    lib_version: symbol(&lib, name, "pcap_lib_version")?,
                    open_dead: symbol(&lib, name, "pcap_open_dead")?,
                    compile: symbol(&lib, name, "pcap_compile")?,
                    freecode: symbol(&lib, name, "pcap_freecode")?,
                    geterr: symbol(&lib, name, "pcap_geterr")?,
                    close: symbol(&lib, name, "pcap_close")?,
                    open_offline: symbol(&lib, name, "pcap_open_offline_with_tstamp_precision")?,
                    fopen_offline: symbol(&lib, name, "pcap_fopen_offline_with_tstamp_precision")?,
                    next_ex: symbol(&lib, name, "pcap_next_ex")?,
                    datalink: symbol(&lib, name, "pcap_datalink")?,
                    snapshot: symbol(&lib, name, "pcap_snapshot")?,
                    compile_lock: Mutex::new(()),
                    library_name: name,
                    _library: lib,
                })
            }
        }

        /// `pcap_lib_version()`, e.g. `libpcap version 1.10.3 (with TPACKET_V3)`.
        pub fn version(&self) -> String {
            // SAFETY: pcap_lib_version takes nothing and returns a pointer to a static
            // NUL-terminated string (or, defensively, NULL).
            let p = unsafe { (self.lib_version)() };
            if p.is_null() {
                return String::new();
            }
            // SAFETY: non-null, NUL-terminated and static, per libpcap's documentation.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }

        /// `bpf_validate(prog, len)`: libpcap's own verdict, as an oracle. Note that libpcap 1.10
        /// accepts some programs its `bpf_filter` cannot run (see [`Libpcap::check_runnable`]).
        pub fn validate(&self, prog: &[RawInsn]) -> bool {
            let Ok(len) = c_int::try_from(prog.len()) else { return false };
            // SAFETY: `prog` is valid for `len` reads of `struct bpf_insn` (RawInsn is
            // #[repr(C)] with the same layout); bpf_validate reads only those (it returns
            // early for len < 1 and never touches the pointer then).
            unsafe { (self.bpf_validate)(prog.as_ptr(), len) != 0 }
        }

        /// `bpf_image(insn, index)`: the line tcpdump's `-d` prints for one instruction, e.g.
        /// `(002) ldh      [12]`, as an oracle for sift's listing printer. Any instruction can
        /// be formatted (unknown codes print as `unimp`).
        pub fn image(&self, insn: &RawInsn, index: usize) -> String {
            let index = c_int::try_from(index).unwrap_or(c_int::MAX);
            let _guard = self.image_lock.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: `insn` points to one valid `struct bpf_insn` (same #[repr(C)] layout);
            // bpf_image only reads it and returns a pointer to its static buffer, which we copy
            // before releasing the lock that serializes all callers.
            let p = unsafe { (self.bpf_image)(insn, index) };
            if p.is_null() {
                return String::new();
            }
            // SAFETY: non-null and NUL-terminated (libpcap formats with snprintf).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }

        /// Runs an already checked program. Crate-internal so that the check cannot be
        /// skipped.
        #[inline]
        pub(crate) fn run_checked(
            f: BpfFilterFn,
            prog: &[RawInsn],
            pkt: &[u8],
            wirelen: u32,
        ) -> u32 {
            // buflen must fit a u_int; a longer slice is cut, which only hides bytes from the
            // program (every load is bounds-checked against buflen).
            let buflen = c_uint::try_from(pkt.len()).unwrap_or(c_uint::MAX);
            // SAFETY: the callers pass programs accepted by check_runnable (all jumps land
            // inside `prog`, only opcodes bpf_filter implements, scratch indices < 16, ends in
            // ret), and `pkt` is valid for `buflen` reads; `f` came from a live Libpcap that
            // the caller borrows.
            unsafe { f(prog.as_ptr(), pkt.as_ptr(), wirelen, buflen) }
        }

        /// `pcap_open_dead(link's DLT number, snaplen)` + `pcap_compile`: compiles `expr` into
        /// a program. `Err` holds libpcap's message (`pcap_geterr`).
        ///
        /// `netmask` is the IPv4 netmask for `ip broadcast`; pass `0xffff_ffff`
        /// (`PCAP_NETMASK_UNKNOWN`) when there is none. Calls are serialised: libpcap 1.10's
        /// compiler is not reentrant. A "dead" handle is no capture file: see
        /// [`Libpcap::compile_savefile`] for what tcpdump compiles when it reads one.
        pub fn compile(
            &self,
            link: sift_wire::LinkType,
            snaplen: i32,
            expr: &str,
            optimize: bool,
            netmask: u32,
        ) -> Result<Vec<RawInsn>, String> {
            let cexpr = CString::new(expr)
                .map_err(|_| "filter expression contains a NUL byte".to_owned())?;
            let _guard = self.compile_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let dlt = link.dlt();
            // SAFETY: pcap_open_dead has no preconditions; it returns NULL on failure.
            let p = unsafe { (self.open_dead)(dlt, snaplen) };
            if p.is_null() {
                return Err(format!("pcap_open_dead({dlt}, {snaplen}) failed"));
            }
            let handle = Handle { pcap: self, p };
            self.compile_with(&handle, &cexpr, optimize, netmask)
        }

        /// What tcpdump compiles for a capture file: `pcap_compile` on the `pcap_t` that
        /// `pcap_fopen_offline` returns for a pcap file header with `link`, `snaplen` and the
        /// byte order `big_endian` (read from memory, so no file is needed). libpcap's compiler
        /// then knows it reads a savefile and whether the file's byte order is the host's
        /// (its `rfile` and `swapped`): DLT_NULL and DLT_ENC address families are compared in
        /// the file's byte order, and IPv6 on the loopback link types is any BSD's AF_INET6.
        /// The program returns libpcap's snapshot length for the file (`snaplen`, or its
        /// largest for the link type when `snaplen` is 0 or above that).
        pub fn compile_savefile(
            &self,
            link: sift_wire::LinkType,
            snaplen: u32,
            big_endian: bool,
            expr: &str,
            optimize: bool,
            netmask: u32,
        ) -> Result<Vec<RawInsn>, String> {
            let cexpr = CString::new(expr)
                .map_err(|_| "filter expression contains a NUL byte".to_owned())?;
            let mut header = savefile_header(link, snaplen, big_endian);
            let _guard = self.compile_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // SAFETY: `header` is valid for reads and writes of its length for as long as the
            // stream lives: it outlives `handle` below, whose drop (`pcap_close`) closes the
            // stream. The mode string is NUL-terminated.
            let file =
                unsafe { libc::fmemopen(header.as_mut_ptr().cast(), header.len(), c"rb".as_ptr()) };
            if file.is_null() {
                return Err(format!("fmemopen: {}", std::io::Error::last_os_error()));
            }
            let mut errbuf = [0 as c_char; PCAP_ERRBUF_SIZE];
            // SAFETY: `file` is an open stream (libpcap takes it over: pcap_close closes it,
            // and on failure libpcap leaves it open); `errbuf` has PCAP_ERRBUF_SIZE bytes.
            let p = unsafe {
                (self.fopen_offline)(file, PCAP_TSTAMP_PRECISION_MICRO, errbuf.as_mut_ptr())
            };
            if p.is_null() {
                // SAFETY: the stream is still ours when libpcap refused it; closed once.
                unsafe { libc::fclose(file) };
                // SAFETY: libpcap writes a NUL-terminated message into errbuf on failure;
                // the buffer was zeroed, so it is terminated even if it did not.
                let msg = unsafe { CStr::from_ptr(errbuf.as_ptr()) }.to_string_lossy().into_owned();
                return Err(msg);
            }
            let handle = Handle { pcap: self, p };
            let out = self.compile_with(&handle, &cexpr, optimize, netmask);
            drop(handle);
            drop(header);
            out
        }

        /// `pcap_compile` on a live handle, then the instructions copied out.
        fn compile_with(
            &self,
            handle: &Handle<'_>,
            expr: &CStr,
            optimize: bool,
            netmask: u32,
        ) -> Result<Vec<RawInsn>, String> {
            let mut prog = BpfProgram { bf_len: 0, bf_insns: std::ptr::null_mut() };
            // SAFETY: `handle.p` is a live pcap_t, `prog` a valid out-parameter, `expr` a
            // NUL-terminated string that outlives the call; the callers hold the lock that
            // serialises the non-reentrant compiler.
            let rc = unsafe {
                (self.compile)(handle.p, &mut prog, expr.as_ptr(), c_int::from(optimize), netmask)
            };
            if rc != 0 {
                return Err(handle.error_text());
            }
            let out = if prog.bf_insns.is_null() || prog.bf_len == 0 {
                Vec::new()
            } else {
                // SAFETY: on success pcap_compile leaves `bf_len` instructions at `bf_insns`,
                // owned by `prog` until pcap_freecode below.
                unsafe { std::slice::from_raw_parts(prog.bf_insns, prog.bf_len as usize) }.to_vec()
            };
            // SAFETY: `prog` was filled by a successful pcap_compile and is freed once.
            unsafe { (self.freecode)(&mut prog) };
            Ok(out)
        }

        /// Reads a whole savefile with libpcap (`pcap_open_offline_with_tstamp_precision` and
        /// a `pcap_next_ex` loop). Timestamps are in nanoseconds when `nano`, else in
        /// microseconds. A read error after the file opened ends the loop and is reported in
        /// [`OfflineCapture::error`], keeping the packets read before it.
        pub fn read_offline(&self, path: &Path, nano: bool) -> Result<OfflineCapture, Error> {
            use std::os::unix::ffi::OsStrExt;
            let cpath = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
                Error::Open(format!("{}: path contains a NUL byte", path.display()))
            })?;
            let precision =
                if nano { PCAP_TSTAMP_PRECISION_NANO } else { PCAP_TSTAMP_PRECISION_MICRO };
            let mut errbuf = [0 as c_char; PCAP_ERRBUF_SIZE];
            // SAFETY: `cpath` is NUL-terminated and `errbuf` has PCAP_ERRBUF_SIZE bytes, as
            // the function requires.
            let p = unsafe { (self.open_offline)(cpath.as_ptr(), precision, errbuf.as_mut_ptr()) };
            if p.is_null() {
                // SAFETY: libpcap writes a NUL-terminated message into errbuf on failure;
                // the buffer was zeroed, so it is terminated even if it did not.
                let msg = unsafe { CStr::from_ptr(errbuf.as_ptr()) }.to_string_lossy().into_owned();
                return Err(Error::Open(msg));
            }
            let handle = Handle { pcap: self, p };
            // SAFETY: `p` is a live pcap_t.
            let linktype = unsafe { (self.datalink)(handle.p) };
            // SAFETY: `p` is a live pcap_t.
            let snaplen = unsafe { (self.snapshot)(handle.p) };
            let mut packets = Vec::new();
            let mut error = None;
            loop {
                let mut hdr: *mut PktHdr = std::ptr::null_mut();
                let mut data: *const u8 = std::ptr::null();
                // SAFETY: `p` is live; the out-pointers are valid.
                let rc = unsafe { (self.next_ex)(handle.p, &mut hdr, &mut data) };
                match rc {
                    1 => {
                        if hdr.is_null() {
                            error = Some("pcap_next_ex returned a NULL header".to_owned());
                            break;
                        }
                        // SAFETY: on rc == 1 `hdr` points to a header valid until the next
                        // call on `p`.
                        let h = unsafe { *hdr };
                        let bytes = if data.is_null() || h.caplen == 0 {
                            Vec::new()
                        } else {
                            // SAFETY: on rc == 1 `data` holds `caplen` bytes, valid until the
                            // next call on `p`; they are copied out at once.
                            unsafe { std::slice::from_raw_parts(data, h.caplen as usize) }.to_vec()
                        };
                        packets.push(OfflinePacket {
                            // `long` is 64 bits here; `as` also compiles where it is 32.
                            ts_sec: h.ts.tv_sec as i64,
                            // The fraction is < 10^9 for any sane file; keep the low bits of an
                            // insane one rather than failing.
                            ts_frac: h.ts.tv_usec as u32,
                            caplen: h.caplen,
                            wirelen: h.len,
                            data: bytes,
                        });
                    }
                    -2 => break,
                    -1 => {
                        error = Some(handle.error_text());
                        break;
                    }
                    // 0 means "timeout" and cannot happen on a savefile; stop rather than spin.
                    other => {
                        error = Some(format!("pcap_next_ex returned {other}"));
                        break;
                    }
                }
            }
            Ok(OfflineCapture { linktype, snaplen, packets, error })
        }
    }

    /// A `pcap_t` closed on drop.
    struct Handle<'a> {
        pcap: &'a Libpcap,
        p: *mut PcapT,
    }

    impl Handle<'_> {
        fn error_text(&self) -> String {
            // SAFETY: `p` is live; pcap_geterr returns its internal NUL-terminated buffer.
            let e = unsafe { (self.pcap.geterr)(self.p) };
            if e.is_null() {
                return "unknown libpcap error".to_owned();
            }
            // SAFETY: non-null and NUL-terminated (libpcap's errbuf), copied out at once.
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        }
    }

    impl Drop for Handle<'_> {
        fn drop(&mut self) {
            // SAFETY: `p` came from pcap_open_* and is closed exactly once, here.
            unsafe { (self.pcap.close)(self.p) }
        }
    }
}

impl Libpcap {
    /// The file name that was loaded (one of [`LIBRARY_NAMES`]).
    pub fn library_name(&self) -> &'static str {
        self.library_name
    }

    /// libpcap's `bpf_filter(prog, pkt, wirelen, buflen = pkt.len())`: the program's return
    /// value for this packet (0 = reject, otherwise the number of bytes to keep).
    ///
    /// Returns 0 for a program that [`Libpcap::check_runnable`] refuses (libpcap would read out
    /// of bounds or `abort()` on it); use [`Libpcap::try_filter`] to tell the two apart. The
    /// check costs one pass over the program; [`Libpcap::prepare`] avoids repeating it.
    #[inline]
    pub fn filter(&self, prog: &[RawInsn], pkt: &[u8], wirelen: u32) -> u32 {
        self.try_filter(prog, pkt, wirelen).unwrap_or(0)
    }

    /// Like [`Libpcap::filter`], but says why a program cannot be run.
    #[inline]
    pub fn try_filter(
        &self,
        prog: &[RawInsn],
        pkt: &[u8],
        wirelen: u32,
    ) -> Result<u32, Unrunnable> {
        check_runnable(prog)?;
        Ok(Self::run_checked(self.bpf_filter, prog, pkt, wirelen))
    }

    /// Checks `prog` once and returns a filter that runs it with no further checks.
    pub fn prepare<'a>(&'a self, prog: &'a [RawInsn]) -> Result<PreparedFilter<'a>, Unrunnable> {
        check_runnable(prog)?;
        Ok(PreparedFilter { f: self.bpf_filter, prog, _pcap: std::marker::PhantomData })
    }

    /// The raw `bpf_filter` function pointer, for benchmark loops that want no wrapper at all.
    /// Read the safety contract on [`BpfFilterFn`]; [`Libpcap::prepare`] is the safe
    /// alternative and costs the same per call.
    pub fn filter_fn(&self) -> BpfFilterFn {
        self.bpf_filter
    }

    /// Whether libpcap's `bpf_filter` can run `prog` safely: the rules of `bpf_validate`
    /// (non-empty, jumps inside the program, scratch indices below 16, no division by a
    /// constant 0, ends in a return) plus "only opcodes `bpf_filter` implements", since
    /// `bpf_validate` lets through some (`ret x`, `ld #k` with a size, unknown `misc`) on
    /// which `bpf_filter` calls `abort()`.
    ///
    /// Backward `ja` jumps are allowed, as in libpcap (`protochain` uses them); such a program
    /// may loop forever.
    pub fn check_runnable(prog: &[RawInsn]) -> Result<(), Unrunnable> {
        check_runnable(prog)
    }
}

/// A program checked once by [`Libpcap::prepare`], ready to run many times.
#[derive(Clone, Copy)]
pub struct PreparedFilter<'a> {
    f: BpfFilterFn,
    prog: &'a [RawInsn],
    _pcap: std::marker::PhantomData<&'a Libpcap>,
}

impl std::fmt::Debug for PreparedFilter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedFilter").field("len", &self.prog.len()).finish_non_exhaustive()
    }
}

impl PreparedFilter<'_> {
    /// `bpf_filter(prog, pkt, wirelen, pkt.len())`.
    #[inline]
    pub fn run(&self, pkt: &[u8], wirelen: u32) -> u32 {
        Libpcap::run_checked(self.f, self.prog, pkt, wirelen)
    }

    /// The program.
    pub fn program(&self) -> &[RawInsn] {
        self.prog
    }
}

/// What [`check_runnable`] must check for an opcode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not implemented by libpcap's `bpf_filter` (it would `abort()`).
    Invalid,
    /// Nothing to check.
    Plain,
    /// Scratch memory access: k < 16.
    Mem,
    /// Division or modulus by k: k != 0.
    DivK,
    /// `ja`: target in range.
    Ja,
    /// Conditional jump: both targets in range.
    Cond,
    /// A return.
    Ret,
}

/// Opcodes implemented by libpcap's `bpf_filter` (every `case` label of its switch), indexed
/// by opcode; opcodes above 0xff are all invalid.
static KINDS: [Kind; 256] = {
    let mut t = [Kind::Invalid; 256];
    // ret k, ret a
    t[0x06] = Kind::Ret;
    t[0x16] = Kind::Ret;
    // ld w/h/b abs, ld w/h/b ind, ld len, ldx len, ldx msh, ld imm, ldx imm, tax, txa, neg
    let plain =
        [0x20, 0x28, 0x30, 0x40, 0x48, 0x50, 0x80, 0x81, 0xb1, 0x00, 0x01, 0x07, 0x87, 0x84];
    let mut i = 0;
    while i < plain.len() {
        t[plain[i]] = Kind::Plain;
        i += 1;
    }
    // ld mem, ldx mem, st, stx
    t[0x60] = Kind::Mem;
    t[0x61] = Kind::Mem;
    t[0x02] = Kind::Mem;
    t[0x03] = Kind::Mem;
    // alu with k: add sub mul or and lsh rsh xor (plain), div mod (k != 0); the same with x.
    let alu = [0x00, 0x10, 0x20, 0x40, 0x50, 0x60, 0x70, 0xa0];
    let mut i = 0;
    while i < alu.len() {
        t[0x04 | alu[i]] = Kind::Plain;
        t[0x0c | alu[i]] = Kind::Plain;
        i += 1;
    }
    t[0x34] = Kind::DivK;
    t[0x94] = Kind::DivK;
    t[0x3c] = Kind::Plain;
    t[0x9c] = Kind::Plain;
    // ja; jeq/jgt/jge/jset with k and with x
    t[0x05] = Kind::Ja;
    let cond = [0x15, 0x25, 0x35, 0x45, 0x1d, 0x2d, 0x3d, 0x4d];
    let mut i = 0;
    while i < cond.len() {
        t[cond[i]] = Kind::Cond;
        i += 1;
    }
    t
};

fn check_runnable(prog: &[RawInsn]) -> Result<(), Unrunnable> {
    let len = prog.len();
    let Some(last) = prog.last() else { return Err(Unrunnable::Empty) };
    if c_int::try_from(len).is_err() {
        return Err(Unrunnable::TooLong(len));
    }
    // len <= i32::MAX, so the u32 arithmetic below mirrors libpcap's exactly.
    let len32 = len as u32;
    for (index, insn) in prog.iter().enumerate() {
        let kind = KINDS.get(usize::from(insn.code)).copied().unwrap_or(Kind::Invalid);
        let from = index as u32 + 1;
        let ok = match kind {
            Kind::Plain | Kind::Ret => true,
            Kind::Invalid => return Err(Unrunnable::Opcode { index, code: insn.code }),
            Kind::Mem if insn.k >= BPF_MEMWORDS => {
                return Err(Unrunnable::Memory { index, k: insn.k });
            }
            Kind::Mem => true,
            Kind::DivK if insn.k == 0 => return Err(Unrunnable::DivideByZero { index }),
            Kind::DivK => true,
            // libpcap sign-extends k, so a target "from + k" that wraps is a backward jump
            // landing at (from + k) mod 2^32; both cases stay inside when that is < len.
            Kind::Ja => from.wrapping_add(insn.k) < len32,
            Kind::Cond => from + u32::from(insn.jt.max(insn.jf)) < len32,
        };
        if !ok {
            return Err(Unrunnable::Jump { index });
        }
    }
    if KINDS.get(usize::from(last.code)) != Some(&Kind::Ret) {
        return Err(Unrunnable::NoFinalReturn);
    }
    Ok(())
}

/// The 24-byte header of a classic pcap file (microsecond timestamps, version 2.4) with
/// `link`'s LINKTYPE number and `snaplen`, in the byte order `big_endian`.
fn savefile_header(link: sift_wire::LinkType, snaplen: u32, big_endian: bool) -> Vec<u8> {
    let words = [0xa1b2_c3d4, (2 << 16) | 4, 0, 0, snaplen, u32::from(link.number())];
    let mut out = Vec::with_capacity(24);
    for (i, w) in words.into_iter().enumerate() {
        // The version is two 16-bit fields (major, minor), each in the file's order.
        let bytes = match (i, big_endian) {
            (1, true) => [0, 2, 0, 4],
            (1, false) => [2, 0, 4, 0],
            (_, true) => w.to_be_bytes(),
            (_, false) => w.to_le_bytes(),
        };
        out.extend_from_slice(&bytes);
    }
    out
}

/// A capture read by [`Libpcap::read_offline`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflineCapture {
    /// `pcap_datalink`: the LINKTYPE/DLT of the file.
    pub linktype: i32,
    /// `pcap_snapshot`: the snapshot length in the file header.
    pub snaplen: i32,
    /// The packets read, in file order.
    pub packets: Vec<OfflinePacket>,
    /// `Some(pcap_geterr text)` when `pcap_next_ex` failed before the end of the file.
    pub error: Option<String>,
}

/// One packet as libpcap returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflinePacket {
    /// Seconds since the epoch.
    pub ts_sec: i64,
    /// Microseconds or nanoseconds, per the `nano` argument of [`Libpcap::read_offline`].
    pub ts_frac: u32,
    /// Captured length (`data.len()`).
    pub caplen: u32,
    /// Length on the wire.
    pub wirelen: u32,
    /// The captured bytes.
    pub data: Vec<u8>,
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn c_layouts() {
        assert_eq!(std::mem::size_of::<RawInsn>(), 8);
        assert_eq!(std::mem::align_of::<RawInsn>(), 4);
        assert_eq!(std::mem::offset_of!(RawInsn, k), 4);
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(std::mem::size_of::<PktHdr>(), 24);
            assert_eq!(std::mem::offset_of!(PktHdr, caplen), 16);
            assert_eq!(std::mem::size_of::<BpfProgram>(), 16);
            assert_eq!(std::mem::offset_of!(BpfProgram, bf_insns), 8);
        }
    }

    #[test]
    fn runnable_check() {
        let ret = RawInsn::new(0x06, 0, 0, 1);
        assert_eq!(check_runnable(&[]), Err(Unrunnable::Empty));
        assert_eq!(check_runnable(&[ret]), Ok(()));
        // ret x: bpf_validate accepts it, bpf_filter aborts.
        assert_eq!(
            check_runnable(&[RawInsn::new(0x0e, 0, 0, 0)]),
            Err(Unrunnable::Opcode { index: 0, code: 0x0e })
        );
        assert_eq!(
            check_runnable(&[RawInsn::new(0x60, 0, 0, 16), ret]),
            Err(Unrunnable::Memory { index: 0, k: 16 })
        );
        assert_eq!(
            check_runnable(&[RawInsn::new(0x34, 0, 0, 0), ret]),
            Err(Unrunnable::DivideByZero { index: 0 })
        );
        assert_eq!(
            check_runnable(&[RawInsn::new(0x05, 0, 0, 1), ret]),
            Err(Unrunnable::Jump { index: 0 })
        );
        assert_eq!(check_runnable(&[RawInsn::new(0x05, 0, 0, 0), ret]), Ok(()));
        // ja 0xffffffff from index 1 lands on index 1 (itself): inside, though it loops.
        assert_eq!(check_runnable(&[ret, RawInsn::new(0x05, 0, 0, u32::MAX), ret]), Ok(()));
        // ...but from index 0, k = 0xfffffffd lands at 0xfffffffe: outside.
        assert_eq!(
            check_runnable(&[RawInsn::new(0x05, 0, 0, 0xffff_fffd), ret]),
            Err(Unrunnable::Jump { index: 0 })
        );
        assert_eq!(
            check_runnable(&[RawInsn::new(0x15, 0, 1, 0), ret]),
            Err(Unrunnable::Jump { index: 0 })
        );
        assert_eq!(check_runnable(&[RawInsn::new(0x15, 0, 0, 0), ret]), Ok(()));
        assert_eq!(
            check_runnable(&[ret, RawInsn::new(0x04, 0, 0, 0)]),
            Err(Unrunnable::NoFinalReturn)
        );
    }
}
