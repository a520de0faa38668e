//! `prim_ram_1r1w`: equivalence of the model twin and the RTL, coverage,
//! the stimulus rule (no read of a word not written since reset), the
//! contract on directed sequences, and `AddrInRange_A`.

use crate::support;

use model::prim_ram_1r1w::{PrimRam1r1w, PrimRam1r1wConfig, PrimRam1r1wInputs};
use model::stim::{Cycle, Stimulus};
use model::Block;
use testbenches::Bench;

#[test]
fn equivalence_random() {
    support::equivalence::<PrimRam1r1w>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<PrimRam1r1w>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimRam1r1w>();
}

/// The generator reads only words written since the last reset (the
/// words have no reset: any other read is undefined in the hardware), on
/// every variant, over long runs with resets; and it does read, collide
/// and write the last word, so the rule is not kept by reading nothing.
#[test]
fn generator_writes_every_word_before_reading_it() {
    for p in PrimRam1r1w::variants() {
        let (mut reads, mut resets) = (0u64, 0u64);
        for seed in 1..=4 {
            let s = testbenches::generate::<PrimRam1r1w>(&p, seed, 30_000, None);
            let mut written = vec![false; p.d as usize];
            for (t, c) in s.cycles.iter().enumerate() {
                match c {
                    Cycle::Reset => {
                        written.fill(false);
                        resets += 1;
                    }
                    Cycle::Drive(i) => {
                        let (wa, ra) = (i.waddr_i as usize, i.raddr_i as usize);
                        if i.re_i && ra < written.len() {
                            assert!(
                                written[ra],
                                "{}: seed {seed}, cycle {t}: reads word {ra}, not written since \
                                 reset",
                                model::Params::label(&p)
                            );
                            reads += 1;
                        }
                        if p.check_addr {
                            assert!(
                                !(i.we_i && wa >= written.len() || i.re_i && ra >= written.len()),
                                "{}: cycle {t}: an enabled out-of-range address with \
                                 CHECK_ADDR set",
                                model::Params::label(&p)
                            );
                        }
                        if i.we_i && wa < written.len() {
                            written[wa] = true;
                        }
                    }
                }
            }
        }
        assert!(
            reads > 30_000 && resets > 4,
            "{p:?}: {reads} reads, {resets} resets"
        );
    }
}

/// The variant with the assertion on (`CHECK_ADDR = 1`, `D = 3`).
fn checked() -> model::prim_ram_1r1w::PrimRam1r1wParams {
    PrimRam1r1w::variants()
        .into_iter()
        .find(|p| p.check_addr && p.d == 3)
        .expect("the w64d3a1 variant")
}

fn cycles(
    p: model::prim_ram_1r1w::PrimRam1r1wParams,
    c: Vec<PrimRam1r1wInputs>,
) -> Stimulus<PrimRam1r1w> {
    Stimulus {
        generated: None,
        params: p,
        config: PrimRam1r1wConfig {},
        cycles: c.into_iter().map(Cycle::Drive).collect(),
        seed: 9,
    }
}

fn i(we: bool, wa: u16, wd: u64, re: bool, ra: u16) -> PrimRam1r1wInputs {
    PrimRam1r1wInputs {
        we_i: we,
        waddr_i: wa,
        wdata_i: wd,
        re_i: re,
        raddr_i: ra,
    }
}

/// With `CHECK_ADDR = 1` an enabled write or read at address 3 of a
/// 3-word memory stops the run with `AddrInRange_A`; the same address on a
/// port whose enable is low does not, and full 64-bit words pass.
#[test]
fn out_of_range_access_fails_addr_in_range_assertion() {
    let p = checked();
    let sweep = || {
        vec![
            i(true, 0, u64::MAX, false, 3),
            i(true, 1, 0x8000_0000_0000_0001, false, 3),
            i(true, 2, 0, true, 0),
        ]
    };
    let mut ok = sweep();
    ok.extend([
        i(false, 3, 5, true, 1),
        i(true, 1, 7, false, 3),
        i(false, 3, 0, true, 1),
    ]);
    support::lockstep_or_report(&cycles(p, ok), "out-of-range addresses on disabled ports");
    for (what, bad) in [
        ("write", i(true, 3, 5, false, 0)),
        ("read", i(false, 0, 0, true, 3)),
    ] {
        let mut c = sweep();
        c.push(bad);
        c.push(i(false, 0, 0, false, 0));
        let e = support::lockstep_quiet(&cycles(p, c))
            .expect_err("an out-of-range access with CHECK_ADDR = 1 must stop the run");
        assert!(
            e.contains("AddrInRange_A") && e.contains(what),
            "{what}: {e}"
        );
    }
}

