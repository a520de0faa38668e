//! Port declarations: the one place where a block's ports are written down.
//!
//! A block declares each port group (configuration, per-cycle inputs,
//! outputs, and the model's registers) once with [`port_group!`]. The macro
//! generates the plain Rust struct the model works with and an implementation
//! of [`PortGroup`], which describes the group as a list of [`PortDesc`]
//! (name, width, element count) and packs it to / unpacks it from a flat
//! buffer of 32-bit words. Everything else is derived from that description:
//! the C++ shim and the FFI layout (by `cosim/build.rs`), the waveform
//! variables, the mismatch reports and the text format of stimulus files.
//!
//! # Word layout
//!
//! The ports of a group are laid out in declaration order. Each port starts
//! on a fresh 32-bit word and occupies `ceil(width * count / 32)` words, the
//! same layout as Verilator's `CData`/`SData`/`IData`/`QData`/`VlWide`
//! members. A vector port (`Vec<T>`) is a flattened Verilog vector: element
//! `k` occupies bits `[k*width +: width]`, element 0 in the least significant
//! bits.
//!
//! ```
//! use model::port::{PortGroup, Shape};
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Default)]
//! pub struct Sizes { pub n: usize }
//!
//! model::port_group! {
//!     /// Example group.
//!     pub struct Example<Sizes> |p| {
//!         /// A flag.
//!         valid_i: bool = 1,
//!         /// An index into `n` things.
//!         idx_i: u8 = 4,
//!         /// One 3-bit value per thing.
//!         vals_i: Vec<u8> = (3, p.n),
//!     }
//! }
//!
//! let p = Sizes { n: 5 };
//! let mut x = Example::zero(&p);
//! x.valid_i = true;
//! x.idx_i = 9;
//! x.vals_i[4] = 7;
//! let mut words = vec![0u32; Example::layout(&p).words];
//! x.pack(&p, &mut words).unwrap();
//! assert_eq!(words, vec![1, 9, 7 << 12]);
//! assert_eq!(Example::unpack(&p, &words), x);
//! assert_eq!(Example::ports(&p)[2].shape, Shape::vec(3, 5));
//! ```

use std::fmt;
use std::ops::{BitOrAssign, Shl, ShrAssign};

mod text;

pub use text::{describe_value, format_plain, format_value, parse_value, sign_extend};

/// Bit shape of one port: `count` elements of `width` bits each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Width of one element in bits (1..=64).
    pub width: u32,
    /// Number of elements; 1 for a scalar port.
    pub count: u32,
    /// Whether the Rust type is a `Vec` (so the text form is a list).
    pub is_vec: bool,
    /// Whether the elements are two's-complement signed numbers.
    pub signed: bool,
}

impl Shape {
    /// A scalar port of `width` bits.
    pub const fn scalar(width: u32) -> Self {
        Shape {
            width,
            count: 1,
            is_vec: false,
            signed: false,
        }
    }
    /// A vector port of `count` elements of `width` bits.
    pub const fn vec(width: u32, count: usize) -> Self {
        Shape {
            width,
            count: count as u32,
            is_vec: true,
            signed: false,
        }
    }
    /// The same shape with signed elements (or not).
    pub const fn with_signed(self, signed: bool) -> Self {
        Shape { signed, ..self }
    }
    /// Total number of bits of the flattened Verilog vector.
    pub const fn bits(&self) -> u32 {
        self.width * self.count
    }
    /// Number of 32-bit words the port occupies.
    pub const fn words(&self) -> usize {
        (self.bits() as usize).div_ceil(32)
    }
}

impl From<u32> for Shape {
    fn from(width: u32) -> Self {
        Shape::scalar(width)
    }
}

impl From<(u32, usize)> for Shape {
    fn from((width, count): (u32, usize)) -> Self {
        Shape::vec(width, count)
    }
}

/// How a port's value reads best, in the waveforms and the mismatch
/// report (declared after the shape: `field: ty = shape => Radix::Hex`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Radix {
    /// Decimal (the default; wide scalars print in hex anyway).
    #[default]
    Dec,
    /// Hexadecimal: addresses, data beats, masks.
    Hex,
    /// An enumeration: value `k` is named `names[k]` (a value past the end
    /// has no name).
    Names(&'static [&'static str]),
}

