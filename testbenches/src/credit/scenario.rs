//! Closed-loop runs and the directed scenarios of the seed (`seeds/000`):
//! generated against the golden model, replayed open-loop in co-simulation.

use super::*;

/// What a closed-loop run measured.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Cycles run.
    pub cycles: usize,
    /// Largest occupancy per egress port.
    pub max_occ: Vec<i64>,
    /// Bytes the link took per egress port, in the measured window.
    pub link_bytes: Vec<u64>,
    /// Cycles of the measured window.
    pub window: usize,
    /// Credits per VOQ, in the measured window.
    pub credits: Vec<u64>,
    /// Cycles in which the occupancy exceeded the buffer, per egress.
    pub overflows: Vec<usize>,
}

impl Stats {
    /// Link utilisation of egress `e` in the window, for a link of `r`
    /// bytes per cycle.
    pub fn utilisation(&self, e: usize, r: u32) -> f64 {
        self.link_bytes[e] as f64 / (self.window as f64 * r as f64)
    }
}

/// A configuration with every egress port idle (rate 0) except those
/// the caller sets.
pub fn quiet_config(p: &CreditParams) -> CreditConfig {
    let mut c = Credit::default_config(p);
    c.cfg_rate_num_i.fill(0);
    c.cfg_rate_den_i.fill(1);
    c.cfg_slice_mode_i.fill(false);
    c
}

/// Runs `cycles` cycles closed-loop with saturating demand on `hot`
/// (packets of `len(v)` bytes), the links stalled in `stall` (a range of
/// cycles), and measures from cycle `warm` on. Checks the model's
/// invariants and the closed-loop conservation every cycle.
#[allow(clippy::too_many_arguments)]
pub fn closed_loop(
    p: &CreditParams,
    cfg: &CreditConfig,
    lp: Loop,
    hot: &[usize],
    len: &dyn Fn(usize, &mut Rng) -> u16,
    stall: Option<std::ops::Range<usize>>,
    cycles: usize,
    warm: usize,
) -> (Stimulus<Credit>, Stats) {
    let mut m = Credit::new(p, cfg);
    let mut fab = Fabric::new(p, lp);
    let mut rng = Rng::new(0x5eed, 0);
    let mut st = Stats {
        max_occ: vec![0; p.e],
        link_bytes: vec![0; p.e],
        credits: vec![0; p.voqs()],
        overflows: vec![0; p.e],
        ..Stats::default()
    };
    let mut out = Vec::with_capacity(cycles);
    for t in 0..cycles {
        let mut pkts = Vec::new();
        for &v in hot {
            for _ in fab.voq[v].len()..2 {
                pkts.push((v, len(v, &mut rng)));
            }
        }
        let stalled = stall.as_ref().is_some_and(|r| r.contains(&t));
        fab.stall.fill(stalled);
        let before: Vec<u64> = fab.link_bytes.clone();
        let occ: Vec<i64> = (0..p.e).map(|e| m.occupancy(e)).collect();
        let inp = fab.inputs(&pkts, &occ);
        let o = m.step(&inp);
        m.assert_invariants();
        m.assert_closed_loop();
        assert_eq!(
            o.err_o.value() & !model::credit::ERR_OVERFLOW,
            0,
            "cycle {t}"
        );
        fab.absorb(&o);
        for e in 0..p.e {
            // out = credits in flight + balances + data in flight.
            let bal: i64 = (0..p.i).map(|i| m.balance(i, e)).sum();
            let want = fab.credits_in_flight(e) + bal + fab.data_in_flight(e);
            assert_eq!(m.outstanding(e), want, "cycle {t} egress {e}: conservation");
            st.max_occ[e] = st.max_occ[e].max(m.occupancy(e));
            if m.occupancy(e) > cfg.cfg_buf_i[e] as i64 {
                st.overflows[e] += 1;
            }
        }
        if t >= warm {
            for (e, b) in before.iter().enumerate() {
                st.link_bytes[e] += fab.link_bytes[e] - b;
            }
            for e in 0..p.e {
                if o.crd_valid_o[e] {
                    st.credits[p.voq(o.crd_ing_o[e] as usize, e)] += 1;
                }
            }
        }
        out.push(Cycle::Drive(inp));
    }
    st.cycles = cycles;
    st.window = cycles - warm;
    (
        Stimulus {
            generated: None,
            params: *p,
            config: cfg.clone(),
            cycles: out,
            seed: 0xc4ed,
        },
        st,
    )
}

