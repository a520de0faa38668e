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
use model::pfc::{
    classify, crc32, mac_bytes, pfc_frame, Pfc, PfcConfig, PfcInputs, PfcOutputs, PfcParams,
    RxClass, Timer, BEAT_BYTES, FRAME_BEATS, OPCODE_PAUSE, PFC_DA, PRIOS,
};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use std::collections::VecDeque;

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
// Frames
// ---------------------------------------------------------------------------

/// Which DA a generated frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Da {
    /// 01-80-C2-00-00-01.
    Pfc,
    /// The receiver's own address (`cfg_sa_i`).
    Own,
    /// Another address.
    Other(u64),
}

/// What is done to a frame after it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Nothing: a valid frame of its kind.
    None,
    /// One bit flipped (bit index modulo the frame's bits), FCS left alone.
    FlipBit(u16),
    /// Cut to `n` bytes (1..=63).
    Truncate(u8),
    /// `n` more bytes of padding; with `fix`, the FCS is recomputed.
    Extend(u8, bool),
    /// Another EtherType, FCS recomputed.
    EtherType(u16),
    /// Another opcode, FCS recomputed.
    Opcode(u16),
    /// A data frame (EtherType 0x0800) of this many bytes (64..), good FCS.
    Data(u16),
}

/// A frame to put on the receive stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// Destination address.
    pub da: Da,
    /// Class-enable vector, both octets (the upper one is reserved).
    pub cev: u16,
    /// The eight times.
    pub times: [u16; PRIOS],
    /// What is done to it.
    pub mutation: Mutation,
}

impl FrameSpec {
    /// A valid PFC frame to the PFC address.
    pub fn pfc(cev: u8, times: [u16; PRIOS]) -> Self {
        FrameSpec {
            da: Da::Pfc,
            cev: cev as u16,
            times,
            mutation: Mutation::None,
        }
    }

    /// The frame's bytes, FCS included, as received by a port whose address
    /// is `own_sa`.
    pub fn bytes(&self, own_sa: u64) -> Vec<u8> {
        let da = match self.da {
            Da::Pfc => PFC_DA,
            Da::Own => mac_bytes(own_sa),
            Da::Other(a) => mac_bytes(a),
        };
        let mut f = pfc_frame(PEER_SA, self.cev, &self.times).to_vec();
        f[0..6].copy_from_slice(&da);
        let refcs = |f: &mut Vec<u8>| {
            let n = f.len() - 4;
            let fcs = crc32(&f[..n]);
            f[n..].copy_from_slice(&fcs.to_le_bytes());
        };
        refcs(&mut f);
        match self.mutation {
            Mutation::None => {}
            Mutation::FlipBit(b) => {
                let b = b as usize % (f.len() * 8);
                f[b / 8] ^= 1 << (b % 8);
            }
            Mutation::Truncate(n) => f.truncate((n as usize).clamp(1, 63)),
            Mutation::Extend(n, fix) => {
                let fcs: Vec<u8> = f[60..].to_vec();
                f.truncate(60);
                f.extend(std::iter::repeat_n(0u8, n.max(1) as usize));
                f.extend(fcs);
                if fix {
                    refcs(&mut f);
                }
            }
            Mutation::EtherType(t) => {
                f[12..14].copy_from_slice(&t.to_be_bytes());
                refcs(&mut f);
            }
            Mutation::Opcode(op) => {
                f[14..16].copy_from_slice(&op.to_be_bytes());
                refcs(&mut f);
            }
            Mutation::Data(n) => {
                let n = (n as usize).max(64);
                f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
                f.resize(n, 0);
                for (k, b) in f.iter_mut().enumerate().skip(14) {
                    *b = (k as u8).wrapping_mul(37) ^ 0x5a;
                }
                refcs(&mut f);
            }
        }
        f
    }
}

/// One beat of a stream: (data, last, empty).
pub type Beat = (u64, bool, u8);

/// The beats of `bytes` (8 bytes per beat, byte 0 in bits 7:0).
pub fn beats(bytes: &[u8]) -> Vec<Beat> {
    let n = bytes.len().div_ceil(BEAT_BYTES);
    (0..n)
        .map(|k| {
            let chunk = &bytes[k * BEAT_BYTES..((k + 1) * BEAT_BYTES).min(bytes.len())];
            let mut v = 0u64;
            for (j, &b) in chunk.iter().enumerate() {
                v |= (b as u64) << (8 * j);
            }
            let last = k + 1 == n;
            let empty = if last {
                (BEAT_BYTES - chunk.len()) as u8
            } else {
                0
            };
            (v, last, empty)
        })
        .collect()
}

fn times_strategy() -> impl Strategy<Value = u16> {
    prop_oneof![
        2 => Just(0u16),
        2 => Just(1u16),
        4 => 1u16..=8,
        3 => 1u16..=300,
        1 => Just(65535u16),
        1 => any::<u16>(),
    ]
}

