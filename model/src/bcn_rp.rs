//! Golden model of the BCN reaction point (`rtl/bcn_rp.v`, spec
//! `docs/bcn_rp.md`).
//!
//! A table of `K` rate limiters keyed by (DA, priority), with the seed's
//! fall-back to coarser keys (priority only, then the whole link) when the
//! table is full; per limiter a rate register (bytes per cycle, 16 fraction
//! bits), a descriptor FIFO of `D` frames, a token bucket (`prim_sat_cnt`)
//! and an idle timer (`prim_timer`); a round-robin arbiter (`prim_rr_arb`)
//! chooses one frame per cycle among the limiters whose head frame has its
//! tokens and the bypass (the offered frame, when it matches no limiter).
//! A limiter answers to the congestion point whose message last acted on
//! it (its CPID, carried in its frames' tags): a decrease is taken from any
//! point, an increase or a hold only from that one.
//!
//! Latency: `in_ready_o`, the frame on `out_*`, the message's feedback and
//! action, and the removal events are outputs of the same cycle
//! (combinational); `lim_*_o` are the registers at the start of the cycle.
//! Order inside a cycle: release (arbiter), admission, message, removal.

use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::PortGroup;
use crate::prim::{RrArb, SatCnt, Timer};
use crate::timing::Alignment;
use arbitrary_int::{u3, u4, u5, Int};

/// A signed 16-bit port value (`msg_qoff_i`, `msg_qdelta_i`, `msg_fb_o`).
pub type I16 = Int<i32, 16>;

/// DA width.
pub const DW: u32 = 48;
/// Frame length width (bytes, 0..16383).
pub const LW: u32 = 14;
/// Rate width: bytes per cycle, unsigned fixed point u8.16.
pub const RW: u32 = 24;
/// Fraction bits of a rate.
pub const FW: u32 = 16;
/// Token counter width (bytes with `FW` fraction bits): `LW + FW + 1`.
pub const TW: u32 = LW + FW + 1;
/// The token bucket's maximum (`prim_sat_cnt` of `TW` bits).
const TOK_MAX: u64 = (1 << TW) - 1;
/// Idle timer width (cycles).
pub const IDW: u32 = 16;

/// Key level of a limiter: (DA, priority).
pub const LEVEL_DA: u8 = 0;
/// Key level of a limiter: priority only (every DA).
pub const LEVEL_PRIO: u8 = 1;
/// Key level of a limiter: the whole link.
pub const LEVEL_LINK: u8 = 2;

/// `ceil(log2(n))` for `n >= 1`.
pub const fn clog2(n: usize) -> u32 {
    usize::BITS - (n - 1).leading_zeros()
}

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BcnRpParams {
    /// Rate limiters, 1..8.
    pub k: usize,
    /// Descriptor FIFO depth per limiter, a power of two, 2..16.
    pub d: usize,
    /// RTL clocks per step (`CLK_PER_STEP`, 7..64): the RTL spreads a
    /// step's arithmetic over them (`docs/bcn_rp.md`, "Clocks of a step");
    /// the model's step is the same whatever its value.
    pub clk: usize,
}

impl BcnRpParams {
    /// `k` limiters of `d` entries, 8 clocks per step.
    pub const fn new(k: usize, d: usize) -> Self {
        BcnRpParams { k, d, clk: 8 }
    }
    /// The same with `clk` clocks per step.
    pub const fn clocks(self, clk: usize) -> Self {
        BcnRpParams { clk, ..self }
    }
    /// Width of a limiter id (`tag`), at least 1.
    pub const fn iw(&self) -> u32 {
        if self.k > 1 {
            clog2(self.k)
        } else {
            1
        }
    }
    /// Width of a FIFO count (0..=D).
    pub const fn cw(&self) -> u32 {
        clog2(self.d + 1)
    }
}

impl Default for BcnRpParams {
    fn default() -> Self {
        BcnRpParams::new(4, 4)
    }
}

impl Params for BcnRpParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("K", self.k as u64),
            ("D", self.d as u64),
            ("CLK_PER_STEP", self.clk as u64),
        ]
    }
    /// `k4d4c8`: K, D and the clocks per step.
    fn label(&self) -> String {
        format!("k{}d{}c{}", self.k, self.d, self.clk)
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct BcnRpConfig<BcnRpParams> |p| {
        /// Line rate, bytes per cycle, u8.16 (1..2^24-1).
        cfg_line_rate_i: u32 = RW,
        /// Minimum limiter rate, u8.16 (1..=line rate).
        cfg_min_rate_i: u32 = RW,
        /// Decrease gain Gd = 2^-cfg_gd_i.
        cfg_gd_i: u4 = 4,
        /// Increase gain Gi = 2^-cfg_gi_i.
        cfg_gi_i: u4 = 4,
        /// Rate unit Ru, u0.16 bytes per cycle.
        cfg_ru_i: u16 = 16,
        /// Derivative weight W = cfg_w_i / 4 (u3.2).
        cfg_w_i: u5 = 5,
        /// Idle time before a limiter without frames is removed (cycles; 0 = never).
        cfg_idle_i: u16 = IDW,
    }
}

