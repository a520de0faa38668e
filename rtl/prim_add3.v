// prim_add3: a + b + c + k[1] + k[0] modulo 2^W in logarithmic depth.
//
// One 3:2 compressor (a, b, c to a sum and a carry vector, k[1] in the
// carry vector's free bit 0), then a Kogge-Stone adder of the two with
// k[0] as its carry in: 2 + 2 log2(W) + 1 levels of two-input gates, where
// a ripple-carry sum of three operands is about 2W. Subtraction is an
// operand inverted and a 1 in k (a - b = a + ~b + 1).
//
// Parameters
//   W  width of the operands and the sum, 1..64
//
// Ports (all combinational)
//   a_i, b_i, c_i  operands
//   k_i            two carry-in bits, each of weight 1
//   sum_o          a + b + c + k[1] + k[0] modulo 2^W

`default_nettype none
`timescale 1ns / 100ps

module prim_add3 #(
  parameter integer W = 16
) (
  input  wire [W-1:0] a_i,
  input  wire [W-1:0] b_i,
  input  wire [W-1:0] c_i,
  input  wire [1:0]   k_i,
  output wire [W-1:0] sum_o
);

  // The 3:2 compressor: x + y == a + b + c + k[1] (modulo 2^W).
  wire [W-1:0] x = a_i ^ b_i ^ c_i;
  wire [W:0]   cy = {(a_i & b_i) | (a_i & c_i) | (b_i & c_i), k_i[1]};
  wire [W-1:0] y = cy[W-1:0];

  // Kogge-Stone: level l combines bit j with bit j - 2^l (the 2^l bits
  // below keep their generate and propagate). Each level's vectors are kept
  // (`keep`): this flow's ABC has no timing goal, and its area rewriting
  // folds an unkept prefix tree back towards a ripple chain (at W = 29: 16
  // levels kept, 48 unkept, 60 for a plain a + b + c). Shifts by a constant
  // are wiring: Verilator simulates a level as a few word operations.
  localparam integer L = (W > 1) ? $clog2(W) : 1;
  wire [W-1:0] p  = x ^ y;
  wire [W-1:0] g0 = (x & y) | {{(W-1){1'b0}}, p[0] & k_i[0]};
  genvar l;
  generate
    for (l = 0; l < L; l = l + 1) begin : gen_lvl
      wire [W-1:0] g_in, pp_in;
      (* keep *) wire [W-1:0] g_k;
      (* keep *) wire [W-1:0] pp_k;
      if (l == 0) begin : gen_first
        assign g_in  = g0;
        assign pp_in = p;
      end else begin : gen_next
        assign g_in  = gen_lvl[l-1].g_k;
        assign pp_in = gen_lvl[l-1].pp_k;
      end
      assign g_k  = g_in | (pp_in & (g_in << (1 << l)));
      assign pp_k = pp_in & ((pp_in << (1 << l)) | ~({W{1'b1}} << (1 << l)));
    end
  endgenerate

  wire [W:0] carries = {gen_lvl[L-1].g_k, k_i[0]};
  assign sum_o = p ^ carries[W-1:0];
  // The last level's propagate vector is not needed.
  wire unused_pp = |gen_lvl[L-1].pp_k;

  // The carries out of the top bit are beyond 2^W.
  wire unused_top = cy[W] | carries[W];

endmodule

`default_nettype wire
