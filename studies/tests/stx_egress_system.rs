//! The egress adapter's golden model (`model::stx_egress`) against the
//! output adapters of the system model (`studies::stx_system`): the copies
//! reaching one output in the system are fed, slot by slot, into the block
//! (inputs in increasing order on the receivers, as the system handles
//! them), and each copy must meet the same fate, nothing may fall beyond the
//! window, and the output must deliver in the same slots (both are
//! work-conserving single servers of the same in-order cells; only the
//! order across inputs differs: FIFO there, round robin here).
//!
//! The system's output queue is unbounded and outside its RSQs; here the
//! RSQ holds the cells until they leave, so the block gets `B = 64`: more
//! than the output backlog at these loads (checked: no OUT_OF_WINDOW).

use model::stx_egress::{Fate, StxEgress, StxEgressInputs, StxEgressParams};
use model::{Block, PortGroup};
use studies::stx_system::traffic::Bernoulli;
use studies::stx_system::{self as sys, arbiter_setup, Config, Event, ModelArbiter, System};

fn agree(n: usize, r: usize, rtt: u64, load: f64, seed: u64, slots: u64) {
    let mut cfg = Config::new(n, r, rtt, true);
    cfg.trace = true;
    let (ap, ac) = arbiter_setup(&cfg);
    let mut s = System::new(cfg, ModelArbiter::new(&ap, &ac));
    s.run(&mut Bernoulli::new(n, load, seed), slots);
    assert!(s.drain(20 * slots), "the system drains");
    let end = s.slot() as usize;
    let p = StxEgressParams {
        n,
        r,
        b: 64,
        sw: 16,
        iw: 16,
        cntw: 32,
    };
    let c = StxEgress::default_config(&p);
    StxEgress::check(&p, &c).expect("legal");
    let (mut dup_sys, mut dup_blk, mut stored, mut max_occ) = (0u64, 0u64, 0u64, 0usize);
    let mut oow_rtt = 0u64;
    for j in 0..n {
        // Per slot: the copies reaching output j, (input, seq, system fate).
        let mut arr: Vec<Vec<(usize, u64, sys::Fate)>> = vec![Vec::new(); end];
        for e in s.events() {
            if let Event::OutArrive {
                t,
                i,
                j: jj,
                seq,
                fate,
                ..
            } = *e
            {
                if jj == j {
                    arr[t as usize].push((i, seq, fate));
                }
            }
        }
        let mut dep = vec![false; end];
        for d in s.deliveries() {
            if d.j == j {
                assert!(!dep[d.t as usize], "one departure per slot");
                dep[d.t as usize] = true;
            }
        }
        let mut m = StxEgress::new(&p, &c);
        // The same block with the paper's B_RSQ = RTT (a power of two here):
        // what it would drop, reported, not required.
        let p_rtt = StxEgressParams {
            b: (rtt as usize).next_power_of_two(),
            ..p
        };
        let mut m_rtt = StxEgress::new(&p_rtt, &c);
        let mut inp = StxEgressInputs::zero(&p);
        inp.dlv_ready_i = true;
        let mut seen = vec![0u64; n];
        for t in 0..end {
            let cells = &arr[t];
            assert!(cells.len() <= r, "slot {t}: more copies than receivers");
            for x in 0..r {
                inp.arr_valid_i[x] = x < cells.len();
                if let Some(&(i, seq, _)) = cells.get(x) {
                    inp.arr_src_i[x] = i as u8;
                    inp.arr_seq_i[x] = (seq % (1 << 16)) as u16;
                    inp.arr_id_i[x] = (seq % (1 << 16)) as u16;
                }
            }
            let o = m.step(&inp);
            m.assert_invariants();
            m_rtt.step(&inp);
            max_occ = max_occ.max(m.total_occupancy());
            for (x, &(i, seq, f)) in cells.iter().enumerate() {
                let got = Fate::from_code(o.arr_fate_o[x]);
                let ok = match f {
                    sys::Fate::InOrder => matches!(got, Fate::Delivered | Fate::InOrder),
                    sys::Fate::Stored => got == Fate::OutOfOrder,
                    sys::Fate::Duplicate => got == Fate::Duplicate,
                };
                assert!(
                    ok,
                    "N={n} R={r} RTT={rtt} load={load} seed={seed}: slot {t}, output {j}, \
                     cell ({i}, {seq}): system {f:?}, block {got:?}"
                );
                dup_sys += u64::from(f == sys::Fate::Duplicate);
                stored += u64::from(f == sys::Fate::Stored);
            }
            assert_eq!(
                o.dlv_valid_o, dep[t],
                "slot {t}, output {j}: a departure in one model only"
            );
            if o.dlv_valid_o {
                let k = o.dlv_src_o as usize;
                assert_eq!(o.dlv_seq_o as u64, seen[k] % (1 << 16), "in order");
                seen[k] += 1;
            }
        }
        assert_eq!(m.total_occupancy(), 0, "output {j}: cells left in the RSQs");
        let st = m.state();
        assert_eq!(st.cnt_oow_q, 0, "output {j}: cells beyond the window");
        dup_blk += st.cnt_dup_q as u64;
        oow_rtt += m_rtt.state().cnt_oow_q as u64;
        for (i, &k) in seen.iter().enumerate() {
            assert_eq!(k, s.counts(i, j).0, "every cell ({i}, {j}) delivered once");
        }
    }
    assert_eq!(dup_blk, dup_sys);
    assert_eq!(dup_sys, s.stats().dup_dropped);
    eprintln!(
        "N={n} R={r} RTT={rtt} load={load}: {} cells, {stored} resequenced, {dup_sys} \
         duplicates, largest block occupancy {max_occ}; with B = {}: {oow_rtt} beyond the window",
        s.stats().cells,
        (rtt as usize).next_power_of_two()
    );
}

#[test]
fn block_agrees_with_system_outputs() {
    for &(n, r, rtt, load, seed) in &[
        (4, 1, 8, 0.5, 1),
        (8, 2, 8, 0.3, 2),
        (8, 2, 16, 0.6, 3),
        (16, 2, 8, 0.8, 4),
        (8, 4, 12, 0.7, 5),
    ] {
        agree(n, r, rtt, load, seed, 3000);
    }
}