/// One active egress port (0) with cells of `q` bytes, rate `num/den`,
/// buffer `buf`, a link of `r` bytes per cycle; the others idle.
#[allow(clippy::too_many_arguments)]
pub fn one_port(
    p: &CreditParams,
    q: u16,
    num: u16,
    den: u16,
    buf: u32,
    dc: usize,
    dd: usize,
    r: u32,
) -> (CreditConfig, Loop) {
    let mut c = quiet_config(p);
    c.cfg_quantum_i[0] = q;
    c.cfg_rate_num_i[0] = num;
    c.cfg_rate_den_i[0] = den;
    c.cfg_buf_i[0] = buf;
    let mut link = vec![1; p.e];
    link[0] = r;
    (
        c,
        Loop {
            dc,
            dd,
            da: 0,
            link,
        },
    )
}

pub fn cells(q: u16) -> impl Fn(usize, &mut Rng) -> u16 {
    move |_, _| q
}

/// The toy example: rate 1 cell per time unit, one-way delay 3 (credit:
/// dc = 3; data: dd = 2 plus its cycle in the egress buffer), RTT 6, a
/// cell of 64 B, the link congested (stalled) for a while in the middle.
pub fn toy(buf_cells: u32) -> (Stimulus<Credit>, Stats) {
    let p = CreditParams::default();
    let (c, lp) = one_port(&p, 64, 1, 1, 64 * buf_cells, 3, 2, 64);
    assert_eq!(lp.rtt(), 6);
    closed_loop(&p, &c, lp, &[0], &cells(64), Some(300..330), 400, 50)
}

/// Three ingress ports sending to egress 0 of the narrow variant
/// (I = 3), ports 0 and 1 in slice 0, port 2 in slice 1, with
/// slice-level (`slice`) or port-level allocation.
pub fn fairness_stimulus(slice: bool) -> (Stimulus<Credit>, Stats) {
    let p = Credit::variants()[1];
    assert_eq!((p.i, p.s), (3, 2));
    let (mut c, lp) = one_port(&p, 16, 1, 1, p.occ_max() as u32, 1, 1, 16);
    c.cfg_slice_mode_i[0] = slice;
    c.cfg_slice_i = vec![0, 0, 1];
    let hot: Vec<usize> = (0..3).map(|i| p.voq(i, 0)).collect();
    closed_loop(&p, &c, lp, &hot, &cells(16), None, 1200, 0)
}

/// Counters at their limits, default variant, every egress port idle
/// (rate 0: no credit issued). Driven directly on the ports (as a
/// misbehaving neighbour could): ingress 0 is sent credits and never
/// dequeues, until its balance is exactly `B_MAX` (no error) and then
/// saturates (error); egress 0 receives data nobody was credited for,
/// until its outstanding count is exactly `-2^CW` (no error) and then
/// saturates, and its occupancy overflows the buffer and saturates at
/// `2^CW - 1`; egress 1 is asked to send more than it holds.
pub fn limits() -> Stimulus<Credit> {
    let p = CreditParams::default();
    let c = quiet_config(&p);
    let lmax = (1u32 << p.lw) - 1;
    let idle = || CreditInputs::zero(&p);
    let mut cycles = vec![Cycle::Drive(idle())];
    // Drives `total` bytes in pieces of at most lmax, an idle cycle, then
    // one byte and lmax bytes beyond the bound.
    let to_bound_and_beyond =
        |total: u64, drive: &dyn Fn(u64) -> CreditInputs, cycles: &mut Vec<_>| {
            let mut left = total;
            while left > 0 {
                let b = left.min(lmax as u64);
                cycles.push(Cycle::Drive(drive(b)));
                left -= b;
            }
            cycles.push(Cycle::Drive(idle()));
            for b in [1, lmax as u64] {
                cycles.push(Cycle::Drive(drive(b)));
            }
        };
    // Balance of VOQ (0, 0): credits from egress 0 up to exactly
    // B_MAX = 2^(BW-1) - 1, then beyond.
    let credit = |bytes: u64| {
        let mut i = idle();
        i.cin_valid_i[0] = true;
        i.cin_ing_i[0] = 0;
        i.cin_bytes_i[0] = bytes as u16;
        i
    };
    to_bound_and_beyond((1u64 << (p.bw - 1)) - 1, &credit, &mut cycles);
    // Outstanding of egress 0: uncredited arrivals down to exactly
    // -2^CW, then beyond. The occupancy (CW bits) overflows the buffer
    // and saturates on the way.
    let arrive = |bytes: u64| {
        let mut i = idle();
        i.earr_valid_i[0] = true;
        i.earr_egr_i[0] = 0;
        i.earr_bytes_i[0] = bytes as u16;
        i
    };
    to_bound_and_beyond(1u64 << p.cw, &arrive, &mut cycles);
    // Egress 1 departs more than it holds.
    let mut i = idle();
    i.edep_bytes_i[1] = 100;
    cycles.push(Cycle::Drive(i));
    cycles.push(Cycle::Drive(idle()));
    Stimulus {
        generated: None,
        params: p,
        config: c,
        cycles,
        seed: 0x1117,
    }
}