crate::port_group! {
    /// Per-cycle inputs: the frame the source offers, a BCN message.
    pub struct BcnRpInputs<BcnRpParams> |p| {
        /// The source offers a frame.
        in_valid_i: bool = 1,
        /// Its destination address.
        in_da_i: u64 = DW => Radix::Hex,
        /// Its priority.
        in_prio_i: u3 = 3,
        /// Its length in bytes.
        in_len_i: u16 = LW,
        /// A BCN message arrives.
        msg_valid_i: bool = 1,
        /// DA of the flow the congestion point sampled (the limiter key).
        msg_flow_da_i: u64 = DW => Radix::Hex,
        /// Priority of that flow.
        msg_prio_i: u3 = 3,
        /// Congestion point id.
        msg_cpid_i: u16 = 16,
        /// Qoffset, signed, units of 64 bytes.
        msg_qoff_i: I16 = 16,
        /// Qdelta, signed, units of 64 bytes.
        msg_qdelta_i: I16 = 16,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct BcnRpOutputs<BcnRpParams> |p| {
        /// The offered frame is taken this cycle.
        in_ready_o: bool = 1,
        /// A frame goes to the line this cycle.
        out_valid_o: bool = 1,
        /// Its DA.
        out_da_o: u64 = DW => Radix::Hex,
        /// Its priority.
        out_prio_o: u3 = 3,
        /// Its length in bytes.
        out_len_o: u16 = LW,
        /// It leaves a limiter (rate-limiter tag).
        out_tag_valid_o: bool = 1,
        /// The limiter it leaves (0 when untagged).
        out_tag_id_o: u8 = p.iw(),
        /// The CPID its tag names: that limiter's point (0 when untagged).
        out_tag_cpid_o: u16 = 16,
        /// Fb of this cycle's message inputs.
        msg_fb_o: I16 = 16,
        /// What the message did (see `Act`).
        msg_act_o: u3 = 3 => Radix::Names(Act::NAMES),
        /// The limiter the message acted on (0 when none).
        msg_lim_o: u8 = p.iw(),
        /// Limiters removed this cycle at line rate.
        rm_line_o: Vec<bool> = (1, p.k),
        /// Limiters removed this cycle after their idle time.
        rm_idle_o: Vec<bool> = (1, p.k),
        /// Limiter in use (registered).
        lim_valid_o: Vec<bool> = (1, p.k),
        /// Key level: 0 (DA, prio), 1 prio, 2 link (registered).
        lim_level_o: Vec<u8> = (2, p.k),
        /// Rate, u8.16 bytes per cycle; 0 when free (registered).
        lim_rate_o: Vec<u32> = (RW, p.k),
        /// Frames in the limiter's FIFO (registered).
        lim_cnt_o: Vec<u8> = (p.cw(), p.k),
        /// CPID of the last message applied (registered).
        lim_cpid_o: Vec<u16> = (16, p.k),
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's (primitive instances by their
    /// instance names).
    pub struct BcnRpState<BcnRpParams> |p| {
        /// Limiter in use.
        valid_q: Vec<bool> = (1, p.k),
        /// Key level.
        level_q: Vec<u8> = (2, p.k),
        /// Key DA.
        key_da_q: Vec<u64> = (DW, p.k) => Radix::Hex,
        /// Key priority.
        key_prio_q: Vec<u8> = (3, p.k),
        /// Rate.
        rate_q: Vec<u32> = (RW, p.k),
        /// CPID of the last message applied.
        cpid_q: Vec<u16> = (16, p.k),
        /// FIFO count.
        cnt_q: Vec<u8> = (p.cw(), p.k),
        /// FIFO read pointer.
        rd_q: Vec<u8> = (clog2(p.d), p.k),
        /// FIFO entries: DA (limiter j, slot s at j * D + s).
        fifo_da_q: Vec<u64> = (DW, p.k * p.d) => Radix::Hex,
        /// FIFO entries: priority.
        fifo_prio_q: Vec<u8> = (3, p.k * p.d),
        /// FIFO entries: length.
        fifo_len_q: Vec<u16> = (LW, p.k * p.d),
        /// Token bucket per limiter (`u_tok` instances of `prim_sat_cnt`).
        tok_q: Vec<u32> = (TW, p.k),
        /// Idle timer per limiter (`u_idle` instances of `prim_timer`).
        idle_q: Vec<u16> = (IDW, p.k),
        /// Arbiter pointer (`u_arb`, `prim_rr_arb` over K limiters + bypass).
        arb_ptr_q: u8 = clog2(p.k + 1),
    }
}

/// What a message did (`msg_act_o`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Act {
    /// No message.
    #[default]
    None = 0,
    /// No limiter for its key and Fb >= 0; or Fb >= 0 from a point other
    /// than the limiter's; or an illegal configuration.
    Ignore = 1,
    /// A new limiter installed (Fb < 0).
    Install = 2,
    /// Multiplicative decrease (Fb < 0).
    Decrease = 3,
    /// Additive increase (Fb > 0, from the limiter's point).
    Increase = 4,
    /// Fb = 0 from the limiter's point: the rate is kept.
    Hold = 5,
    /// Table full: a (DA, prio) limiter of the same priority coarsened to
    /// that priority, then decreased.
    FallbackPrio = 6,
    /// Table full, no limiter of that priority: limiter 0 coarsened to the
    /// whole link, then decreased.
    FallbackLink = 7,
}

impl Act {
    /// The actions' names, indexed by code (for `msg_act_o`).
    pub const NAMES: &'static [&'static str] = &[
        "none",
        "ignore",
        "install",
        "decrease",
        "increase",
        "hold",
        "fallback_prio",
        "fallback_link",
    ];
    /// All codes, in order.
    pub const ALL: [Act; 8] = [
        Act::None,
        Act::Ignore,
        Act::Install,
        Act::Decrease,
        Act::Increase,
        Act::Hold,
        Act::FallbackPrio,
        Act::FallbackLink,
    ];
    /// Decodes a `msg_act_o` value.
    pub fn from_code(c: u3) -> Act {
        Self::ALL[c.value() as usize]
    }
    /// The `msg_act_o` value.
    pub fn code(self) -> u3 {
        u3::new(self as u8)
    }
}

