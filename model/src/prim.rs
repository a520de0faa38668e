//! Golden models of the shared RTL primitives `rtl/prim_*.v`.
//!
//! Each type mirrors one primitive register for register: the same reset
//! value, the same next-state rule, the same combinational outputs. A block
//! model holds these inside its state where its RTL instantiates the
//! primitive, so the rule is written once on each side. The primitives are
//! also blocks of their own (`model::prim_blocks`), co-simulated against
//! their RTL like any block.

/// `prim_lfsr`: a right-shifting Galois LFSR of `width` bits.
///
/// One step: `s' = (s >> 1) ^ (s & 1 ? taps : 0)`; `STEPS` steps per
/// enabled cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lfsr {
    /// The register.
    pub state: u64,
    /// Feedback taps.
    pub taps: u64,
    /// Steps per enabled cycle.
    pub steps: u32,
}

impl Lfsr {
    /// The LFSR at reset: `seed` (non-zero), `taps`, `steps` per cycle.
    pub const fn new(seed: u64, taps: u64, steps: u32) -> Self {
        Lfsr {
            state: seed,
            taps,
            steps,
        }
    }

    /// One step of the register `s`.
    pub const fn step_once(s: u64, taps: u64) -> u64 {
        (s >> 1) ^ if s & 1 != 0 { taps } else { 0 }
    }

    /// The register after one enabled cycle (`steps` steps), without
    /// changing `self`.
    pub const fn peek_next(&self) -> u64 {
        let mut s = self.state;
        let mut k = 0;
        while k < self.steps {
            s = Self::step_once(s, self.taps);
            k += 1;
        }
        s
    }

    /// One clock edge: `steps` steps when `en`.
    pub fn clock(&mut self, en: bool) {
        if en {
            self.state = self.peek_next();
        }
    }
}

/// `a b mod P` in `GF(2)[x]/P` for the Galois LFSR of `width` bits with
/// feedback `taps` (`P(x) = x taps(x) + 1`, bit `k` of a state the
/// coefficient of `x^k`): the arithmetic behind [`lfsr_jump`].
pub const fn lfsr_mulmod(a: u64, b: u64, taps: u64, width: u32) -> u64 {
    let top = 1u64 << width;
    // P(x) = x taps(x) + 1: its x^width term cancels the top bit.
    let red = (taps << 1) | 1;
    let mut r = 0u64;
    let mut k = width;
    while k > 0 {
        k -= 1;
        r <<= 1;
        if r & top != 0 {
            r ^= red;
        }
        if (b >> k) & 1 != 0 {
            r ^= a;
        }
    }
    r
}

/// The state of the Galois LFSR (`width` bits, `taps`, one step
/// `s' = (s >> 1) ^ (s & 1 ? taps : 0)`) `k` steps after `s`, without
/// stepping: one step multiplies by `x^(-1) = taps(x)` modulo
/// `P(x) = x taps(x) + 1`, so `k` steps multiply by `taps(x)^k`
/// (square and multiply). `rtl/stx_ingress.v` computes its seed this way
/// at elaboration.
pub const fn lfsr_jump(s: u64, taps: u64, width: u32, k: u64) -> u64 {
    let mut g = taps; // x^(-1)
    let mut h = 1u64; // x^0
    let mut e = k;
    while e != 0 {
        if e & 1 != 0 {
            h = lfsr_mulmod(h, g, taps, width);
        }
        g = lfsr_mulmod(g, g, taps, width);
        e >>= 1;
    }
    lfsr_mulmod(s, h, taps, width)
}

/// `prim_timer`: a down counter that stops at zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    /// The count (reset 0).
    pub count: u64,
}

impl Timer {
    /// `expire_o`: the count reaches 0 at this edge (a tick from 1, no load).
    pub const fn expires(&self, load: bool, tick: bool) -> bool {
        !load && tick && self.count == 1
    }

    /// `running_o`: the count is not 0.
    pub const fn running(&self) -> bool {
        self.count != 0
    }

