// prim_rr_arb: a round-robin arbiter with its pointer register.
//
// Parameters
//   N   number of requesters (1..64)
//
// Grant: the first requester at or after the pointer, wrapping (index
// order). When ack_i is high and there is a grant, the pointer moves to the
// one after the granted index (wrapping at N, so N need not be a power of
// two); otherwise it holds. Grants are one-hot and only to requesters
// (GntOneHot_A, GntImpliesReq_A).
//
// Ports
//   req_i     requests (combinational to the grant)
//   ack_i     the grant is taken: move the pointer at the next edge
//   valid_o   some requester is granted (combinational)
//   idx_o     the granted index, 0 when none (combinational)
//   gnt_o     the grant, one-hot, 0 when none (combinational)
//   ptr_o     the pointer at the start of the cycle (registered)
//
// Golden model: model::prim::RrArb (and model::prim::rr_pick, the pick
// alone, for a block whose picks depend on one another within a cycle).

`default_nettype none
`timescale 1ns / 100ps

module prim_rr_arb #(
  parameter integer N  = 4,
  parameter integer IW = (N > 1) ? $clog2(N) : 1
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire [N-1:0]  req_i,
  input  wire          ack_i,
  output wire          valid_o,
  output wire [IW-1:0] idx_o,
  output wire [N-1:0]  gnt_o,
  output wire [IW-1:0] ptr_o
);

  reg [IW-1:0] ptr_q, ptr_d;

  // Lowest set bit of v: {some bit set, its index} (index all ones when
  // none), as a binary tree over IW levels. After level l a node (bit
  // m 2^(l+1)) holds its range's "some bit" and index: the lower half's when
  // it has a bit, else the upper half's (index bit l says which). Written on
  // whole vectors (v >> 2^l brings the upper half to its node; the other
  // bits carry unused values): Verilator simulates a level as a few word
  // operations. A tree, not a prefix: ABC's area rewriting (dc2) turns an
  // OR prefix over all positions into a chain of N.
  function automatic [IW:0] ffs(input [N-1:0] v);
    reg [N-1:0]    vl;
    reg [IW*N-1:0] bi;
    integer        l, b;
    begin
      vl = v;
      bi = {IW*N{1'b0}};
      for (l = 0; l < IW; l = l + 1) begin
        for (b = 0; b < l; b = b + 1)
          bi[b*N +: N] = (vl & bi[b*N +: N]) | (~vl & (bi[b*N +: N] >> (1 << l)));
        bi[l*N +: N] = ~vl;
        vl = vl | (vl >> (1 << l));
      end
      ffs[IW] = vl[0];
      for (b = 0; b < IW; b = b + 1) ffs[b] = bi[b*N];
    end
  endfunction

  // The first request at or after ptr (of hi), else the first request.
  reg [IW:0] fh, fv;

  always @(*) begin
    fh = ffs(req_i & ({N{1'b1}} << ptr_q));
    fv = ffs(req_i);
  end

  wire          lo  = fv[IW];      // some request
  wire [IW-1:0] idx = !lo ? {IW{1'b0}} : fh[IW] ? fh[IW-1:0] : fv[IW-1:0];

  assign valid_o = lo;
  assign idx_o   = idx;
  assign gnt_o   = lo ? ({{(N-1){1'b0}}, 1'b1} << idx) : {N{1'b0}};
  assign ptr_o   = ptr_q;

  always @(*) begin
    ptr_d = ptr_q;
    if (ack_i && lo) ptr_d = (idx == N[IW-1:0] - 1'b1 || N == 1) ? {IW{1'b0}} : idx + 1'b1;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ptr_q <= {IW{1'b0}};
    else         ptr_q <= ptr_d;
  end

`ifndef SYNTHESIS
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if ((gnt_o & ~req_i) != {N{1'b0}}) $error("GntImpliesReq_A");
      if ((gnt_o & (gnt_o - 1'b1)) != {N{1'b0}}) $error("GntOneHot_A");
    end
  end
`endif

endmodule

`default_nettype wire
