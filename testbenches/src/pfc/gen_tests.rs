//! The streamed PFC traffic generator: deterministic, prefix-stable, still
//! exercising everything the whole-run strategy did, and cheap next to the
//! model's step.

use super::*;
use proptest::strategy::ValueTree;
use std::time::Instant;

/// A legal configuration of `p` drawn from `seed`: with `short`, pause
/// times of a few thousand cycles (many expiries and refreshes in a run).
fn config(p: &PfcParams, seed: u64, short: bool) -> PfcConfig {
    if short {
        short_config_strategy(p)
            .new_tree(&mut crate::seeded_runner(seed))
            .unwrap()
            .current()
    } else {
        crate::random_config::<Pfc>(p, seed, false)
    }
}

#[test]
fn same_seed_same_cycles_other_seed_other_cycles() {
    for (k, p) in Pfc::variants().iter().enumerate() {
        let cfg = config(p, k as u64, k % 2 == 0);
        let a = crate::generate::<Pfc>(p, 77, 3000, Some(&cfg));
        let b = crate::generate::<Pfc>(p, 77, 3000, Some(&cfg));
        assert_eq!(a.cycles.len(), 3000);
        assert!(a.cycles == b.cycles, "seed 77 gave two different runs");
        let c = crate::generate::<Pfc>(p, 78, 3000, Some(&cfg));
        assert!(a.cycles != c.cycles, "seeds 77 and 78 gave the same run");
    }
}

#[test]
fn first_cycles_do_not_depend_on_the_length() {
    for seed in 0..4u64 {
        let p = PfcParams::default();
        let cfg = config(&p, seed, seed % 2 == 0);
        let short = crate::generate::<Pfc>(&p, seed, 500, Some(&cfg));
        let long = crate::generate::<Pfc>(&p, seed, 3000, Some(&cfg));
        assert_eq!(short.cycles.len(), 500);
        assert_eq!(long.cycles.len(), 3000);
        assert!(
            short.cycles[..] == long.cycles[..500],
            "seed {seed}: the first 500 cycles changed with the run's length"
        );
    }
}

/// What a run of the generator against the model did.
#[derive(Debug, Default)]
struct Seen {
    rx: [u64; 7],
    aimed_before: u64,
    aimed_at: u64,
    aimed_after: u64,
    looped_frames: u64,
    xoff_changes: u64,
    tx_frames: u64,
    garbage_idle: u64,
    stats: GenStats,
}

/// Runs `n` cycles of seed `seed` closed loop (as `materialize` and
/// lockstep do) and records what the block saw and did.
fn run(p: &PfcParams, cfg: &PfcConfig, seed: u64, n: u64) -> Seen {
    let mut g = PfcGen::new(p, cfg, seed);
    let mut m = Pfc::new(p, cfg);
    let qe = m.derived().qe;
    let reset_out = Pfc::new(p, cfg).step(&PfcInputs::zero(p));
    let mut last = reset_out.clone();
    let mut i = PfcInputs::zero(p);
    let mut s = Seen::default();
    let mut prev_xoff = 0u8;
    let mut prev_rem = [0u64; PRIOS];
    for _ in 0..n {
        let looped = g.stats().loop_beats;
        match g.next(&m, &last, &mut i) {
            Step::Reset => {
                m = Pfc::new(p, cfg);
                last.clone_from(&reset_out);
                prev_rem = [0; PRIOS];
                continue;
            }
            Step::Drive => {}
        }
        let rem: [u64; PRIOS] = std::array::from_fn(|k| m.rx_timer(k).remaining(qe));
        m.step_into(&i, &mut last);
        m.assert_invariants();
        if i.xoff_i != prev_xoff {
            s.xoff_changes += 1;
        }
        prev_xoff = i.xoff_i;
        if !i.rx_valid_i && i.rx_data_i != 0 {
            s.garbage_idle += 1;
        }
        if last.tx_valid_o && last.tx_last_o {
            s.tx_frames += 1;
        }
        let class = RxClass::from_code(last.rx_done_o).expect("a class");
        s.rx[class as usize] += 1;
        if class == RxClass::Pfc {
            // A frame whose last beat lands one cycle before, at, or one
            // cycle after the last cycle a running timer is non-zero.
            s.aimed_before += rem.iter().filter(|&&r| r == 2).count() as u64;
            s.aimed_at += rem.iter().filter(|&&r| r == 1).count() as u64;
            s.aimed_after += (0..PRIOS)
                .filter(|&k| rem[k] == 0 && prev_rem[k] == 1)
                .count() as u64;
            if g.stats().loop_beats > looped {
                s.looped_frames += 1;
            }
        }
        prev_rem = rem;
    }
    s.stats = g.stats();
    s
}

