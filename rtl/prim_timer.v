// prim_timer: a down-counting timer that stops at zero.
//
// Parameters
//   W  counter width (1..32)
//
// Next value, in priority order: load_i -> value_i; else tick_i and the
// count is not 0 -> count - 1; else unchanged. The count never wraps: it
// stops at 0 (it cannot go below) and is only set above by a load.
//
// Ports
//   load_i    (re)load value_i at the next edge (wins over tick_i)
//   value_i   the value loaded
//   tick_i    count down one at the next edge
//   count_o   the count at the start of the cycle (registered)
//   running_o count_o != 0 (registered)
//   expire_o  the count reaches 0 at this edge: tick_i, count 1, no load
//             (combinational)
//
// Golden model: model::prim::Timer.

`default_nettype none
`timescale 1ns / 100ps

module prim_timer #(
  parameter integer W = 16
) (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire         load_i,
  input  wire [W-1:0] value_i,
  input  wire         tick_i,
  output wire [W-1:0] count_o,
  output wire         running_o,
  output wire         expire_o
);

  localparam [W-1:0] ONE = {{(W-1){1'b0}}, 1'b1};

  reg [W-1:0] count_q, count_d;

  always @(*) begin
    count_d = count_q;
    if (load_i)                              count_d = value_i;
    else if (tick_i && count_q != {W{1'b0}}) count_d = count_q - ONE;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) count_q <= {W{1'b0}};
    else         count_q <= count_d;
  end

  assign count_o   = count_q;
  assign running_o = count_q != {W{1'b0}};
  assign expire_o  = !load_i && tick_i && count_q == ONE;

endmodule

`default_nettype wire