/// The cycles in which egress 0 issues a credit.
fn credit_cycles(outs: &[CreditOutputs]) -> Vec<usize> {
    (0..outs.len())
        .filter(|&t| outs[t].crd_valid_o[0])
        .collect()
}

/// What both toy examples show on egress 0: no credit while the link is
/// stalled (cycles 300..330) beyond the buffer's worth, the occupancy
/// reaches exactly the buffer (`cells` cells of 64 B) and never more, no
/// overflow flagged.
fn toy_common(s: &Stimulus<Credit>, outs: &[CreditOutputs], cells: u32) -> Result<(), String> {
    let buf = s.config.cfg_buf_i[0];
    crate::ensure_eq!(buf, 64 * cells, "the buffer");
    let max = outs.iter().map(|o| o.occ_o[0]).max().unwrap_or(0);
    crate::ensure_eq!(max, buf, "the largest occupancy of egress 0");
    if let Some(t) = outs
        .iter()
        .position(|o| o.err_o.value() & model::credit::ERR_OVERFLOW != 0)
    {
        return Err(format!("overflow flagged in cycle {t}"));
    }
    crate::ensure!(
        credit_cycles(outs).iter().all(|t| !(300..330).contains(t)),
        "a credit while the link is stalled (300..330): {:?}",
        credit_cycles(outs)
            .into_iter()
            .filter(|t| (300..330).contains(t))
            .collect::<Vec<_>>()
    );
    Ok(())
}

