//! The model side of a pass behind packed words.
//!
//! A pass drives the RTL ([`Dut`], words) and a block's generator and
//! golden model (its own types). [`ModelSide`] is what the passes need of
//! the second, in words, so that the passes themselves are compiled once
//! for every block; [`Side`] is it for block `B`. It costs a few indirect
//! calls per cycle, against microseconds of model and RTL. [`of`] gives
//! the copy of `Side` compiled in this crate (optimised) for a block of the
//! registry (`crate::hot`).

use super::*;
use model::port::PackError;

/// Block `B`'s side of a pass over `stim`, with `fault` (output word, step)
/// injected.
pub(crate) fn of<B: Bench>(
    stim: &Stimulus<B>,
    fault: Option<(usize, u64)>,
) -> Result<Box<dyn ModelSide + '_>> {
    match crate::hot::of::<B>() {
        Some(h) => (h.side)(stim, fault),
        None => Ok(Box::new(Side::new(stim, fault)?)),
    }
}

/// [`of`] for a block of the registry, compiled in this crate.
pub(crate) fn make<B: Bench>(
    stim: &Stimulus<B>,
    fault: Option<(usize, u64)>,
) -> Result<Box<dyn ModelSide + '_>> {
    Ok(Box::new(Side::new(stim, fault)?))
}

/// A block's generator and golden model, stepped through packed words.
pub(crate) trait ModelSide {
    /// Asks the generator for the next step's inputs (it sees the model's
    /// state and last outputs): `true` for a reset step.
    fn next(&mut self) -> bool;
    /// A reset step: the model as after reset, its outputs those under
    /// reset.
    fn reset(&mut self);
    /// A step of stimulus step `k`: packs the inputs into `ins`, steps the
    /// model (with the injected fault of step `k`, if any) and adds its
    /// coverage to `hits`.
    fn step(&mut self, k: u64, ins: &mut [u32], hits: &mut [u64]) -> Result<(), PackError>;
    /// Whether the model's outputs are `act` (without packing them).
    fn outputs_are(&self, act: &[u32]) -> bool;
    /// Packs the model's outputs into `w` (those `i` with `keep[i]`, all
    /// with `None`; the others' words are left as they are).
    fn pack_outputs(&self, w: &mut [u32], keep: Option<&[bool]>) -> Result<(), PackError>;
    /// Packs the model's registers into `w`, as [`ModelSide::pack_outputs`].
    fn pack_state(&self, w: &mut [u32], keep: Option<&[bool]>) -> Result<(), PackError>;
}

/// Block `B`'s side of a pass over `stim`.
pub(crate) struct Side<'a, B: Bench> {
    p: &'a B::Params,
    cfg: &'a B::Config,
    src: testbenches::Source<'a, B>,
    model: B,
    reset_out: B::Outputs,
    out: B::Outputs,
    i: B::Inputs,
    /// The fault to inject: output word and bit 0 of it, stimulus step.
    fault: Option<(usize, u64)>,
}

impl<'a, B: Bench> Side<'a, B> {
    pub(crate) fn new(stim: &'a Stimulus<B>, fault: Option<(usize, u64)>) -> Result<Self> {
        let (p, cfg) = (&stim.params, &stim.config);
        let src = testbenches::source(stim).map_err(|e| anyhow!(e))?;
        // The outputs under reset; and the model's outputs, reused every
        // cycle (they are also the generator's view of the cycle before).
        let reset_out = B::new(p, cfg).step(&B::Inputs::zero(p));
        reset_out
            .to_words(p)
            .map_err(|e| anyhow!("model output under reset: {e}"))?;
        Ok(Side {
            p,
            cfg,
            src,
            model: B::new(p, cfg),
            out: reset_out.clone(),
            reset_out,
            i: B::Inputs::zero(p),
            fault,
        })
    }
}

impl<B: Bench> ModelSide for Side<'_, B> {
    #[inline]
    fn next(&mut self) -> bool {
        self.src.next(&self.model, &self.out, &mut self.i) == Step::Reset
    }

    fn reset(&mut self) {
        self.model = B::new(self.p, self.cfg);
        self.out.clone_from(&self.reset_out);
    }

    #[inline]
    fn step(&mut self, k: u64, ins: &mut [u32], hits: &mut [u64]) -> Result<(), PackError> {
        self.i.pack(self.p, ins)?;
        self.model.step_into(&self.i, &mut self.out);
        if let Some((off, at)) = self.fault {
            if k == at {
                let mut w = vec![0u32; B::Outputs::layout(self.p).words];
                if self.out.pack(self.p, &mut w).is_ok() {
                    w[off] ^= 1;
                    self.out = B::Outputs::unpack(self.p, &w);
                }
            }
        }
        self.model.sample(&self.i, &self.out, hits);
        Ok(())
    }

    #[inline]
    fn outputs_are(&self, act: &[u32]) -> bool {
        self.out.eq_words(self.p, act)
    }

    #[inline]
    fn pack_outputs(&self, w: &mut [u32], keep: Option<&[bool]>) -> Result<(), PackError> {
        self.out.pack_where(self.p, w, keep)
    }

    fn pack_state(&self, w: &mut [u32], keep: Option<&[bool]>) -> Result<(), PackError> {
        self.model.state().pack_where(self.p, w, keep)
    }
}
