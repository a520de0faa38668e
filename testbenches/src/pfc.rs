//! Stimulus for the PFC pause generator (`docs/pfc.md`).
//!
//! Configurations cover every runtime field over its legal range with the
//! edges on purpose: one cycle per quantum and the largest `cfg_qcyc_i`, gap
//! 0 and 255, the tightest refresh point (`R * qcyc = 8 + gap` exactly),
//! quanta of exactly `R + 1` and 65535, SA 0 and the largest unicast address.
//!
//! Traffic ([`PfcGen`]) is streamed one cycle at a time from a seed, closed
//! loop against the golden model the runner passes, in two independent
//! halves:
//!
//! - `xoff_i`: segments of a level held for 1..3 cycles (glitches that must
//!   not make a frame), a few to tens of cycles (changes that fall together or
//!   land while a frame or the gap is in progress), or hundreds of cycles
//!   (refreshes), over a few hot priorities;
//! - the receive stream: good PFC frames (enable bits on and off, times 0,
//!   1, small, 65535, DA multicast or our own address, a non-zero reserved
//!   octet), and malformed ones (a flipped bit, truncated, over-long with and
//!   without a correct FCS, another EtherType, the legacy PAUSE opcode, a wrong
//!   DA, data frames), with idle cycles and garbage inside frames; frames
//!   *aimed* so that their last beat lands one cycle before, at, or after the
//!   cycle a running timer expires; and stretches of loopback (the block's
//!   own transmit stream, delayed) so the receive side sees refreshes.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::u3;
use model::eth::{beats, crc32, data_frame, mac_bytes, BEAT_BYTES, FRAME_BEATS};
use model::pfc::{
    classify, pfc_frame, Pfc, PfcConfig, PfcInputs, PfcOutputs, PfcParams, RxClass, Timer,
    OPCODE_PAUSE, PFC_DA, PRIOS,
};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use std::collections::VecDeque;

pub mod directed;
mod frames;
mod loopback;
pub use frames::*;
pub use loopback::*;

/// The link partner's MAC address (SA of the frames we receive).
pub const PEER_SA: u64 = 0x02_aa_bb_cc_dd_ee;

// ---------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct CfgDraw {
    qcyc_sel: u8,
    qcyc: u64,
    gap_sel: u8,
    gap: u8,
    r_extra_sel: u8,
    r_extra: u64,
    q_sel: [u8; PRIOS],
    q_val: [u64; PRIOS],
    sa_sel: u8,
    sa: u64,
    illegal: Option<u8>,
}

fn cfg_of(p: &PfcParams, d: CfgDraw, short: bool) -> PfcConfig {
    let qmax = p.qcyc_max();
    let qcyc = match d.qcyc_sel {
        0 => 1,
        1 => qmax,
        2 => 1 + d.qcyc % qmax.min(16),
        _ => 1 + d.qcyc % qmax,
    };
    let gap: u64 = match d.gap_sel {
        0 => 0,
        1 => 255,
        2 => d.gap as u64 % 17,
        _ => d.gap as u64,
    };
    let r_min = (FRAME_BEATS as u64 + gap).div_ceil(qcyc);
    let r_extra = match d.r_extra_sel {
        0 => 0,
        1 => d.r_extra % 8,
        2 => d.r_extra % 64,
        _ if short => d.r_extra % 64,
        _ => d.r_extra % 4096,
    };
    let r = (r_min + r_extra).min(65534);
    // With `short`, pause times stay within a few thousand cycles.
    let q_cap = if short {
        (r + 1).max(4000 / qcyc).min(65535)
    } else {
        65535
    };
    let quanta: Vec<u16> = (0..PRIOS)
        .map(|k| {
            let q = match d.q_sel[k] {
                0 => r + 1,
                1 => 65535,
                2 => r + 1 + d.q_val[k] % 16,
                3 => r + 1 + d.q_val[k] % (2 * r + 1),
                _ => r + 1 + d.q_val[k] % (65535 - r),
            };
            q.min(q_cap).max(r + 1) as u16
        })
        .collect();
    let uni = |a: u64| a & 0xfeff_ffff_ffff;
    let sa = match d.sa_sel {
        0 => 0,
        1 => 0xfeff_ffff_ffff,
        _ => uni(d.sa),
    };
    let mut c = PfcConfig {
        cfg_sa_i: sa,
        cfg_quanta_i: quanta,
        cfg_qcyc_i: qcyc as u16,
        cfg_refresh_i: r as u16,
        cfg_gap_i: gap as u8,
    };
    match d.illegal {
        Some(0) => c.cfg_qcyc_i = 0,
        Some(1) => c.cfg_refresh_i = (r_min - 1) as u16,
        Some(2) => c.cfg_quanta_i[d.gap as usize % PRIOS] = c.cfg_refresh_i,
        Some(_) => c.cfg_sa_i |= 1 << 40,
        None => {}
    }
    c
}

