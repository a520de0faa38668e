//! The bookkeeping a switch run is judged by: every accepted cell delivered
//! exactly once and in order, with the same delays, whichever side (model
//! or RTL) produced the outputs.

use super::{Delivery, StxSwitchInputs, StxSwitchOutputs};

/// Books every accepted cell of a switch and checks each delivery: the
/// next cell of its (input, output) flow, in order, exactly once; and sums
/// the delays (delivery cycle minus arrival cycle). The same checker for
/// the model and for the RTL's outputs.
#[derive(Clone, Debug)]
pub struct Ledger {
    n: usize,
    seq_mod: u32,
    /// Per flow (input * N + output): (arrival cycle, id) of cells not yet delivered.
    flows: Vec<std::collections::VecDeque<(u64, u16)>>,
    /// Per flow: cells accepted so far (the next sequence number, unwrapped).
    accepted: Vec<u64>,
    /// Delay statistics.
    pub stats: DelayStats,
}

/// Delay statistics of delivered cells (cycles from arrival at the input
/// to delivery at the output).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayStats {
    /// Cells accepted at the inputs.
    pub accepted: u64,
    /// Cells delivered.
    pub delivered: u64,
    /// Sum of the delays.
    pub sum: u64,
    /// Largest delay.
    pub max: u64,
    /// Smallest delay (`u64::MAX` before the first delivery).
    pub min: u64,
    /// Delays by value, up to 255 (the last bucket holds the rest).
    pub hist: Vec<u64>,
}

impl Ledger {
    /// An empty ledger for `n` ports and `sw`-bit sequence numbers.
    pub fn new(n: usize, sw: u32) -> Self {
        Ledger {
            n,
            seq_mod: 1 << sw,
            flows: vec![Default::default(); n * n],
            accepted: vec![0; n * n],
            stats: DelayStats {
                min: u64::MAX,
                hist: vec![0; 256],
                ..DelayStats::default()
            },
        }
    }
    /// Input `i` accepted a cell for output `j` with id `id` in cycle `t`.
    pub fn accept(&mut self, t: u64, i: usize, j: usize, id: u16) {
        self.flows[i * self.n + j].push_back((t, id));
        self.accepted[i * self.n + j] += 1;
        self.stats.accepted += 1;
    }
    /// Output `j` delivered `d` in cycle `t`; an error names what is wrong
    /// (a cell not accepted, out of order, a second copy, a wrong id).
    pub fn deliver(&mut self, t: u64, j: usize, d: &Delivery) -> Result<(), String> {
        let f = d.src * self.n + j;
        let left = self.flows[f].len() as u64;
        let Some(&(t0, id)) = self.flows[f].front() else {
            return Err(format!(
                "cycle {t}: output {j} delivered input {}'s seq {} id {:#x}: nothing of that flow is owed",
                d.src, d.seq, d.id
            ));
        };
        let want = ((self.accepted[f] - left) % self.seq_mod as u64) as u16;
        if d.seq != want || d.id != id {
            return Err(format!(
                "cycle {t}: output {j} delivered input {}'s seq {} id {:#x}; the next of that flow is seq {want} id {id:#x} (arrived in cycle {t0})",
                d.src, d.seq, d.id
            ));
        }
        self.flows[f].pop_front();
        let delay = t - t0;
        let s = &mut self.stats;
        s.delivered += 1;
        s.sum += delay;
        s.max = s.max.max(delay);
        s.min = s.min.min(delay);
        s.hist[(delay as usize).min(255)] += 1;
        Ok(())
    }
    /// Cells accepted and not yet delivered.
    pub fn owed(&self) -> u64 {
        self.flows.iter().map(|f| f.len() as u64).sum()
    }
    /// Books one cycle of a switch's ports (`i` and `o` of cycle `t`).
    pub fn book(
        &mut self,
        t: u64,
        i: &StxSwitchInputs,
        o: &StxSwitchOutputs,
    ) -> Result<(), String> {
        for k in 0..self.n {
            if i.arr_valid_i[k] && !o.arr_drop_o[k] {
                self.accept(t, k, i.arr_out_i[k] as usize, i.arr_id_i[k]);
            }
        }
        for j in 0..self.n {
            if o.dlv_valid_o[j] {
                let d = Delivery {
                    src: o.dlv_src_o[j] as usize,
                    seq: o.dlv_seq_o[j],
                    id: o.dlv_id_o[j],
                };
                self.deliver(t, j, &d)?;
            }
        }
        Ok(())
    }
}
