// credit: credit scheduler between the ingress VOQs and the egress ports of a
// VOQ + fabric switch, two clocks per step.
//
// Spec: docs/credit.md. Golden model: model/src/credit.rs (one step per two
// clocks; Block::alignment).
//
// Parameters
//   E   egress ports, 2..32           I   ingress ports, 2..32
//   S   slices, a power of two, 2..8  LW  length / quantum width (bytes)
//   CW  egress byte counter width     BW  VOQ balance width (signed)
//   RW  rate numerator / denominator / accumulator width
//   VOQ (i, e) has the flat index v = i * E + e.
//
// Algorithm. A step of the spec takes two clocks, phase A (ph_q = 0) and
// phase B (ph_q = 1); the step's inputs are held in both, the events
// (cin_*, earr_*, edep_bytes_i, ann_*) are read in A only. Every path between
// flip-flops stays within one phase (B reads registers and the held
// hol_len_i / cfg_*_i), and the spec's registers change only at the end of
// B, so that the state outputs hold the state at the start of the step in
// both clocks:
//   A  ingress: per egress port, the credited VOQ's balance plus the credit,
//               saturating (pend_q; crd_q marks the VOQ)
//      egress:  departure (occ1_q); the arrival sum as a tree of 3:2
//               compressors in carry-save form (as_q, ac_q); announcements
//               (bln_q); accumulator (accn_q, due_q); the candidates of
//               out2 + occ2 + Q (x_q, y_q, z_q, below) and out + Q (oq_q)
//   B  ingress: balances after the credits (bal_a), eligibility, round robin
//               per ingress port (prim_rr_arb, pointer = dptr), the winner's
//               balance minus the length (may overdraw)
//      egress:  occ2, out2 from the arrival sum (saturating); grant iff
//               due_q, a backlogged VOQ (bln_q) and out2 + occ2 + Q <= B;
//               receiver by prim_rr_arb over ports, or over slices and, in
//               parallel, over each slice's members; out2 + Q on a grant
// out2 + occ2 + Q is one of four values, by which counter saturated:
//   neither: out + occ1 + Q = x_q    occ only: out + Q + (2^CW-1) - A = y_q - A
//   out only: occ1 + Q - 2^CW + A = z_q + A          both: Q - 1
// each compared with B, so phase B has one addition after the arrival sum.
// Wide additions are Kogge-Stone prefix adders (ks_add, add3).
//
// Ports (golden model: one step per two clocks, every output compared in
// the step's second clock, Block::alignment)
//   cfg_*   held for a run
//   crd_*_o, deq_*_o, err_o: the step's results, in phase B (zero in A)
//   cfg_err_o: comb. of cfg
//   bal_o, occ_o, out_o, acc_o, bl_o, *ptr_o: the registers, the state at the
//   start of the step

`default_nettype none
`timescale 1ns / 100ps

