//! The Verilated RTL of a block, driven through the generated shim.
//!
//! One FFI call per RTL clock: the packed inputs go in, the packed outputs
//! come back (layouts from the block's port declaration, see `model::port`).
//! The design is built on first use by [`crate::builder`] and opened as a
//! shared library.

use crate::builder::{self, Library};
use crate::design::Design;
use anyhow::{anyhow, bail, Context, Result};
use model::{Block, PortGroup};
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::path::Path;

/// An error raised by the RTL itself ($error, $fatal, a failed assertion).
#[derive(Debug, Clone)]
pub struct RtlError(pub String);

impl std::fmt::Display for RtlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RTL error: {}", self.0)
    }
}

impl std::error::Error for RtlError {}

/// One instance of a block's verilated RTL.
pub struct Rtl<B: Block> {
    dut: Dut,
    params: B::Params,
    _b: PhantomData<fn() -> B>,
}

/// One instance of a verilated design, driven through packed words: what
/// an [`Rtl`] is without its block's types, so that the lockstep loops over
/// it are compiled once for every block.
pub struct Dut {
    lib: &'static Library,
    h: *mut c_void,
    inbuf: Vec<u32>,
    outbuf: Vec<u32>,
    in_off: usize,
}

impl<B: Block> std::ops::Deref for Rtl<B> {
    type Target = Dut;
    fn deref(&self) -> &Dut {
        &self.dut
    }
}

impl<B: Block> std::ops::DerefMut for Rtl<B> {
    fn deref_mut(&mut self) -> &mut Dut {
        &mut self.dut
    }
}

impl<B: Block> Rtl<B> {
    /// Instantiates the project's RTL of variant `params` with `config` on
    /// its `cfg_*` ports (built on first use). `seed` seeds the random
    /// initial state (`--x-initial unique`). With `vcd`, every clock is
    /// dumped there (Verilator's own tracer).
    pub fn new(
        params: &B::Params,
        config: &B::Config,
        seed: u64,
        vcd: Option<&Path>,
    ) -> Result<Self> {
        Self::of(&Design::ours::<B>(params)?, params, config, seed, vcd)
    }