/// Description of one port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDesc {
    /// The port name, identical in Rust and in the RTL.
    pub name: &'static str,
    /// First line of the doc comment of the declaration.
    pub doc: &'static str,
    /// Bit shape.
    pub shape: Shape,
    /// How the value reads best.
    pub radix: Radix,
}

impl PortDesc {
    /// Port `name` of `shape`, with no doc and the default radix.
    pub fn plain(name: &'static str, shape: Shape) -> Self {
        PortDesc {
            name,
            doc: "",
            shape,
            radix: Radix::Dec,
        }
    }
}

/// The layout of a whole group: its ports and each port's word offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The ports, in declaration order.
    pub ports: Vec<PortDesc>,
    /// Word offset of each port in the packed buffer.
    pub offsets: Vec<usize>,
    /// Total words of the packed buffer.
    pub words: usize,
}

impl Layout {
    /// Computes offsets for `ports` laid out one after another, word aligned.
    pub fn new(ports: Vec<PortDesc>) -> Self {
        let mut offsets = Vec::with_capacity(ports.len());
        let mut words = 0;
        for p in &ports {
            offsets.push(words);
            words += p.shape.words();
        }
        Layout {
            ports,
            offsets,
            words,
        }
    }
    /// The packed words of port `i` within `buf`.
    pub fn slice<'a>(&self, buf: &'a [u32], i: usize) -> &'a [u32] {
        &buf[self.offsets[i]..self.offsets[i] + self.ports[i].shape.words()]
    }
    /// Index of the port called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.name == name)
    }
}

/// A value that does not fit the declared shape of its port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackError {
    /// Port name.
    pub port: &'static str,
    /// What was wrong.
    pub what: String,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "port `{}`: {}", self.port, self.what)
    }
}

impl std::error::Error for PackError {}

/// A group of ports declared with [`port_group!`].
pub trait PortGroup: Clone + fmt::Debug + PartialEq {
    /// The structural parameters the shapes depend on.
    type Params;
    /// The ports of this group for the given parameters, in declaration order.
    fn ports(p: &Self::Params) -> Vec<PortDesc>;
    /// The layout (ports and offsets) for the given parameters.
    fn layout(p: &Self::Params) -> Layout {
        Layout::new(Self::ports(p))
    }
    /// Every port zero (vectors at their declared length).
    fn zero(p: &Self::Params) -> Self;
    /// Packs into `out` (exactly `layout(p).words` long). Fails, naming the
    /// port, if a value does not fit its width or a vector has the wrong
    /// length; nothing is masked silently.
    fn pack(&self, p: &Self::Params, out: &mut [u32]) -> Result<(), PackError> {
        self.pack_where(p, out, None)
    }
    /// [`PortGroup::pack`] of the ports `i` with `keep[i]` (all with
    /// `None`); the words of the others are left as they are. The lockstep
    /// packs only what it compares: the outputs the RTL has, the state it
    /// reads.
    fn pack_where(
        &self,
        p: &Self::Params,
        out: &mut [u32],
        keep: Option<&[bool]>,
    ) -> Result<(), PackError>;
    /// Unpacks from a buffer produced by [`PortGroup::pack`] or by the RTL.
    fn unpack(p: &Self::Params, words: &[u32]) -> Self;
    /// Whether [`PortGroup::pack`] would succeed and produce exactly
    /// `words` (`layout(p).words` long): how the lockstep runner compares
    /// the model's outputs with the RTL's every cycle, without packing.
    fn eq_words(&self, p: &Self::Params, words: &[u32]) -> bool;
    /// Packs into a fresh buffer.
    fn to_words(&self, p: &Self::Params) -> Result<Vec<u32>, PackError> {
        let mut w = vec![0; Self::layout(p).words];
        self.pack(p, &mut w)?;
        Ok(w)
    }
}