    /// One clock edge: load wins; else a tick counts down, stopping at 0.
    /// Returns `expire_o` of the cycle.
    pub fn clock(&mut self, load: bool, value: u64, tick: bool) -> bool {
        let e = self.expires(load, tick);
        if load {
            self.count = value;
        } else if tick && self.count != 0 {
            self.count -= 1;
        }
        e
    }
}

/// `prim_sat_cnt`: an up/down counter clamped to `0..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatCnt {
    /// The count (reset 0).
    pub count: u64,
    /// The largest value (`MAX`).
    pub max: u64,
}

impl SatCnt {
    /// The counter at reset, saturating at `max`.
    pub const fn new(max: u64) -> Self {
        SatCnt { count: 0, max }
    }

    /// The next count and `sat_o` for `inc` and `dec` taken together (the
    /// exact sum clamped, no clamp in between).
    pub const fn next(&self, clr: bool, inc: u64, dec: u64) -> (u64, bool) {
        if clr {
            return (0, false);
        }
        let sum = self.count as i128 + inc as i128 - dec as i128;
        if sum < 0 {
            (0, true)
        } else if sum > self.max as i128 {
            (self.max, true)
        } else {
            (sum as u64, false)
        }
    }

    /// One clock edge. Returns `sat_o` of the cycle.
    pub fn clock(&mut self, clr: bool, inc: u64, dec: u64) -> bool {
        let (c, s) = self.next(clr, inc, dec);
        self.count = c;
        s
    }
}

/// The pick of `prim_rr_arb`: the first requester at or after `ptr`,
/// wrapping, among `n` (bit `k` of `req` is requester `k`).
pub const fn rr_pick(req: u64, n: u32, ptr: u32) -> Option<u32> {
    let mask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let req = req & mask;
    if req == 0 {
        return None;
    }
    let hi = if ptr >= 64 {
        0
    } else {
        req & (u64::MAX << ptr)
    };
    Some(if hi != 0 {
        hi.trailing_zeros()
    } else {
        req.trailing_zeros()
    })
}

/// `prim_rr_arb`: a round-robin arbiter of `n` requesters with its pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RrArb {
    /// Number of requesters.
    pub n: u32,
    /// The pointer (reset 0).
    pub ptr: u32,
}

impl RrArb {
    /// The arbiter at reset.
    pub const fn new(n: u32) -> Self {
        RrArb { n, ptr: 0 }
    }

    /// The grant of this cycle (combinational).
    pub const fn pick(&self, req: u64) -> Option<u32> {
        rr_pick(req, self.n, self.ptr)
    }

    /// One clock edge: when `ack` and a grant, the pointer moves past it.
    /// Returns the grant of the cycle.
    pub fn clock(&mut self, req: u64, ack: bool) -> Option<u32> {
        let g = self.pick(req);
        if let (true, Some(k)) = (ack, g) {
            self.ptr = if k + 1 == self.n { 0 } else { k + 1 };
        }
        g
    }
}

/// `prim_ram_1r1w`: `d` words of `w` bits with one write port and one
/// registered, read-first read port (`docs/prim_ram_1r1w.md`).
///
/// The struct a block model holds where its RTL instantiates the
/// primitive: [`Ram1r1w::rdata`] is `rdata_o` of the cycle (registered, so
/// it does not depend on the cycle's inputs), [`Ram1r1w::step`] is one
/// clock edge. The words start at 0 (`new`); the hardware's are undefined
/// until written, so a block reads only words it wrote since its reset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ram1r1w {
    /// Data bits per word (`W`, 1..=64).
    pub w: u32,
    /// The words (`D` of them, `mem`; no reset in the RTL, 0 here).
    pub mem: Vec<u64>,
    /// The read register (`rdata_q`, reset 0), driven on `rdata_o`.
    pub rdata_q: u64,
}

impl Ram1r1w {
    /// The memory at reset: `d` words of `w` bits, all 0, `rdata_q` 0.
    pub fn new(w: u32, d: u32) -> Self {
        assert!((1..=64).contains(&w), "prim_ram_1r1w: W = {w}, not 1..=64");
        assert!(
            (2..=4096).contains(&d),
            "prim_ram_1r1w: D = {d}, not 2..=4096"
        );
        Ram1r1w {
            w,
            mem: vec![0; d as usize],
            rdata_q: 0,
        }
    }