/// Frames of every kind (valid and malformed) for the receive stream.
pub fn frame_spec_strategy() -> impl Strategy<Value = FrameSpec> {
    let da = prop_oneof![
        8 => Just(Da::Pfc),
        2 => Just(Da::Own),
        1 => any::<u64>().prop_map(|a| Da::Other(a & 0xffff_ffff_ffff)),
        1 => Just(Da::Other(0x0180_c200_0002)),
    ];
    let cev = prop_oneof![
        6 => any::<u8>().prop_map(|c| c as u16),
        2 => (0usize..8).prop_map(|p| 1u16 << p),
        1 => Just(0xffu16),
        1 => any::<u16>(),
    ];
    let mutation = prop_oneof![
        12 => Just(Mutation::None),
        2 => any::<u16>().prop_map(Mutation::FlipBit),
        2 => (1u8..=63).prop_map(Mutation::Truncate),
        1 => Just(Mutation::Truncate(60)),
        2 => (1u8..=24, any::<bool>()).prop_map(|(n, f)| Mutation::Extend(n, f)),
        1 => prop_oneof![Just(0x0800u16), Just(0x8809), any::<u16>()].prop_map(Mutation::EtherType),
        1 => prop_oneof![Just(OPCODE_PAUSE), Just(0x0102u16), any::<u16>()].prop_map(Mutation::Opcode),
        1 => (64u16..=200).prop_map(Mutation::Data),
    ];
    (
        da,
        cev,
        proptest::array::uniform8(times_strategy()),
        mutation,
    )
        .prop_map(|(da, cev, times, mutation)| FrameSpec {
            da,
            cev,
            times,
            mutation,
        })
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
                check: None,
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
                check: None,
            },
            crate::Scenario {
                name: "receive",
                about: "receive side: pause, overwrite, disabled priority, every malformed kind ignored and counted, cancel with quanta 0",
                build: || directed::receive().0,
                check: None,
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

// ---------------------------------------------------------------------------
// Transmit-stream decoding and the loopback properties
// ---------------------------------------------------------------------------

/// A frame seen on a transmit stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxFrame {
    /// Cycle of its first beat.
    pub first: usize,
    /// Cycle of its last beat.
    pub last: usize,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Assembles frames from a transmit stream one cycle at a time (constant
/// memory: only the frame half-way through is held).
#[derive(Clone, Debug, Default)]
pub struct FrameAssembler {
    cur: Option<TxFrame>,
}

impl FrameAssembler {
    /// The output of cycle `t` (`None` for a reset cycle, which drops a
    /// frame half-way through); the frame whose last beat this was, if any.
    pub fn push(&mut self, t: usize, o: Option<&PfcOutputs>) -> Option<TxFrame> {
        let Some(o) = o else {
            self.cur = None;
            return None;
        };
        if !o.tx_valid_o {
            return None;
        }
        let f = self.cur.get_or_insert_with(|| TxFrame {
            first: t,
            last: t,
            bytes: Vec::new(),
        });
        let n = if o.tx_last_o {
            BEAT_BYTES - o.tx_empty_o.value() as usize
        } else {
            BEAT_BYTES
        };
        f.bytes
            .extend((0..n).map(|j| (o.tx_data_o >> (8 * j)) as u8));
        if o.tx_last_o {
            f.last = t;
            return self.cur.take();
        }
        None
    }
}

/// Collects frames from a transmit stream, one output per cycle (`None` for
/// a reset cycle, which drops a frame half-way through).
pub fn collect_frames<'a>(outs: impl IntoIterator<Item = Option<&'a PfcOutputs>>) -> Vec<TxFrame> {
    let mut a = FrameAssembler::default();
    outs.into_iter()
        .enumerate()
        .filter_map(|(t, o)| a.push(t, o))
        .collect()
}

/// What a loopback run saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Frames sent.
    pub frames: usize,
    /// Priorities sent as XOFF after being ON (changes).
    pub xoffs: usize,
    /// Priorities re-sent as XOFF while OFF (refreshes).
    pub refreshes: usize,
    /// Priorities sent as RESUME.
    pub resumes: usize,
    /// Cycles the peer had any priority paused.
    pub paused_cycles: usize,
    /// Longest stretch during which one priority stayed paused.
    pub longest_pause: usize,
}

/// One instance looped onto itself: `xoff[t]` drives `xoff_i`, its own
/// transmit stream reaches its receive side `link` cycles later. Returns the
/// stimulus (for replay in co-simulation) and every cycle's outputs.
pub fn loopback(
    p: &PfcParams,
    cfg: &PfcConfig,
    xoff: &[u8],
    link: usize,
) -> (Stimulus<Pfc>, Vec<PfcOutputs>) {
    assert!(link >= 1, "the link is at least one register");
    let mut m = Pfc::new(p, cfg);
    let mut outs: Vec<PfcOutputs> = Vec::with_capacity(xoff.len());
    let mut cycles = Vec::with_capacity(xoff.len());
    for (t, &x) in xoff.iter().enumerate() {
        let mut i = PfcInputs::zero(p);
        i.xoff_i = x;
        if t >= link {
            let o = &outs[t - link];
            i.rx_valid_i = o.tx_valid_o;
            i.rx_last_i = o.tx_last_o;
            i.rx_empty_i = o.tx_empty_o;
            i.rx_data_i = o.tx_data_o;
        }
        outs.push(m.step(&i));
        cycles.push(Cycle::Drive(i));
    }
    (
        Stimulus {
            generated: None,
            params: *p,
            config: cfg.clone(),
            cycles,
            seed: 0x100b,
        },
        outs,
    )
}