crate::coverage_bins! {
    /// Functional coverage bins of the reaction point.
    pub enum Bin / BINS {
        Install = "install",
        Decrease = "decrease",
        Increase = "increase",
        Hold = "fb_zero_hold",
        Ignore = "ignore_no_limiter",
        IgnoreOtherPoint = "ignore_other_point",
        DecreaseOtherPoint = "decrease_other_point",
        FallbackPrio = "fallback_prio",
        FallbackLink = "fallback_link",
        DecreaseCapped = "decrease_capped_at_half",
        RateAtMin = "rate_clamped_at_min",
        RateAtLine = "rate_clamped_at_line",
        FbSaturated = "fb_saturated",
        RemovedAtLine = "removed_at_line_rate",
        RemovedIdle = "removed_idle",
        HeldDraining = "frame_held_limiter_draining",
        HeldFull = "frame_held_fifo_full",
        EnqueueAtReleaseFull = "enqueue_into_full_fifo_releasing",
        Bypass = "bypass_out",
        BypassLost = "bypass_lost_arbitration",
        Tagged = "tagged_out",
        Contention = "several_ready",
        CoarseMatch = "frame_matched_coarse_limiter",
        TableFull = "table_full",
        MsgAndFrameSameLimiter = "message_and_frame_same_limiter",
        ConfigError = "config_error",
    }
}

/// Fb = Qoff - floor(W * Qdelta), saturated: the congestion point's
/// function, one definition for both ends of the loop.
pub use crate::bcn_cp::feedback;

/// The exact (unsaturated) Fb, for coverage.
pub fn feedback_exact(qoff: i16, qdelta: i16, w: u5) -> i32 {
    qoff as i32 - ((w.value() as i32 * qdelta as i32) >> 2)
}

/// Multiplicative decrease: `rate - min(rate * |Fb| * 2^-gd, rate / 2)`,
/// then at least `min`. Returns the rate, whether the 50 % cap applied and
/// whether the minimum did.
pub fn decrease(rate: u32, fb_abs: u32, gd: u4, min: u32) -> (u32, bool, bool) {
    let want = (rate as u64 * fb_abs as u64) >> gd.value();
    let half = (rate >> 1) as u64;
    let capped = want > half;
    let dec = want.min(half) as u32;
    let r = rate - dec;
    (r.max(min), capped, r < min)
}

/// Additive increase: `rate + Fb * Ru * 2^-gi`, at most `line`. Returns the
/// rate and whether the line rate clamped it.
pub fn increase(rate: u32, fb: u32, ru: u16, gi: u4, line: u32) -> (u32, bool) {
    let inc = (fb as u64 * ru as u64) >> gi.value();
    let r = rate as u64 + inc;
    (r.min(line as u64) as u32, r > line as u64)
}

/// The BCN reaction point model.
#[derive(Clone, Debug)]
pub struct BcnRp {
    p: BcnRpParams,
    c: BcnRpConfig,
    cfg_err: bool,
    s: BcnRpState,
    ev: Events,
}

impl BcnRp {
    /// The configuration.
    pub fn config(&self) -> &BcnRpConfig {
        &self.c
    }

    /// The illegal-configuration flag.
    pub fn cfg_err(&self) -> bool {
        self.cfg_err
    }