    /// `D`, the number of words.
    pub fn depth(&self) -> u32 {
        self.mem.len() as u32
    }

    /// The address names a word (`addr < D`); an access outside is ignored.
    pub fn in_range(&self, addr: u32) -> bool {
        (addr as usize) < self.mem.len()
    }

    /// `rdata_o`: the read register.
    pub const fn rdata(&self) -> u64 {
        self.rdata_q
    }

    /// One clock edge: `next = f(current, inputs)`. The read takes the word
    /// as it is before this edge's write (read-first); with `re` low or
    /// `raddr >= D` the read register holds; a write at `waddr >= D` is
    /// dropped. Returns `rdata_o` of the cycle (the register before the
    /// edge).
    pub fn step(&mut self, we: bool, waddr: u32, wdata: u64, re: bool, raddr: u32) -> u64 {
        assert!(
            self.w == 64 || wdata >> self.w == 0,
            "prim_ram_1r1w: write data {wdata:#x} wider than W = {}",
            self.w
        );
        let rdata_o = self.rdata_q;
        // Next state, from the registers at the start of the cycle only.
        let rdata_d = if re && self.in_range(raddr) {
            self.mem[raddr as usize]
        } else {
            self.rdata_q
        };
        let mem_we = we && self.in_range(waddr);
        // The edge.
        if mem_we {
            self.mem[waddr as usize] = wdata;
        }
        self.rdata_q = rdata_d;
        rdata_o
    }
}

/// Sequence numbers of `SW` bits, as the OSMOSIS adapters carry them
/// (`stx_ingress`, `stx_egress`): serial-number arithmetic modulo `2^SW`.
/// In the RTL this is plain `SW`-bit wrapping arithmetic (an addition or a
/// subtraction truncated to `SW` bits), so it has no primitive of its own;
/// the models share this one helper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqNum {
    /// Width `SW` in bits (1..=16).
    pub sw: u32,
}

impl SeqNum {
    /// Sequence numbers of `sw` bits.
    pub const fn new(sw: u32) -> Self {
        SeqNum { sw }
    }

    /// The modulus `2^SW`.
    pub const fn modulus(&self) -> u32 {
        1 << self.sw
    }

    /// `(a + k) mod 2^SW`.
    pub const fn add(&self, a: u16, k: u32) -> u16 {
        ((a as u32 + k) % self.modulus()) as u16
    }