/// Checks the properties on a loopback run (see `loopback`):
///
/// 1. every frame is a valid 64-byte PFC frame (by the reference decoder),
///    XOFF times are `cfg_quanta_i[p]`, disabled times 0;
/// 2. no frame carries a priority whose state did not change and whose
///    refresh was not due: an XOFF for a priority advertised OFF comes at
///    least `1 + (Q - R) * qcyc` cycles after the previous one, a RESUME only
///    for a priority advertised OFF, and each carried state equals `xoff_i`
///    in the cycle before the first beat;
/// 3. a priority whose request stayed OFF for the last `L = 16 + gap + link`
///    cycles is paused at the peer, one that stayed ON is not: XOFF and
///    RESUME take effect within the frame latency, and a priority that stays
///    OFF is kept paused with no gap cycle;
/// 4. the peer's pause of a priority only ends the cycle after a RESUME for
///    it was received: a timer never runs out.
pub fn check_loopback(
    cfg: &PfcConfig,
    xoff: &[u8],
    outs: &[PfcOutputs],
    link: usize,
) -> Result<LoopStats, String> {
    let qe = cfg.cfg_qcyc_i.max(1) as usize;
    let r = cfg.cfg_refresh_i as usize;
    let frames = collect_frames(outs.iter().map(Some));
    let mut st = LoopStats {
        frames: frames.len(),
        ..LoopStats::default()
    };
    let mut adv = [false; PRIOS];
    let mut last_off = [None::<usize>; PRIOS];
    // Frames by the rx cycle of their last beat.
    let mut landed: Vec<Option<(u8, [u16; PRIOS])>> = vec![None; outs.len() + link + 1];
    for f in &frames {
        let (class, cev, times) = classify(&f.bytes, 0);
        if class != RxClass::Pfc || f.bytes.len() != 64 || f.bytes[0..6] != PFC_DA {
            return Err(format!(
                "frame at cycle {}: not a valid PFC frame ({class:?})",
                f.first
            ));
        }
        if f.bytes[6..12] != mac_bytes(cfg.cfg_sa_i) || f.bytes[16] != 0 {
            return Err(format!(
                "frame at cycle {}: SA or reserved octet wrong",
                f.first
            ));
        }
        if f.last != f.first + FRAME_BEATS - 1 {
            return Err(format!(
                "frame at cycle {}: beats not back to back",
                f.first
            ));
        }
        let d = f.first - 1; // decision cycle
        for (k, &tm) in times.iter().enumerate() {
            let on = cev >> k & 1 != 0;
            if !on {
                if tm != 0 {
                    return Err(format!(
                        "frame at {}: time[{k}] = {tm} for a disabled priority",
                        f.first
                    ));
                }
                continue;
            }
            let req = xoff[d] >> k & 1 != 0;
            if (tm != 0) != req {
                return Err(format!(
                    "frame at {}: priority {k} sent time {tm} but xoff_i was {} when it started",
                    f.first, req as u8
                ));
            }
            if tm != 0 {
                if tm != cfg.cfg_quanta_i[k] {
                    return Err(format!(
                        "frame at {}: priority {k} time {tm} != quanta",
                        f.first
                    ));
                }
                if adv[k] {
                    let prev = last_off[k].unwrap();
                    let q = cfg.cfg_quanta_i[k] as usize;
                    let min = 1 + (q - r) * qe;
                    if f.first - prev < min {
                        return Err(format!(
                            "frame at {}: priority {k} refreshed {} cycles after the previous XOFF, \
                             before its refresh point ({min} cycles): an unnecessary frame",
                            f.first,
                            f.first - prev
                        ));
                    }
                    st.refreshes += 1;
                } else {
                    st.xoffs += 1;
                }
                last_off[k] = Some(f.first);
                adv[k] = true;
            } else {
                if !adv[k] {
                    return Err(format!(
                        "frame at {}: RESUME for priority {k}, which was not advertised OFF: an \
                         unnecessary frame",
                        f.first
                    ));
                }
                st.resumes += 1;
                adv[k] = false;
            }
        }
        if f.last + link < landed.len() {
            landed[f.last + link] = Some((cev, times));
        }
    }
    let lat = model::pfc::frame_latency(cfg.cfg_gap_i, link as u64) as usize;
    let mut run = [0usize; PRIOS];
    for t in 1..outs.len() {
        let pause = outs[t].pause_o;
        if pause != 0 {
            st.paused_cycles += 1;
        }
        for k in 0..PRIOS {
            let now = pause >> k & 1 != 0;
            let before = outs[t - 1].pause_o >> k & 1 != 0;
            run[k] = if now { run[k] + 1 } else { 0 };
            st.longest_pause = st.longest_pause.max(run[k]);
            if before && !now {
                let ok = matches!(landed[t - 1], Some((cev, times)) if cev >> k & 1 != 0 && times[k] == 0);
                if !ok {
                    return Err(format!(
                        "cycle {t}: priority {k} stopped being paused without a RESUME (its timer \
                         ran out: a gap)"
                    ));
                }
            }
            if t >= lat {
                let win = &xoff[t - lat..=t];
                if win.iter().all(|x| x >> k & 1 != 0) && !now {
                    return Err(format!(
                        "cycle {t}: priority {k} requested OFF since cycle {} (>= {lat} cycles) but \
                         the peer is not paused",
                        t - lat
                    ));
                }
                if win.iter().all(|x| x >> k & 1 == 0) && now {
                    return Err(format!(
                        "cycle {t}: priority {k} requested ON since cycle {} (>= {lat} cycles) but \
                         the peer is still paused",
                        t - lat
                    ));
                }
            }
        }
    }
    Ok(st)
}