/// Writes `width` (1..=64) bits of `v` at bit offset `off` of `w`.
#[inline]
pub fn put_bits(w: &mut [u32], off: u32, width: u32, v: u64) {
    let mut done = 0;
    while done < width {
        let bit = off + done;
        let wi = (bit / 32) as usize;
        let sh = bit % 32;
        let n = (32 - sh).min(width - done);
        let m = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let chunk = ((v >> done) as u32) & m;
        w[wi] = (w[wi] & !(m << sh)) | (chunk << sh);
        done += n;
    }
}

/// Reads `width` (1..=64) bits at bit offset `off` of `w`.
#[inline]
pub fn get_bits(w: &[u32], off: u32, width: u32) -> u64 {
    let mut v = 0u64;
    let mut done = 0;
    while done < width {
        let bit = off + done;
        let wi = (bit / 32) as usize;
        let sh = bit % 32;
        let n = (32 - sh).min(width - done);
        let m = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        v |= (((w[wi] >> sh) & m) as u64) << done;
        done += n;
    }
    v
}

/// Mask of the low `width` bits.
#[inline]
pub const fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// A scalar that can sit in a port element.
pub trait PortScalar: Copy + fmt::Debug + PartialEq + Default {
    /// Two's-complement signed.
    const SIGNED: bool = false;
    /// The value as raw bits (two's complement for signed types, masked to
    /// the type's own width).
    fn to_bits(self) -> u64;
    /// The value from raw bits of the port (`width` bits).
    fn from_bits(bits: u64, width: u32) -> Self;
    /// Whether the value is representable in `width` bits.
    fn fits(self, width: u32) -> bool {
        self.to_bits() & !mask(width) == 0
    }
    /// One packed word of `PER` elements of `W = 32 / PER` bits, element 0
    /// in the low bits (bits beyond `W` are dropped; the caller checks the
    /// range).
    #[inline]
    fn word<const W: u32, const PER: usize>(chunk: &[Self; PER]) -> u32 {
        word_of(chunk, W)
    }
}

/// Elements of `width` bits (which divides 32) packed into one word,
/// element 0 in the low bits (bits beyond `width` dropped).
#[inline(always)]
fn word_of<T: PortScalar>(chunk: &[T], width: u32) -> u32 {
    let m = mask(width) as u32;
    chunk.iter().enumerate().fold(0, |x, (j, e)| {
        x | (e.to_bits() as u32 & m) << (j as u32 * width)
    })
}

impl PortScalar for bool {
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64, _: u32) -> Self {
        bits & 1 != 0
    }
    /// 32 flags into one word, eight at a time: a `bool` is one byte, 0 or
    /// 1, so the product with `0x0102_0408_1020_4080` gathers byte `j` of
    /// eight into bit `56 + j` (the partial products land on distinct bits:
    /// no carries).
    #[inline]
    fn word<const W: u32, const PER: usize>(chunk: &[Self; PER]) -> u32 {
        if W != 1 {
            return word_of(chunk, W);
        }
        let mut x = 0u32;
        for (k, eight) in chunk.chunks_exact(8).enumerate() {
            let b = eight.iter().rev().fold(0u64, |a, &e| a << 8 | u64::from(e));
            x |= ((b.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32) << (8 * k);
        }
        x
    }
}

macro_rules! scalar_native {
    ($($t:ty),*) => {$(
        impl PortScalar for $t {
            fn to_bits(self) -> u64 { self as u64 }
            fn from_bits(bits: u64, _: u32) -> Self { bits as $t }
        }
    )*};
}
scalar_native!(u8, u16, u32, u64);

macro_rules! scalar_uint {
    ($($t:ty),*) => {$(
        impl<const B: usize> PortScalar for arbitrary_int::UInt<$t, B>
        where arbitrary_int::UInt<$t, B>: Default
        {
            fn to_bits(self) -> u64 { self.value() as u64 }
            fn from_bits(bits: u64, _: u32) -> Self {
                Self::new((bits & mask(B as u32)) as $t)
            }
        }
    )*};
}
scalar_uint!(u8, u16, u32, u64);

