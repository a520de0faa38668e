//! Transmit-stream decoding, the loopback properties and pcap output.

use super::*;

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