fn cfg_strategy(p: &PfcParams, illegal: bool, short: bool) -> BoxedStrategy<PfcConfig> {
    let p = *p;
    let sel4 = || prop_oneof![2 => Just(0u8), 1 => Just(1u8), 4 => Just(2u8), 2 => Just(3u8)];
    let q_sel =
        prop_oneof![2 => Just(0u8), 1 => Just(1u8), 3 => Just(2u8), 3 => Just(3u8), 1 => Just(4u8)];
    (
        (sel4(), any::<u64>(), sel4(), any::<u8>()),
        (sel4(), any::<u64>()),
        (
            proptest::array::uniform8(q_sel),
            proptest::array::uniform8(any::<u64>()),
        ),
        (
            prop_oneof![1 => Just(0u8), 1 => Just(1u8), 4 => Just(2u8)],
            any::<u64>(),
        ),
        if illegal {
            proptest::option::weighted(0.1, 0u8..4).boxed()
        } else {
            Just(None).boxed()
        },
    )
        .prop_map(
            move |(
                (qcyc_sel, qcyc, gap_sel, gap),
                (r_extra_sel, r_extra),
                (q_sel, q_val),
                (sa_sel, sa),
                ill,
            )| {
                cfg_of(
                    &p,
                    CfgDraw {
                        qcyc_sel,
                        qcyc,
                        gap_sel,
                        gap,
                        r_extra_sel,
                        r_extra,
                        q_sel,
                        q_val,
                        sa_sel,
                        sa,
                        illegal: ill,
                    },
                    short,
                )
            },
        )
        .boxed()
}

/// Configurations for variant `p` (mostly legal; with `illegal`, one in ten
/// breaks one rule).
pub fn config_strategy(p: &PfcParams, illegal: bool) -> BoxedStrategy<PfcConfig> {
    cfg_strategy(p, illegal, false)
}

/// Legal configurations whose pause times stay within a few thousand cycles
/// (so that a run sees several refreshes), edges included.
pub fn short_config_strategy(p: &PfcParams) -> BoxedStrategy<PfcConfig> {
    cfg_strategy(p, false, true)
}

// ---------------------------------------------------------------------------
// Traffic: the streamed generator
// ---------------------------------------------------------------------------

/// One in this many cycles is a reset (about one run in fifty of the
/// default 1000 to 1500 cycles sees one).
const RESET_ONE_IN: f64 = 65_536.0;

/// Cycles of transmit history kept for loopback (the longest link delay is
/// 20 cycles).
const HISTORY: usize = 32;

/// A pause time: 0, 1, small, up to a few hundred, 65535, anything.
pub fn draw_time(r: &mut Rng) -> u16 {
    match r.weighted(&[2, 2, 4, 3, 1, 1]) {
        0 => 0,
        1 => 1,
        2 => r.range(1, 8) as u16,
        3 => r.range(1, 300) as u16,
        4 => 65535,
        _ => r.u64() as u16,
    }
}