/// Scenario check of [`toy`] with 6 cells (one BDP): a credit every cycle
/// but the 30 of the stall (the link kept busy: the stall costs exactly
/// its 30 cycles), the buffer filled to its 6 cells and never beyond.
pub fn toy_full_rate(s: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Result<(), String> {
    toy_common(s, outs, 6)?;
    let got = credit_cycles(outs);
    let want: Vec<usize> = (0..outs.len())
        .filter(|t| !(300..330).contains(t))
        .collect();
    let missing: Vec<usize> = want.iter().copied().filter(|t| !got.contains(t)).collect();
    let extra: Vec<usize> = got.iter().copied().filter(|t| !want.contains(t)).collect();
    crate::ensure!(
        missing.is_empty() && extra.is_empty(),
        "a credit every cycle but 300..330: none in cycles {missing:?}, one in cycles {extra:?}"
    );
    Ok(())
}

/// Scenario check of [`toy`] with 5 cells (BDP - 1): 5 credits in every 6
/// consecutive cycles outside the stall (the link at 5/6), the buffer
/// filled to its 5 cells and never beyond.
pub fn toy_five_sixths(s: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Result<(), String> {
    toy_common(s, outs, 5)?;
    let c: Vec<bool> = outs.iter().map(|o| o.crd_valid_o[0]).collect();
    for r in [0..300, 330..c.len()] {
        for (k, w) in c[r.clone()].windows(6).enumerate() {
            let n = w.iter().filter(|&&x| x).count();
            crate::ensure_eq!(
                n,
                5,
                "credits in cycles {}..{}",
                r.start + k,
                r.start + k + 6
            );
        }
    }
    Ok(())
}

/// Scenario check of [`fairness_stimulus`] with slice-level allocation:
/// more than 1000 credits, 25 % / 25 % / 50 % exactly in every 4 (after
/// `4m` credits: `m`, `m`, `2m`); ingress 2 dequeues as many bytes as 0
/// and 1 together, within two packets.
pub fn slice_shares(s: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Result<(), String> {
    let run = running_credits(outs);
    crate::ensure!(run.len() > 1000, "{} credits", run.len());
    for (k, n) in run.iter().enumerate() {
        if (k + 1) % 4 == 0 {
            let m = (k as u64 + 1) / 4;
            crate::ensure_eq!(n, &vec![m, m, 2 * m], "credits per ingress after {}", k + 1);
        }
    }
    let b = dequeued(s, outs);
    crate::ensure!(b[2].abs_diff(b[0] + b[1]) <= 2 * 16, "bytes dequeued {b:?}");
    Ok(())
}

/// Scenario check of [`fairness_stimulus`] with port-level allocation:
/// more than 1000 credits, one third each within one credit at every
/// moment; the bytes dequeued equal within one packet.
pub fn port_shares(s: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Result<(), String> {
    let run = running_credits(outs);
    crate::ensure!(run.len() > 1000, "{} credits", run.len());
    for n in &run {
        let (lo, hi) = (n.iter().min().unwrap(), n.iter().max().unwrap());
        crate::ensure!(hi - lo <= 1, "credits per ingress {n:?}");
    }
    let b = dequeued(s, outs);
    crate::ensure!(
        b[0].abs_diff(b[2]) <= 16 && b[1].abs_diff(b[2]) <= 16,
        "bytes dequeued {b:?}"
    );
    Ok(())
}

/// Credits of egress 0 per ingress port 0..3, after every credit.
fn running_credits(outs: &[CreditOutputs]) -> Vec<Vec<u64>> {
    let mut n = vec![0u64; 3];
    let mut run = Vec::new();
    for o in outs.iter().filter(|o| o.crd_valid_o[0]) {
        n[o.crd_ing_o[0] as usize] += 1;
        run.push(n.clone());
    }
    run
}

/// Bytes dequeued by ingress ports 0..3.
fn dequeued(_: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Vec<u64> {
    let mut f = vec![0u64; 3];
    for o in outs {
        for (k, x) in f.iter_mut().enumerate() {
            if o.deq_valid_o[k] {
                *x += o.deq_bytes_o[k] as u64;
            }
        }
    }
    f
}

/// Scenario check of [`limits`], on the registered counters (`bal_o`,
/// `out_o`, `occ_o` show at cycle `t + 1` the value cycle `t` left): VOQ
/// (0, 0)'s balance reaches exactly `B_MAX` with no saturation flagged
/// before or in that cycle, egress 0's outstanding count exactly `-2^CW`
/// likewise, neither ever goes beyond; each of the four flags (balance,
/// outstanding and occupancy saturated, departure underflow) is raised;
/// egress 0's occupancy ends saturated at `2^CW - 1`.
pub fn limits_outcome(s: &Stimulus<Credit>, outs: &[CreditOutputs]) -> Result<(), String> {
    use model::credit::{ERR_BAL_SAT, ERR_DEP_UNDERFLOW, ERR_OCC_SAT, ERR_OUT_SAT};
    let p = s.params;
    let sx = |v: u32, w: u32| ((v as i64) << (64 - w)) >> (64 - w);
    let bal = |o: &CreditOutputs| sx(o.bal_o[p.voq(0, 0)], p.bw);
    let out = |o: &CreditOutputs| sx(o.out_o[0], p.ow());
    let (mut bal_clean, mut out_clean) = (None, None);
    let mut seen = 0u8;
    for (t, w) in outs.windows(2).enumerate() {
        let e = w[0].err_o.value();
        seen |= e;
        if bal(&w[1]) == p.bmax() && bal_clean.is_none() {
            crate::ensure!(
                seen & ERR_BAL_SAT == 0,
                "balance saturated before reaching B_MAX (cycle {t})"
            );
            bal_clean = Some(t);
        }
        if out(&w[1]) == p.out_min() && out_clean.is_none() {
            crate::ensure!(
                seen & ERR_OUT_SAT == 0,
                "outstanding saturated before reaching -2^CW (cycle {t})"
            );
            out_clean = Some(t);
        }
        crate::ensure!(
            bal(&w[1]) <= p.bmax() && out(&w[1]) >= p.out_min(),
            "cycle {t}: balance {} outstanding {} beyond their bounds",
            bal(&w[1]),
            out(&w[1])
        );
    }
    crate::ensure!(
        bal_clean.is_some(),
        "the balance never reached B_MAX = {}",
        p.bmax()
    );
    crate::ensure!(
        out_clean.is_some(),
        "the outstanding count never reached {}",
        p.out_min()
    );
    for bit in [ERR_BAL_SAT, ERR_OUT_SAT, ERR_OCC_SAT, ERR_DEP_UNDERFLOW] {
        crate::ensure!(seen & bit != 0, "error bit {bit:#x} never raised");
    }
    let last = outs.last().ok_or("no cycles")?;
    crate::ensure_eq!(
        last.occ_o[0] as i64,
        p.occ_max(),
        "egress 0's final occupancy"
    );
    Ok(())
}

/// The seed's slice (`Credit::scale()[0]`: 18 x 400G egress ports, 32
/// ingress sources in four slices of eight) at 1 GHz with a step of two
/// clocks: every egress port issues cells of 256 B at one credit per step
/// (the seed's one credit every two clocks) and its link drains 100 B per
/// step (400 Gb/s); the credit loop is the seed's 0.8 us, 400 steps
/// (`dc = 200`, `dd = 199`); the buffer is `cells` cells. Every VOQ
/// saturated, odd egress ports allocating by slice. Returns the stimulus,
/// the measured window's statistics and the BDP.
pub fn seed_slice(cells_: u32, steps: usize, warm: usize) -> (Stimulus<Credit>, Stats, u32) {
    let p = Credit::scale()[0];
    assert_eq!((p.e, p.i, p.s), (18, 32, 4));
    let (q, r, dc, dd) = (256u16, 100u32, 200usize, 199usize);
    let lp = Loop {
        dc,
        dd,
        da: 0,
        link: vec![r; p.e],
    };
    let bdp = r * lp.rtt() as u32;
    assert_eq!(bdp, 40_000);
    let buf = cells_ * q as u32;
    let mut c = Credit::default_config(&p);
    c.cfg_quantum_i.fill(q);
    c.cfg_rate_num_i.fill(1);
    c.cfg_rate_den_i.fill(1);
    c.cfg_buf_i.fill(buf);
    c.cfg_slice_mode_i = (0..p.e).map(|e| e % 2 == 1).collect();
    c.cfg_slice_i = (0..p.i).map(|i| (i / 8) as u8).collect();
    let hot: Vec<usize> = (0..p.voqs()).collect();
    let (s, st) = closed_loop(&p, &c, lp, &hot, &cells(q), None, steps, warm);
    (s, st, bdp)
}

/// Scenario check of [`seed_slice`] on the outputs: no egress port
/// overflows its buffer; from step `warm` on every link is busy in every
/// step (the occupancy at the start of a step covers the link's 100 B);
/// each egress port's credits in that window go to the 32 ingress ports
/// in equal numbers within one (round robin by port, or by slice of eight
/// and member).
pub fn slice_steady(
    s: &Stimulus<Credit>,
    outs: &[CreditOutputs],
    warm: usize,
) -> Result<(), String> {
    let p = s.params;
    for (t, o) in outs.iter().enumerate() {
        crate::ensure!(
            o.err_o.value() & model::credit::ERR_OVERFLOW == 0,
            "overflow flagged in step {t}"
        );
        for e in 0..p.e {
            crate::ensure!(
                o.occ_o[e] <= s.config.cfg_buf_i[e],
                "step {t}: egress {e} holds {} B > B",
                o.occ_o[e]
            );
            if t > warm {
                crate::ensure!(
                    o.occ_o[e] >= 100,
                    "step {t}: egress {e} holds {} B, less than the link takes",
                    o.occ_o[e]
                );
            }
        }
    }
    for e in 0..p.e {
        let mut n = vec![0u64; p.i];
        for o in &outs[warm..] {
            if o.crd_valid_o[e] {
                n[o.crd_ing_o[e] as usize] += 1;
            }
        }
        let (lo, hi) = (n.iter().min().unwrap(), n.iter().max().unwrap());
        crate::ensure!(
            *lo > 0 && hi - lo <= 1,
            "egress {e}: credits per ingress port {n:?}"
        );
    }
    Ok(())
}
