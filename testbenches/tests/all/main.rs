//! Every testbench test in one binary: one link and one copy of the code
//! they share (BENCHMARKS.md, "Cold set-up"). `cargo test -p testbenches
//! --test all mmu::` runs one block's.

mod arbiter;
mod bcn_cp;
mod bcn_rp;
mod credit;
mod icarus;
mod mmu;
mod pfc;
mod prim_lfsr;
mod prim_ram_1r1w;
mod prim_rr_arb;
mod prim_sat_cnt;
mod prim_timer;
mod recn_port;
mod scenarios;
mod slot_block;
mod step_into;
mod stx_egress;
mod stx_ingress;
mod stx_switch;
mod support;
mod waves;