/// A frame of any kind (valid and malformed) for the receive stream: the
/// distribution of [`frame_spec_strategy`], drawn from [`Rng`].
pub fn draw_frame_spec(r: &mut Rng) -> FrameSpec {
    let da = match r.weighted(&[8, 2, 1, 1]) {
        0 => Da::Pfc,
        1 => Da::Own,
        2 => Da::Other(r.u64() & 0xffff_ffff_ffff),
        _ => Da::Other(0x0180_c200_0002),
    };
    let cev = match r.weighted(&[6, 2, 1, 1]) {
        0 => r.u64() as u8 as u16,
        1 => 1u16 << r.below(8),
        2 => 0xff,
        _ => r.u64() as u16,
    };
    let mut times = [0u16; PRIOS];
    for t in &mut times {
        *t = draw_time(r);
    }
    let mutation = match r.weighted(&[12, 2, 2, 1, 2, 1, 1, 1]) {
        0 => Mutation::None,
        1 => Mutation::FlipBit(r.u64() as u16),
        2 => Mutation::Truncate(r.range(1, 63) as u8),
        3 => Mutation::Truncate(60),
        4 => Mutation::Extend(r.range(1, 24) as u8, r.bool()),
        5 => Mutation::EtherType(match r.below(3) {
            0 => 0x0800,
            1 => 0x8809,
            _ => r.u64() as u16,
        }),
        6 => Mutation::Opcode(match r.below(3) {
            0 => OPCODE_PAUSE,
            1 => 0x0102,
            _ => r.u64() as u16,
        }),
        _ => Mutation::Data(r.range(64, 200) as u16),
    };
    FrameSpec {
        da,
        cev,
        times,
        mutation,
    }
}

/// One item of the receive stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxItem {
    /// Idle cycles (at least one); `garbage` puts random data / last /
    /// empty on them.
    Idle(u16, bool),
    /// A frame; `idle_every` > 0 inserts an idle cycle (with garbage data)
    /// after every that many beats; `junk_empty` puts random `empty` values
    /// on non-last beats.
    Frame {
        /// The frame.
        spec: FrameSpec,
        /// Idle cycle after every `idle_every` beats (0: none).
        idle_every: u8,
        /// Random `empty` on beats that are not last.
        junk_empty: bool,
    },
    /// A valid PFC frame loading `prio` with `time`, its last beat placed
    /// `delta` cycles after the last cycle the running timer would be
    /// non-zero (a plain frame if the timer is not running).
    Aimed {
        /// Priority whose timer is aimed at.
        prio: u8,
        /// Offset of the last beat from the timer's last paused cycle.
        delta: i8,
        /// The new time.
        time: u16,
        /// Extra enable bits.
        more: u8,
    },
    /// The block's own transmit stream, `delay` cycles late, for about
    /// `cycles` cycles (until no frame is half-way through), after one idle
    /// cycle.
    Loop {
        /// Cycles.
        cycles: u16,
        /// Link delay (1..=20).
        delay: u8,
    },
}

/// The next item of the receive stream.
pub fn draw_rx_item(r: &mut Rng) -> RxItem {
    match r.weighted(&[4, 1, 10, 3, 2]) {
        0 => RxItem::Idle(r.range(0, 40) as u16, r.bool()),
        1 => RxItem::Idle(r.range(100, 800) as u16, false),
        2 => {
            let spec = draw_frame_spec(r);
            let idle_every = match r.weighted(&[6, 1]) {
                0 => 0,
                _ => r.range(1, 8) as u8,
            };
            RxItem::Frame {
                spec,
                idle_every,
                junk_empty: r.chance(0.2),
            }
        }
        3 => RxItem::Aimed {
            prio: r.below(8) as u8,
            delta: r.range(0, 2) as i8 - 1,
            time: draw_time(r),
            more: match r.weighted(&[3, 1]) {
                0 => 0,
                _ => r.u64() as u8,
            },
        },
        _ => RxItem::Loop {
            cycles: r.range(50, 1200) as u16,
            delay: r.range(1, 20) as u8,
        },
    }
}

/// One cycle of a stream, as driven on the receive side or seen on the
/// transmit side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RxBeat {
    valid: bool,
    last: bool,
    empty: u8,
    data: u64,
}

