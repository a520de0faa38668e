// prim_ram_1r1w: a memory of D words of W bits, one write port and one
// registered read port, both synchronous to clk_i.
//
// Parameters
//   W           data bits per word (1..64)
//   D           words (2..4096), not necessarily a power of two
//   CHECK_ADDR  1: AddrInRange_A flags an enabled access at an address >= D
//               (a block's pointer bug); 0: such an access is ignored silently
//   AW          address bits, $clog2(D) (derived: do not set)
//
// Read: when re_i is high and raddr_i < D, rdata_o in the next cycle is the
// word at raddr_i as it was at this edge; while re_i is low rdata_o holds.
// Write: when we_i is high and waddr_i < D, word waddr_i takes wdata_i at
// this edge. A read and a write of the same word in one cycle give the OLD
// word (read-first): the read register samples the array at the edge that
// writes it, as a register file with a registered read or a read-first
// two-port SRAM macro does. There is no forwarding: a block that needs the
// new word in the same cycle forwards wdata_i itself.
//
// Out of range (an address D .. 2^AW - 1): a write changes no word, a read
// changes nothing (rdata_o holds, as with re_i low). Reads do not return 0
// there: a zero multiplexer after the array would keep synthesis from
// folding rdata_q into the memory's read port.
//
// Reset: the array has no reset (an SRAM); a word never written since
// power-up is undefined, and so is a read of it. rdata_q is reset to 0 and
// is the only flip-flop with a reset.
//
// Ports
//   we_i, waddr_i, wdata_i   write port
//   re_i, raddr_i            read port
//   rdata_o                  the read register (registered)
//
// Synthesis: one $mem of D x W bits with one write port and one clocked,
// read-first read port (enable re_i && raddr_i < D, asynchronous reset 0).
//
// Spec: docs/prim_ram_1r1w.md. Golden model: model::prim::Ram1r1w.

`default_nettype none
`timescale 1ns / 100ps

module prim_ram_1r1w #(
  parameter integer W          = 8,
  parameter integer D          = 16,
  parameter integer CHECK_ADDR = 1,
  parameter integer AW         = $clog2(D)
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire          we_i,
  input  wire [AW-1:0] waddr_i,
  input  wire [W-1:0]  wdata_i,
  input  wire          re_i,
  input  wire [AW-1:0] raddr_i,
  output wire [W-1:0]  rdata_o
);

  // D in AW + 1 bits: a power-of-two D is 2^AW, one bit above an address.
  localparam [AW:0] DEPTH = D[AW:0];

  wire wr_in = {1'b0, waddr_i} < DEPTH;
  wire rd_in = {1'b0, raddr_i} < DEPTH;

  reg [W-1:0] mem [0:D-1];
  reg [W-1:0] rdata_q, rdata_d;

  always @(posedge clk_i) begin
    if (we_i && wr_in) mem[waddr_i] <= wdata_i;
  end

  always @(*) begin
    rdata_d = rdata_q;
    if (re_i && rd_in) rdata_d = mem[raddr_i];
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rdata_q <= {W{1'b0}};
    else         rdata_q <= rdata_d;
  end

  assign rdata_o = rdata_q;

`ifndef SYNTHESIS
  initial begin
    if (W < 1 || W > 64 || D < 2 || D > 4096)
      $error("ParamRange_A: W = %0d (1..64), D = %0d (2..4096)", W, D);
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else if (CHECK_ADDR != 0) begin
      if (we_i && !wr_in) $error("AddrInRange_A: write address %0d >= D = %0d", waddr_i, D);
      if (re_i && !rd_in) $error("AddrInRange_A: read address %0d >= D = %0d", raddr_i, D);
    end
  end
`endif

endmodule

`default_nettype wire