    /// The limiter frames and messages of (`da`, `prio`) go to: the finest
    /// key level that matches, the lowest index within it.
    pub fn lookup(&self, da: u64, prio: u8) -> Option<usize> {
        let s = &self.s;
        let mut best: Option<(u8, usize)> = None;
        for j in 0..self.p.k {
            if !s.valid_q[j] {
                continue;
            }
            let lv = s.level_q[j];
            let m = match lv {
                LEVEL_DA => s.key_da_q[j] == da && s.key_prio_q[j] == prio,
                LEVEL_PRIO => s.key_prio_q[j] == prio,
                _ => true,
            };
            if m && best.is_none_or(|(bl, _)| lv < bl) {
                best = Some((lv, j));
            }
        }
        best.map(|b| b.1)
    }

    /// The head frame of limiter `j`'s FIFO: (DA, prio, len).
    pub fn head(&self, j: usize) -> (u64, u8, u16) {
        let h = j * self.p.d + self.s.rd_q[j] as usize;
        (
            self.s.fifo_da_q[h],
            self.s.fifo_prio_q[h],
            self.s.fifo_len_q[h],
        )
    }

    /// The token bucket of limiter `j` (bytes << 16).
    pub fn tokens(&self, j: usize) -> u64 {
        self.s.tok_q[j] as u64
    }

    /// Checks the spec's invariants; panics with the broken one.
    pub fn assert_invariants(&self) {
        let s = &self.s;
        let c = &self.c;
        for j in 0..self.p.k {
            assert!(s.cnt_q[j] as usize <= self.p.d, "limiter {j}: FIFO over D");
            if s.valid_q[j] {
                assert!(
                    s.rate_q[j] >= c.cfg_min_rate_i && s.rate_q[j] <= c.cfg_line_rate_i,
                    "limiter {j}: rate {} outside [min, line]",
                    s.rate_q[j]
                );
                assert!(s.level_q[j] <= LEVEL_LINK, "limiter {j}: level");
                if s.rate_q[j] == c.cfg_line_rate_i {
                    assert!(s.cnt_q[j] > 0, "limiter {j}: at line rate and empty");
                }
            } else {
                assert_eq!(s.cnt_q[j], 0, "free limiter {j} holds frames");
                assert_eq!(s.rate_q[j], 0, "free limiter {j}: rate");
                assert_eq!(s.level_q[j], 0, "free limiter {j}: level");
                assert_eq!(s.tok_q[j], 0, "free limiter {j}: tokens");
            }
            // The bucket holds less than a frame plus K + 1 cycles of rate.
            let bound = ((1u64 << LW) << FW) + (self.p.k as u64 + 1) * (1u64 << RW);
            assert!((s.tok_q[j] as u64) < bound, "limiter {j}: tokens");
            assert!((s.tok_q[j] as u64) < 1u64 << TW);
        }
        // At most one limiter per key and level.
        for a in 0..self.p.k {
            for b in a + 1..self.p.k {
                if !(s.valid_q[a] && s.valid_q[b] && s.level_q[a] == s.level_q[b]) {
                    continue;
                }
                let same = match s.level_q[a] {
                    LEVEL_DA => {
                        s.key_da_q[a] == s.key_da_q[b] && s.key_prio_q[a] == s.key_prio_q[b]
                    }
                    LEVEL_PRIO => s.key_prio_q[a] == s.key_prio_q[b],
                    _ => true,
                };
                assert!(!same, "limiters {a} and {b} have the same key");
            }
        }
    }
}

impl Block for BcnRp {
    const NAME: &'static str = "bcn_rp";
    type Params = BcnRpParams;
    type Config = BcnRpConfig;
    type Inputs = BcnRpInputs;
    type Outputs = BcnRpOutputs;
    type State = BcnRpState;

    fn variants() -> Vec<BcnRpParams> {
        vec![
            BcnRpParams::new(4, 4),
            // The fewest clocks the stages need.
            BcnRpParams::new(1, 2).clocks(7),
            BcnRpParams::new(3, 2).clocks(12),
        ]
    }

    /// Synthesised at scale at its default variant (4 rate limiters).
    fn scale() -> Vec<BcnRpParams> {
        Self::variants()[..1].to_vec()
    }

    /// `CLK_PER_STEP` clocks per step, inputs held, every output compared in
    /// the step's last clock.
    fn alignment(p: &BcnRpParams) -> Alignment {
        Alignment::slot(p.clk.max(1) as u32)
    }

    fn default_config(_: &BcnRpParams) -> BcnRpConfig {
        // A line of 8 bytes per cycle (a 64 B frame every 8 cycles), at
        // least 1/64 of it; QCN's Gd = 1/128; Gi * Ru = 1/16 B/cycle per
        // unit of Fb; W = 2 (QCN's); idle removal after 500 cycles.
        BcnRpConfig {
            cfg_line_rate_i: 8 << FW,
            cfg_min_rate_i: 1 << (FW - 3),
            cfg_gd_i: u4::new(7),
            cfg_gi_i: u4::new(4),
            cfg_ru_i: 1 << 12,
            cfg_w_i: u5::new(8),
            cfg_idle_i: 500,
        }
    }