/// Over a few seeds and 20 000 cycles each, the streamed traffic does what
/// the whole-run strategy did: valid frames acted on, every malformed kind,
/// frames aimed at a timer's expiry (before, at, after), the block's own
/// frames looped back and accepted, `xoff_i` changes and the frames they
/// cause, garbage on idle cycles, and a reset.
#[test]
fn traffic_exercises_the_block() {
    let mut all = Seen::default();
    let variants = Pfc::variants();
    for seed in 0..8u64 {
        let p = variants[seed as usize % variants.len()];
        let cfg = config(&p, seed, seed % 4 != 3);
        let s = run(&p, &cfg, seed, 20_000);
        println!("seed {seed} {p:?}: {s:?}");
        assert!(
            s.rx[RxClass::Pfc as usize] > 0,
            "seed {seed}: no valid frame"
        );
        assert!(s.tx_frames > 0, "seed {seed}: nothing transmitted");
        assert!(s.xoff_changes > 0, "seed {seed}: xoff_i never changed");
        for (k, n) in s.rx.iter().enumerate() {
            all.rx[k] += n;
        }
        all.aimed_before += s.aimed_before;
        all.aimed_at += s.aimed_at;
        all.aimed_after += s.aimed_after;
        all.looped_frames += s.looped_frames;
        all.xoff_changes += s.xoff_changes;
        all.tx_frames += s.tx_frames;
        all.garbage_idle += s.garbage_idle;
        all.stats.resets += s.stats.resets;
        all.stats.aimed_running += s.stats.aimed_running;
        all.stats.loop_beats += s.stats.loop_beats;
        for k in 0..4 {
            all.stats.items[k] += s.stats.items[k];
        }
    }
    println!("all: {all:?}");
    for c in [
        RxClass::Pfc,
        RxClass::Runt,
        RxClass::Fcs,
        RxClass::Other,
        RxClass::Long,
        RxClass::BadCtl,
    ] {
        assert!(all.rx[c as usize] > 0, "no {c:?} frame received");
    }
    assert!(all.stats.items.iter().all(|&n| n > 0), "{:?}", all.stats);
    assert!(
        all.stats.aimed_running > 0,
        "no frame aimed at a running timer"
    );
    assert!(all.aimed_before > 0, "no frame one cycle before an expiry");
    assert!(all.aimed_at > 0, "no frame at an expiry");
    assert!(all.aimed_after > 0, "no frame one cycle after an expiry");
    assert!(all.stats.loop_beats > 0, "no loopback");
    assert!(all.looped_frames > 0, "no looped-back frame accepted");
    assert!(all.garbage_idle > 0, "no garbage on idle cycles");
    assert!(all.stats.resets > 0, "no reset in 160 000 cycles");
}

/// The share of runs of the default length that see a reset stays about
/// what the whole-run strategy gave (3 in 10 runs times 1 in 16: 1.9 %).
#[test]
fn about_one_default_run_in_fifty_sees_a_reset() {
    let p = PfcParams::default();
    let cfg = Pfc::default_config(&p);
    let runs = 2000u64;
    let mut with_reset = 0;
    for seed in 0..runs {
        let mut g = PfcGen::new(&p, &cfg, seed);
        let m = Pfc::new(&p, &cfg);
        let last = PfcOutputs::zero(&p);
        let mut i = PfcInputs::zero(&p);
        let n = 1000 + seed % 501;
        if (0..n).any(|_| g.next(&m, &last, &mut i) == Step::Reset) {
            with_reset += 1;
        }
    }
    let share = with_reset as f64 / runs as f64;
    assert!((0.008..=0.035).contains(&share), "{with_reset} of {runs}");
}

