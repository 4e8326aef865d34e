//! Read-only file mappings that survive the file shrinking under them.
//!
//! Capture files are read through a mapping: the whole file is one slice, packets borrow it, and
//! a parallel copy hands ranges of it straight to `writev`. The price of a mapping is that when
//! another program truncates the file (log rotation, a `-C/-W` ring, `sift -r X -w X`), touching
//! a page past the new end raises `SIGBUS`, which kills the process without a word. A
//! [`MappedFile`] turns that into data the reader can check:
//!
//! * One process-wide `SIGBUS` handler, installed with the first mapping (`SA_SIGINFO`,
//!   `SA_ONSTACK`). For a fault inside a registered mapping it maps anonymous zero pages
//!   (`MAP_FIXED`) over the faulting page through the end of that mapping, records where the
//!   damage starts in the mapping's "damaged at" slot (the lowest of the faulting page's offset
//!   and the file's size as `fstat` now gives it), and returns: the access re-executes and reads
//!   zeros. For any other `SIGBUS` (a fault elsewhere, a signal sent by a process) it hands the
//!   signal on to the previous disposition: the previous handler is called (Rust's own
//!   stack-overflow handler, an application's), or the default action is restored so that the
//!   process dies of `SIGBUS` as it would have.
//! * The registry of mappings is a fixed array of atomics ([`MAX_MAPPINGS`] slots): the handler
//!   takes no lock and allocates nothing, and everything it calls (`fstat`, `mmap`, `sigaction`,
//!   `raise`) is a plain system call.
//! * A reader calls [`MappedFile::probe`] with a record's end after parsing the record, and
//!   delivers the record only if no damage was seen below its end. The probe touches the
//!   record's last byte and the first byte of the next page, so that a shrink below the record's
//!   end faults (and is recorded) before the record is delivered rather than while its consumer
//!   reads it; then it is one atomic load. [`MappedFile::check_size`] compares the file's size
//!   with the mapping's (one `fstat`) where touching proves nothing: in the last page.
//!
//! Why not read without a mapping: the zero-copy reader and the one-copy parallel writer both
//! rest on it, a `pread` per record costs more than the filters, and the damage is rare. Why not
//! `MAP_PRIVATE` plus `MAP_POPULATE`: private mappings fault the same way past the end of file.
//!
//! Limits, documented rather than hidden:
//!
//! * The kernel faults only on whole pages past the end of file: bytes between the new end and
//!   the end of its page read as zeros without a fault. [`MappedFile::probe`] covers that
//!   (touching the next page, which does fault; `fstat` in the last page); code that reads the
//!   mapping without probing may read such zeros unwarned.
//! * A record is checked when it is delivered. If the file shrinks after that, while the
//!   record's consumer still reads it, the consumer reads zeros; the reader reports the damage at
//!   its next record (located before the end of the one delivered), and the one-copy writer
//!   checks after its `writev`s.
//! * A file truncated and then written again before the reader touches the pages reads the new
//!   bytes: nothing faults. (tcpdump reading through stdio has the same limit: it sees whatever
//!   the file holds when it gets there.)
//! * The kernel reading a vanished page on the process's behalf (`writev` from the mapping)
//!   does not raise a signal: the call fails with `EFAULT` or writes short. Callers that pass
//!   mapped bytes to the kernel check [`MappedFile::check_size`] when that happens.
//! * A program that later replaces the `SIGBUS` disposition removes the protection; sift
//!   installs no other `SIGBUS` handler.
//! * `bytes()` hands out `&[u8]` to memory that another process (or the handler) may change
//!   while it is borrowed: the same trade-off every reader of memory-mapped files makes. Nothing
//!   here relies on reading the same byte twice giving the same value.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use crate::cvt;

/// How many mappings can be registered at once; [`MappedFile::map`] fails beyond (callers read
/// the file another way).
pub const MAX_MAPPINGS: usize = 256;

/// "No damage" in a slot's `damaged_at`.
const INTACT: u64 = u64::MAX;