    fn check(p: &BcnRpParams, c: &BcnRpConfig) -> Result<(), ConfigError> {
        check_param("K", "limiters", p.k, 1, 8)?;
        check_pow2("D", "entries per FIFO", p.d, 2, 16)?;
        check_param("CLK_PER_STEP", "clocks per step", p.clk, 7, 64)
            .map_err(|e| e.note("seven stages of the step's arithmetic"))?;
        c.to_words(p)?;
        check_range(
            "cfg_line_rate_i",
            c.cfg_line_rate_i as u64,
            1,
            (1 << RW) - 1,
        )?;
        check_range(
            "cfg_min_rate_i",
            c.cfg_min_rate_i as u64,
            1,
            c.cfg_line_rate_i as u64,
        )
        .map_err(|e| e.note("the line rate"))?;
        Ok(())
    }

    fn new(p: &BcnRpParams, c: &BcnRpConfig) -> Self {
        BcnRp {
            p: *p,
            c: c.clone(),
            cfg_err: c.cfg_min_rate_i == 0 || c.cfg_min_rate_i > c.cfg_line_rate_i,
            s: BcnRpState::zero(p),
            ev: Events::default(),
        }
    }

    fn params(&self) -> &BcnRpParams {
        &self.p
    }

    fn state(&self) -> &BcnRpState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &BcnRpInputs, _o: &BcnRpOutputs, hits: &mut [u64]) {
        let e = &self.ev;
        let mut hit = |b: Bin, on: bool| hits[b as usize] += u64::from(on);
        hit(Bin::Install, e.act == Act::Install);
        hit(Bin::Decrease, e.act == Act::Decrease);
        hit(Bin::Increase, e.act == Act::Increase);
        hit(Bin::Hold, e.act == Act::Hold);
        hit(
            Bin::Ignore,
            e.act == Act::Ignore && !self.cfg_err && !e.other_point,
        );
        hit(Bin::IgnoreOtherPoint, e.act == Act::Ignore && e.other_point);
        hit(
            Bin::DecreaseOtherPoint,
            e.act == Act::Decrease && e.other_point,
        );
        hit(Bin::FallbackPrio, e.act == Act::FallbackPrio);
        hit(Bin::FallbackLink, e.act == Act::FallbackLink);
        hit(Bin::DecreaseCapped, e.dec_capped);
        hit(Bin::RateAtMin, e.at_min);
        hit(Bin::RateAtLine, e.at_line);
        hit(Bin::FbSaturated, e.fb_saturated);
        hit(Bin::RemovedAtLine, e.rm_line);
        hit(Bin::RemovedIdle, e.rm_idle);
        hit(Bin::HeldDraining, e.held_draining);
        hit(Bin::HeldFull, e.held_full);
        hit(Bin::EnqueueAtReleaseFull, e.enq_full_releasing);
        hit(Bin::Bypass, e.bypass_out);
        hit(Bin::BypassLost, e.bypass_lost);
        hit(Bin::Tagged, e.tagged_out);
        hit(Bin::Contention, e.contention);
        hit(Bin::CoarseMatch, e.coarse_match);
        hit(Bin::TableFull, e.table_full);
        hit(Bin::MsgAndFrameSameLimiter, e.msg_frame_same);
        hit(Bin::ConfigError, self.cfg_err);
    }

    fn step_into(&mut self, i: &BcnRpInputs, o: &mut BcnRpOutputs) {
        let p = self.p;
        let (k, d) = (p.k, p.d);
        let line = self.c.cfg_line_rate_i;
        let min = self.c.cfg_min_rate_i;
        let (gd, gi, ru, w, idle) = (
            self.c.cfg_gd_i,
            self.c.cfg_gi_i,
            self.c.cfg_ru_i,
            self.c.cfg_w_i,
            self.c.cfg_idle_i,
        );
        let mut ev = Events::default();

        // Registered outputs: the table at the start of the cycle.
        {
            let s = &self.s;
            o.lim_valid_o.clone_from(&s.valid_q);
            o.lim_level_o.clone_from(&s.level_q);
            o.lim_rate_o.clone_from(&s.rate_q);
            o.lim_cnt_o.clone_from(&s.cnt_q);
            o.lim_cpid_o.clone_from(&s.cpid_q);
            ev.table_full = s.valid_q.iter().all(|&v| v);
        }
        refill(&mut o.rm_line_o, k, false);
        refill(&mut o.rm_idle_o, k, false);
        o.cfg_err_o = self.cfg_err;

        // Lookups on the table at the start of the cycle.
        let prio = i.in_prio_i.value();
        let fl = if i.in_valid_i {
            self.lookup(i.in_da_i, prio)
        } else {
            None
        };
        ev.coarse_match = fl.is_some_and(|j| self.s.level_q[j] != LEVEL_DA);
        let ml = self.lookup(i.msg_flow_da_i, i.msg_prio_i.value());

        // 1. Release: the limiters whose head frame has its tokens, and the
        //    bypass (an offered frame that matches no limiter).
        let mut req = 0u64;
        for j in 0..k {
            if self.s.cnt_q[j] != 0 {
                let (_, _, len) = self.head(j);
                if self.s.tok_q[j] as u64 >= (len as u64) << FW {
                    req |= 1 << j;
                }
            }
        }
        let bypass = i.in_valid_i && fl.is_none();
        if bypass {
            req |= 1 << k;
        }
        ev.contention = req.count_ones() > 1;
        // The arbiter (prim_rr_arb over the K limiters and the bypass).
        let mut arb = RrArb {
            n: k as u32 + 1,
            ptr: self.s.arb_ptr_q as u32,
        };
        let g = arb.clock(req, true).map(|g| g as usize);
        self.s.arb_ptr_q = arb.ptr as u8;
        o.out_valid_o = g.is_some();
        o.out_tag_valid_o = false;
        o.out_tag_id_o = 0;
        o.out_tag_cpid_o = 0;
        o.out_da_o = 0;
        o.out_prio_o = u3::new(0);
        o.out_len_o = 0;
        let mut rel = None;
        match g {
            Some(j) if j < k => {
                let (da, pr, len) = self.head(j);
                o.out_da_o = da;
                o.out_prio_o = u3::new(pr);
                o.out_len_o = len;
                o.out_tag_valid_o = true;
                o.out_tag_id_o = j as u8;
                o.out_tag_cpid_o = self.s.cpid_q[j];
                rel = Some(j);
                ev.tagged_out = true;
            }
            Some(_) => {
                o.out_da_o = i.in_da_i;
                o.out_prio_o = i.in_prio_i;
                o.out_len_o = i.in_len_i;
                ev.bypass_out = true;
            }
            None => {}
        }
        ev.bypass_lost = bypass && g != Some(k);

        // 2. Admission, seeing this cycle's release.
        let mut enq = None;
        o.in_ready_o = false;
        if i.in_valid_i {
            match fl {
                Some(j) => {
                    let cnt = self.s.cnt_q[j] as usize - usize::from(rel == Some(j));
                    if self.s.rate_q[j] == line {
                        ev.held_draining = true;
                    } else if cnt < d {
                        o.in_ready_o = true;
                        enq = Some(j);
                        ev.enq_full_releasing = self.s.cnt_q[j] as usize == d;
                    } else {
                        ev.held_full = true;
                    }
                }
                None => o.in_ready_o = g == Some(k),
            }
        }

        // 3. The message.
        let fb = feedback(
            i.msg_qoff_i.value() as i16,
            i.msg_qdelta_i.value() as i16,
            w,
        );
        o.msg_fb_o = I16::new(fb as i32);
        let mut act = Act::None;
        let mut applied = None;
        let mut rate_new = 0u32;
        if i.msg_valid_i {
            ev.fb_saturated = feedback_exact(
                i.msg_qoff_i.value() as i16,
                i.msg_qdelta_i.value() as i16,
                w,
            ) != fb as i32;
            let s = &self.s;
            let neg = fb < 0;
            let dec = |r: u32, ev: &mut Events| {
                let (n, capped, at_min) = decrease(r, fb.unsigned_abs() as u32, gd, min);
                ev.dec_capped = capped;
                ev.at_min = at_min;
                n
            };
            if self.cfg_err {
                act = Act::Ignore;
            } else if let Some(j) = ml {
                let other = i.msg_cpid_i != s.cpid_q[j];
                ev.other_point = other;
                applied = Some(j);
                if neg {
                    act = Act::Decrease;
                    rate_new = dec(s.rate_q[j], &mut ev);
                } else if other {
                    // Fb >= 0 from a point the limiter does not answer to.
                    act = Act::Ignore;
                    applied = None;
                } else if fb > 0 {
                    act = Act::Increase;
                    let (n, at_line) = increase(s.rate_q[j], fb as u32, ru, gi, line);
                    ev.at_line = at_line;
                    rate_new = n;
                } else {
                    act = Act::Hold;
                    rate_new = s.rate_q[j];
                }
            } else if !neg {
                act = Act::Ignore;
            } else if let Some(j) = (0..k).find(|&j| !s.valid_q[j]) {
                act = Act::Install;
                applied = Some(j);
                rate_new = dec(line, &mut ev);
            } else if let Some(j) = (0..k)
                .find(|&j| s.level_q[j] == LEVEL_DA && s.key_prio_q[j] == i.msg_prio_i.value())
            {
                act = Act::FallbackPrio;
                applied = Some(j);
                rate_new = dec(s.rate_q[j], &mut ev);
            } else {
                act = Act::FallbackLink;
                applied = Some(0);
                rate_new = dec(s.rate_q[0], &mut ev);
            }
        }
        o.msg_act_o = act.code();
        o.msg_lim_o = applied.unwrap_or(0) as u8;
        ev.act = act;
        ev.msg_frame_same = applied.is_some() && applied == fl && i.in_valid_i;

        // Next state of each limiter; 4. removal last.
        let s = &mut self.s;
        for j in 0..k {
            let r = rel == Some(j);
            let e = enq == Some(j);
            let a = applied == Some(j);
            let cnt_q = s.cnt_q[j];
            let cnt_d = cnt_q - u8::from(r) + u8::from(e);
            let tok_inc = if cnt_q != 0 { s.rate_q[j] as u64 } else { 0 };
            let tok_dec = if r {
                (s.fifo_len_q[j * d + s.rd_q[j] as usize] as u64) << FW
            } else {
                0
            };
            // FIFO: the write slot from the start-of-cycle pointers (the
            // head's slot when a full FIFO releases and takes a frame).
            if e {
                let wr = j * d + (s.rd_q[j] as usize + cnt_q as usize) % d;
                s.fifo_da_q[wr] = i.in_da_i;
                s.fifo_prio_q[wr] = prio;
                s.fifo_len_q[wr] = i.in_len_i;
            }
            if r {
                s.rd_q[j] = ((s.rd_q[j] as usize + 1) % d) as u8;
            }
            s.cnt_q[j] = cnt_d;
            let mut valid = s.valid_q[j];
            let mut rate = s.rate_q[j];
            if a {
                rate = rate_new;
                s.cpid_q[j] = i.msg_cpid_i;
                match act {
                    Act::Install => {
                        valid = true;
                        s.level_q[j] = LEVEL_DA;
                        s.key_da_q[j] = i.msg_flow_da_i;
                        s.key_prio_q[j] = i.msg_prio_i.value();
                    }
                    Act::FallbackPrio => s.level_q[j] = LEVEL_PRIO,
                    Act::FallbackLink => s.level_q[j] = LEVEL_LINK,
                    _ => {}
                }
            }
            let rm_line = valid && rate == line && cnt_d == 0;
            // The timer counts only while a valid limiter's FIFO is empty,
            // so reloading it when a frame enters is enough: it holds the
            // idle time until the last frame has left.
            let load = a || e;
            let tick = s.valid_q[j] && cnt_q == 0;
            let mut timer = Timer {
                count: s.idle_q[j] as u64,
            };
            let rm_idle = timer.clock(load, idle as u64, tick);
            let free = rm_line || rm_idle;
            let mut bucket = SatCnt {
                count: s.tok_q[j] as u64,
                max: TOK_MAX,
            };
            bucket.clock(free, tok_inc, tok_dec);
            if free {
                valid = false;
                rate = 0;
                s.level_q[j] = 0;
            }
            s.valid_q[j] = valid;
            s.rate_q[j] = rate;
            s.tok_q[j] = bucket.count as u32;
            s.idle_q[j] = timer.count as u16;
            o.rm_line_o[j] = rm_line;
            o.rm_idle_o[j] = rm_idle;
            ev.rm_line |= rm_line;
            ev.rm_idle |= rm_idle;
        }
        self.ev = ev;
    }
}