/// Read-first on the model: every word written, then a read and a write of
/// word 5 in one cycle; the output cycle by cycle, and the same sequence in
/// lockstep with the RTL.
#[test]
fn read_during_write_gives_the_old_word_in_rtl() {
    let p = PrimRam1r1w::variants()[0];
    let mut seq: Vec<PrimRam1r1wInputs> = (0..p.d as u16)
        .map(|a| i(true, a, 0x40 | a as u64, false, 0))
        .collect();
    seq.extend([
        i(true, 5, 0x99, true, 5),
        i(false, 0, 0, true, 5),
        i(false, 0, 0, false, 0),
    ]);
    let mut m = PrimRam1r1w::new(&p, &PrimRam1r1wConfig {});
    let got: Vec<u64> = seq.iter().map(|x| m.step(x).rdata_o).collect();
    let n = p.d as usize;
    assert_eq!(got[..=n], vec![0; n + 1][..], "nothing read yet");
    assert_eq!(got[n + 1..], [0x45, 0x99], "the old word, then the new");
    assert_eq!(m.state().mem[5], 0x99);
    support::lockstep_or_report(&cycles(p, seq), "read-first directed");
}

/// What a memory with another contract would output on a scenario: a
/// write-first one (a collision reads the new word), one whose output
/// follows the word last read while `re_i` is low (no read register), one
/// that aliases addresses 12..15 onto 4..7 (the address's top bit
/// dropped).
#[derive(Clone, Copy, Debug)]
enum Other {
    WriteFirst,
    NoHold,
    Aliasing,
}

fn other_outputs(
    k: Other,
    s: &Stimulus<PrimRam1r1w>,
) -> Vec<model::prim_ram_1r1w::PrimRam1r1wOutputs> {
    let d = s.params.d as usize;
    let mut mem = vec![0u64; 16];
    let (mut q, mut held) = (0u64, None::<usize>);
    let mut outs = Vec::new();
    for c in &s.cycles {
        let Cycle::Drive(x) = c else {
            unreachable!("no reset in a scenario")
        };
        outs.push(model::prim_ram_1r1w::PrimRam1r1wOutputs { rdata_o: q });
        let (wa, ra) = (x.waddr_i as usize, x.raddr_i as usize);
        let wa = match k {
            Other::Aliasing if wa >= d => wa - 8,
            _ => wa,
        };
        let old = mem.clone();
        if x.we_i && wa < d {
            mem[wa] = x.wdata_i;
        }
        if x.re_i && ra < d {
            held = Some(ra);
            q = match k {
                Other::WriteFirst => mem[ra],
                _ => old[ra],
            };
        } else if let (Other::NoHold, Some(h)) = (k, held) {
            q = mem[h];
        }
    }
    outs
}

/// The scenarios' documented outcomes hold on the model, and each is
/// refused on the outputs of the memory whose contract it is there to tell
/// apart (read-first against write-first, a held read register against
/// none, ignored out-of-range writes against aliased ones).
#[test]
fn scenario_checks_hold_on_the_model_and_bite() {
    let sc = PrimRam1r1w::scenarios();
    for (name, k) in [
        ("read-first", Other::WriteFirst),
        ("hold", Other::NoHold),
        ("last-word", Other::Aliasing),
    ] {
        let sc = sc.iter().find(|x| x.name == name).expect(name);
        let s = (sc.build)();
        let mut m = PrimRam1r1w::new(&s.params, &s.config);
        let outs: Vec<_> = s
            .cycles
            .iter()
            .map(|c| match c {
                Cycle::Drive(x) => m.step(x),
                Cycle::Reset => unreachable!("no reset in a scenario"),
            })
            .collect();
        let check = sc.check.unwrap();
        assert_eq!(check(&s, &outs), Ok(()), "{name}");
        assert!(
            check(&s, &other_outputs(k, &s)).is_err(),
            "{name}: the check passes a memory {k:?}"
        );
    }
}
