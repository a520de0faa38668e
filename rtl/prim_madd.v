// prim_madd: acc + a * b modulo 2^W, b of 8 bits, in logarithmic depth.
//
// A step of a multiply spread over clocks (a byte of the multiplier per
// clock: the next step's acc is this one's sum shifted right by 8, its low
// byte the product's), or a whole multiply by a byte. The eight partial
// products a << j where b[j] and the accumulator are nine operands, summed
// by a tree of prim_add3 (three, then one): 28 levels of two-input gates
// at W = 32 (measured), where Yosys' own `a * b` is a ripple array (57
// levels for 24 x 8 bits).
//
// Parameters
//   W  width of a, acc and the sum, 2..64
//
// Ports (all combinational)
//   acc_i  accumulator
//   a_i    multiplicand
//   b_i    multiplier byte
//   sum_o  acc + a * b modulo 2^W (a signed a, sign-extended to W bits,
//          gives the signed product: the sum is exact modulo 2^W)

`default_nettype none
`timescale 1ns / 100ps

module prim_madd #(
  parameter integer W = 32
) (
  input  wire [W-1:0] acc_i,
  input  wire [W-1:0] a_i,
  input  wire [7:0]   b_i,
  output wire [W-1:0] sum_o
);

  wire [9*W-1:0] pp;      // the partial products, then the accumulator
  genvar j;
  generate
    for (j = 0; j < 8; j = j + 1) begin : gen_pp
      assign pp[j*W +: W] = b_i[j] ? (a_i << j) : {W{1'b0}};
    end
  endgenerate
  assign pp[8*W +: W] = acc_i;

  wire [3*W-1:0] s1;
  generate
    for (j = 0; j < 3; j = j + 1) begin : gen_l1
      prim_add3 #(.W(W)) u_add (
        .a_i   (pp[(3*j)*W +: W]),
        .b_i   (pp[(3*j+1)*W +: W]),
        .c_i   (pp[(3*j+2)*W +: W]),
        .k_i   (2'b00),
        .sum_o (s1[j*W +: W])
      );
    end
  endgenerate

  prim_add3 #(.W(W)) u_sum (
    .a_i   (s1[0 +: W]),
    .b_i   (s1[W +: W]),
    .c_i   (s1[2*W +: W]),
    .k_i   (2'b00),
    .sum_o (sum_o)
  );

endmodule

`default_nettype wire