macro_rules! scalar_int {
    ($($t:ty),*) => {$(
        impl<const B: usize> PortScalar for arbitrary_int::Int<$t, B>
        where arbitrary_int::Int<$t, B>: Default
        {
            const SIGNED: bool = true;
            fn to_bits(self) -> u64 { (self.value() as i64 as u64) & mask(B as u32) }
            fn from_bits(bits: u64, _: u32) -> Self {
                let sh = 64 - B as u32;
                Self::new((((bits << sh) as i64) >> sh) as $t)
            }
            fn fits(self, width: u32) -> bool { width as usize == B }
        }
    )*};
}
scalar_int!(i8, i16, i32, i64);

/// "value (or element `i`) `v` does not fit in `width` bits" (out of line:
/// see [`PortValue::emit`]).
#[cold]
#[inline(never)]
fn too_wide(i: Option<usize>, v: &dyn fmt::Debug, width: u32) -> String {
    match i {
        Some(i) => format!("element {i} = {v:?} does not fit in {width} bits"),
        None => format!("value {v:?} does not fit in {width} bits"),
    }
}

/// "vector has `len` elements, the port holds `count`" (out of line).
#[cold]
#[inline(never)]
fn wrong_length(len: usize, count: u32) -> String {
    format!("vector has {len} elements, the port holds {count}")
}

/// A value of one port: a scalar or a `Vec` of scalars.
pub trait PortValue: Clone + fmt::Debug + PartialEq {
    /// Whether the elements are signed.
    const SIGNED: bool;
    /// The value with every element zero, at the declared length.
    fn zero(s: Shape) -> Self;
    /// Streams the packed words of the value, in order, to `f(index,
    /// word)`: exactly `s.words()` calls. Fails if a value does not fit the
    /// shape (after some words may have been emitted). The one routine
    /// behind [`PortValue::pack`] and [`PortValue::eq_words`].
    fn emit(&self, s: Shape, f: impl FnMut(usize, u32)) -> Result<(), String>;
    /// Unpacks from `words`.
    fn unpack(s: Shape, words: &[u32]) -> Self;
    /// Packs into `out` (exactly `s.words()` long).
    #[inline(always)]
    fn pack(&self, s: Shape, out: &mut [u32]) -> Result<(), String> {
        pack_by_emit(self, s, out)
    }
    /// Whether [`PortValue::pack`] would succeed and produce exactly
    /// `words`: the comparison of every co-simulated cycle, without a
    /// buffer.
    #[inline(always)]
    fn eq_words(&self, s: Shape, words: &[u32]) -> bool {
        eq_by_emit(self, s, words)
    }
}

/// [`PortValue::pack`] through [`PortValue::emit`].
#[inline(always)]
fn pack_by_emit<V: PortValue>(v: &V, s: Shape, out: &mut [u32]) -> Result<(), String> {
    v.emit(s, |k, w| out[k] = w)
}

/// [`PortValue::eq_words`] through [`PortValue::emit`].
#[inline(always)]
fn eq_by_emit<V: PortValue>(v: &V, s: Shape, words: &[u32]) -> bool {
    let mut diff = 0u32;
    v.emit(s, |k, w| diff |= w ^ words[k]).is_ok() && diff == 0
}

impl<T: PortScalar> PortValue for T {
    const SIGNED: bool = T::SIGNED;
    fn zero(_: Shape) -> Self {
        T::default()
    }
    #[inline(always)]
    fn emit(&self, s: Shape, mut f: impl FnMut(usize, u32)) -> Result<(), String> {
        let b = self.to_bits();
        let width = s.width;
        if b & !mask(width) != 0 || (T::SIGNED && !self.fits(width)) {
            return Err(too_wide(None, self, width));
        }
        f(0, b as u32);
        if s.width > 32 {
            f(1, (b >> 32) as u32);
        }
        Ok(())
    }
    #[inline]
    fn unpack(s: Shape, words: &[u32]) -> Self {
        let mut b = words[0] as u64;
        if s.width > 32 {
            b |= (words[1] as u64) << 32;
        }
        T::from_bits(b & mask(s.width), s.width)
    }
}

