// prim_lfsr: a Galois LFSR, right-shifting, STEPS steps per enabled cycle.
//
// Parameters
//   W      register width (2..32)
//   TAPS   feedback taps, XORed in when the bit shifted out is 1
//          (default x^16 + x^14 + x^13 + x^11 + 1, maximal length)
//   SEED   reset value; must not be 0 (0 is a fixed point)
//   STEPS  steps taken per cycle with en_i high (1..64)
//
// One step: s' = (s >> 1) ^ (s[0] ? TAPS : 0). A register that is never 0
// stays non-zero (LfsrNonZero_A).
//
// Ports
//   en_i     take STEPS steps at the next edge
//   state_o  the register at the start of the cycle (registered)
//
// Golden model: model::prim::Lfsr.

`default_nettype none
`timescale 1ns / 100ps

module prim_lfsr #(
  parameter integer       W     = 16,
  parameter [31:0]        TAPS  = 32'h0000_B400,
  parameter [31:0]        SEED  = 32'h0000_0001,
  parameter integer       STEPS = 1
) (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire         en_i,
  output wire [W-1:0] state_o
);

  // TAPS and SEED are 32 bits wide (what a -G override gives); the low W
  // bits are used.
  localparam [W-1:0] T = TAPS[W-1:0];
  localparam [W-1:0] S = SEED[W-1:0];

  reg [W-1:0] state_q, state_d;
  integer     s;

  // The loop runs whatever en_i is (the condition is inside): a loop
  // variable assigned only under a condition is a latch to synthesis.
  always @(*) begin
    state_d = state_q;
    for (s = 0; s < STEPS; s = s + 1) begin
      if (en_i) state_d = (state_d >> 1) ^ (state_d[0] ? T : {W{1'b0}});
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) state_q <= S;
    else         state_q <= state_d;
  end

  assign state_o = state_q;

`ifndef SYNTHESIS
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (state_q == {W{1'b0}}) $error("LfsrNonZero_A");
    end
  end
`endif

endmodule

`default_nettype wire
