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