/// Streams elements of `W` bits (`W` divides 32, `PER = 32 / W`), `PER`
/// per word, element 0 in the low bits, to `f(index, word)`; returns the OR
/// of the bits of any element beyond `W` (non-zero: out of range). Both are
/// compile-time constants and whole words are fixed-size arrays, and the
/// range check is a separate OR over the elements, so that both loops
/// unroll and vectorise: this is the hot path of every co-simulated cycle.
#[inline(always)]
fn emit_whole<T: PortScalar, const W: u32, const PER: usize>(
    v: &[T],
    mut f: impl FnMut(usize, u32),
) -> u64 {
    debug_assert_eq!(PER as u32 * W, 32);
    let mut chunks = v.chunks_exact(PER);
    let mut k = 0;
    for chunk in &mut chunks {
        let chunk: &[T; PER] = chunk.try_into().expect("chunks_exact");
        f(k, T::word::<W, PER>(chunk));
        k += 1;
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        f(k, word_of(rem, W));
    }
    // All bits of all elements ORed together: any above W is out of range.
    v.iter().fold(0u64, |a, e| a | e.to_bits()) & !mask(W)
}

/// The accumulator of [`emit_stream`]: `u64` for elements of up to 32 bits
/// (at most one word completes per element), `u128` above.
trait Acc: Copy + Default + From<u64> + BitOrAssign + Shl<u32, Output = Self> + ShrAssign<u32> {
    /// The low 32 bits.
    fn low(self) -> u32;
}

impl Acc for u64 {
    fn low(self) -> u32 {
        self as u32
    }
}

impl Acc for u128 {
    fn low(self) -> u32 {
        self as u32
    }
}

/// Streams elements of any width up to 64 through an accumulator `A`, one
/// word out at a time; returns the OR of the out-of-range bits.
#[inline]
fn emit_stream<T: PortScalar, A: Acc>(v: &[T], width: u32, mut f: impl FnMut(usize, u32)) -> u64 {
    let m = mask(width);
    let mut all = 0u64;
    let mut k = 0usize;
    let mut acc = A::default();
    let mut nacc = 0u32;
    for e in v {
        let b = e.to_bits();
        all |= b;
        acc |= A::from(b & m) << nacc;
        nacc += width;
        while nacc >= 32 {
            f(k, acc.low());
            acc >>= 32;
            nacc -= 32;
            k += 1;
        }
    }
    if nacc > 0 {
        f(k, acc.low());
    }
    all & !m
}

impl<T: PortScalar> PortValue for Vec<T> {
    const SIGNED: bool = T::SIGNED;
    fn zero(s: Shape) -> Self {
        vec![T::default(); s.count as usize]
    }
    #[inline(always)]
    fn emit(&self, s: Shape, f: impl FnMut(usize, u32)) -> Result<(), String> {
        emit_vec(self, s, f)
    }
    #[inline(always)]
    fn pack(&self, s: Shape, out: &mut [u32]) -> Result<(), String> {
        pack_vec(self, s, out)
    }
    #[inline(always)]
    fn eq_words(&self, s: Shape, words: &[u32]) -> bool {
        eq_vec(self, s, words)
    }
    #[inline(always)]
    fn unpack(s: Shape, words: &[u32]) -> Self {
        unpack_vec(s, words)
    }
}

// A vector port's pack, compare and unpack are compiled once per element
// type, not once per port: inlined into every port group's `pack`,
// `eq_words` and `unpack`, their eight width-specialised loops were 1.59
// of the 1.92 MB of the `model` crate's machine code and most of its 57 s
// of LLVM passes in a cold release build. Each loop is still specialised
// to its width inside; what a vector port adds per cycle is one call.

#[inline(never)]
fn pack_vec<T: PortScalar>(v: &Vec<T>, s: Shape, out: &mut [u32]) -> Result<(), String> {
    pack_by_emit(v, s, out)
}

#[inline(never)]
fn eq_vec<T: PortScalar>(v: &Vec<T>, s: Shape, words: &[u32]) -> bool {
    eq_by_emit(v, s, words)
}