    /// Instantiates `design` (the project's RTL or a designer's) of variant
    /// `params`.
    pub fn of(
        design: &Design,
        params: &B::Params,
        config: &B::Config,
        seed: u64,
        vcd: Option<&Path>,
    ) -> Result<Self> {
        if design.block != B::NAME {
            bail!("a design of {} cannot stand for {}", design.block, B::NAME);
        }
        let lib = builder::library(design)?;
        let cfg_words = B::Config::layout(params).words;
        let in_words = B::Inputs::layout(params).words;
        if 1 + cfg_words + in_words != lib.in_words
            || B::Outputs::layout(params).words != lib.out_words
        {
            bail!(
                "{} was built from another port declaration of {}",
                lib.dir.display(),
                B::NAME
            );
        }
        let mut inbuf = vec![0u32; lib.in_words];
        config
            .pack(params, &mut inbuf[1..1 + cfg_words])
            .map_err(|e| anyhow!("configuration: {e}"))?;
        let path = vcd
            .map(|p| CString::new(p.to_string_lossy().as_bytes()))
            .transpose()
            .context("VCD path contains a NUL byte")?;
        // SAFETY: `new` takes a seed and a NUL-terminated path (or null); it
        // returns an owned handle or null with the reason in vsim_last_error.
        let h = unsafe { (lib.new)(seed, path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
        if h.is_null() {
            bail!(
                "cannot start the RTL of {}: {}{}",
                B::NAME,
                builder::last_error(),
                vcd.map(|p| format!(" ({})", p.display()))
                    .unwrap_or_default()
            );
        }
        Ok(Rtl {
            dut: Dut {
                lib,
                h,
                inbuf,
                outbuf: vec![0u32; lib.out_words + lib.aux_words],
                in_off: 1 + cfg_words,
            },
            params: params.clone(),
            _b: PhantomData,
        })
    }

    /// Packs `i`, runs one cycle and unpacks the outputs.
    pub fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs> {
        self.step_clocks(i, 1)
    }

    /// Packs `i`, holds it for `k` cycles (a step of `Alignment::slot(k)`)
    /// and unpacks the outputs of the last.
    pub fn step_clocks(&mut self, i: &B::Inputs, k: u32) -> Result<B::Outputs> {
        let p = &self.params;
        i.pack(p, self.dut.inputs_mut())
            .map_err(|e| anyhow!("input: {e}"))?;
        for _ in 1..k {
            self.dut.cycle(false)?;
        }
        let w = self.dut.cycle(false)?;
        Ok(B::Outputs::unpack(p, w))
    }
}

impl Dut {
    /// The built design this instance runs.
    pub fn library(&self) -> &'static Library {
        self.lib
    }

    /// The whole input buffer (`rst_ni`, configuration, inputs).
    pub fn input_buffer(&self) -> &[u32] {
        &self.inbuf
    }

    /// The inputs of the last (or next) cycle, packed.
    pub fn inputs(&self) -> &[u32] {
        &self.inbuf[self.in_off..]
    }

    /// The buffer the next cycle's inputs are packed into.
    pub fn inputs_mut(&mut self) -> &mut [u32] {
        &mut self.inbuf[self.in_off..]
    }

    /// Runs one cycle with the inputs in [`Dut::inputs_mut`]; `reset` holds
    /// `rst_ni` low. Returns the packed outputs of this cycle.
    #[inline]
    pub fn cycle(&mut self, reset: bool) -> Result<&[u32], RtlError> {
        self.inbuf[0] = u32::from(!reset);
        // SAFETY: the handle is live; the buffers have the lengths the
        // generated shim reads and writes (checked in `of`).
        let rc = unsafe { (self.lib.cycle)(self.h, self.inbuf.as_ptr(), self.outbuf.as_mut_ptr()) };
        if rc != 0 {
            return Err(RtlError(builder::last_error()));
        }
        Ok(&self.outbuf[..self.lib.out_words])
    }

    /// The declared outputs of the last cycle.
    pub fn outputs(&self) -> &[u32] {
        &self.outbuf[..self.lib.out_words]
    }

    /// The outputs read besides the declared ones in the last cycle (the
    /// strobe, if the design has one).
    pub fn aux(&self) -> &[u32] {
        &self.outbuf[self.lib.out_words..]
    }

    /// Reads the state signals the design maps (after the last cycle's
    /// rising edge) into `w` (`Library::state_words` long).
    pub fn read_state(&self, w: &mut [u32]) {
        assert_eq!(w.len(), self.lib.state_words);
        // SAFETY: the handle is live and `w` has the length the shim writes.
        unsafe { (self.lib.state)(self.h, w.as_mut_ptr()) }
    }

    /// Holds reset for `n` cycles.
    pub fn reset(&mut self, n: usize) -> Result<(), RtlError> {
        self.inputs_mut().fill(0);
        for _ in 0..n {
            self.cycle(true)?;
        }
        Ok(())
    }

    /// Flushes the waveform, if any.
    pub fn flush(&mut self) {
        // SAFETY: the handle is live.
        unsafe { (self.lib.flush)(self.h) }
    }
}

impl Drop for Dut {
    fn drop(&mut self) {
        // SAFETY: the handle was returned by `new` and is freed once; this
        // also closes the VCD file.
        unsafe { (self.lib.free)(self.h) }
    }
}

/// The RTL as the studies' block stepper, so that a system study runs on
/// the verilated blocks exactly as on the golden models: a step is the
/// block's clocks per step, inputs held, outputs of its last clock (the
/// alignments of the studies' blocks compare every output there).
impl<B: Block> studies::bcn_loop::Stepper<B> for Rtl<B> {
    fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs, String> {
        let k = B::alignment(&self.params).clocks_per_step.max(1);
        self.step_clocks(i, k).map_err(|e| format!("{e:#}"))
    }
}