/// One registered mapping, as the handler sees it.
struct Slot {
    /// Claimed by a [`MappedFile`] (set before `start`, cleared after it).
    claimed: AtomicBool,
    /// The mapping's first byte; 0 while the slot is not active.
    start: AtomicUsize,
    /// The mapping's length in whole pages.
    len: AtomicUsize,
    /// The mapped file's descriptor, for `fstat` in the handler.
    fd: AtomicI32,
    /// The lowest offset at which the mapping no longer holds the file's bytes.
    damaged_at: AtomicU64,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            claimed: AtomicBool::new(false),
            start: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            fd: AtomicI32::new(-1),
            damaged_at: AtomicU64::new(INTACT),
        }
    }
}

static SLOTS: [Slot; MAX_MAPPINGS] = [const { Slot::new() }; MAX_MAPPINGS];

/// The page size, read once before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The disposition found when the handler was installed: `sa_sigaction` and `sa_flags`.
static PREVIOUS_HANDLER: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PREVIOUS_FLAGS: AtomicI32 = AtomicI32::new(0);

static INSTALL: Once = Once::new();
/// The installation's outcome (`0`, or the errno it failed with).
static INSTALL_ERROR: AtomicI32 = AtomicI32::new(0);

/// Access-pattern advice for a mapping (`madvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// No special treatment.
    Normal,
    /// Read front to back: read ahead aggressively, drop pages behind.
    Sequential,
    /// Random access: read ahead little.
    Random,
    /// The whole range will be needed soon.
    WillNeed,
}

/// A read-only shared mapping of a whole file whose truncation under the reader is recorded
/// instead of killing the process; see the module documentation.
pub struct MappedFile {
    ptr: NonNull<u8>,
    /// The file's size when mapped (the length of [`bytes`](Self::bytes)).
    len: usize,
    /// The mapping's length in whole pages.
    map_len: usize,
    slot: &'static Slot,
    file: File,
}

