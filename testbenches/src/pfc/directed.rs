//! Directed stimuli (closed loop against the model, replayed in co-simulation).

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

/// The (class-enable vector, pause times) of every frame the outputs
/// transmit, with the cycle of its first beat.
fn sent_frames(outs: &[PfcOutputs]) -> Vec<(usize, u8, [u16; PRIOS])> {
    collect_frames(outs.iter().map(Some))
        .iter()
        .map(|f| {
            let (_, cev, t) = classify(&f.bytes, 0);
            (f.first, cev, t)
        })
        .collect()
}

/// Scenario check of [`refresh`]: every frame is for priority 2 alone (the
/// glitches of priority 5 send nothing); the XOFF carries its 40 quanta,
/// a refresh follows every 241 cycles (`(40 - 10) x 8` and the frame's
/// start), 1009 / 240 = 4 of them, then one RESUME (time 0).
pub fn refresh_outcome(_: &Stimulus<Pfc>, outs: &[PfcOutputs]) -> Result<(), String> {
    let f = sent_frames(outs);
    let summary = || -> Vec<(usize, u8, u16)> { f.iter().map(|x| (x.0, x.1, x.2[2])).collect() };
    crate::ensure!(
        f.len() >= 2 && f.iter().all(|x| x.1 == 0b100),
        "frames (cycle, class-enable, time of 2) {:?}: expected priority 2 only",
        summary()
    );
    crate::ensure_eq!(f[0].2[2], 40, "the XOFF's time");
    crate::ensure_eq!(f[f.len() - 1].2[2], 0, "the last frame's time (RESUME)");
    let refreshes = f.len() - 2;
    crate::ensure!(
        refreshes == 1009 / 240 && f[1..=refreshes].iter().all(|x| x.2[2] == 40),
        "frames {:?}: expected XOFF, {} refreshes of 40, RESUME",
        summary(),
        1009 / 240
    );
    for w in f.windows(2).take(refreshes) {
        crate::ensure_eq!(
            w[1].0 - w[0].0,
            241,
            "refresh spacing (frames {:?})",
            summary()
        );
    }
    Ok(())
}

/// Scenario check of [`refresh_zero`]: `cfg_err_o` every cycle; an XOFF for
/// priority 1 with 3 quanta, then at least 5 refreshes of 3 quanta, each
/// 3 x 4 + 1 cycles after the previous frame started (at the expiry of
/// the peer's timer), then a RESUME.
pub fn refresh_zero_outcome(_: &Stimulus<Pfc>, outs: &[PfcOutputs]) -> Result<(), String> {
    if let Some(t) = outs.iter().position(|o| !o.cfg_err_o) {
        return Err(format!("cfg_err_o low in cycle {t}"));
    }
    let f = sent_frames(outs);
    let d: Vec<(u8, u16)> = f.iter().map(|x| (x.1, x.2[1])).collect();
    crate::ensure!(
        d.len() >= 7
            && d[0] == (0b10, 3)
            && d[d.len() - 1] == (0b10, 0)
            && d[1..d.len() - 1].iter().all(|&x| x == (0b10, 3)),
        "frames (class-enable, time of 1) {d:?}: expected XOFF 3, at least 5 refreshes of 3, RESUME"
    );
    for w in f.windows(2).take(d.len() - 2) {
        crate::ensure_eq!(w[1].0 - w[0].0, 3 * 4 + 1, "refresh spacing (at expiry)");
    }
    Ok(())
}

/// Scenario check of [`receive`], exact to the cycle: priority 2 paused
/// exactly 7 quanta x 8 cycles after the first frame ends; priority 1 from
/// the first frame to 80 cycles after the second (overwritten with 10
/// quanta); priority 6 (500 quanta) until the frame to our own address
/// cancels it, the garbage time of its disabled bit and the malformed
/// frames in between changing nothing; each malformed frame classified as
/// [`MALFORMED`] says; at the end the counters read 3 PFC frames, 2 FCS
/// errors, 2 runts, 1 too long, 2 other, 2 bad control frames.
pub fn receive_outcome(_: &Stimulus<Pfc>, outs: &[PfcOutputs]) -> Result<(), String> {
    let ReceiveMarks {
        first_end,
        second_end,
        ends,
        cancel_end,
    } = receive().1;
    let paused = |t: usize, k: usize| outs[t].pause_o >> k & 1 != 0;
    let span = |k: usize, from: usize, to: usize| -> Result<(), String> {
        crate::ensure!(
            !paused(from - 1, k) && (from..=to).all(|t| paused(t, k)) && !paused(to + 1, k),
            "priority {k} not paused exactly in cycles {from}..={to}: paused in {:?}",
            (first_end..outs.len()).filter(|&t| paused(t, k)).fold(
                Vec::<(usize, usize)>::new(),
                |mut v, t| {
                    match v.last_mut() {
                        Some(r) if r.1 + 1 == t => r.1 = t,
                        _ => v.push((t, t)),
                    }
                    v
                }
            )
        );
        Ok(())
    };
    span(2, first_end + 1, first_end + 56)?;
    span(1, first_end + 1, second_end + 80)?;
    span(6, first_end + 1, cancel_end)?;
    for ((_, _, class), &end) in MALFORMED.iter().zip(&ends) {
        crate::ensure_eq!(
            RxClass::from_code(outs[end].rx_done_o),
            Some(*class),
            "class of the malformed frame ending at {end}"
        );
    }
    let last = outs.last().ok_or("no cycles")?;
    crate::ensure_eq!(
        (
            last.rx_pfc_o,
            last.rx_fcs_o,
            last.rx_runt_o,
            last.rx_long_o,
            last.rx_other_o,
            last.rx_badctl_o
        ),
        (3, 2, 2, 1, 2, 2),
        "counters (pfc, fcs, runt, long, other, badctl)"
    );
    Ok(())
}
