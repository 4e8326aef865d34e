//! Why a program is refused: [`VerifyErrorKind`], located at an instruction by
//! [`VerifyError`]. The messages are the kernel verifier's where it has one, so that a refusal
//! reads like the kernel's log ("R3 pointer arithmetic on pkt_end prohibited").

use sift_ebpf::DecodeErrorKind;
use thiserror::Error;

/// A refusal located at an instruction (its slot index, as the kernel numbers them).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("instruction {insn}: {kind}")]
pub struct VerifyError {
    /// The slot index of the instruction refused.
    pub insn: usize,
    /// Why.
    pub kind: VerifyErrorKind,
}

/// Why a program is refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VerifyErrorKind {
    /// A slot does not decode.
    #[error(transparent)]
    Decode(DecodeErrorKind),
    /// No instructions.
    #[error("empty program")]
    Empty,
    /// No program type, so no context to check accesses against.
    #[error("no program type (xdp, tc or socket)")]
    NoProgType,
    /// More slots than the kernel takes.
    #[error("program of {0} instructions is too long (max {max})", max = crate::MAX_INSNS)]
    TooLong(usize),
    /// The exploration went past the processed-instruction budget.
    #[error("BPF program is too large. Processed {0} insn")]
    TooLarge(u64),
    /// Too many branches pending at once.
    #[error("The sequence of {0} jumps is too complex.")]
    TooComplex(usize),
    /// A jump (or the fall through the last instruction) leaves its function.
    #[error("jump out of range from insn {from} to {to}")]
    JumpOutOfRange {
        /// The jump.
        from: usize,
        /// Where it goes.
        to: i64,
    },
    /// A jump into the second slot of a `lddw`.
    #[error("jump into the middle of ldimm64 insn {0}")]
    IntoLdImm64(usize),
    /// An instruction no path reaches.
    #[error("unreachable insn {0}")]
    Unreachable(usize),
    /// A function's last instruction neither exits nor jumps.
    #[error("last insn is not an exit or jmp")]
    FallOff,
    /// A loop that comes back to the same state.
    #[error("infinite loop detected at insn {0}")]
    InfiniteLoop(usize),
    /// More than 8 nested frames.
    #[error("the call stack of {0} frames is too deep")]
    CallDepth(usize),
    /// The frames of a call chain use more than 512 bytes of stack.
    #[error("combined stack size of {calls} calls is {size}. Too large")]
    StackSize {
        /// Frames in the chain.
        calls: usize,
        /// Their stack bytes (each rounded up to 32).
        size: usize,
    },
    /// A register read before it is written.
    #[error("R{0} !read_ok")]
    NotInit(u8),
    /// A write to `r10`.
    #[error("frame pointer is read only")]
    FramePointer,
    /// A load or store through a register that is no pointer to memory.
    #[error("R{reg} invalid mem access '{ty}'")]
    InvalidMemAccess {
        /// The base register.
        reg: u8,
        /// Its type.
        ty: &'static str,
    },
    /// Arithmetic on a pointer type that allows none.
    #[error("R{reg} pointer arithmetic on {ty} prohibited{null}", null = if *.null { ", null-check it first" } else { "" })]
    PtrArith {
        /// The register.
        reg: u8,
        /// Its type.
        ty: &'static str,
        /// Whether it may be null.
        null: bool,
    },
    /// A 32-bit operation on a pointer.
    #[error("R{0} 32-bit pointer arithmetic prohibited")]
    PtrArith32(u8),
    /// An operation between two pointers.
    #[error("R{reg} pointer {op} pointer prohibited")]
    PtrPtr {
        /// The destination.
        reg: u8,
        /// The operation.
        op: &'static str,
    },
    /// `&`, `|` or `^` on a pointer.
    #[error("R{reg} bitwise operator {op} on pointer prohibited")]
    PtrBitwise {
        /// The destination.
        reg: u8,
        /// The operation.
        op: &'static str,
    },
    /// Any other operation but `+`/`-` on a pointer.
    #[error("R{reg} pointer arithmetic with {op} operator prohibited")]
    PtrOp {
        /// The destination.
        reg: u8,
        /// The operation.
        op: &'static str,
    },
    /// `scalar - pointer`.
    #[error("R{0} tried to subtract pointer from scalar")]
    SubPtrFromScalar(u8),
    /// `fp - x`.
    #[error("R{0} subtraction from stack pointer prohibited")]
    SubFromStack(u8),
    /// A pointer offset that may be huge.
    #[error("math between {ty} pointer and register with unbounded min value is not allowed")]
    UnboundedPtrMath {
        /// The pointer's type.
        ty: &'static str,
    },
    /// A constant too large to add to a pointer.
    #[error("math between {ty} pointer and {value} is not allowed")]
    PtrMathConst {
        /// The constant.
        value: i64,
        /// The pointer's type.
        ty: &'static str,
    },
    /// A pointer's fixed offset past what the verifier tracks (2^29).
    #[error("{ty} pointer offset {off} is not allowed")]
    PtrOffset {
        /// The offset.
        off: i64,
        /// The pointer's type.
        ty: &'static str,
    },
    /// A pointer moved past what the verifier tracks (2^29).
    #[error("value {value} makes {ty} pointer be out of bounds")]
    PtrOutOfBounds {
        /// The offset.
        value: i64,
        /// The pointer's type.
        ty: &'static str,
    },
    /// A 32-bit move of a pointer (unprivileged).
    #[error("R{0} partial copy of pointer")]
    PartialCopy(u8),
    /// A comparison involving a pointer (unprivileged).
    #[error("R{0} pointer comparison prohibited")]
    PtrCompare(u8),
    /// A pointer returned (unprivileged).
    #[error("R{0} leaks addr as return value")]
    LeakReturn(u8),
    /// A pointer stored where it can be read back as a number (unprivileged).
    #[error("R{reg} leaks addr into {place}")]
    LeakInto {
        /// The register stored.
        reg: u8,
        /// `mem`, `map`, `ctx`.
        place: &'static str,
    },
    /// A packet access not proven inside the packet.
    #[error(
        "invalid access to packet, off={off} size={size}, R{reg}(id={id},off={reg_off},r={range})"
    )]
    Packet {
        /// The access offset (register offset plus instruction offset).
        off: i64,
        /// Bytes.
        size: u32,
        /// The base register.
        reg: u8,
        /// Its variable-offset id.
        id: u32,
        /// Its fixed offset.
        reg_off: i32,
        /// The bytes proven readable.
        range: u32,
    },
    /// A variable offset that may be negative.
    #[error("R{0} min value is negative, either use unsigned index or do a if (index >=0) check.")]
    NegativeMin(u8),
    /// A variable offset with no useful upper bound.
    #[error("R{0} unbounded memory access, make sure to bounds check any such access")]
    Unbounded(u8),
    /// A map value access outside the value.
    #[error("invalid access to map value, value_size={value_size} off={off} size={size}")]
    MapValue {
        /// The map's value size.
        value_size: u32,
        /// The access offset.
        off: i64,
        /// Bytes.
        size: u64,
    },
    /// A write into a map the program may only read.
    #[error("write into map forbidden, value_size={value_size} off={off} size={size}")]
    ReadonlyMap {
        /// The map's value size.
        value_size: u32,
        /// The access offset.
        off: i64,
        /// Bytes.
        size: u64,
    },
    /// A stack access outside the frame's 512 bytes.
    #[error("invalid {dir} stack R{reg} off={off} size={size}")]
    StackBounds {
        /// `read from`, `write to`, `indirect access to`.
        dir: &'static str,
        /// The base register.
        reg: u8,
        /// The offset from the frame pointer.
        off: i64,
        /// Bytes.
        size: u64,
    },
    /// A read of stack bytes never written.
    #[error("invalid read from stack off {off}+{at} size {size}")]
    StackUninit {
        /// The offset from the frame pointer.
        off: i64,
        /// The first uninitialised byte, from `off`.
        at: u64,
        /// Bytes.
        size: u64,
    },
    /// A stack access not aligned to its size.
    #[error("misaligned stack access off {off} size {size}")]
    MisalignedStack {
        /// The offset from the frame pointer.
        off: i64,
        /// Bytes.
        size: u32,
    },
    /// An atomic access to a map value not aligned to its size.
    #[error("misaligned value access off {off} size {size}")]
    MisalignedValue {
        /// The offset.
        off: i64,
        /// Bytes.
        size: u32,
    },
    /// A stack access at a variable offset (refused by this verifier).
    #[error("R{0} variable offset stack access prohibited")]
    VariableStack(u8),
    /// A context access the program type does not allow.
    #[error("invalid bpf_context access off={off} size={size}")]
    Ctx {
        /// The field offset.
        off: i64,
        /// Bytes.
        size: u32,
    },
    /// A context access through a moved context pointer.
    #[error("dereference of modified ctx ptr R{reg} off={off} disallowed")]
    ModifiedCtx {
        /// The register.
        reg: u8,
        /// Its offset.
        off: i32,
    },
    /// A context access at a variable offset.
    #[error("variable ctx access prohibited (R{0})")]
    VariableCtx(u8),
    /// An atomic operation on memory that does not allow it.
    #[error("BPF_ATOMIC stores into R{reg} {ty} is not allowed")]
    AtomicInto {
        /// The base register.
        reg: u8,
        /// Its type.
        ty: &'static str,
    },
    /// A pointer stored to the stack in fewer than 8 bytes.
    #[error("invalid size of register spill")]
    SpillSize,
    /// A partial read of a spilled pointer.
    #[error("invalid size of register fill")]
    FillSize,
    /// `lddw map_fd(i)` with no map `i`.
    #[error("fd {0} is not pointing to valid bpf_map")]
    BadMap(u32),
    /// `lddw map_value(i, off)` past the value.
    #[error("invalid access to map value pointer, value_size={value_size} off={off}")]
    MapValuePointer {
        /// The map's value size.
        value_size: u32,
        /// The offset.
        off: u64,
    },
    /// `lddw map_value` on a map that is not a one-element array.
    #[error("direct value access on map type {0} is not supported")]
    DirectValue(u32),
    /// A helper number the kernel does not have.
    #[error("invalid func unknown#{0}")]
    UnknownHelper(i32),
    /// A helper this program type may not call.
    #[error("program of this type cannot use helper bpf_{name}#{id}")]
    HelperNotAllowed {
        /// The helper's name.
        name: &'static str,
        /// Its number.
        id: u32,
    },
    /// A kernel helper this verifier has no prototype for.
    #[error("helper bpf_{name}#{id} is not supported by this verifier")]
    HelperUnsupported {
        /// The helper's name.
        name: &'static str,
        /// Its number.
        id: u32,
    },
    /// A helper argument of the wrong type.
    #[error("R{reg} type={found} expected={expected}")]
    ArgType {
        /// The argument register.
        reg: u8,
        /// What it holds.
        found: &'static str,
        /// What the helper takes.
        expected: &'static str,
    },
    /// A map of a type the helper does not take (or a helper the map does not allow).
    #[error("cannot pass map_type {map_type} into func bpf_{name}#{id}")]
    MapFuncCompat {
        /// The map type's number.
        map_type: u32,
        /// The helper's name.
        name: &'static str,
        /// Its number.
        id: u32,
    },
    /// A size argument that is not bounded.
    #[error("R{0} unbounded memory access, use 'var &= const' or 'if (var < const)'")]
    SizeUnbounded(u8),
    /// A size argument that may be zero where zero is not allowed.
    #[error("R{0} invalid zero-sized read")]
    ZeroSize(u8),
    /// An argument that must be a known constant.
    #[error("R{0} is not a known constant'")]
    NotConst(u8),
    /// A reference (a ring buffer reservation) not released at exit.
    #[error("Unreleased reference id={id} alloc_insn={insn}")]
    Unreleased {
        /// The reference's id.
        id: u32,
        /// Where it was acquired.
        insn: usize,
    },
    /// A release of something that is not a reference.
    #[error("R{0} must be referenced when passed to release function")]
    NotReferenced(u8),
    /// `LD_ABS`/`LD_IND` in a program type without an skb.
    #[error("BPF_LD_[ABS|IND] instructions not allowed for this program type")]
    LdAbsNotAllowed,
    /// `LD_ABS`/`LD_IND` with `r6` not the context.
    #[error("at the time of BPF_LD_ABS|IND R6 != pointer to skb")]
    LdAbsCtx,
    /// A constant shift by the width or more.
    #[error("invalid shift {0}")]
    InvalidShift(i32),
    /// A constant division or modulo by zero.
    #[error("div by zero")]
    DivByZero,
    /// A pointer to a callee's stack stored into a caller's frame.
    #[error("cannot spill pointers to stack into stack frame of the caller")]
    StackPtrToCaller,
    /// An access outside a ring buffer reservation.
    #[error("invalid access to memory, mem_size={mem_size} off={off} size={size}")]
    Mem {
        /// The reservation's size.
        mem_size: u32,
        /// The access offset.
        off: i64,
        /// Bytes.
        size: u64,
    },
    /// A function returning a pointer into its own frame.
    #[error("cannot return stack pointer to the caller")]
    ReturnStackPtr,
    /// An instruction this verifier does not handle (kfuncs, `callx`, BTF and function
    /// pointers).
    #[error("{0} is not supported")]
    Unsupported(&'static str),
}