// SAFETY: the mapping is read-only memory owned by this value; sharing `&[u8]` views of it
// between threads is as safe as sharing any other immutable bytes, and the slot is atomics.
unsafe impl Send for MappedFile {}
// SAFETY: as for `Send`: no method mutates through `&self` except atomics.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps `file` (its whole current size, which must not be 0) read-only and registers the
    /// mapping with the `SIGBUS` handler (installed on first use); keeps a duplicate of the
    /// descriptor for `fstat`. Fails when the system refuses the mapping, when the handler cannot
    /// be installed, or when [`MAX_MAPPINGS`] mappings are live: the caller then reads the file
    /// without a mapping.
    pub fn map(file: &File) -> io::Result<MappedFile> {
        install_handler()?;
        let file = file.try_clone()?;
        let size = file.metadata()?.len();
        let len =
            usize::try_from(size).map_err(|_| io::Error::from(io::ErrorKind::FileTooLarge))?;
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "cannot map an empty file"));
        }
        let page = PAGE.load(Ordering::Relaxed);
        let map_len = len.div_ceil(page) * page;
        let slot = claim_slot().ok_or_else(|| {
            io::Error::other(format!("more than {MAX_MAPPINGS} files mapped at once"))
        })?;
        // SAFETY: a fresh read-only shared mapping chosen by the kernel (no address hint), of a
        // descriptor that stays open as long as the mapping (`self.file`).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            let err = io::Error::last_os_error();
            slot.claimed.store(false, Ordering::Release);
            return Err(err);
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).expect("mmap never returns null on success");
        slot.len.store(map_len, Ordering::Relaxed);
        slot.fd.store(file.as_raw_fd(), Ordering::Relaxed);
        slot.damaged_at.store(INTACT, Ordering::Relaxed);
        // Publishing `start` activates the slot for the handler, after the other fields.
        slot.start.store(ptr.as_ptr() as usize, Ordering::Release);
        Ok(MappedFile { ptr, len, map_len, slot, file })
    }

    /// The file's bytes (its size when mapped). After a truncation, the bytes from
    /// [`damaged_at`](Self::damaged_at) on read as zeros.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live mapping of at least `len` readable bytes until `drop`, which
        // cannot run while this borrow lives. Pages that vanish with the file are replaced by
        // zero pages (the handler), so every byte stays readable.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The mapped length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: empty files are not mapped).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapped file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Tells the kernel how the mapping will be read. A refused hint changes nothing else.
    pub fn advise(&self, advice: Advice) -> io::Result<()> {
        let advice = match advice {
            Advice::Normal => libc::MADV_NORMAL,
            Advice::Sequential => libc::MADV_SEQUENTIAL,
            Advice::Random => libc::MADV_RANDOM,
            Advice::WillNeed => libc::MADV_WILLNEED,
        };
        // SAFETY: advice on this value's own live mapping; it changes no contents.
        cvt(unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.map_len, advice) }).map(drop)
    }

    /// The offset from which the mapping no longer holds the file's bytes (they read as zeros),
    /// `None` while no damage has been seen. One atomic load.
    pub fn damaged_at(&self) -> Option<u64> {
        // Relaxed suffices: the handler stores before it remaps, and a thread can only read the
        // replacement zeros after the remapping, which the kernel publishes to every thread of
        // the process (a TLB shootdown: a full barrier on each CPU that runs one of them).
        let at = self.slot.damaged_at.load(Ordering::Relaxed);
        (at != INTACT).then_some(at)
    }

    /// Whether the mapping's bytes before `end` (a record's end offset) are all the file's:
    /// returns [`damaged_at`](Self::damaged_at) after making sure a shrink of the file below
    /// `end` has been seen. It touches the byte before `end` (its page faults if it is gone) and
    /// the first byte of the page after `end` (which faults if the file now ends within `end`'s
    /// page, where no fault would say so); when `end` lies in the mapping's last page, where
    /// there is no next page to touch, it asks `fstat` ([`check_size`](Self::check_size)). So a
    /// reader that delivers a record only when this returns `None` or an offset at or past the
    /// record's end delivers the file's real bytes. Costs two loads (one usually in the same
    /// cache line as the next record) and one atomic load; `fstat` only in the last page.
    pub fn probe(&self, end: u64) -> Option<u64> {
        let len = self.len as u64;
        let page = PAGE.load(Ordering::Relaxed) as u64;
        if let Some(last) = end.checked_sub(1).filter(|&l| l < len) {
            self.touch(last);
        }
        let next_page = end.next_multiple_of(page);
        if next_page < len {
            self.touch(next_page);
            self.damaged_at()
        } else {
            self.check_size()
        }
    }

    /// Reads the byte at `at` (within the mapping) for its side effect: a fault if its page is
    /// gone, which the handler records.
    fn touch(&self, at: u64) {
        debug_assert!(at < self.len as u64);
        // SAFETY: `at` is within the live mapping (the callers check); a volatile read so the
        // access, and so the fault if the page is gone, really happens here.
        let _ = unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(at as usize)) };
    }

    /// Compares the file's current size with the mapped length (one `fstat`): a shorter file
    /// is recorded as damage from its new size on. Returns [`damaged_at`](Self::damaged_at).
    /// Catches what no fault reports: bytes past the new end within its last page, and pages the
    /// kernel read on the process's behalf (`EFAULT` from `writev`).
    pub fn check_size(&self) -> Option<u64> {
        if let Ok(meta) = self.file.metadata()
            && meta.len() < self.len as u64
        {
            self.slot.damaged_at.fetch_min(meta.len(), Ordering::SeqCst);
        }
        self.damaged_at()
    }

    /// The file's current size (`fstat`), to describe damage; `None` if `fstat` fails.
    pub fn current_size(&self) -> Option<u64> {
        self.file.metadata().ok().map(|m| m.len())
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // Deactivate the slot first, so that the handler never matches a range being unmapped.
        self.slot.start.store(0, Ordering::Release);
        // SAFETY: this value's own mapping (the original file pages, or zero pages the handler
        // put in their place), unmapped once; no borrow of it outlives `self`.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.map_len) };
        self.slot.claimed.store(false, Ordering::Release);
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.len)
            .field("damaged_at", &self.damaged_at())
            .finish_non_exhaustive()
    }
}

fn claim_slot() -> Option<&'static Slot> {
    SLOTS.iter().find(|s| {
        s.claimed.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    })
}