/// What a generator has yielded so far (for the tests and the curious).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Cycles yielded (resets included).
    pub cycles: u64,
    /// Resets.
    pub resets: u64,
    /// Items drawn for the receive stream, by kind: idle, frame, aimed,
    /// loop.
    pub items: [u64; 4],
    /// Aimed frames placed against a running timer.
    pub aimed_running: u64,
    /// Cycles that drove a beat of the block's own transmit stream back.
    pub loop_beats: u64,
    /// Segments of `xoff_i`.
    pub xoff_segments: u64,
}

/// The PFC block's traffic, one cycle at a time.
///
/// Two independent halves, drawn lazily from one [`Rng`]:
///
/// - `xoff_i`: segments of a level held for 1..3 cycles (glitches that
///   must not make a frame), 4 to 40 cycles (changes that fall together or
///   land while a frame or the gap is in progress), 50 to 400 or 400 to
///   1500 cycles (refreshes), over a few hot priorities drawn once per run;
///   a new segment when the current one ends;
/// - the receive stream: a new [`RxItem`] when the beats of the last one
///   are out: idle stretches (some with garbage on the bus), frames of every
///   kind ([`draw_frame_spec`]), frames aimed at a running receive timer's
///   expiry (read from the golden model passed to [`Generator::next`]), and
///   stretches of loopback of the block's own transmit stream (the `last`
///   outputs, kept for 32 cycles).
///
/// About one cycle in 65536 is a reset. Memory is bounded: the pending
/// beats of one item (at most a data frame of 200 bytes with its inserted
/// idle cycles), idle stretches and aimed waits as counters, and the
/// transmit history as a fixed ring.
pub struct PfcGen {
    sa: u64,
    rng: Rng,
    hot: u8,
    level: u8,
    xoff_left: u32,
    /// Pending beats of the current item (reused).
    queue: VecDeque<RxBeat>,
    /// Idle cycles to drive before `queue`, and whether with garbage.
    idle_left: u32,
    idle_garbage: bool,
    /// Loopback in progress: cycles left, link delay.
    looping: Option<(u16, u8)>,
    loop_mid_frame: bool,
    /// The transmit beats of the last `hist_len` cycles (ring, newest at
    /// `hist_pos - 1`).
    hist: [RxBeat; HISTORY],
    hist_pos: usize,
    hist_len: usize,
    /// The next `last` is the reset state's, not the outputs of a driven
    /// cycle.
    fresh: bool,
    stats: GenStats,
}

impl PfcGen {
    /// The generator of configuration `cfg` of variant `p` from `seed`.
    pub fn new(_p: &PfcParams, cfg: &PfcConfig, seed: u64) -> Self {
        let mut rng = Rng::new(seed, 0x706663);
        let hot = draw_hot(&mut rng);
        PfcGen {
            sa: cfg.cfg_sa_i,
            rng,
            hot,
            level: 0,
            xoff_left: 0,
            queue: VecDeque::with_capacity(64),
            idle_left: 0,
            idle_garbage: false,
            looping: None,
            loop_mid_frame: false,
            hist: [RxBeat::default(); HISTORY],
            hist_pos: 0,
            hist_len: 0,
            fresh: true,
            stats: GenStats::default(),
        }
    }

    /// What the generator has yielded so far.
    pub fn stats(&self) -> GenStats {
        self.stats
    }

    /// The next `xoff_i` segment: flip some hot priorities (or, when the
    /// flip misses them all, a rotated set of them), hold for a while.
    fn new_segment(&mut self) {
        let r = &mut self.rng;
        let flip = match r.weighted(&[8, 1]) {
            0 => r.u64() as u8,
            _ => 0xff,
        };
        let f = flip & self.hot;
        self.level ^= if f == 0 {
            self.hot & flip.rotate_left(3)
        } else {
            f
        };
        self.xoff_left = match r.weighted(&[3, 4, 2, 1]) {
            0 => r.range(1, 3),
            1 => r.range(4, 40),
            2 => r.range(50, 400),
            _ => r.range(400, 1500),
        } as u32;
        self.stats.xoff_segments += 1;
    }

    fn garbage(&mut self) -> RxBeat {
        let g = self.rng.u64();
        RxBeat {
            valid: false,
            last: g & 1 != 0,
            empty: (g >> 8) as u8 & 7,
            data: g,
        }
    }

