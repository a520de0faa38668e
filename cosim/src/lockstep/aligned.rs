//! The lockstep pass under a general alignment (`model::timing`): `K` RTL
//! clocks per model step, a latency per output, a strobe, state read from
//! RTL signals.
//!
//! The runner walks the RTL's clocks. At the first clock of step `s` it
//! asks the generator for the step's inputs, steps the model, and queues
//! the step's expected outputs and state; it drives the step's inputs for
//! `K` clocks (pulse inputs in the first only). At clock `c` it compares
//! output `o` with the queued step `(c - L(o)) / K` when that divides; with
//! a strobe, the `n`-th clock whose strobe is high with the `n`-th queued
//! step. State path `f` with latency `Ls` is compared after the edge of
//! clock `s K + K - 1 + Ls`. A reset step voids every comparison of an
//! earlier step that would fall at or after its first clock (those results
//! were in flight and are lost, as in the hardware). Reset steps are
//! compared only where the alignment is the plain one for that signal. After
//! the last step the runner goes on with every input zero until the last
//! comparison is due.

use super::*;
use model::timing::Compare;
use std::collections::VecDeque;

/// One model step whose outputs and state are still to be compared.
struct Pending {
    /// The step, counting the power-on reset steps.
    step: u64,
    reset: bool,
    /// Packed inputs (for the report).
    inputs: Vec<u32>,
    /// Packed expected outputs.
    out: Vec<u32>,
    /// The model's registers after the step, those the design reads, in
    /// its order.
    state: Vec<u32>,
    /// The first clock of a later reset step: comparisons from there on
    /// are void.
    cancel: Option<u64>,
    /// Strobe mode: compared already.
    strobed: bool,
}

impl Pending {
    fn live(&self, c: u64) -> bool {
        self.cancel.is_none_or(|x| c < x)
    }
}

/// A state path resolved: its field in the model's layout, its words in
/// the design's state buffer, its latency.
struct StateRead {
    field: usize,
    off: usize,
    words: usize,
    latency: u64,
}

