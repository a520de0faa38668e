// prim_sat_cnt: an up/down counter that saturates at 0 and at its maximum.
//
// Parameters
//   W    counter width (1..62)
//   MAX  the largest value, 1 .. min(2^W, 2^32) - 1; 0 (the default) means
//        2^W - 1. 32 bits wide, what a -G override gives.
//
// Next value: clr_i -> 0; else clamp(count + inc_i - dec_i, 0, MAX), taken
// on the exact sum (no clamp in between: a release and an admission in the
// same cycle are netted first).
//
// Ports
//   clr_i    clear at the next edge (wins)
//   inc_i    amount added at the next edge
//   dec_i    amount taken away at the next edge
//   count_o  the count at the start of the cycle (registered)
//   sat_o    the exact sum left [0, MAX] and was clamped (combinational)
//
// Golden model: model::prim::SatCnt.

`default_nettype none
`timescale 1ns / 100ps

module prim_sat_cnt #(
  parameter integer W   = 16,
  parameter [31:0]  MAX = 32'd0
) (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire         clr_i,
  input  wire [W-1:0] inc_i,
  input  wire [W-1:0] dec_i,
  output wire [W-1:0] count_o,
  output wire         sat_o
);

  // Exact sum in W + 2 signed bits: -(2^W - 1) .. 2 * (2^W - 1).
  localparam integer XW = W + 2;
  localparam [63:0]   MAX64 = MAX[31:0] * 64'd1;   // widened (a -G value is unsized)
  localparam [W+1:0]  TOP   = (MAX == 32'd0) ? {2'b00, {W{1'b1}}} : MAX64[W+1:0];

  reg  [W-1:0]        count_q, count_d;
  wire signed [XW-1:0] sum = $signed({2'b00, count_q}) + $signed({2'b00, inc_i})
                           - $signed({2'b00, dec_i});
  wire                 lo  = sum < $signed({XW{1'b0}});
  wire                 hi  = sum > $signed(TOP);

  always @(*) begin
    if (clr_i)   count_d = {W{1'b0}};
    else if (lo) count_d = {W{1'b0}};
    else if (hi) count_d = TOP[W-1:0];
    else         count_d = sum[W-1:0];
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) count_q <= {W{1'b0}};
    else         count_q <= count_d;
  end

  assign count_o = count_q;
  assign sat_o   = !clr_i && (lo || hi);

endmodule

`default_nettype wire