    /// Queues the beats of `bytes`; with `idle_every`, an idle cycle with
    /// garbage after every that many beats (not after the last); with
    /// `junk_empty`, random `empty` on the beats that are not last.
    fn push_frame(&mut self, bytes: &[u8], idle_every: u8, junk_empty: bool) {
        let n = bytes.len().div_ceil(BEAT_BYTES);
        for (k, chunk) in bytes.chunks(BEAT_BYTES).enumerate() {
            let mut data = 0u64;
            for (j, &b) in chunk.iter().enumerate() {
                data |= (b as u64) << (8 * j);
            }
            let last = k + 1 == n;
            let empty = if last {
                (BEAT_BYTES - chunk.len()) as u8
            } else if junk_empty {
                self.rng.u64() as u8 & 7
            } else {
                0
            };
            self.queue.push_back(RxBeat {
                valid: true,
                last,
                empty,
                data,
            });
            if idle_every > 0 && (k + 1) % idle_every as usize == 0 && !last {
                let g = self.rng.u64();
                self.queue.push_back(RxBeat {
                    valid: false,
                    last: g & 1 != 0,
                    empty: 0,
                    data: g,
                });
            }
        }
    }

    /// Draws the next receive item and turns it into pending cycles.
    fn next_item(&mut self, m: &Pfc) {
        let item = draw_rx_item(&mut self.rng);
        self.idle_garbage = false;
        match item {
            RxItem::Idle(n, garbage) => {
                self.stats.items[0] += 1;
                self.idle_left = (n as u32).max(1);
                self.idle_garbage = garbage && n > 0;
            }
            RxItem::Frame {
                spec,
                idle_every,
                junk_empty,
            } => {
                self.stats.items[1] += 1;
                self.push_frame(&spec.bytes(self.sa), idle_every, junk_empty);
            }
            RxItem::Aimed {
                prio,
                delta,
                time,
                more,
            } => {
                self.stats.items[2] += 1;
                let pr = prio as usize % PRIOS;
                let tm = m.rx_timer(pr);
                // Last beat at cycle t + wait + 7 = t + rem - 1 + delta.
                self.idle_left = if tm.tq == 0 {
                    0
                } else {
                    self.stats.aimed_running += 1;
                    let rem = tm.remaining(m.derived().qe) as i64;
                    (rem - 1 + delta as i64 - (FRAME_BEATS as i64 - 1)).clamp(0, 3000) as u32
                };
                let mut times = [0u16; PRIOS];
                times[pr] = time;
                let spec = FrameSpec::pfc((1u8 << pr) | more, times);
                self.push_frame(&spec.bytes(self.sa), 0, false);
            }
            RxItem::Loop { cycles, delay } => {
                self.stats.items[3] += 1;
                self.looping = Some((cycles, delay.max(1)));
                self.loop_mid_frame = false;
            }
        }
    }

    /// The receive beat of this cycle.
    fn rx(&mut self, m: &Pfc) -> RxBeat {
        if let Some((left, delay)) = self.looping {
            let d = delay as usize;
            let mut b = RxBeat::default();
            if self.hist_len >= d {
                let o = self.hist[(self.hist_pos + HISTORY - d) % HISTORY];
                if o.valid {
                    b = o;
                    self.loop_mid_frame = !o.last;
                    self.stats.loop_beats += 1;
                }
            }
            self.looping =
                (left > 1 || self.loop_mid_frame).then_some((left.saturating_sub(1), delay));
            return b;
        }
        if self.idle_left == 0 && self.queue.is_empty() {
            self.next_item(m);
            if self.looping.is_some() {
                // One idle cycle, then the loop from the next cycle.
                return RxBeat::default();
            }
        }
        if self.idle_left > 0 {
            self.idle_left -= 1;
            return if self.idle_garbage {
                self.garbage()
            } else {
                RxBeat::default()
            };
        }
        self.queue.pop_front().unwrap_or_default()
    }

    fn restart(&mut self) {
        self.queue.clear();
        self.idle_left = 0;
        self.looping = None;
        self.loop_mid_frame = false;
        self.hist_len = 0;
        self.fresh = true;
    }
}