/// The pass under `target`'s alignment, on `side` and `rtl`. With `wave`,
/// goes on `context` clocks past a mismatch.
#[allow(clippy::too_many_arguments)]
pub(super) fn pass(
    shape: &Shape,
    side: &mut dyn side::ModelSide,
    rtl: &mut Dut,
    target: &Target,
    mut wave: Option<Tracer>,
    context: usize,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
) -> Result<Found> {
    let al = &target.align;
    let d = &target.design;
    let k = u64::from(al.clocks_per_step.max(1));
    let (il, ol, sl) = (&shape.il, &shape.ol, &shape.sl);
    let cfg_words = &shape.cfg_words;
    let traced = wave.is_some();

    // Outputs: compared when the RTL has them, at their latency.
    let present: Vec<bool> = d.map.outputs.iter().map(Option::is_some).collect();
    let lat: Vec<u64> = ol
        .ports
        .iter()
        .map(|q| u64::from(al.latency_of(q.name)))
        .collect();
    let mut lats: Vec<u64> = (0..ol.ports.len())
        .filter(|&j| present[j])
        .map(|j| lat[j])
        .collect();
    lats.sort_unstable();
    lats.dedup();
    // The outputs compared at each latency, worked out once: the loop below
    // runs per RTL clock.
    let groups: Vec<Group> = lats
        .iter()
        .map(|&l| {
            Group::new(
                ol,
                (0..ol.ports.len()).filter(|&j| present[j] && lat[j] == l),
            )
        })
        .collect();
    let all_present = Group::new(ol, (0..ol.ports.len()).filter(|&j| present[j]));
    let strobe = match &al.compare {
        Compare::Strobe(s) => Some(s.clone()),
        Compare::Latency => None,
    };
    let max_lat = if strobe.is_some() {
        u64::from(al.latency)
    } else {
        lats.last().copied().unwrap_or(0)
    };
    // Pulse inputs: their words, zeroed after a step's first clock.
    let pulse = al.pulse_words(il);
    // State read through the design's signals.
    let mut st: Vec<StateRead> = Vec::new();
    let mut off = 0;
    for sp in &d.map.state {
        let field = sl
            .find(&sp.field)
            .ok_or_else(|| anyhow!("state `{}`: not a register of {}", sp.field, shape.block))?;
        let words = sl.ports[field].shape.words();
        st.push(StateRead {
            field,
            off,
            words,
            latency: u64::from(sp.latency),
        });
        off += words;
    }
    let mut state_read = vec![false; sl.ports.len()];
    for r in &st {
        state_read[r.field] = true;
    }
    let st_layout = Layout::new(st.iter().map(|r| sl.ports[r.field].clone()).collect());
    let max_state_lat = st.iter().map(|r| r.latency).max();
    let mut rtl_state = vec![0u32; off];
    let mut full_state = vec![0u32; sl.words];

    let mut in_words = vec![0u32; il.words];
    let mut exp = vec![0u32; ol.words];
    let mut state_before = vec![0u32; sl.words];
    // What the merged waveform shows of the model: each output as last
    // compared.
    let mut view = vec![0u32; ol.words];

    let steps = POWER_ON_RESET + shape.steps;
    // The clocks after the last step's last one until its last comparison.
    let horizon = max_lat.max(k - 1 + max_state_lat.unwrap_or(0));
    let end = steps * k + horizon.saturating_sub(k - 1);
    let mut pending: VecDeque<Pending> = VecDeque::new();
    // Entries compared already, their buffers reused: no allocation per step.
    let mut spare: Vec<Pending> = Vec::new();
    let mut failure: Option<Failure> = None;
    let mut stop_at: Option<u64> = None;
    let mut cur_reset = false;
    let mut stopped = None;
    let mut ticker = Ticker::new(progress, shape.steps);
    let t0 = Instant::now();
    let mut c: u64 = 0;
    loop {
        if stop_at.is_some_and(|x| c > x) {
            break;
        }
        if stop_requested() {
            // The steps whose comparisons are all behind.
            let done = pending.front().map_or((c / k).min(steps), |e| e.step);
            stopped = Some(done.saturating_sub(POWER_ON_RESET));
            break;
        }
        if c >= end
            && (strobe.is_none()
                || !pending
                    .iter()
                    .any(|e| !e.reset && !e.strobed && e.step >= 1 && e.live(c)))
        {
            break;
        }
        let s = c / k;
        if s < steps {
            if c.is_multiple_of(k) {
                ticker.tick(s);
                let kk = s as i64 - POWER_ON_RESET as i64;
                let reset = kk < 0 || side.next();
                if traced {
                    side.pack_state(&mut state_before, None)
                        .map_err(|e| anyhow!("model register {e}"))?;
                }
                if reset {
                    side.reset();
                    in_words.fill(0);
                    for e in pending.iter_mut() {
                        e.cancel.get_or_insert(c);
                    }
                } else {
                    side.step(kk as u64, &mut in_words, &mut cov.hits)
                        .map_err(|e| anyhow!("stimulus step {kk}: {e}"))?;
                }
                // Traced, every output (the model's waveform shows those the
                // RTL lacks too); else those compared.
                side.pack_outputs(&mut exp, (!traced).then_some(&present[..]))
                    .map_err(|e| {
                        anyhow!(
                        "golden model bug at step {kk}: output {e} (the model produced a value \
                         wider than its port)"
                    )
                    })?;
                let mut e = spare.pop().unwrap_or_else(|| Pending {
                    step: 0,
                    reset: false,
                    inputs: vec![0; in_words.len()],
                    out: vec![0; exp.len()],
                    state: vec![0; rtl_state.len()],
                    cancel: None,
                    strobed: false,
                });
                if !st.is_empty() {
                    side.pack_state(&mut full_state, Some(&state_read))
                        .map_err(|e| anyhow!("model register {e}"))?;
                    for r in &st {
                        let o = sl.offsets[r.field];
                        e.state[r.off..r.off + r.words]
                            .copy_from_slice(&full_state[o..o + r.words]);
                    }
                }
                if let Some(t) = wave.as_mut() {
                    t.model(reset, cfg_words, &in_words, &exp, &state_before);
                }
                e.step = s;
                e.reset = reset;
                e.inputs.copy_from_slice(&in_words);
                e.out.copy_from_slice(&exp);
                e.cancel = None;
                e.strobed = false;
                pending.push_back(e);
                cur_reset = reset;
            }
            let ins = rtl.inputs_mut();
            if cur_reset {
                ins.fill(0);
            } else {
                ins.copy_from_slice(&in_words);
                if !c.is_multiple_of(k) {
                    for &(o, n) in &pulse {
                        ins[o..o + n].fill(0);
                    }
                }
            }
        } else {
            // Draining: every input zero, reset released.
            cur_reset = false;
            rtl.inputs_mut().fill(0);
        }
        let rtl_err = rtl.cycle(cur_reset).err().map(|RtlError(e)| e);
        if !st.is_empty() {
            rtl.read_state(&mut rtl_state);
        }
        let front = pending.front().map_or(0, |e| e.step);
        let queued = pending.len();
        let at = |step: u64| -> Option<usize> {
            (step >= front && ((step - front) as usize) < queued).then(|| (step - front) as usize)
        };
        let mut found: Option<(usize, Vec<Diff>)> = None;
        let mut differ = false;
        if let Some(e) = rtl_err {
            let idx = at(s.min(steps - 1)).unwrap_or(pending.len() - 1);
            found = Some((idx, Vec::new()));
            if failure.is_none() {
                failure = Some(failure_of(&pending[idx], c, il, Vec::new(), Some(e)));
            }
        } else if strobe.is_none() {
            for (&l, g) in lats.iter().zip(&groups) {
                if c < l || !(c - l).is_multiple_of(k) {
                    continue;
                }
                let Some(idx) = at((c - l) / k) else { continue };
                let e = &pending[idx];
                if traced {
                    for &(o, n) in &g.ranges {
                        view[o..o + n].copy_from_slice(&e.out[o..o + n]);
                    }
                }
                let valid = e.step >= 1 && e.live(c) && (!e.reset || (k == 1 && l == 0));
                if !valid {
                    continue;
                }
                let diffs = compare(ol, g, &e.out, rtl.outputs());
                if !diffs.is_empty() {
                    differ = true;
                    if found.is_none() {
                        found = Some((idx, diffs));
                    }
                }
            }
        } else {
            let name = strobe.as_deref().unwrap_or("strobe");
            // A strobe under reset says nothing.
            let high = !cur_reset && rtl.aux().first().is_some_and(|x| x & 1 != 0);
            let next = pending
                .iter()
                .position(|e| !e.reset && !e.strobed && e.step >= 1 && e.live(c));
            if high {
                match next {
                    Some(idx) => {
                        pending[idx].strobed = true;
                        let e = &pending[idx];
                        view.copy_from_slice(&e.out);
                        let diffs = compare(ol, &all_present, &e.out, rtl.outputs());
                        if !diffs.is_empty() {
                            differ = true;
                            found = Some((idx, diffs));
                        }
                    }
                    None => {
                        differ = true;
                        found = Some((
                            pending.len() - 1,
                            vec![Diff {
                                signal: name.to_string(),
                                expected: "0 (no step is waiting for its outputs)".into(),
                                actual: "1".into(),
                            }],
                        ));
                    }
                }
            } else if let Some(idx) = next {
                if pending[idx].step * k + max_lat < c {
                    differ = true;
                    found = Some((
                        idx,
                        vec![Diff {
                            signal: name.to_string(),
                            expected: format!(
                                "1 by clock {} (latency {max_lat})",
                                pending[idx].step * k + max_lat
                            ),
                            actual: "0".into(),
                        }],
                    ));
                }
            }
        }
        for r in &st {
            let base = k - 1 + r.latency;
            if c < base || !(c - base).is_multiple_of(k) {
                continue;
            }
            let Some(idx) = at((c - base) / k) else {
                continue;
            };
            let e = &pending[idx];
            let valid = e.step >= 1 && e.live(c) && (!e.reset || r.latency == 0);
            let (a, b) = (
                &e.state[r.off..r.off + r.words],
                &rtl_state[r.off..r.off + r.words],
            );
            if !valid || a == b {
                continue;
            }
            differ = true;
            if found.is_none() {
                let mut act = e.state.clone();
                act[r.off..r.off + r.words].copy_from_slice(b);
                let mut diffs = diff_outputs(&st_layout, &e.state, &act);
                for dd in &mut diffs {
                    dd.signal = format!("state {}", dd.signal);
                }
                found = Some((idx, diffs));
            }
        }
        if let Some(t) = wave.as_mut() {
            // The model's registers at the start of the step being driven.
            t.merged(
                cur_reset,
                cfg_words,
                rtl.inputs(),
                &view,
                &state_before,
                rtl.outputs(),
                differ,
                Some(s.min(u64::from(u32::MAX)) as u32),
            );
        }
        if let Some((idx, diffs)) = found {
            if failure.is_none() {
                failure = Some(failure_of(&pending[idx], c, il, diffs, None));
            }
            if stop_at.is_none() {
                stop_at = Some(if traced { c + context as u64 } else { c });
            }
        }
        // Steps whose comparisons are all behind.
        while let Some(e) = pending.front() {
            let outputs_done = match strobe {
                Some(_) => e.strobed || e.reset || e.step == 0 || !e.live(c + 1),
                None => e.step * k + max_lat < c + 1,
            };
            let state_done = max_state_lat.is_none_or(|l| e.step * k + k - 1 + l < c + 1);
            if outputs_done && state_done && pending.len() > 1 {
                spare.extend(pending.pop_front());
            } else {
                break;
            }
        }
        c += 1;
    }
    Ok(Found {
        failure,
        secs: t0.elapsed().as_secs_f64(),
        stopped,
        wave,
    })
}