/// A vector's words, streamed as [`PortValue::emit`] says.
#[inline(always)]
fn emit_vec<T: PortScalar>(v: &[T], s: Shape, f: impl FnMut(usize, u32)) -> Result<(), String> {
    // The shape is taken apart into locals, and the error messages are
    // built out of line, so that it stays in registers.
    let (width, count) = (s.width, s.count);
    if v.len() != count as usize {
        return Err(wrong_length(v.len(), count));
    }
    // The range check is one OR over all elements, reported after the
    // loop (this is the hot path of every co-simulated cycle).
    let over = match width {
        1 => emit_whole::<T, 1, 32>(v, f),
        2 => emit_whole::<T, 2, 16>(v, f),
        4 => emit_whole::<T, 4, 8>(v, f),
        8 => emit_whole::<T, 8, 4>(v, f),
        16 => emit_whole::<T, 16, 2>(v, f),
        32 => emit_whole::<T, 32, 1>(v, f),
        w if w <= 32 => emit_stream::<T, u64>(v, w, f),
        w => emit_stream::<T, u128>(v, w, f),
    };
    if over != 0 || (T::SIGNED && v.iter().any(|e| !e.fits(width))) {
        let (i, e) = v
            .iter()
            .enumerate()
            .find(|(_, v)| !v.fits(width))
            .expect("an element is out of range");
        return Err(too_wide(Some(i), e, width));
    }
    Ok(())
}

#[inline(never)]
fn unpack_vec<T: PortScalar>(s: Shape, words: &[u32]) -> Vec<T> {
    if 32 % s.width == 0 {
        let per = 32 / s.width;
        let m = mask(s.width);
        return (0..s.count)
            .map(|i| {
                let w = words[(i / per) as usize] as u64;
                T::from_bits((w >> ((i % per) * s.width)) & m, s.width)
            })
            .collect();
    }
    let m = mask(s.width) as u128;
    let mut v = Vec::with_capacity(s.count as usize);
    let mut acc: u128 = 0;
    let mut nacc = 0u32;
    let mut k = 0usize;
    for _ in 0..s.count {
        while nacc < s.width {
            acc |= (words[k] as u128) << nacc;
            nacc += 32;
            k += 1;
        }
        v.push(T::from_bits((acc & m) as u64, s.width));
        acc >>= s.width;
        nacc -= s.width;
    }
    v
}

