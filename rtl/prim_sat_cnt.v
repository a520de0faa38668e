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

  // Exact sums in XW = W + 2 signed bits: -(2^W - 1) .. 2 (2^W - 1), and
  // that less TOP + 1 <= 2^W. Both sums are prim_add3 instances side by
  // side (about 20 levels of two-input gates at W = 31, against 66 for the
  // `+`, `-` and compares synthesis makes ripple chains of):
  //   sum = count + inc - dec           (lo: its sign)
  //   ovr = count + inc - dec - TOP - 1 (hi: sum > TOP, its sign clear)
  // with -x = ~x + 1 and a 3:2 compressor in front of ovr's four operands.
  localparam integer XW = W + 2;
  localparam [63:0]   MAX64 = MAX[31:0] * 64'd1;   // widened (a -G value is unsized)
  localparam [XW-1:0] TOP   = (MAX == 32'd0) ? {2'b00, {W{1'b1}}} : MAX64[XW-1:0];

  reg  [W-1:0]  count_q, count_d;
  wire [XW-1:0] c_x   = {2'b00, count_q};
  wire [XW-1:0] inc_x = {2'b00, inc_i};
  wire [XW-1:0] dec_n = ~{2'b00, dec_i};
  wire [XW-1:0] sum, ovr;
  prim_add3 #(.W(XW)) u_sum (.a_i(c_x), .b_i(inc_x), .c_i(dec_n), .k_i(2'b01), .sum_o(sum));
  // count + inc + ~dec + ~TOP + 1 = count + inc - dec - TOP - 1
  wire [XW-1:0] cs_s = c_x ^ inc_x ^ dec_n;
  wire [XW-1:0] cs_c = {(c_x[XW-2:0] & inc_x[XW-2:0]) | (c_x[XW-2:0] & dec_n[XW-2:0])
                        | (inc_x[XW-2:0] & dec_n[XW-2:0]), 1'b0};
  prim_add3 #(.W(XW)) u_ovr (.a_i(cs_s), .b_i(cs_c), .c_i(~TOP), .k_i(2'b01), .sum_o(ovr));
  wire          lo  = sum[XW-1];
  wire          hi  = !ovr[XW-1];

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