/// The receive items keep the whole-run strategy's weights: idle 5,
/// frame 10, aimed 3, loop 2 (of 20).
#[test]
fn item_weights() {
    let mut r = Rng::new(3, 0);
    let mut n = [0u32; 4];
    let total = 40_000;
    for _ in 0..total {
        let k = match draw_rx_item(&mut r) {
            RxItem::Idle(..) => 0,
            RxItem::Frame { .. } => 1,
            RxItem::Aimed { .. } => 2,
            RxItem::Loop { .. } => 3,
        };
        n[k] += 1;
    }
    for (k, w) in [5u32, 10, 3, 2].iter().enumerate() {
        let want = total / 20 * w;
        assert!(
            n[k].abs_diff(want) < want / 10,
            "item kind {k}: {} of {total}, want about {want}",
            n[k]
        );
    }
}

/// A cycle counter: the time-stamp counter on x86-64 (a few ns to read),
/// nanoseconds elsewhere.
#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 processor and has no
        // preconditions.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        T0.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Nanoseconds per cycle of the generator against the model's step, over
/// 10^6 cycles, best of five (run with `--release --ignored --nocapture`).
/// Closed loop (aimed frames and loopback included): each call to the
/// generator and to `Pfc::step_into` timed apart with the cycle counter (the
/// cost of reading it measured and taken off). Open loop: the generator
/// alone against a model held in its reset state (no timer running,
/// nothing to loop back), timed as a whole.
#[test]
#[ignore]
fn generation_speed() {
    const N: usize = 1_000_000;
    const REPS: usize = 5;
    let p = PfcParams::default();
    // Cost of one read of the counter (the minimum over many back-to-back
    // pairs).
    let read = (0..100_000)
        .map(|_| {
            let a = ticks();
            let b = ticks();
            b - a
        })
        .min()
        .unwrap() as f64;
    for seed in 0..3u64 {
        let cfg = config(&p, seed, true);
        let reset_out = Pfc::new(&p, &cfg).step(&PfcInputs::zero(&p));
        let (mut gen, mut model, mut open) = (f64::MAX, f64::MAX, f64::MAX);
        let mut stats = GenStats::default();
        for _ in 0..REPS {
            let mut m = Pfc::new(&p, &cfg);
            let mut g = PfcGen::new(&p, &cfg, seed);
            let mut last = reset_out.clone();
            let mut i = PfcInputs::zero(&p);
            let (mut tg, mut tm) = (0u64, 0u64);
            let t0 = Instant::now();
            let k0 = ticks();
            for _ in 0..N {
                let a = ticks();
                let step = g.next(&m, &last, &mut i);
                let b = ticks();
                match step {
                    Step::Reset => {
                        m = Pfc::new(&p, &cfg);
                        last.clone_from(&reset_out);
                    }
                    Step::Drive => m.step_into(&i, &mut last),
                }
                let c = ticks();
                tg += b - a;
                tm += c - b;
            }
            let ns_per_tick = t0.elapsed().as_nanos() as f64 / (ticks() - k0) as f64;
            let per = |t: u64| (t as f64 / N as f64 - read).max(0.0) * ns_per_tick;
            gen = gen.min(per(tg));
            model = model.min(per(tm));
            stats = g.stats();

            let m = Pfc::new(&p, &cfg);
            let mut g = PfcGen::new(&p, &cfg, seed);
            let mut acc = 0u64;
            let t0 = Instant::now();
            for _ in 0..N {
                if g.next(&m, &reset_out, &mut i) == Step::Drive {
                    acc = acc.wrapping_add(i.rx_data_i ^ i.xoff_i as u64);
                }
            }
            open = open.min(t0.elapsed().as_nanos() as f64 / N as f64);
            std::hint::black_box(acc);
        }
        println!(
            "seed {seed}: closed loop: generator {gen:.1} ns/cycle, model step {model:.1} \
             ({:.1}x); open loop: generator {open:.1} ({:.1}x); aimed at a running timer {}, \
             loopback beats {}",
            model / gen.max(0.01),
            model / open,
            stats.aimed_running,
            stats.loop_beats
        );
        assert!(stats.aimed_running > 0 && stats.loop_beats > 0);
        assert!(gen > 0.0 && model > gen);
    }
}