/// The hot priorities of a run: one, a random non-empty set, or all.
fn draw_hot(r: &mut Rng) -> u8 {
    match r.weighted(&[2, 3, 1]) {
        0 => 1u8 << r.below(8),
        1 => r.range(1, 255) as u8,
        _ => 0xff,
    }
}

impl Generator<Pfc> for PfcGen {
    fn next(&mut self, m: &Pfc, last: &PfcOutputs, i: &mut PfcInputs) -> Step {
        self.stats.cycles += 1;
        if self.rng.chance(1.0 / RESET_ONE_IN) {
            self.stats.resets += 1;
            self.restart();
            return Step::Reset;
        }
        if self.fresh {
            self.fresh = false;
        } else {
            self.hist[self.hist_pos] = RxBeat {
                valid: last.tx_valid_o,
                last: last.tx_last_o,
                empty: last.tx_empty_o.value(),
                data: last.tx_data_o,
            };
            self.hist_pos = (self.hist_pos + 1) % HISTORY;
            self.hist_len = (self.hist_len + 1).min(HISTORY);
        }
        if self.xoff_left == 0 {
            self.new_segment();
        }
        self.xoff_left -= 1;
        let b = self.rx(m);
        i.xoff_i = self.level;
        i.rx_valid_i = b.valid;
        i.rx_last_i = b.last;
        i.rx_empty_i = u3::new(b.empty & 7);
        i.rx_data_i = b.data;
        Step::Drive
    }
}

#[cfg(test)]
mod gen_tests;

impl Bench for Pfc {
    fn frames(stim: &Stimulus<Pfc>, sink: &mut dyn FnMut(u64, &[u8])) -> Result<bool, String> {
        let (p, cfg) = (&stim.params, &stim.config);
        let mut src = crate::source(stim)?;
        let mut m = Pfc::new(p, cfg);
        let reset_out = Pfc::new(p, cfg).step(&PfcInputs::zero(p));
        let mut o = reset_out.clone();
        let mut i = PfcInputs::zero(p);
        let mut a = FrameAssembler::default();
        for t in 0..stim.len() as usize {
            let f = match src.next(&m, &o, &mut i) {
                Step::Reset => {
                    m = Pfc::new(p, cfg);
                    o.clone_from(&reset_out);
                    a.push(t, None)
                }
                Step::Drive => {
                    m.step_into(&i, &mut o);
                    a.push(t, Some(&o))
                }
            };
            if let Some(f) = f {
                sink(f.first as u64, &f.bytes);
            }
        }
        Ok(true)
    }

    fn scenarios() -> Vec<crate::Scenario<Pfc>> {
        vec![
            crate::Scenario {
                name: "refresh",
                about: "seeds 000/001: a priority held OFF: one XOFF, a refresh before the peer's timer runs out, one RESUME; one-cycle glitches send nothing",
                build: directed::refresh,
                check: Some(directed::refresh_outcome),
            },
            crate::Scenario {
                name: "shared-frame",
                about: "802.1Qbb: priorities changing in the same cycle share one frame (XOFF 0x89, RESUME 0x08, RESUME 0x81)",
                build: directed::shared_frame,
                check: Some(directed::shared_frame_outcome),
            },
            crate::Scenario {
                name: "refresh-zero",
                about: "illegal configuration (refresh point 0): the block runs as specified, refreshing only once the peer's timer has expired",
                build: directed::refresh_zero,
                check: Some(directed::refresh_zero_outcome),
            },
            crate::Scenario {
                name: "receive",
                about: "receive side: pause, overwrite, disabled priority, every malformed kind ignored and counted, cancel with quanta 0",
                build: || directed::receive().0,
                check: Some(directed::receive_outcome),
            },
        ]
    }

    fn config_strategy(p: &PfcParams, illegal: bool) -> BoxedStrategy<PfcConfig> {
        config_strategy(p, illegal)
    }
    const GENERATOR_VERSION: u32 = 2;
    type Gen = PfcGen;
    fn generator(p: &PfcParams, cfg: &PfcConfig, seed: u64) -> PfcGen {
        PfcGen::new(p, cfg, seed)
    }
}