    /// `(a - b) mod 2^SW`: how far `a` lies ahead of `b`.
    pub const fn dist(&self, a: u16, b: u16) -> u32 {
        let m = self.modulus();
        (a as u32 % m + m - b as u32 % m) % m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lfsr_default_taps_are_maximal() {
        let mut l = Lfsr::new(1, 0xB400, 1);
        let mut n = 0u32;
        loop {
            l.clock(true);
            n += 1;
            assert_ne!(l.state, 0);
            if l.state == 1 {
                break;
            }
        }
        assert_eq!(n, 65535);
    }

    #[test]
    fn lfsr_steps_per_cycle_compose() {
        let mut a = Lfsr::new(0xACE1, 0xB400, 1);
        let mut b = Lfsr::new(0xACE1, 0xB400, 5);
        for _ in 0..5 {
            a.clock(true);
        }
        b.clock(true);
        assert_eq!(a.state, b.state);
        b.clock(false);
        assert_eq!(a.state, b.state);
    }

    #[test]
    fn lfsr_jump_is_stepping() {
        for (taps, w) in [(0x8020_0003u64, 32u32), (0xB400, 16)] {
            let mut s = 0xACE1u64;
            let mut k = 0u64;
            for target in [0u64, 1, 2, 15, 16, 17, 1000, 65_537] {
                while k < target {
                    s = Lfsr::step_once(s, taps);
                    k += 1;
                }
                assert_eq!(lfsr_jump(0xACE1, taps, w, k), s, "taps {taps:x}, {k} steps");
            }
        }
        // The multiplication is commutative and one step is a product.
        let (t, w) = (0x8020_0003u64, 32);
        assert_eq!(
            lfsr_mulmod(0x1234_5678, t, t, w),
            Lfsr::step_once(0x1234_5678, t)
        );
        assert_eq!(
            lfsr_mulmod(0xdead_beef, 0x0bad_f00d, t, w),
            lfsr_mulmod(0x0bad_f00d, 0xdead_beef, t, w)
        );
    }

    #[test]
    fn timer_loads_counts_and_stops_at_zero() {
        let mut t = Timer::default();
        assert!(!t.clock(false, 0, true));
        assert_eq!(t.count, 0);
        t.clock(true, 2, true);
        assert_eq!(t.count, 2);
        assert!(!t.clock(false, 0, true));
        assert!(t.running());
        assert!(t.clock(false, 0, true));
        assert!(!t.running());
        assert!(!t.clock(true, 1, true), "a load wins over the expiry");
        assert_eq!(t.count, 1);
    }

    #[test]
    fn sat_cnt_nets_before_clamping() {
        let mut c = SatCnt::new(10);
        assert!(!c.clock(false, 10, 0));
        // 10 + 5 - 5 = 10: no clamp in between
        assert!(!c.clock(false, 5, 5));
        assert_eq!(c.count, 10);
        assert!(c.clock(false, 1, 0));
        assert_eq!(c.count, 10);
        assert!(c.clock(false, 0, 11));
        assert_eq!(c.count, 0);
        c.clock(false, 3, 0);
        assert!(!c.clock(true, 3, 0));
        assert_eq!(c.count, 0);
    }

    #[test]
    fn rr_picks_at_or_after_the_pointer_and_wraps() {
        assert_eq!(rr_pick(0b1010, 4, 0), Some(1));
        assert_eq!(rr_pick(0b1010, 4, 2), Some(3));
        assert_eq!(rr_pick(0b0010, 4, 2), Some(1));
        assert_eq!(rr_pick(0, 4, 2), None);
        assert_eq!(rr_pick(0b1_0000, 4, 0), None, "requests above n ignored");
        let mut a = RrArb::new(3);
        assert_eq!(a.clock(0b111, true), Some(0));
        assert_eq!(a.clock(0b111, true), Some(1));
        assert_eq!(a.clock(0b111, true), Some(2));
        assert_eq!(a.ptr, 0, "wraps at n, not at a power of two");
        assert_eq!(a.clock(0b110, false), Some(1));
        assert_eq!(a.ptr, 0);
    }

    #[test]
    fn ram_reads_first_holds_and_ignores_out_of_range() {
        let mut r = Ram1r1w::new(8, 12);
        for a in 0..12 {
            r.step(true, a, 0x10 + a as u64, false, 0);
        }
        // Read and write word 5 in one cycle: the old word, then the new.
        assert_eq!(r.step(true, 5, 0xAA, true, 5), 0);
        assert_eq!(r.rdata(), 0x15, "read-first");
        r.step(false, 0, 0, true, 5);
        assert_eq!(r.rdata(), 0xAA);
        // re low: the register holds, even when its word is rewritten.
        r.step(true, 5, 0xBB, false, 0);
        assert_eq!(r.rdata(), 0xAA);
        // Out of range: the read holds, the write changes no word.
        r.step(true, 12, 0xFF, true, 15);
        assert_eq!(r.rdata(), 0xAA);
        assert_eq!(r.mem[4], 0x14, "no alias of 12");
        assert_eq!(r.mem[0], 0x10);
        r.step(false, 0, 0, true, 11);
        assert_eq!(r.rdata(), 0x1B, "the last word");
        assert_eq!(r.step(false, 0, 0, false, 0), 0x1B);
    }

    #[test]
    fn sequence_numbers_wrap_at_their_width() {
        let s = SeqNum::new(3);
        assert_eq!(s.modulus(), 8);
        assert_eq!(s.add(6, 3), 1);
        assert_eq!(s.add(7, 8), 7);
        assert_eq!(s.dist(1, 6), 3);
        assert_eq!(s.dist(6, 1), 5);
        assert_eq!(s.dist(5, 5), 0);
        for a in 0..8u16 {
            for k in 0..8u32 {
                assert_eq!(s.dist(s.add(a, k), a), k);
            }
        }
    }
}
