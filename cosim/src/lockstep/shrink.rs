//! Shrinking a failing run: cut after the first divergence, replay a window
//! of the last cycles from reset, and minimise what still fails.

use super::*;

/// `stim` cut just after cycle `c` (all of it when `c` is past its end).
pub fn cut_after<B: Block>(stim: &Stimulus<B>, c: i64) -> Stimulus<B> {
    let keep = (c + 1).max(0) as u64;
    let mut s = stim.clone();
    match &mut s.generated {
        Some(g) => g.cycles = g.cycles.min(keep),
        None => s.cycles.truncate(keep.min(s.cycles.len() as u64) as usize),
    }
    s
}

/// For a run cut just after its first divergent cycle: the last W cycles
/// written out and played from reset, for W = 256, 4096, 65536 (the first
/// that still fails), then shrunk by [`minimize`] within `budget`. `None`
/// when no such window fails.
pub fn shrink_window<B: Bench>(
    cut: &Stimulus<B>,
    budget: Duration,
    user: Option<&UserRtl>,
) -> Option<Stimulus<B>> {
    let t0 = Instant::now();
    let end = cut.len();
    let widest = end.min(1 << 16);
    let tail = testbenches::materialize(cut, end - widest, end).ok()?;
    for w in [256u64, 4096, 1 << 16] {
        let w = w.min(widest);
        let win = Stimulus::explicit(
            cut.params.clone(),
            cut.config.clone(),
            cut.seed,
            tail[(widest - w) as usize..].to_vec(),
        );
        if first_mismatch(&win, user).is_some() {
            return Some(minimize_with(
                &win,
                budget.saturating_sub(t0.elapsed()),
                user,
            ));
        }
        if w == widest {
            break;
        }
    }
    None
}

/// Runs `stim` without waveforms (on the project's RTL, or `user`'s) and
/// returns the first divergent step, or `None` if model and RTL agree (or
/// the run cannot start).
pub fn first_mismatch<B: Bench>(stim: &Stimulus<B>, user: Option<&UserRtl>) -> Option<i64> {
    let target = Target::of::<B>(&stim.params, user).ok()?;
    let mut cov = Coverage::of::<B>();
    match pass(stim, &target, None, 0, &mut cov, None, None) {
        Ok(PassOut {
            failure: Some(f), ..
        }) => Some(f.cycle),
        _ => None,
    }
}

/// Shrinks a failing stimulus to a smaller one that still fails: cuts it
/// after its first divergent cycle (a generated one is first written out:
/// the window of [`shrink_window`], or all of it when it is short), then
/// removes chunks of cycles (halving the chunk size down to single cycles,
/// delta-debugging style) as long as a mismatch remains, within `budget`.
/// Works on any block; the result is a valid stimulus (every input of
/// every block is legal by its spec).
pub fn minimize<B: Bench>(stim: &Stimulus<B>, budget: Duration) -> Stimulus<B> {
    minimize_with(stim, budget, None)
}

/// [`minimize`] against `user`'s RTL (the project's when `None`).
pub fn minimize_with<B: Bench>(
    stim: &Stimulus<B>,
    budget: Duration,
    user: Option<&UserRtl>,
) -> Stimulus<B> {
    let t0 = Instant::now();
    let Some(c) = first_mismatch(stim, user) else {
        return stim.clone();
    };
    let mut best = cut_after(stim, c);
    if best.generated.is_some() {
        match shrink_window(&best, budget, user) {
            Some(s) => return s,
            None => return best,
        }
    }
    let mut chunk = best.cycles.len().div_ceil(2);
    while chunk >= 1 && t0.elapsed() < budget && !stop_requested() {
        let mut i = 0;
        while i < best.cycles.len() && t0.elapsed() < budget && !stop_requested() {
            let mut trial = best.clone();
            let end = (i + chunk).min(trial.cycles.len());
            trial.cycles.drain(i..end);
            if let Some(c) = first_mismatch(&trial, user) {
                trial.cycles.truncate((c + 1).max(0) as usize);
                best = trial;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2).min(chunk - 1).max(1);
    }
    best
}