/// What happened in the last cycle, for coverage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    /// The message's action.
    pub act: Act,
    /// The 50 % cap limited a decrease.
    pub dec_capped: bool,
    /// The minimum rate clamped a decrease.
    pub at_min: bool,
    /// The line rate clamped an increase.
    pub at_line: bool,
    /// Fb was saturated to 16 bits.
    pub fb_saturated: bool,
    /// A limiter was removed at line rate.
    pub rm_line: bool,
    /// A limiter was removed after its idle time.
    pub rm_idle: bool,
    /// The offered frame was held: its limiter drains at line rate.
    pub held_draining: bool,
    /// The offered frame was held: its limiter's FIFO is full.
    pub held_full: bool,
    /// A frame entered a FIFO that was full at the start of the cycle (its
    /// head left in the same cycle).
    pub enq_full_releasing: bool,
    /// A bypass frame went to the line.
    pub bypass_out: bool,
    /// A bypass frame lost the arbitration (not taken).
    pub bypass_lost: bool,
    /// A tagged frame went to the line.
    pub tagged_out: bool,
    /// Several requesters for the line.
    pub contention: bool,
    /// The offered frame matched a priority- or link-level limiter.
    pub coarse_match: bool,
    /// Every limiter in use at the start of the cycle.
    pub table_full: bool,
    /// The message acted on the limiter the offered frame matched.
    pub msg_frame_same: bool,
    /// The message came from a point other than its limiter's.
    pub other_point: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> BcnRpParams {
        BcnRpParams::default()
    }

    fn message(da: u64, prio: u8, qoff: i16) -> BcnRpInputs {
        let mut i = BcnRpInputs::zero(&p());
        i.msg_valid_i = true;
        i.msg_flow_da_i = da;
        i.msg_prio_i = u3::new(prio);
        i.msg_qoff_i = I16::new(qoff as i32);
        i
    }

    #[test]
    fn feedback_floors_and_saturates() {
        // W = 2: Fb = Qoff - 2 Qdelta.
        assert_eq!(feedback(10, 3, u5::new(8)), 4);
        // W = 1/4, Qdelta = -1: floor(-1/4) = -1, so Fb = Qoff + 1.
        assert_eq!(feedback(0, -1, u5::new(1)), 1);
        assert_eq!(feedback(0, 1, u5::new(1)), 0);
        assert_eq!(feedback(i16::MIN, i16::MAX, u5::new(31)), i16::MIN);
        assert_eq!(feedback(i16::MAX, i16::MIN, u5::new(31)), i16::MAX);
        assert_eq!(
            feedback_exact(i16::MAX, i16::MIN, u5::new(31)),
            32767 + 253952
        );
    }

    #[test]
    fn decrease_caps_at_half_and_clamps_at_min() {
        let line = 8 << FW;
        // Gd = 1/128, |Fb| = 32: x 3/4.
        assert_eq!(decrease(line, 32, u4::new(7), 1), (6 << FW, false, false));
        // |Fb| = 128: would be x 0, capped at x 1/2.
        assert_eq!(decrease(line, 128, u4::new(7), 1), (4 << FW, true, false));
        // The minimum wins.
        assert_eq!(
            decrease(line, 128, u4::new(7), 5 << FW),
            (5 << FW, true, true)
        );
        // Odd rate: the half floors, the rate keeps the ceiling.
        assert_eq!(decrease(3, 32768, u4::new(0), 1), (2, true, false));
        // + 512 x 1/16 x 1/16 B/cycle = 2 B/cycle: exactly the line, or beyond.
        assert_eq!(
            increase(6 << FW, 512, 1 << 12, u4::new(4), line),
            (line, false)
        );
        assert_eq!(
            increase(7 << FW, 512, 1 << 12, u4::new(4), line),
            (line, true)
        );
        assert_eq!(
            increase(4 << FW, 512, 1 << 12, u4::new(4), line),
            (6 << FW, false)
        );
    }

    #[test]
    fn install_fallback_and_finest_match() {
        let p = BcnRpParams::new(2, 2);
        let c = BcnRp::default_config(&p);
        let mut m = BcnRp::new(&p, &c);
        let go = |m: &mut BcnRp, i: BcnRpInputs| Act::from_code(m.step(&i).msg_act_o);
        assert_eq!(
            go(&mut m, message(1, 3, 5)),
            Act::Ignore,
            "Fb > 0: nothing to install"
        );
        assert_eq!(go(&mut m, message(1, 3, -5)), Act::Install);
        assert_eq!(go(&mut m, message(2, 4, -5)), Act::Install);
        assert_eq!(go(&mut m, message(1, 3, 0)), Act::Hold);
        // Table full: a third flow of priority 3 coarsens limiter 0.
        assert_eq!(go(&mut m, message(7, 3, -5)), Act::FallbackPrio);
        assert_eq!(m.state().level_q, vec![LEVEL_PRIO, LEVEL_DA]);
        assert_eq!(m.lookup(99, 3), Some(0));
        assert_eq!(m.lookup(2, 4), Some(1));
        // Priority 6: nothing of that priority at level 0: limiter 0 to the link.
        assert_eq!(go(&mut m, message(8, 6, -5)), Act::FallbackLink);
        assert_eq!(m.state().level_q[0], LEVEL_LINK);
        // The (DA, prio) limiter still wins for its own flow.
        assert_eq!(m.lookup(2, 4), Some(1));
        assert_eq!(m.lookup(5, 5), Some(0));
        m.assert_invariants();
    }

    #[test]
    fn only_the_limiters_point_raises_it() {
        let p = BcnRpParams::default();
        let c = BcnRp::default_config(&p);
        let mut m = BcnRp::new(&p, &c);
        let from = |cpid: u16, qoff: i16| {
            let mut i = message(1, 3, qoff);
            i.msg_cpid_i = cpid;
            i
        };
        let mut go = |i: BcnRpInputs| {
            let o = m.step(&i);
            (
                Act::from_code(o.msg_act_o),
                m.state().rate_q[0],
                m.state().cpid_q[0],
            )
        };
        let (a, r1, cp) = go(from(1, -32));
        assert_eq!((a, cp), (Act::Install, 1));
        // Point 2 has room: it does not raise a rate point 1 set.
        assert_eq!(go(from(2, 40)), (Act::Ignore, r1, 1));
        assert_eq!(go(from(2, 0)), (Act::Ignore, r1, 1));
        // Point 2 congested: it decreases, and the limiter answers to it.
        let (a, r2, cp) = go(from(2, -16));
        assert!(a == Act::Decrease && r2 < r1 && cp == 2);
        assert_eq!(go(from(1, 40)), (Act::Ignore, r2, 2));
        let (a, r3, cp) = go(from(2, 40));
        assert!(a == Act::Increase && r3 > r2 && cp == 2);
        assert_eq!(go(from(2, 0)), (Act::Hold, r3, 2));
        m.assert_invariants();
    }
}