/// Output ports compared together (those of one latency): their words in
/// the packed outputs, neighbours merged into one range.
struct Group {
    /// `(offset, words)`, in order, none adjacent to the next.
    ranges: Vec<(usize, usize)>,
}

impl Group {
    fn new(ol: &Layout, ports: impl Iterator<Item = usize>) -> Group {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for j in ports {
            let (o, n) = (ol.offsets[j], ol.ports[j].shape.words());
            match ranges.last_mut() {
                Some((lo, ln)) if *lo + *ln == o => *ln += n,
                _ => ranges.push((o, n)),
            }
        }
        Group { ranges }
    }
}

/// The differences of the output ports of `g` between `exp` and `act`.
fn compare(ol: &Layout, g: &Group, exp: &[u32], act: &[u32]) -> Vec<Diff> {
    let differs = g
        .ranges
        .iter()
        .any(|&(o, n)| exp[o..o + n] != act[o..o + n]);
    if !differs {
        return Vec::new();
    }
    // The other ports as expected, so that only these are reported.
    let mut masked = exp.to_vec();
    for &(o, n) in &g.ranges {
        masked[o..o + n].copy_from_slice(&act[o..o + n]);
    }
    diff_outputs(ol, exp, &masked)
}

fn failure_of(
    e: &Pending,
    clock: u64,
    il: &Layout,
    diffs: Vec<Diff>,
    rtl_error: Option<String>,
) -> Failure {
    let inputs = format_nonzero(il, &e.inputs);
    Failure {
        cycle: e.step as i64 - POWER_ON_RESET as i64,
        clock: Some(clock),
        diffs,
        rtl_error,
        inputs: if e.reset {
            format!("rst_ni=0 {inputs}")
        } else {
            inputs
        },
    }
}