/// Installs the handler once for the process; later calls return the first outcome.
fn install_handler() -> io::Result<()> {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: sigaction is plain data; all-zero is a valid (empty) value.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `previous`.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
            INSTALL_ERROR
                .store(io::Error::last_os_error().raw_os_error().unwrap_or(-1), Ordering::Relaxed);
            return;
        }
        PREVIOUS_HANDLER.store(previous.sa_sigaction, Ordering::Relaxed);
        PREVIOUS_FLAGS.store(previous.sa_flags, Ordering::Relaxed);
        // SAFETY: as above.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_sigbus as extern "C" fn(_, _, _) as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `action.sa_mask` is a live sigset_t.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: `action` is a valid sigaction whose handler is async-signal-safe (see
        // `on_sigbus`); the previous disposition was saved above for chaining. The statics it
        // reads are written before this call, which orders them before any delivery.
        if unsafe { libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) } != 0 {
            INSTALL_ERROR
                .store(io::Error::last_os_error().raw_os_error().unwrap_or(-1), Ordering::Relaxed);
        }
    });
    match INSTALL_ERROR.load(Ordering::Relaxed) {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// The `SIGBUS` handler: repairs faults in registered mappings, hands everything else on.
/// Async-signal-safe: atomics, `fstat`, `mmap`, `sigaction`, `raise`; no locks, no allocation;
/// `errno` is preserved.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t (SA_SIGINFO); errno is thread-local.
    let (code, addr, errno) =
        unsafe { ((*info).si_code, (*info).si_addr() as usize, *libc::__errno_location()) };
    // Faults have a positive si_code; a SIGBUS sent by a process (kill, raise) has si_code <= 0
    // and an unrelated si_addr.
    let repaired = code > 0 && repair(addr);
    // SAFETY: restoring this thread's errno.
    unsafe { *libc::__errno_location() = errno };
    if !repaired {
        // SAFETY: called from the handler with the handler's own arguments.
        unsafe { hand_on(sig, info, context, code) };
    }
}

/// For a fault at `addr` inside a registered mapping: records the damage, maps zero pages from
/// the faulting page to the end of the mapping, and returns true.
fn repair(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &SLOTS {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || addr < start {
            continue;
        }
        let len = slot.len.load(Ordering::Acquire);
        // The slot may have been reused between the two loads: read `start` again.
        if slot.start.load(Ordering::Acquire) != start || addr - start >= len {
            continue;
        }
        let fault_page = addr & !(page - 1);
        let mut at = (fault_page - start) as u64;
        // SAFETY: stat is plain data; all-zero is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let fd = slot.fd.load(Ordering::Relaxed);
        // SAFETY: fstat writes only into `st`; `fd` is the mapping's open descriptor (or, in
        // a race with reuse, some descriptor: fstat then fails or reports a harmless size).
        if unsafe { libc::fstat(fd, &mut st) } == 0 && (st.st_size as u64) < at {
            at = st.st_size as u64;
        }
        // Record before remapping, so that any thread reading the zeros sees the damage.
        slot.damaged_at.fetch_min(at, Ordering::SeqCst);
        // SAFETY: replaces pages of this registered mapping only (from the faulting page to
        // the mapping's page-rounded end), read-only, with anonymous zero pages: every borrowed
        // view of the mapping stays readable and nothing else is touched.
        let zeros = unsafe {
            libc::mmap(
                fault_page as *mut libc::c_void,
                start + len - fault_page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        return zeros != libc::MAP_FAILED;
    }
    false
}

/// Hands a `SIGBUS` that is not ours to the disposition found at installation.
///
/// # Safety
///
/// Called only from `on_sigbus`, with its arguments.
unsafe fn hand_on(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
    code: libc::c_int,
) {
    let handler = PREVIOUS_HANDLER.load(Ordering::Relaxed);
    let flags = PREVIOUS_FLAGS.load(Ordering::Relaxed);
    if handler == libc::SIG_IGN && code <= 0 {
        // A sent SIGBUS that was ignored stays ignored.
        return;
    }
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // The default action, as before: restore it; a fault re-executes and kills, a sent
        // signal is raised again (blocked while this handler runs, delivered when it returns).
        // SAFETY: plain data, all-zero valid; SIG_DFL with an empty mask.
        let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
        dfl.sa_sigaction = libc::SIG_DFL;
        // SAFETY: async-signal-safe calls on valid arguments.
        unsafe {
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
            if code <= 0 {
                libc::raise(libc::SIGBUS);
            }
        }
        return;
    }
    if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed with SA_SIGINFO, so it has this type.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, context);
    } else {
        // SAFETY: a plain handler takes the signal number only.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

#[cfg(test)]
mod tests;