module credit #(
  parameter integer E  = 4,
  parameter integer I  = 4,
  parameter integer S  = 2,
  parameter integer LW = 14,
  parameter integer CW = 20,
  parameter integer BW = 22,
  parameter integer RW = 16
) (
  input  wire                       clk_i,
  input  wire                       rst_ni,

  input  wire [E*LW-1:0]            cfg_quantum_i,
  input  wire [E*RW-1:0]            cfg_rate_num_i,
  input  wire [E*RW-1:0]            cfg_rate_den_i,
  input  wire [E*CW-1:0]            cfg_buf_i,
  input  wire [E-1:0]               cfg_slice_mode_i,
  input  wire [I*$clog2(S)-1:0]     cfg_slice_i,

  input  wire [E-1:0]               cin_valid_i,
  input  wire [E*$clog2(I)-1:0]     cin_ing_i,
  input  wire [E*LW-1:0]            cin_bytes_i,
  input  wire [I*E*LW-1:0]          hol_len_i,
  input  wire [I-1:0]               earr_valid_i,
  input  wire [I*$clog2(E)-1:0]     earr_egr_i,
  input  wire [I*LW-1:0]            earr_bytes_i,
  input  wire [E*LW-1:0]            edep_bytes_i,
  input  wire [I*E-1:0]             ann_bl_i,
  input  wire [I*E-1:0]             ann_mt_i,

  output reg  [E-1:0]               crd_valid_o,
  output reg  [E*$clog2(I)-1:0]     crd_ing_o,
  output reg  [E*LW-1:0]            crd_bytes_o,
  output reg  [I-1:0]               deq_valid_o,
  output reg  [I*$clog2(E)-1:0]     deq_egr_o,
  output reg  [I*LW-1:0]            deq_bytes_o,
  output wire [I*E*BW-1:0]          bal_o,
  output wire [E*CW-1:0]            occ_o,
  output wire [E*(CW+1)-1:0]        out_o,
  output wire [E*RW-1:0]            acc_o,
  output wire [I*E-1:0]             bl_o,
  output wire [E*$clog2(I)-1:0]     pptr_o,
  output wire [E*$clog2(S)-1:0]     sptr_o,
  output wire [E*S*$clog2(I)-1:0]   mptr_o,
  output wire [I*$clog2(E)-1:0]     dptr_o,
  output wire [5:0]                 err_o,
  output wire                       cfg_err_o
);

  localparam integer EW  = $clog2(E);
  localparam integer IW  = $clog2(I);
  localparam integer SW  = $clog2(S);
  localparam integer OW  = CW + 1;                  // out: signed
  localparam integer V   = I * E;                   // VOQs
  localparam integer AW  = (CW > LW + IW) ? CW : LW + IW;
  localparam integer XW  = AW + 3;                  // egress arithmetic, signed: never wraps
  localparam integer BXW = BW + 2;                  // balance arithmetic, signed: never wraps
  localparam integer SAW = LW + IW;                 // an arrival sum: I lengths
  localparam integer FW  = (XW > BXW) ? ((XW > RW + 2) ? XW : RW + 2)
                                      : ((BXW > RW + 2) ? BXW : RW + 2);  // adder width

  // Operands left after lvl levels of 3:2 compressors over I operands.
  function integer csa_n(input integer lvl);
    integer n, l;
    begin
      n = I;
      for (l = 0; l < lvl; l = l + 1) n = (n <= 2) ? n : 2 * (n / 3) + n % 3;
      csa_n = n;
    end
  endfunction

  // Levels of 3:2 compressors until two operands are left.
  function integer csa_levels(input integer dummy);
    integer l;
    begin
      csa_levels = 0;
      for (l = 0; l < 16; l = l + 1) if (csa_n(l) > 2) csa_levels = l + 1;
      csa_levels = csa_levels + 0 * dummy;
    end
  endfunction
  localparam integer NLEV = csa_levels(0);

  // Valid index lookups (I, E need not be powers of two).
  localparam [(1<<IW)-1:0] I_OK = {(1<<IW){1'b1}} >> ((1 << IW) - I);
  localparam [(1<<EW)-1:0] E_OK = {(1<<EW){1'b1}} >> ((1 << EW) - E);

  localparam signed [BXW-1:0] B_MIN   = {{(BXW-LW){1'b1}}, {(LW-1){1'b0}}, 1'b1} + {{(BXW-1){1'b0}}, 1'b1};
  localparam signed [FW-1:0]  F_BMAX  = {{(FW-BW+1){1'b0}}, {(BW-1){1'b1}}};  //  2^(BW-1) - 1

  // a + b + cin in FW bits by a Kogge-Stone prefix network: about
  // 2 log2(FW) + 2 levels of two-input gates, where the ripple adder that
  // synthesis makes of a '+' takes about 2 FW. Callers extend their
  // operands to FW bits, so that nothing wraps.
  function automatic [FW-1:0] ks_add(input [FW-1:0] a, input [FW-1:0] b, input cin);
    reg [FW-1:0] p, gg, pp;
    integer d;
    begin
      p     = a ^ b;
      gg    = a & b;
      gg[0] = gg[0] | (p[0] & cin);
      pp    = p;
      // Level d: bit k >= d combines with bit k - d; the d bits below keep
      // their (g, p). Written on whole vectors (shifts by a constant are
      // wiring): Verilator then simulates a level as a few word operations,
      // where a loop over the bits became FW single-bit statements per level.
      for (d = 1; d < FW; d = d * 2) begin
        gg = gg | (pp & (gg << d));
        pp = pp & ((pp << d) | ~({FW{1'b1}} << d));
      end
      ks_add = p ^ {gg[FW-2:0], cin};
    end
  endfunction

  // a + b + c + k[1] + k[0]: one 3:2 compressor, then ks_add.
  function automatic [FW-1:0] add3(input [FW-1:0] a, input [FW-1:0] b, input [FW-1:0] c,
                                   input [1:0] k);
    reg [FW-1:0] sm, cy;
    begin
      sm    = a ^ b ^ c;
      cy    = ((a & b) | (a & c) | (b & c)) << 1;
      cy[0] = k[1];
      add3  = ks_add(sm, cy, k[0]);
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Configuration check
  // ---------------------------------------------------------------------------
  reg cfg_err;
  integer ce;
  always @(*) begin
    cfg_err = 1'b0;
    for (ce = 0; ce < E; ce = ce + 1) begin
      if (cfg_quantum_i[ce*LW +: LW] == {LW{1'b0}} ||
          cfg_rate_den_i[ce*RW +: RW] == {RW{1'b0}} ||
          cfg_rate_num_i[ce*RW +: RW] > cfg_rate_den_i[ce*RW +: RW])
        cfg_err = 1'b1;
    end
  end
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg                ph_q,   ph_d;        // 0: phase A, 1: phase B
  reg [V*BW-1:0]     bal_q,  bal_d;
  reg [E*CW-1:0]     occ_q,  occ_d;
  reg [E*OW-1:0]     out_q,  out_d;
  reg [E*RW-1:0]     acc_q,  acc_d;
  reg [V-1:0]        bl_q,   bl_d;
  reg [E-1:0]        due_q,  due_d;       // phase A -> B: a credit is due
  reg [E*SAW-1:0]    as_q,   as_d;        // phase A -> B: arrival sum, carry-save
  reg [E*SAW-1:0]    ac_q,   ac_d;        //   (the sum is as_q + ac_q, < 2^SAW)
  reg [E*FW-1:0]     x_q,    x_d;         // phase A -> B: out + occ1 + Q
  reg [E*FW-1:0]     y_q,    y_d;         // phase A -> B: out + Q + 2^CW - 1
  reg [E*FW-1:0]     z_q,    z_d;         // phase A -> B: occ1 + Q - 2^CW
  reg [E*FW-1:0]     oq_q,   oq_d;        // phase A -> B: out + Q
  reg [2:0]          erra_q, erra_d;      // phase A -> B: err_o bits 0, 3, 4
  reg [E*CW-1:0]     occ1_q, occ1_d;      // phase A -> B: occupancy after the departure
  reg [E*RW-1:0]     accn_q, accn_d;      // phase A -> B: the accumulator's next value
  reg [V-1:0]        bln_q,  bln_d;       // phase A -> B: backlog bits after the announcements
  reg [V-1:0]        crd_q,  crd_d;       // phase A -> B: VOQ v got a credit this step
  reg [E*BW-1:0]     pend_q, pend_d;      // phase A -> B: the balance of egress e's credited VOQ

  integer rv;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q   <= 1'b0;
      for (rv = 0; rv < V; rv = rv + 1) bal_q[rv*BW +: BW] <= {BW{1'b0}};
      occ_q  <= {E*CW{1'b0}};
      out_q  <= {E*OW{1'b0}};
      acc_q  <= {E*RW{1'b0}};
      bl_q   <= {V{1'b0}};
      due_q  <= {E{1'b0}};
      as_q   <= {E*SAW{1'b0}};
      ac_q   <= {E*SAW{1'b0}};
      x_q    <= {E*FW{1'b0}};
      y_q    <= {E*FW{1'b0}};
      z_q    <= {E*FW{1'b0}};
      oq_q   <= {E*FW{1'b0}};
      erra_q <= 3'b000;
      occ1_q <= {E*CW{1'b0}};
      accn_q <= {E*RW{1'b0}};
      bln_q  <= {V{1'b0}};
      crd_q  <= {V{1'b0}};
      pend_q <= {E*BW{1'b0}};
    end else begin
      ph_q   <= ph_d;
      bal_q  <= bal_d;
      occ_q  <= occ_d;
      out_q  <= out_d;
      acc_q  <= acc_d;
      bl_q   <= bl_d;
      due_q  <= due_d;
      as_q   <= as_d;
      ac_q   <= ac_d;
      x_q    <= x_d;
      y_q    <= y_d;
      z_q    <= z_d;
      oq_q   <= oq_d;
      erra_q <= erra_d;
      occ1_q <= occ1_d;
      accn_q <= accn_d;
      bln_q  <= bln_d;
      crd_q  <= crd_d;
      pend_q <= pend_d;
    end
  end

  always @(*) ph_d = ~ph_q;

  assign bal_o  = bal_q;
  assign occ_o  = occ_q;
  assign out_o  = out_q;
  assign acc_o  = acc_q;
  assign bl_o   = bl_q;

  // ---------------------------------------------------------------------------
  // Round-robin pickers (prim_rr_arb; each holds its pointer). Requests come
  // from registers only; the pointers move at the end of phase B.
  // ---------------------------------------------------------------------------
  wire [V-1:0]       delig;               // ingress i, egress e at i*E+e
  wire [I-1:0]       dvalid;
  wire [I*EW-1:0]    didx;
  wire [V-1:0]       dgnt;

  wire [E-1:0]       grant;               // egress e issues a credit (phase B)
  wire [E-1:0]       pvalid, svalid;
  wire [E*IW-1:0]    pidx;
  wire [E*SW-1:0]    sidx;
  wire [E*S*IW-1:0]  midx;
  wire [E*S-1:0]     mvalid;
  wire [E*S-1:0]     sgnt;
  wire [E*I-1:0]     pgnt_unused;
  wire [E*S*I-1:0]   mgnt_unused;

  wire [E*SAW-1:0]   tree_s_all, tree_c_all;   // the arrival trees' two operands

  // Slice membership: memb[s*I + i] = ingress i belongs to slice s.
  wire [S*I-1:0] memb;

  genvar gi, ge, gs, gl, gk;
  generate
    for (gs = 0; gs < S; gs = gs + 1) begin : gen_memb
      for (gi = 0; gi < I; gi = gi + 1) begin : gen_memb_i
        assign memb[gs*I + gi] = cfg_slice_i[gi*SW +: SW] == gs[SW-1:0];
      end
    end

    for (gi = 0; gi < I; gi = gi + 1) begin : gen_deq
      for (ge = 0; ge < E; ge = ge + 1) begin : gen_deq_e
        assign delig[gi*E + ge] = (hol_len_i[(gi*E+ge)*LW +: LW] != {LW{1'b0}}) &&
                                  !bal_a[(gi*E+ge)*BW + BW-1] &&
                                  (bal_a[(gi*E+ge)*BW +: BW] != {BW{1'b0}});
      end
      prim_rr_arb #(.N(E)) u_deq (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .req_i   (delig[gi*E +: E]),
        .ack_i   (ph_q),
        .valid_o (dvalid[gi]),
        .idx_o   (didx[gi*EW +: EW]),
        .gnt_o   (dgnt[gi*E +: E]),
        .ptr_o   (dptr_o[gi*EW +: EW])
      );
    end

    for (ge = 0; ge < E; ge = ge + 1) begin : gen_egr
      wire [I-1:0] blcol;
      wire [S-1:0] selig;

      // Arrival sum: a tree of 3:2 compressors over the I fabric channels,
      // kept in carry-save form (two operands). Level gl takes csa_n(gl)
      // operands (src) to csa_n(gl + 1) (dst): full adders over triples,
      // the remaining one or two passed on. All operands are non-negative
      // and sum to less than 2^SAW, so no carry leaves the top bit.
      wire [I*SAW-1:0] leaf;
      for (gi = 0; gi < I; gi = gi + 1) begin : gen_leaf
        assign leaf[gi*SAW +: SAW] = {{(SAW-LW){1'b0}}, earr_bytes_i[gi*LW +: LW]} &
                                     {SAW{earr_valid_i[gi] && earr_egr_i[gi*EW +: EW] == ge[EW-1:0]}};
      end
      for (gl = 0; gl < NLEV; gl = gl + 1) begin : gen_lvl
        localparam integer NF = csa_n(gl) / 3;   // full adders
        localparam integer NR = csa_n(gl) % 3;   // operands passed on
        wire [I*SAW-1:0] src, dst;
        if (gl == 0) begin : gen_src_leaf
          assign src = leaf;
        end else begin : gen_src_lvl
          assign src = gen_lvl[gl-1].dst;
        end
        for (gk = 0; gk < I; gk = gk + 1) begin : gen_k
          if (gk < NF) begin : gen_fa
            wire [SAW-1:0] a = src[(3*gk)*SAW +: SAW];
            wire [SAW-1:0] b = src[(3*gk+1)*SAW +: SAW];
            wire [SAW-1:0] c = src[(3*gk+2)*SAW +: SAW];
            wire [SAW-1:0] m = (a & b) | (a & c) | (b & c);
            wire           unused_m = m[SAW-1];   // never set (above)
            assign dst[(2*gk)*SAW +: SAW]   = a ^ b ^ c;
            assign dst[(2*gk+1)*SAW +: SAW] = {m[SAW-2:0], 1'b0};
          end else if (gk < NF + NR) begin : gen_pass
            assign dst[(NF+gk)*SAW +: SAW] = src[(2*NF+gk)*SAW +: SAW];
          end
          if (gk >= 2*NF + NR) begin : gen_zero
            assign dst[gk*SAW +: SAW] = {SAW{1'b0}};
          end
        end
        wire unused_src = ^src;   // operands above csa_n(gl) are zero
      end
      wire [I*SAW-1:0] root;
      if (NLEV == 0) begin : gen_root_leaf
        assign root = leaf;
      end else begin : gen_root_lvl
        assign root = gen_lvl[NLEV-1].dst;
      end
      wire unused_root = ^root;  // operands above the first two are zero
      assign tree_s_all[ge*SAW +: SAW] = root[0 +: SAW];
      assign tree_c_all[ge*SAW +: SAW] = root[SAW +: SAW];
      for (gi = 0; gi < I; gi = gi + 1) begin : gen_col
        assign blcol[gi] = bln_q[gi*E + ge];
      end
      for (gs = 0; gs < S; gs = gs + 1) begin : gen_selig
        assign selig[gs] = |(blcol & memb[gs*I +: I]);
      end

      prim_rr_arb #(.N(I)) u_port (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .req_i   (blcol),
        .ack_i   (grant[ge] && !cfg_slice_mode_i[ge]),
        .valid_o (pvalid[ge]),
        .idx_o   (pidx[ge*IW +: IW]),
        .gnt_o   (pgnt_unused[ge*I +: I]),
        .ptr_o   (pptr_o[ge*IW +: IW])
      );

      prim_rr_arb #(.N(S)) u_slice (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .req_i   (selig),
        .ack_i   (grant[ge] && cfg_slice_mode_i[ge]),
        .valid_o (svalid[ge]),
        .idx_o   (sidx[ge*SW +: SW]),
        .gnt_o   (sgnt[ge*S +: S]),
        .ptr_o   (sptr_o[ge*SW +: SW])
      );

      // Every slice's member pick in parallel; the slice pick chooses one.
      for (gs = 0; gs < S; gs = gs + 1) begin : gen_member
        prim_rr_arb #(.N(I)) u_member (
          .clk_i   (clk_i),
          .rst_ni  (rst_ni),
          .req_i   (blcol & memb[gs*I +: I]),
          .ack_i   (grant[ge] && cfg_slice_mode_i[ge] && sgnt[ge*S + gs]),
          .valid_o (mvalid[ge*S + gs]),
          .idx_o   (midx[(ge*S+gs)*IW +: IW]),
          .gnt_o   (mgnt_unused[(ge*S+gs)*I +: I]),
          .ptr_o   (mptr_o[(ge*S+gs)*IW +: IW])
        );
      end
    end
  endgenerate

  // ---------------------------------------------------------------------------
  // Ingress half. A: the credit arrivals (at most one per egress port, so
  // one adder per egress port) into pend_q / crd_q. B: one dequeue per
  // ingress port from the balances after the credits (bal_a); bal_q takes
  // the result at the end of B.
  // ---------------------------------------------------------------------------
  reg signed [FW-1:0]   ib, isum;
  reg [BW-1:0]          bsel;
  reg                   err_bal_sat, err_idx_in;
  integer               ii, ie;

  always @(*) begin
    // Loop variables get a value on every path (else Yosys infers latches).
    ii          = 0;
    ie          = 0;
    pend_d      = pend_q;
    crd_d       = crd_q;
    err_bal_sat = 1'b0;
    err_idx_in  = 1'b0;
    bsel        = {BW{1'b0}};
    ib          = {FW{1'b0}};
    isum        = {FW{1'b0}};
    if (!ph_q) begin
      crd_d = {V{1'b0}};
      for (ie = 0; ie < E; ie = ie + 1) begin
        // A1. Credit arrival at VOQ (cin_ing_i[e], e), saturating at BMAX.
        if (cin_valid_i[ie] && !I_OK[cin_ing_i[ie*IW +: IW]]) err_idx_in = 1'b1;
        bsel = {BW{1'b0}};
        for (ii = 0; ii < I; ii = ii + 1) begin
          if (cin_ing_i[ie*IW +: IW] == ii[IW-1:0]) begin
            bsel = bal_q[(ii*E+ie)*BW +: BW];
            crd_d[ii*E + ie] = cin_valid_i[ie];
          end
        end
        isum = ks_add({{(FW-BW){bsel[BW-1]}}, bsel}, {{(FW-LW){1'b0}}, cin_bytes_i[ie*LW +: LW]}, 1'b0);
        if (isum > F_BMAX) begin
          ib = F_BMAX;
          if (cin_valid_i[ie] && I_OK[cin_ing_i[ie*IW +: IW]]) err_bal_sat = 1'b1;
        end else begin
          ib = isum;
        end
        pend_d[ie*BW +: BW] = ib[BW-1:0];
      end
    end
  end

  // bal_a: the balances after the credits (phase B), and their eligibility.
  wire [V*BW-1:0] bal_a;
  generate
    for (gi = 0; gi < I; gi = gi + 1) begin : gen_bal_a
      for (ge = 0; ge < E; ge = ge + 1) begin : gen_bal_a_e
        assign bal_a[(gi*E+ge)*BW +: BW] = crd_q[gi*E + ge] ? pend_q[ge*BW +: BW]
                                                             : bal_q[(gi*E+ge)*BW +: BW];
      end
    end
  endgenerate

  reg signed [FW-1:0] ba;
  integer             ji, je;   // this block's own loop variables
  always @(*) begin
    ji          = 0;
    je          = 0;
    bal_d       = bal_q;
    deq_valid_o = {I{1'b0}};
    deq_egr_o   = {I*EW{1'b0}};
    deq_bytes_o = {I*LW{1'b0}};
    ba          = {FW{1'b0}};
    if (ph_q) begin
      for (ji = 0; ji < I; ji = ji + 1) begin
        for (je = 0; je < E; je = je + 1) begin
          // B2. Dequeue: the packet's bytes leave the balance (may overdraw).
          ba = {{(FW-BW){bal_a[(ji*E+je)*BW + BW-1]}}, bal_a[(ji*E+je)*BW +: BW]};
          if (dgnt[ji*E + je]) begin
            ba = ks_add(ba, ~{{(FW-LW){1'b0}}, hol_len_i[(ji*E+je)*LW +: LW]}, 1'b1);
            deq_bytes_o[ji*LW +: LW] = deq_bytes_o[ji*LW +: LW] | hol_len_i[(ji*E+je)*LW +: LW];
          end
          bal_d[(ji*E+je)*BW +: BW] = ba[BW-1:0];
        end
        if (dvalid[ji]) begin
          deq_valid_o[ji]        = 1'b1;
          deq_egr_o[ji*EW +: EW] = didx[ji*EW +: EW];
        end
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Egress half. A: departure, partial arrival sums, announcements,
  // accumulator, the candidates of out + occ + Q. B: arrivals, grant, issue.
  // ---------------------------------------------------------------------------
  reg signed [FW-1:0] occ0, occ1, occ2, out0, out2, outq, dep, sumo, sumu, bufw, qw;
  reg signed [FW-1:0] asx, acx, ny, nz;
  reg [FW-1:0]        accs, accm;
  reg                 sato, satu, room;
  reg [5:0]           err_eg;
  reg [E-1:0]         grant_r;
  reg [IW-1:0]        win;
  integer             ee, ei, es;

  localparam signed [FW-1:0] F_ZERO   = {FW{1'b0}};
  localparam signed [FW-1:0] F_ONES   = {FW{1'b1}};
  localparam signed [FW-1:0] F_OCCMAX = {{(FW-CW){1'b0}}, {CW{1'b1}}};       //  2^CW - 1
  localparam signed [FW-1:0] F_OUTMIN = {{(FW-CW){1'b1}}, {CW{1'b0}}};       // -2^CW

  assign grant = grant_r;

  always @(*) begin
    es          = 0;
    occ_d       = occ_q;
    out_d       = out_q;
    acc_d       = acc_q;
    bl_d        = bl_q;
    due_d       = due_q;
    as_d        = as_q;
    ac_d        = ac_q;
    x_d         = x_q;
    y_d         = y_q;
    z_d         = z_q;
    oq_d        = oq_q;
    grant_r     = {E{1'b0}};
    crd_valid_o = {E{1'b0}};
    crd_ing_o   = {E*IW{1'b0}};
    crd_bytes_o = {E*LW{1'b0}};
    err_eg      = 6'd0;
    occ0 = F_ZERO; occ1 = F_ZERO; occ2 = F_ZERO; out0 = F_ZERO; out2 = F_ZERO;
    outq = F_ZERO; dep = F_ZERO; sumo = F_ZERO; sumu = F_ZERO; bufw = F_ZERO;
    qw = F_ZERO; asx = F_ZERO; acx = F_ZERO; ny = F_ZERO; nz = F_ZERO;
    accs = {FW{1'b0}}; accm = {FW{1'b0}};
    sato = 1'b0; satu = 1'b0; room = 1'b0;
    win  = {IW{1'b0}};

    for (ei = 0; ei < I; ei = ei + 1) begin
      if (earr_valid_i[ei] && !E_OK[earr_egr_i[ei*EW +: EW]]) err_eg[4] = 1'b1;
    end

    occ1_d      = occ1_q;
    accn_d      = accn_q;
    bln_d       = bln_q;
    if (!ph_q) begin
      // A3. Announcements (backlogged wins).
      bln_d = (bl_q & ~ann_mt_i) | ann_bl_i;
    end else begin
      bl_d  = bln_q;
      acc_d = accn_q;
    end

    for (ee = 0; ee < E; ee = ee + 1) begin
      occ0 = {{(FW-CW){1'b0}}, occ_q[ee*CW +: CW]};
      out0 = {{(FW-OW){out_q[ee*OW + OW-1]}}, out_q[ee*OW +: OW]};
      qw   = {{(FW-LW){1'b0}}, cfg_quantum_i[ee*LW +: LW]};
      bufw = {{(FW-CW){1'b0}}, cfg_buf_i[ee*CW +: CW]};
      if (!ph_q) begin
        // A1. Departure, clamping at 0.
        dep = {{(FW-LW){1'b0}}, edep_bytes_i[ee*LW +: LW]};
        if (dep > occ0) begin
          occ1      = F_ZERO;
          err_eg[0] = 1'b1;
        end else begin
          occ1 = ks_add(occ0, ~dep, 1'b1);
        end
        occ1_d[ee*CW +: CW] = occ1[CW-1:0];
        // A2. Arrivals: the compressor tree's two operands (gen_egr).
        as_d[ee*SAW +: SAW] = tree_s_all[ee*SAW +: SAW];
        ac_d[ee*SAW +: SAW] = tree_c_all[ee*SAW +: SAW];
        // A4. Accumulator: exact, free running.
        accs = ks_add({{(FW-RW){1'b0}}, acc_q[ee*RW +: RW]},
                      {{(FW-RW){1'b0}}, cfg_rate_num_i[ee*RW +: RW]}, 1'b0);
        accm = add3({{(FW-RW){1'b0}}, acc_q[ee*RW +: RW]},
                    {{(FW-RW){1'b0}}, cfg_rate_num_i[ee*RW +: RW]},
                    ~{{(FW-RW){1'b0}}, cfg_rate_den_i[ee*RW +: RW]}, 2'b01);
        if (cfg_err) begin
          due_d[ee]           = 1'b0;
          accn_d[ee*RW +: RW] = {RW{1'b0}};
        end else if (accs >= {{(FW-RW){1'b0}}, cfg_rate_den_i[ee*RW +: RW]}) begin
          due_d[ee]           = 1'b1;
          accn_d[ee*RW +: RW] = accm[RW-1:0];
        end else begin
          due_d[ee]           = 1'b0;
          accn_d[ee*RW +: RW] = accs[RW-1:0];
        end
        // The candidates of out2 + occ2 + Q (header).
        x_d[ee*FW +: FW] = add3(out0, occ1, qw, 2'b00);
        y_d[ee*FW +: FW] = add3(out0, qw, F_OCCMAX, 2'b00);
        z_d[ee*FW +: FW] = add3(occ1, qw, F_OUTMIN, 2'b00);
        oq_d[ee*FW +: FW] = ks_add(out0, qw, 1'b0);
      end else begin
        // B2. Arrivals: from outstanding into the buffer, saturating. The
        // arrival sum is asx + acx; a subtraction adds both complements + 2.
        occ0 = {{(FW-CW){1'b0}}, occ1_q[ee*CW +: CW]};
        asx  = {{(FW-SAW){1'b0}}, as_q[ee*SAW +: SAW]};
        acx  = {{(FW-SAW){1'b0}}, ac_q[ee*SAW +: SAW]};
        sumo = add3(occ0, asx, acx, 2'b00);
        sumu = add3(out0, ~asx, ~acx, 2'b11);
        ny   = add3(y_q[ee*FW +: FW], ~asx, ~acx, 2'b11);
        nz   = add3(z_q[ee*FW +: FW], asx, acx, 2'b00);
        sato = sumo > F_OCCMAX;
        satu = sumu < F_OUTMIN;
        occ2 = sato ? F_OCCMAX : sumo;
        out2 = satu ? F_OUTMIN : sumu;
        // out2 + Q, from out + Q (phase A) or -2^CW + Q.
        outq = satu ? ks_add(F_OUTMIN, qw, 1'b0) : add3(oq_q[ee*FW +: FW], ~asx, ~acx, 2'b11);
        if (sato) err_eg[1] = 1'b1;
        if (satu) err_eg[2] = 1'b1;
        if (occ2 > bufw) err_eg[5] = 1'b1;
        // B5. Grant: due, a backlogged VOQ, and the credit fits the buffer:
        // each candidate compared with B, then the one that applies.
        case ({sato, satu})
          2'b00:   room = $signed(x_q[ee*FW +: FW]) <= bufw;
          2'b10:   room = ny <= bufw;
          2'b01:   room = nz <= bufw;
          default: room = $signed(ks_add(qw, F_ONES, 1'b0)) <= bufw;
        endcase
        grant_r[ee] = due_q[ee] && pvalid[ee] && room;
        // B6. Issue.
        if (grant_r[ee]) begin
          out2 = outq;
          win  = pidx[ee*IW +: IW];
          if (cfg_slice_mode_i[ee]) begin
            for (es = 0; es < S; es = es + 1) begin
              if (sgnt[ee*S + es]) win = midx[(ee*S+es)*IW +: IW];
            end
          end
          crd_valid_o[ee]          = 1'b1;
          crd_ing_o[ee*IW +: IW]   = win;
          crd_bytes_o[ee*LW +: LW] = cfg_quantum_i[ee*LW +: LW];
        end
        occ_d[ee*CW +: CW] = occ2[CW-1:0];
        out_d[ee*OW +: OW] = out2[OW-1:0];
      end
    end
  end

  always @(*) begin
    erra_d = erra_q;
    if (!ph_q) erra_d = {err_idx_in | err_eg[4], err_bal_sat, err_eg[0]};
  end

  assign err_o = ph_q ? {err_eg[5], erra_q[2], erra_q[1], err_eg[2:1], erra_q[0]} : 6'd0;

  // A grant implies a backlogged VOQ, so the slice and member picks find one
  // (their found bits are not needed); the member picks are chosen by the
  // slice grant, not its index; the port and member picks by index, not
  // grant. err_eg[3] is the ingress half's (err_bal_sat).
  wire unused_ok = ^{svalid, sidx, mvalid, pgnt_unused, mgnt_unused, err_eg[3], accm, out2, ib, ba};

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), for simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  reg [V-1:0] bal_low;
  integer     ab;
  always @(*) begin
    for (ab = 0; ab < V; ab = ab + 1) begin
      bal_low[ab] = $signed({{(BXW-BW){bal_q[ab*BW + BW-1]}}, bal_q[ab*BW +: BW]}) < B_MIN;
    end
  end

  integer ai;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (bal_low != {V{1'b0}}) $error("BalanceAboveMin_A: balances below 1 - Lmax: %b", bal_low);
      for (ai = 0; ai < E; ai = ai + 1) begin
        if (!cfg_err && acc_q[ai*RW +: RW] >= cfg_rate_den_i[ai*RW +: RW])
          $error("AccBelowDen_A: egress %0d", ai);
        if (!I_OK[pptr_o[ai*IW +: IW]]) $error("PortPointerInRange_A: egress %0d", ai);
        if (ph_q && grant[ai] && cfg_slice_mode_i[ai] && !svalid[ai])
          $error("SliceGrantHasSlice_A: egress %0d", ai);
      end
      for (ai = 0; ai < I; ai = ai + 1) begin
        if (!E_OK[dptr_o[ai*EW +: EW]]) $error("DequeuePointerInRange_A: ingress %0d", ai);
      end
      for (ai = 0; ai < E * S; ai = ai + 1) begin
        if (!I_OK[mptr_o[ai*IW +: IW]]) $error("MemberPointerInRange_A: %0d", ai);
      end
    end
  end
`endif

endmodule

`default_nettype wire