/// Replays a loopback run and counts the frames that reloaded a receive
/// timer in the last cycle it would have been non-zero (a refresh that lands
/// exactly at expiry: the tightest legal case, `R * qcyc = 8 + gap`).
pub fn refreshes_at_expiry(p: &PfcParams, cfg: &PfcConfig, xoff: &[u8], link: usize) -> usize {
    let (stim, _) = loopback(p, cfg, xoff, link);
    let mut m = Pfc::new(p, cfg);
    let qe = m.derived().qe;
    let mut n = 0;
    for c in &stim.cycles {
        let Cycle::Drive(i) = c else { continue };
        let before: Vec<Timer> = (0..PRIOS).map(|k| m.rx_timer(k)).collect();
        let o = m.step(i);
        if RxClass::from_code(o.rx_done_o) == Some(RxClass::Pfc) {
            for (k, b) in before.iter().enumerate() {
                if b.remaining(qe) == 1 && m.rx_timer(k).tq != 0 {
                    n += 1;
                }
            }
        }
    }
    n
}

/// `xoff_i` patterns for loopback: per priority, levels held for a random
/// number of cycles, long enough (in `scale` units) to see refreshes.
pub fn xoff_pattern_strategy(len: usize, scale: usize) -> BoxedStrategy<Vec<u8>> {
    let seg = (
        any::<u8>(),
        prop_oneof![
            2 => 1usize..=4,
            3 => 5usize..=60,
            3 => (scale / 4).max(1)..=(scale * 3).max(2),
        ],
    );
    proptest::collection::vec(seg, 2..=30)
        .prop_map(move |segs| {
            let mut v = Vec::with_capacity(len);
            let mut level = 0u8;
            for (flip, n) in segs.iter().cycle() {
                level ^= flip;
                v.extend(std::iter::repeat_n(level, *n));
                if v.len() >= len {
                    break;
                }
            }
            v.truncate(len);
            v
        })
        .boxed()
}

// ---------------------------------------------------------------------------
// pcap
// ---------------------------------------------------------------------------

/// A pcap file (`crate::pcap`, link type Ethernet) holding `frames` (FCS
/// included), one microsecond apart.
pub fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let timed: Vec<(u64, Vec<u8>)> = frames
        .iter()
        .enumerate()
        .map(|(k, f)| (1000 * k as u64, f.clone()))
        .collect();
    crate::pcap::to_vec(&timed)
}

// ---------------------------------------------------------------------------
// Directed stimuli
// ---------------------------------------------------------------------------

/// Directed stimuli (closed loop against the model, replayed in co-simulation).
pub mod directed {
    use super::*;

    /// Appends the beats of `spec` (back to back) to `cycles`, with `xoff`.
    pub fn push_frame(
        p: &PfcParams,
        cfg: &PfcConfig,
        cycles: &mut Vec<Cycle<PfcInputs>>,
        spec: &FrameSpec,
        xoff: u8,
    ) {
        for (d, last, empty) in beats(&spec.bytes(cfg.cfg_sa_i)) {
            let mut i = PfcInputs::zero(p);
            i.xoff_i = xoff;
            i.rx_valid_i = true;
            i.rx_last_i = last;
            i.rx_empty_i = u3::new(empty);
            i.rx_data_i = d;
            cycles.push(Cycle::Drive(i));
        }
    }

    /// Appends `n` idle cycles with `xoff`.
    pub fn push_idle(p: &PfcParams, cycles: &mut Vec<Cycle<PfcInputs>>, n: usize, xoff: u8) {
        for _ in 0..n {
            let mut i = PfcInputs::zero(p);
            i.xoff_i = xoff;
            cycles.push(Cycle::Drive(i));
        }
    }

    /// A configuration with the test source address and one quanta value
    /// for every priority.
    pub fn config(qcyc: u16, refresh: u16, gap: u8, quanta: u16) -> PfcConfig {
        PfcConfig {
            cfg_sa_i: 0x02_00_5e_10_20_30,
            cfg_quanta_i: vec![quanta; PRIOS],
            cfg_qcyc_i: qcyc,
            cfg_refresh_i: refresh,
            cfg_gap_i: gap,
        }
    }