/// Declares a port group: a plain struct plus its [`PortGroup`] description.
///
/// ```text
/// port_group! {
///     /// Doc of the struct.
///     pub struct Name<ParamsType> |p| {
///         /// Doc of the port (first line shows in reports).
///         port_name: RustType = shape_expr,
///     }
/// }
/// ```
///
/// `shape_expr` is a width (`u32`) for a scalar or `(width, count)` for a
/// `Vec`; it may use the parameters through the name bound by `|p|`.
/// Field names are the RTL port (or register) names, character for character.
#[macro_export]
macro_rules! port_group {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<$params:ty> |$p:ident| {
            $(
                #[doc = $doc:literal]
                $(#[doc = $more:literal])*
                $field:ident : $ty:ty = $shape:expr $(=> $radix:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, PartialEq, Eq)]
        $vis struct $name {
            $(
                #[doc = $doc]
                $(#[doc = $more])*
                pub $field: $ty,
            )*
        }

        impl Clone for $name {
            fn clone(&self) -> Self {
                Self {$($field: self.$field.clone(),)*}
            }

            /// Field by field, so that a vector port keeps its allocation
            /// (the derived `clone_from` allocates every vector anew).
            fn clone_from(&mut self, src: &Self) {
                let _ = src;
                $(self.$field.clone_from(&src.$field);)*
            }
        }

        impl $crate::port::PortGroup for $name {
            type Params = $params;

            fn ports($p: &$params) -> Vec<$crate::port::PortDesc> {
                let _ = $p;
                vec![$(
                    $crate::port::PortDesc {
                        name: stringify!($field),
                        doc: $doc.trim_ascii(),
                        shape: $crate::port::Shape::from($shape)
                            .with_signed(<$ty as $crate::port::PortValue>::SIGNED),
                        radix: {
                            #[allow(unused_imports)]
                            use $crate::port::Radix;
                            *[$crate::port::Radix::Dec $(, $radix)?].last().unwrap()
                        },
                    },
                )*]
            }

            fn zero($p: &$params) -> Self {
                let _ = $p;
                Self {$(
                    $field: <$ty as $crate::port::PortValue>::zero(
                        $crate::port::Shape::from($shape)),
                )*}
            }

            // Not `#[inline]`: each block's `pack`, `unpack` and `eq_words` are
            // compiled once, here, instead of in every crate that calls them
            // (inlined, they were 72 k of `cosim`'s 312 k lines of LLVM IR;
            // a cold release build 211 -> 190 s; lockstep speed within the
            // noise of a side-by-side run, 0.8-1.3 either way).
            fn pack_where(&self, $p: &$params, out: &mut [u32], keep: Option<&[bool]>)
                -> Result<(), $crate::port::PackError>
            {
                let _ = ($p, &out, keep);
                #[allow(unused_mut)]
                let mut off = 0usize;
                #[allow(unused_mut)]
                let mut i = 0usize;
                $(
                    let s = $crate::port::Shape::from($shape);
                    if keep.is_none_or(|k| k[i]) {
                        $crate::port::PortValue::pack(
                            &self.$field, s, &mut out[off..off + s.words()],
                        ).map_err(|what| $crate::port::PackError {
                            port: stringify!($field), what,
                        })?;
                    }
                    off += s.words();
                    i += 1;
                )*
                let _ = (off, i);
                Ok(())
            }

            fn eq_words(&self, $p: &$params, words: &[u32]) -> bool {
                let _ = $p;
                #[allow(unused_mut)]
                let mut off = 0usize;
                #[allow(unused_mut)]
                let mut eq = true;
                $(
                    let s = $crate::port::Shape::from($shape);
                    eq &= $crate::port::PortValue::eq_words(
                        &self.$field, s, &words[off..off + s.words()],
                    );
                    off += s.words();
                )*
                eq && off == words.len()
            }

            fn unpack($p: &$params, words: &[u32]) -> Self {
                let _ = ($p, words);
                #[allow(unused_mut)]
                let mut off = 0usize;
                $(
                    let s = $crate::port::Shape::from($shape);
                    let $field = <$ty as $crate::port::PortValue>::unpack(
                        s, &words[off..off + s.words()]);
                    off += s.words();
                )*
                let _ = off;
                Self { $($field,)* }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_across_words() {
        let mut w = vec![0u32; 4];
        put_bits(&mut w, 27, 40, 0xab_cdef_1234);
        assert_eq!(get_bits(&w, 27, 40), 0xab_cdef_1234);
        put_bits(&mut w, 0, 27, mask(27));
        assert_eq!(get_bits(&w, 27, 40), 0xab_cdef_1234);
        put_bits(&mut w, 67, 61, mask(61));
        assert_eq!(get_bits(&w, 67, 61), mask(61));
        assert_eq!(get_bits(&w, 27, 40), 0xab_cdef_1234);
    }

    #[test]
    fn vectors_round_trip_at_every_width() {
        for width in [1u32, 3, 7, 16, 31, 32, 33, 63, 64] {
            let n = 13;
            let v: Vec<u64> = (0..n as u64)
                .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3) & mask(width))
                .collect();
            let sh = Shape::vec(width, n);
            let mut w = vec![0u32; sh.words()];
            v.pack(sh, &mut w).unwrap();
            for (i, x) in v.iter().enumerate() {
                assert_eq!(
                    get_bits(&w, i as u32 * width, width),
                    *x,
                    "width {width} elem {i}"
                );
            }
            assert_eq!(<Vec<u64>>::unpack(sh, &w), v);
            if width < 64 {
                let mut bad = v.clone();
                bad[5] = mask(width) + 1;
                assert!(bad.pack(sh, &mut w).is_err());
            }
        }
    }

    /// `eq_words` is "pack would succeed and give exactly these words": true
    /// on the packed words, false with any single bit flipped, false for a
    /// value that does not fit (even if its low bits match) or a vector of
    /// the wrong length.
    #[test]
    fn eq_words_agrees_with_pack() {
        for width in [1u32, 2, 3, 4, 7, 8, 10, 16, 20, 31, 32, 33, 63, 64] {
            for n in [1usize, 5, 13, 33] {
                let v: Vec<u64> = (0..n as u64)
                    .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 5) & mask(width))
                    .collect();
                let sh = Shape::vec(width, n);
                let mut w = vec![0u32; sh.words()];
                v.pack(sh, &mut w).unwrap();
                assert!(v.eq_words(sh, &w), "width {width} n {n}");
                for bit in 0..sh.bits() {
                    let mut x = w.clone();
                    x[(bit / 32) as usize] ^= 1 << (bit % 32);
                    assert!(!v.eq_words(sh, &x), "width {width} n {n} bit {bit}");
                }
                if width < 64 {
                    let mut bad = v.clone();
                    bad[n - 1] |= mask(width) + 1;
                    assert!(!bad.eq_words(sh, &w), "out of range, width {width}");
                }
                assert!(!v[..n - 1].to_vec().eq_words(sh, &w), "short vector");
                // The same through the scalar path.
                let s = Shape::scalar(width);
                let mut ws = vec![0u32; s.words()];
                v[0].pack(s, &mut ws).unwrap();
                assert!(v[0].eq_words(s, &ws));
                ws[0] ^= 1;
                assert!(!v[0].eq_words(s, &ws));
            }
        }
        use arbitrary_int::i4;
        let k = i4::new(-2);
        assert!(k.eq_words(Shape::scalar(4), &[14]));
        assert!(!k.eq_words(Shape::scalar(4), &[2]));
    }

    #[derive(Clone, Debug, PartialEq, Eq, Default)]
    struct N(usize);

    crate::port_group! {
        /// A group for the tests.
        struct G<N> |p| {
            /// A flag.
            a_i: bool = 1,
            /// A wide scalar.
            b_i: u64 = 40,
            /// A vector.
            c_i: Vec<u16> = (10, p.0),
        }
    }

    #[test]
    fn group_eq_words_agrees_with_pack() {
        let p = N(7);
        let mut g = G::zero(&p);
        g.a_i = true;
        g.b_i = 0xab_cdef_0123;
        g.c_i[6] = 1023;
        let w = g.to_words(&p).unwrap();
        assert!(g.eq_words(&p, &w));
        for bit in 0..(w.len() * 32) {
            let mut x = w.clone();
            x[bit / 32] ^= 1 << (bit % 32);
            assert!(!g.eq_words(&p, &x), "bit {bit}");
        }
        g.c_i[0] = 1024;
        assert!(g.pack(&p, &mut w.clone()).is_err());
        assert!(!g.eq_words(&p, &w));
    }

    #[test]
    fn signed_round_trip() {
        use arbitrary_int::i4;
        for v in -8i8..8 {
            let x = i4::new(v);
            let b = PortScalar::to_bits(x);
            assert!(b < 16);
            assert_eq!(<i4 as PortScalar>::from_bits(b, 4), x);
        }
    }

    #[test]
    fn parse_rejects_out_of_range() {
        let d = PortDesc::plain("x", Shape::scalar(3));
        let ds = PortDesc::plain("k", Shape::scalar(4).with_signed(true));
        assert!(parse_value(&ds, "-8", &mut [0u32]).is_ok());
        let mut w = [0u32; 1];
        parse_value(&ds, "-2", &mut w).unwrap();
        assert_eq!(w[0], 14);
        assert_eq!(format_plain(ds.shape, &w), "-2");
        assert!(parse_value(&ds, "8", &mut w)
            .unwrap_err()
            .contains("-8..=7"));
        let mut w = [0u32; 1];
        assert!(parse_value(&d, "7", &mut w).is_ok());
        assert_eq!(w[0], 7);
        assert!(parse_value(&d, "8", &mut w)
            .unwrap_err()
            .contains("outside the legal range 0..=7"));
        assert!(parse_value(&d, "x", &mut w).is_err());
    }
}