    /// XOFF, refreshes, RESUME: priority 2 goes OFF for 1009 cycles (one
    /// XOFF frame, then a refresh every `(40 - 10) * 8 = 240` cycles) while
    /// priority 5 glitches OFF for single cycles during the first frame
    /// (no frame for it); then priority 2 goes ON (one RESUME).
    pub fn refresh() -> Stimulus<Pfc> {
        let p = PfcParams::default();
        let c = config(8, 10, 20, 40);
        let mut cycles = Vec::new();
        push_idle(&p, &mut cycles, 1, 0b100);
        for k in 0..8 {
            let x = 0b100 | if k % 3 == 0 { 0b10_0000 } else { 0 };
            push_idle(&p, &mut cycles, 1, x);
        }
        push_idle(&p, &mut cycles, 1000, 0b100);
        push_idle(&p, &mut cycles, 200, 0);
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles,
            seed: 3,
        }
    }

    /// Several priorities changing in the same cycle share one frame:
    /// priorities 0, 3 and 7 go OFF together (one XOFF frame, class-enable
    /// 0x89), priority 3 goes ON alone (a RESUME for 3 only), then 0 and 7
    /// go ON together (one RESUME, class-enable 0x81).
    pub fn shared_frame() -> Stimulus<Pfc> {
        let p = PfcParams::default();
        let c = config(8, 10, 4, 60);
        let mut cycles = Vec::new();
        push_idle(&p, &mut cycles, 4, 0);
        push_idle(&p, &mut cycles, 120, 0b1000_1001);
        push_idle(&p, &mut cycles, 120, 0b1000_0001);
        push_idle(&p, &mut cycles, 120, 0);
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles,
            seed: 4,
        }
    }

    /// Scenario check of [`shared_frame`]: the first frame is one XOFF for
    /// priorities 0, 3 and 7 (class-enable 0x89, their quanta non-zero);
    /// the RESUME frames (every enabled time zero) are one for 3 (0x08),
    /// then one for 0 and 7 together (0x81), and no other.
    pub fn shared_frame_outcome(_: &Stimulus<Pfc>, outs: &[PfcOutputs]) -> Result<(), String> {
        let frames = collect_frames(outs.iter().map(Some));
        // (class-enable vector, the eight pause times) of each frame.
        let fields: Vec<(u8, Vec<u16>)> = frames
            .iter()
            .map(|f| {
                let b = &f.bytes;
                let times = (0..8)
                    .map(|k| u16::from_be_bytes([b[18 + 2 * k], b[19 + 2 * k]]))
                    .collect();
                (b[17], times)
            })
            .collect();
        let enabled = |cev: u8| (0..8).filter(move |k| cev >> k & 1 == 1);
        match fields.first() {
            Some((0x89, t)) if enabled(0x89).all(|k| t[k] > 0) => {}
            other => return Err(format!("first frame {other:?}: expected XOFF 0x89")),
        }
        let resumes: Vec<u8> = fields
            .iter()
            .filter(|(cev, t)| enabled(*cev).all(|k| t[k] == 0))
            .map(|(cev, _)| *cev)
            .collect();
        if resumes == [0x08, 0x81] {
            Ok(())
        } else {
            Err(format!(
                "RESUME frames with class-enable {resumes:02x?}: expected [08, 81]"
            ))
        }
    }

    /// An illegal configuration runs as specified: with the refresh point
    /// at 0 (`R * qcyc < 8 + gap`, flagged on `cfg_err_o`), a priority held
    /// OFF is refreshed only once the peer's timer (3 quanta of 4 cycles)
    /// has run out, so the peer sees gaps; then RESUME.
    pub fn refresh_zero() -> Stimulus<Pfc> {
        let p = PfcParams::default();
        let c = config(4, 0, 0, 3);
        let mut cycles = Vec::new();
        push_idle(&p, &mut cycles, 2, 0);
        push_idle(&p, &mut cycles, 120, 0b10);
        push_idle(&p, &mut cycles, 30, 0);
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles,
            seed: 6,
        }
    }

    /// The malformed frames of the receive scenario, with the class each
    /// must be counted in.
    pub const MALFORMED: [(Mutation, Da, RxClass); 9] = [
        (Mutation::FlipBit(150), Da::Pfc, RxClass::Fcs),
        (Mutation::Truncate(40), Da::Pfc, RxClass::Runt),
        (Mutation::Truncate(63), Da::Pfc, RxClass::Runt),
        (Mutation::Extend(1, true), Da::Pfc, RxClass::Long),
        (Mutation::Extend(8, false), Da::Pfc, RxClass::Fcs),
        (Mutation::EtherType(0x0800), Da::Pfc, RxClass::Other),
        (Mutation::Opcode(0x0001), Da::Pfc, RxClass::BadCtl),
        (
            Mutation::None,
            Da::Other(0x02_11_22_33_44_55),
            RxClass::BadCtl,
        ),
        (Mutation::Data(300), Da::Pfc, RxClass::Other),
    ];

    /// Where the frames of [`receive`] end (cycle of their last beat).
    #[derive(Clone, Debug)]
    pub struct ReceiveMarks {
        /// The first frame: priorities 1 (1000 quanta), 2 (7), 6 (500).
        pub first_end: usize,
        /// The second: priority 1 overwritten with 10 quanta.
        pub second_end: usize,
        /// Each frame of [`MALFORMED`].
        pub ends: Vec<usize>,
        /// The frame to our own address that cancels priority 6.
        pub cancel_end: usize,
    }

    /// Receive side: pause, overwrite, a disabled priority's garbage time,
    /// every malformed kind (none may act), and a cancel (quanta 0).
    pub fn receive() -> (Stimulus<Pfc>, ReceiveMarks) {
        let p = PfcParams::default();
        let c = config(8, 2, 0, 100);
        let mut cyc = Vec::new();
        let mut times = [0u16; PRIOS];
        times[1] = 1000;
        times[2] = 7;
        times[6] = 500;
        push_frame(&p, &c, &mut cyc, &FrameSpec::pfc(0b0100_0110, times), 0);
        let first_end = cyc.len() - 1;
        push_idle(&p, &mut cyc, 2000, 0);
        // Overwrite priority 1 with 10 quanta; priority 6 is not enabled
        // (its time field carries garbage) and must run on.
        let mut t2 = [0u16; PRIOS];
        t2[1] = 10;
        t2[6] = 3;
        push_frame(&p, &c, &mut cyc, &FrameSpec::pfc(0b0000_0010, t2), 0);
        let second_end = cyc.len() - 1;
        push_idle(&p, &mut cyc, 200, 0);
        let zero6 = FrameSpec::pfc(0b0100_0000, [0; PRIOS]);
        let mut ends = Vec::new();
        for (m, da, _) in &MALFORMED {
            let s = FrameSpec {
                mutation: *m,
                da: *da,
                ..zero6
            };
            push_frame(&p, &c, &mut cyc, &s, 0);
            ends.push(cyc.len() - 1);
            push_idle(&p, &mut cyc, 3, 0);
        }
        // Our own address as DA is accepted: cancel priority 6 at once.
        push_frame(
            &p,
            &c,
            &mut cyc,
            &FrameSpec {
                da: Da::Own,
                ..zero6
            },
            0,
        );
        let cancel_end = cyc.len() - 1;
        push_idle(&p, &mut cyc, 5, 0);
        (
            Stimulus {
                generated: None,
                params: p,
                config: c,
                cycles: cyc,
                seed: 5,
            },
            ReceiveMarks {
                first_end,
                second_end,
                ends,
                cancel_end,
            },
        )
    }

    /// Runs the model over `s`; every cycle's outputs.
    pub fn outputs(s: &Stimulus<Pfc>) -> Vec<Option<PfcOutputs>> {
        let mut m = Pfc::new(&s.params, &s.config);
        s.cycles
            .iter()
            .map(|c| match c {
                Cycle::Drive(i) => Some(m.step(i)),
                Cycle::Reset => {
                    m = Pfc::new(&s.params, &s.config);
                    None
                }
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------
// The system scenario
// ---------------------------------------------------------------------------

/// MMU admission, this block, a link and an upstream sender that obeys the
/// received pause vector (model level). See `docs/pfc.md`, "System scenario".
///
/// Units: the link carries one 8-byte beat per cycle (`C = 8 B/cycle`; at
/// 100 Gb/s a cycle is 0.64 ns, at 400 Gb/s 0.16 ns); a pause quantum (512
/// bits) is 64 bytes, so `cfg_qcyc_i = 8`. The upstream sends MTU packets of
/// `mtu_bytes` back to back, byte-exact (a packet that ends inside a beat is
/// followed by the next in the same beat); the MMU charges a packet
/// `ceil(mtu_bytes / cell_bytes)` cells when its first byte arrives. With
/// cells of 64 B and MTUs of whole cells the seed's headroom
/// `eta = 2 (C Dprop + L_MTU) + 3840 B` is `eta = D / 4 + 2 L + 60` cells for
/// a one-way delay of `D` cycles and an MTU of `L` cells.
pub mod system {
    use super::*;
    use arbitrary_int::{i4, u6};
    use model::mmu::{Mmu, MmuConfig, MmuInputs, MmuParams, Verdict};

    /// Bytes per cycle on the link.
    pub const BYTES_PER_CYCLE: u64 = 8;
    /// Bytes per cell of [`Setup::worst_case`].
    pub const CELL_BYTES: u64 = 64;
    /// Cycles per pause quantum (512 bits at 8 bytes per cycle).
    pub const QCYC: u16 = 8;
    /// The seed's allowance for generating and processing the PAUSE,
    /// 3840 B = 60 quanta, in cycles.
    pub const ALLOWANCE_CYCLES: u64 = 3840 / BYTES_PER_CYCLE;
    /// Cycles of our own pipeline inside the allowance. With the arrival
    /// that raises PAUSE in cycle `t0`: the MMU's `xoff_o` is 1 in `t0 + 1`
    /// (1), the frame starts there and its first beat is in `t0 + 2` (1), its
    /// last beat 7 cycles later (7), the upstream's `pause_o` is 1 the cycle
    /// after the last beat arrives (1), and the sender, which sees that
    /// `proc_cycles` later, can still start a packet in the cycle before
    /// (-1): 9 cycles, plus the waiting delay and two propagation delays.
    pub const PIPELINE_CYCLES: u64 = 9;

    /// Parameters of one run.
    #[derive(Clone, Copy, Debug)]
    pub struct Setup {
        /// One-way propagation delay of the link, cycles.
        pub link: u64,
        /// MTU in bytes (the upstream sends packets of this size).
        pub mtu_bytes: u32,
        /// Cell size of the MMU, bytes.
        pub cell_bytes: u32,
        /// The congested ingress port (its priority 3 is lossless).
        pub port: usize,
        /// Headroom of each ingress port's lossless queues, cells
        /// (`cfg_hdrm_cells_i`); `hdrm[port]` is the one that counts.
        pub hdrm: [u32; 4],
        /// Cycles the upstream needs to act on its pause vector (on top of
        /// our pipeline): `ALLOWANCE_CYCLES - PIPELINE_CYCLES` for the
        /// seed's worst case.
        pub proc_cycles: u64,
        /// Before every PFC frame the reverse link starts an MTU data frame
        /// (the waiting delay of the seed, worst case).
        pub adversarial_mac: bool,
        /// Cycles with the egress stalled, then the queue drains at line rate.
        pub stall_cycles: u64,
        /// Total cycles.
        pub cycles: u64,
    }

    impl Setup {
        /// The seed's worst case for link delay `link` and MTU `mtu_cells`,
        /// with the formula's headroom.
        /// Cells of 64 B, port 0, the other ports without headroom.
        pub fn worst_case(link: u64, mtu_cells: u32) -> Self {
            let mut hdrm = [0; 4];
            hdrm[0] = eta_formula_cells(link, mtu_cells);
            Self::sized(
                link,
                mtu_cells * CELL_BYTES as u32,
                CELL_BYTES as u32,
                0,
                hdrm,
            )
        }

        /// The seed's worst case in bytes: MTU packets of `mtu_bytes` into
        /// cells of `cell_bytes`, the congested port `port`, the headroom of
        /// every port `hdrm` (cells).
        pub fn sized(
            link: u64,
            mtu_bytes: u32,
            cell_bytes: u32,
            port: usize,
            hdrm: [u32; 4],
        ) -> Self {
            let pkt = (mtu_bytes as u64).div_ceil(BYTES_PER_CYCLE);
            let stall = 2 * link + 40 * pkt + 30_000;
            Setup {
                link,
                mtu_bytes,
                cell_bytes,
                port,
                hdrm,
                proc_cycles: ALLOWANCE_CYCLES - PIPELINE_CYCLES,
                adversarial_mac: true,
                stall_cycles: stall,
                cycles: stall + 4 * link + 20_000,
            }
        }

        /// Cells per MTU packet.
        pub fn mtu_cells(&self) -> u32 {
            self.mtu_bytes.div_ceil(self.cell_bytes)
        }

        /// Cycles of one MTU packet on the link (a partial last beat counts).
        pub fn pkt_cycles(&self) -> u64 {
            (self.mtu_bytes as u64).div_ceil(BYTES_PER_CYCLE)
        }

        /// The congested port's headroom, cells.
        pub fn eta_cells(&self) -> u32 {
            self.hdrm[self.port]
        }

        /// The same with the congested port's headroom `eta` cells.
        pub fn with_eta(&self, eta: u32) -> Self {
            let mut s = *self;
            s.hdrm[s.port] = eta;
            s
        }
    }

    /// `eta = 2 (C Dprop + L_MTU) + 3840 B`, in cells.
    pub fn eta_formula_bytes(link: u64, mtu_cells: u32) -> u64 {
        2 * (BYTES_PER_CYCLE * link + mtu_cells as u64 * CELL_BYTES) + 3840
    }

    /// The formula in cells (`link` a multiple of 4: exact).
    pub fn eta_formula_cells(link: u64, mtu_cells: u32) -> u32 {
        eta_formula_bytes(link, mtu_cells).div_ceil(CELL_BYTES) as u32
    }

    /// What a run measured.
    #[derive(Clone, Debug, Default)]
    pub struct Outcome {
        /// Headroom configured, cells.
        pub eta_cells: u32,
        /// Most headroom cells the queue ever held.
        pub max_headroom: u32,
        /// Lossless packets dropped.
        pub drops: u32,
        /// PFC frames on the reverse link.
        pub pfc_frames: u32,
        /// Data packets the upstream sent.
        pub packets: u32,
        /// Cycles from the arrival that raised the first PAUSE to the last
        /// packet start of the upstream before it stopped.
        pub reaction: Option<u64>,
        /// The upstream's pause of the lossless priority went from 1 to 0
        /// while the switch queue was still OFF (a gap: must never happen).
        pub gaps: u32,
        /// The upstream resumed after the drain phase.
        pub resumed: bool,
        /// Frames the upstream's receiver classified, by class code.
        pub rx_classes: [u32; 8],
    }

    /// Runs the scenario.
    pub fn run(s: &Setup) -> Outcome {
        const PRIO: usize = 3;
        let q = s.port * PRIOS + PRIO;
        let l = s.mtu_cells();
        assert!((1..64).contains(&l), "an MTU packet is 1..=63 cells");
        let pkt_cycles = s.pkt_cycles();
        // MMU: 4 ports, priority 3 lossless, no private buffer, alpha = 1:
        // one congested queue takes 10 packets in shared, the 11th goes whole
        // into headroom and raises PAUSE.
        let mp = MmuParams::default();
        let bs = 20 * l;
        let mc = MmuConfig {
            cfg_buf_cells_i: bs + s.hdrm.iter().sum::<u32>(),
            cfg_lossy_cells_i: 0,
            cfg_priv_cells_i: 0,
            cfg_hdrm_cells_i: s.hdrm.to_vec(),
            cfg_xon_cells_i: l,
            cfg_alpha_i: i4::new(0),
            cfg_alpha_lossy_i: i4::new(0),
            cfg_lossless_i: 1 << PRIO,
        };
        assert_eq!(mp.ports, s.hdrm.len());
        assert!(Mmu::check(&mp, &mc).is_ok());
        let mut mmu = Mmu::new(&mp, &mc);
        // PFC: both ends the same configuration. The MAC may hold a frame
        // back by one MTU, so the refresh point leaves room for that too.
        let pp = PfcParams::default();
        let pc = PfcConfig {
            cfg_sa_i: 0x02_00_00_00_00_01,
            cfg_quanta_i: vec![1024; PRIOS],
            cfg_qcyc_i: QCYC,
            cfg_refresh_i: 512,
            cfg_gap_i: 0,
        };
        assert!(Pfc::check(&pp, &pc).is_ok());
        assert!(
            512 * QCYC as u64 >= 8 + pkt_cycles + 8,
            "refresh must cover the MAC delay"
        );
        let mut sw = Pfc::new(&pp, &pc); // switch port: transmit side used
        let mut up = Pfc::new(
            &pp,
            &PfcConfig {
                cfg_sa_i: PEER_SA,
                ..pc.clone()
            },
        ); // upstream port: receive side used
        let data_frame = beats(
            &FrameSpec {
                da: Da::Other(0x02_00_00_00_00_01),
                cev: 0,
                times: [0; PRIOS],
                mutation: Mutation::Data(s.mtu_bytes as u16),
            }
            .bytes(0),
        );
        let mut out = Outcome {
            eta_cells: s.eta_cells(),
            ..Outcome::default()
        };
        let d = s.link as usize;
        let mut fwd: VecDeque<u64> = VecDeque::new(); // arrival cycles at the switch
        let mut rev: VecDeque<Option<Beat>> = VecDeque::from(vec![None; d]);
        let mut pause_seen: VecDeque<bool> = VecDeque::from(vec![false; s.proc_cycles as usize]);
        let mut pfc_fifo: VecDeque<Beat> = VecDeque::new();
        let mut data_left = 0usize;
        let mut pfc_in_progress = false;
        let mut sending_left = 0u64; // bytes left of the packet being sent upstream
        let mut last_start = 0u64;
        let mut first_pause_at: Option<u64> = None;
        let mut dep_timer = 0u64;
        let mut up_was_paused = false;
        let mut paused_ever = false;
        for t in 0..s.cycles {
            // Upstream: obeys its pause vector, `proc_cycles` late, at packet
            // boundaries; back-to-back MTU packets otherwise.
            let seen = if s.proc_cycles == 0 {
                up_was_paused
            } else {
                *pause_seen.front().unwrap()
            };
            let mut beat = BYTES_PER_CYCLE;
            loop {
                if sending_left == 0 {
                    if seen {
                        break;
                    }
                    sending_left = s.mtu_bytes as u64;
                    fwd.push_back(t + s.link);
                    out.packets += 1;
                    last_start = t;
                }
                let b = sending_left.min(beat);
                sending_left -= b;
                beat -= b;
                if beat == 0 {
                    break;
                }
            }
            // Switch: MMU admission, departures after the stall.
            let mut mi = MmuInputs::zero(&mp);
            if fwd.front() == Some(&t) {
                fwd.pop_front();
                mi.arr_valid_i = true;
                mi.arr_port_i = s.port as u8;
                mi.arr_prio_i = arbitrary_int::u3::new(PRIO as u8);
                mi.arr_len_i = u6::new(l as u8);
            }
            if t >= s.stall_cycles {
                if dep_timer == 0 {
                    let st = mmu.state();
                    let have = st.priv_q[q] + st.shr_q[q] + st.hdr_q[q];
                    if have > 0 {
                        mi.dep_valid_i = true;
                        mi.dep_port_i = s.port as u8;
                        mi.dep_prio_i = arbitrary_int::u3::new(PRIO as u8);
                        mi.dep_len_i = u6::new(have.min(l) as u8);
                    }
                    dep_timer = pkt_cycles;
                }
                dep_timer -= 1;
            }
            let mo = mmu.step(&mi);
            let v = Verdict::from_code(mo.verdict_o);
            if v == Verdict::Drop {
                out.drops += 1;
            }
            if mo.pause_o[q] && first_pause_at.is_none() {
                first_pause_at = Some(t);
            }
            out.max_headroom = out.max_headroom.max(mmu.state().hdr_q[q]);
            let xoff_now = mo.xoff_o[s.port * PRIOS..][..PRIOS]
                .iter()
                .enumerate()
                .fold(0u8, |a, (k, &b)| a | (u8::from(b) << k));
            // Switch port's PFC transmitter.
            let mut si = PfcInputs::zero(&pp);
            si.xoff_i = xoff_now;
            let so = sw.step(&si);
            if so.tx_valid_o {
                pfc_fifo.push_back((so.tx_data_o, so.tx_last_o, so.tx_empty_o.value()));
            }
            // The MAC of the switch port: a data frame in progress finishes;
            // then PFC frames; an adversarial MAC starts a data frame just
            // before each PFC frame.
            let beat = if data_left > 0 {
                data_left -= 1;
                Some(data_frame[data_frame.len() - 1 - data_left])
            } else if let Some(&b) = pfc_fifo.front() {
                if s.adversarial_mac && !pfc_in_progress {
                    pfc_in_progress = true;
                    data_left = data_frame.len() - 1;
                    Some(data_frame[0])
                } else {
                    pfc_fifo.pop_front();
                    if b.1 {
                        pfc_in_progress = false;
                        out.pfc_frames += 1;
                    } else {
                        pfc_in_progress = true;
                    }
                    Some(b)
                }
            } else {
                None
            };
            rev.push_back(beat);
            // Upstream port's receiver.
            let mut ui = PfcInputs::zero(&pp);
            if let Some((data, last, empty)) = rev.pop_front().flatten() {
                ui.rx_valid_i = true;
                ui.rx_last_i = last;
                ui.rx_empty_i = u3::new(empty);
                ui.rx_data_i = data;
            }
            let uo = up.step(&ui);
            if let Some(c) = RxClass::from_code(uo.rx_done_o) {
                out.rx_classes[c as usize] += 1;
            }
            let paused = uo.pause_o >> PRIO & 1 != 0;
            if up_was_paused && !paused && mmu.state().xoff_q[q] {
                out.gaps += 1;
            }
            if paused {
                paused_ever = true;
            }
            if paused_ever && !paused && t > s.stall_cycles {
                out.resumed = true;
            }
            up_was_paused = paused;
            if s.proc_cycles > 0 {
                pause_seen.pop_front();
                pause_seen.push_back(paused);
            }
            if let Some(t0) = first_pause_at {
                if out.reaction.is_none() && seen && t > t0 {
                    out.reaction = Some(last_start - (t0 - s.link));
                }
            }
            mmu.assert_invariants();
        }
        out
    }
}
