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
//               (bln_q); accumulator (accn_q, due_q); the parts of the room
//               test that do not need the arrivals (rx_q, rd_q, yb_q, zb_q,
//               below) and out + Q (oq_q)
//   B  ingress: balances after the credits (bal_a), eligibility, round robin
//               per ingress port (prim_rr_arb, pointer = dptr), the winner's
//               balance minus the length (may overdraw)
//      egress:  occ2, out2 from the arrival sum (saturating); grant iff
//               due_q, a backlogged VOQ (bln_q) and out2 + occ2 + Q <= B;
//               receiver by prim_rr_arb over ports, or over slices and, in
//               parallel, over each slice's members; out2 + Q on a grant
// The room test out2 + occ2 + Q <= B is one of four, by which counter
// saturated (A = the arrival sum):
//   neither:  B - (out + occ1 + Q) >= 0, all in A (rx_q)
//   occ only: B - (out + Q + 2^CW - 1) + A >= 0 (yb_q + A)
//   out only: B - (occ1 + Q - 2^CW) - A >= 0 (zb_q - A)
//   both:     B - (Q - 1) >= 0, all in A (rd_q)
// so phase B has one sum after the arrival tree. Every sum is a prim_add3
// (3:2 compressors and a Kogge-Stone adder whose levels synthesis keeps),
// formed side by side for both cases where an operand is one of two (the
// departure clamped or not); a compare is the sign of a difference.
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

  // A 3:2 compressor, as bcn_cp's: {cy, sm} with sm + cy == a + b + c + 1,
  // the 1 in the carry vector's free bit 0 (the top bit's carry is beyond
  // 2^FW, so only the bits below it form carries).
  function automatic [2*FW-1:0] csa(input [FW-1:0] a, input [FW-1:0] b, input [FW-1:0] c);
    csa = {(a[FW-2:0] & b[FW-2:0]) | (a[FW-2:0] & c[FW-2:0]) | (b[FW-2:0] & c[FW-2:0]), 1'b1, a ^ b ^ c};
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
  reg [E-1:0]        rx_q,   rx_d;        // phase A -> B: out + occ1 + Q <= B
  reg [E-1:0]        rd_q,   rd_d;        // phase A -> B: Q - 1 <= B
  reg [E*FW-1:0]     yb_q,   yb_d;        // phase A -> B: B - (out + Q + 2^CW - 1)
  reg [E*FW-1:0]     zb_q,   zb_d;        // phase A -> B: B - (occ1 + Q - 2^CW)
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
      rx_q   <= {E{1'b0}};
      rd_q   <= {E{1'b0}};
      yb_q   <= {E*FW{1'b0}};
      zb_q   <= {E*FW{1'b0}};
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
      rx_q   <= rx_d;
      rd_q   <= rd_d;
      yb_q   <= yb_d;
      zb_q   <= zb_d;
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

  // Every sum of a step, per egress port (gen_egr): FW bits, never wrapping,
  // so that a compare is the sign of a difference.
  localparam signed [FW-1:0] F_ZERO   = {FW{1'b0}};
  localparam signed [FW-1:0] F_OCCMAX = {{(FW-CW){1'b0}}, {CW{1'b1}}};       //  2^CW - 1
  localparam signed [FW-1:0] F_OUTMIN = {{(FW-CW){1'b1}}, {CW{1'b0}}};       // -2^CW
  wire [E*FW-1:0]    pend_all;            // A: balance + credit
  wire [E-1:0]       bover_all;           // A: ... above BMAX
  wire [E*FW-1:0]    occ1c_all;           // A: occ - departure (clamp: negative)
  wire [E-1:0]       rxa_all, rxb_all;    // A: out + occ1 + Q <= B, unclamped / clamped
  wire [E-1:0]       rd_all;              // A: Q - 1 <= B
  wire [E*FW-1:0]    yb_all, zba_all, zbb_all, oq_all;
  wire [E*FW-1:0]    accs_all, accm_all;  // A: acc + num, acc + num - den
  wire [E*FW-1:0]    sumo_all, sumu_all;  // B: occ1 + A, out - A
  wire [E-1:0]       roomy_all, roomz_all, occbuf_all;
  wire [E*FW-1:0]    outqa_all, outqb_all;

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

      // The step's sums for this port, side by side, each a prim_add3 (3:2
      // compressors and a Kogge-Stone adder whose levels ABC keeps); where
      // an operand is one of two values (the departure clamped or not),
      // both sums are formed and the case selects. A subtraction adds the
      // complement and a 1 (in k, or in a compressor's free carry bit 0).
      wire [FW-1:0] v_occ = {{(FW-CW){1'b0}}, occ_q[ge*CW +: CW]};
      wire [FW-1:0] v_out = {{(FW-OW){out_q[ge*OW + OW-1]}}, out_q[ge*OW +: OW]};
      wire [FW-1:0] v_q   = {{(FW-LW){1'b0}}, cfg_quantum_i[ge*LW +: LW]};
      wire [FW-1:0] v_dep = {{(FW-LW){1'b0}}, edep_bytes_i[ge*LW +: LW]};
      wire [FW-1:0] v_buf = {{(FW-CW){1'b0}}, cfg_buf_i[ge*CW +: CW]};
      wire [FW-1:0] v_acc = {{(FW-RW){1'b0}}, acc_q[ge*RW +: RW]};
      wire [FW-1:0] v_num = {{(FW-RW){1'b0}}, cfg_rate_num_i[ge*RW +: RW]};
      wire [FW-1:0] v_den = {{(FW-RW){1'b0}}, cfg_rate_den_i[ge*RW +: RW]};
      wire [FW-1:0] v_o1  = {{(FW-CW){1'b0}}, occ1_q[ge*CW +: CW]};
      wire [FW-1:0] v_as  = {{(FW-SAW){1'b0}}, as_q[ge*SAW +: SAW]};
      wire [FW-1:0] v_ac  = {{(FW-SAW){1'b0}}, ac_q[ge*SAW +: SAW]};
      wire [FW-1:0] v_byt = {{(FW-LW){1'b0}}, cin_bytes_i[ge*LW +: LW]};

      // The credited VOQ's balance: an AND-OR select (cin_ing_i names one).
      reg  [BW-1:0] bsel;
      integer       bi;
      always @(*) begin
        bsel = {BW{1'b0}};
        for (bi = 0; bi < I; bi = bi + 1)
          bsel = bsel | (bal_q[(bi*E+ge)*BW +: BW] & {BW{cin_ing_i[ge*IW +: IW] == bi[IW-1:0]}});
      end
      wire [FW-1:0] v_bal = {{(FW-BW){bsel[BW-1]}}, bsel};

      // Compressors ahead of a prim_add3 for four or five operands ({carry,
      // sum}, csa): each adds a 1 in its carry vector's free bit 0.
      wire [2*FW-1:0] ca1 = csa(v_buf, ~v_out, ~v_occ);    // B - out - occ + dep - Q
      wire [2*FW-1:0] ca2 = csa(ca1[FW-1:0], ca1[2*FW-1:FW], v_dep);
      wire [2*FW-1:0] cz1 = csa(v_buf, ~v_occ, v_dep);     // B - occ + dep - Q + 2^CW
      wire [2*FW-1:0] cz2 = csa(cz1[FW-1:0], cz1[2*FW-1:FW], ~v_q);
      wire [2*FW-1:0] cy1 = csa(v_buf, ~v_out, ~v_q);      // B - out - Q - (2^CW - 1)
      wire [2*FW-1:0] ce1 = csa(v_buf, ~v_o1, ~v_as);      // B - occ1 - A

      // The sums, each under the line that says what it is.
      wire [FW-1:0] s_occ1, s_rxa, s_rxb, s_rd, s_yb, s_zba, s_zbb, s_oq;
      wire [FW-1:0] s_accs, s_accm, s_pend, s_bov;
      wire [FW-1:0] s_sumo, s_sumu, s_ry, s_rz, s_ob, s_oqa, s_oqb;
      // A: occ - dep
      prim_add3 #(.W(FW)) u_occ1 (.a_i(v_occ), .b_i(~v_dep), .c_i(F_ZERO), .k_i(2'b01), .sum_o(s_occ1));
      // A: B - (out + occ - dep + Q)
      prim_add3 #(.W(FW)) u_rxa  (.a_i(ca2[FW-1:0]), .b_i(ca2[2*FW-1:FW]), .c_i(~v_q), .k_i(2'b01), .sum_o(s_rxa));
      // A: B - (out + Q), the departure clamped
      prim_add3 #(.W(FW)) u_rxb  (.a_i(v_buf), .b_i(~v_out), .c_i(~v_q), .k_i(2'b11), .sum_o(s_rxb));
      // A: B - (Q - 1)
      prim_add3 #(.W(FW)) u_rd   (.a_i(v_buf), .b_i(~v_q), .c_i(F_ZERO), .k_i(2'b11), .sum_o(s_rd));
      // A: B - (out + Q + 2^CW - 1)
      prim_add3 #(.W(FW)) u_yb   (.a_i(cy1[FW-1:0]), .b_i(cy1[2*FW-1:FW]), .c_i(~F_OCCMAX), .k_i(2'b11), .sum_o(s_yb));
      // A: B - (occ - dep + Q - 2^CW)
      prim_add3 #(.W(FW)) u_zba  (.a_i(cz2[FW-1:0]), .b_i(cz2[2*FW-1:FW]), .c_i(~F_OUTMIN), .k_i(2'b01), .sum_o(s_zba));
      // A: B - (Q - 2^CW), the departure clamped
      prim_add3 #(.W(FW)) u_zbb  (.a_i(v_buf), .b_i(~v_q), .c_i(~F_OUTMIN), .k_i(2'b11), .sum_o(s_zbb));
      // A: out + Q
      prim_add3 #(.W(FW)) u_oq   (.a_i(v_out), .b_i(v_q), .c_i(F_ZERO), .k_i(2'b00), .sum_o(s_oq));
      // A: acc + num, acc + num - den
      prim_add3 #(.W(FW)) u_accs (.a_i(v_acc), .b_i(v_num), .c_i(F_ZERO), .k_i(2'b00), .sum_o(s_accs));
      prim_add3 #(.W(FW)) u_accm (.a_i(v_acc), .b_i(v_num), .c_i(~v_den), .k_i(2'b01), .sum_o(s_accm));
      // A: balance + credit, BMAX - (balance + credit)
      prim_add3 #(.W(FW)) u_pend (.a_i(v_bal), .b_i(v_byt), .c_i(F_ZERO), .k_i(2'b00), .sum_o(s_pend));
      prim_add3 #(.W(FW)) u_bov  (.a_i(F_BMAX), .b_i(~v_bal), .c_i(~v_byt), .k_i(2'b11), .sum_o(s_bov));
      // B: occ1 + A, out - A
      prim_add3 #(.W(FW)) u_sumo (.a_i(v_o1), .b_i(v_as), .c_i(v_ac), .k_i(2'b00), .sum_o(s_sumo));
      prim_add3 #(.W(FW)) u_sumu (.a_i(v_out), .b_i(~v_as), .c_i(~v_ac), .k_i(2'b11), .sum_o(s_sumu));
      // B: B - (out - A + Q + 2^CW - 1), B - (occ1 + A + Q - 2^CW)
      prim_add3 #(.W(FW)) u_ry   (.a_i(yb_q[ge*FW +: FW]), .b_i(v_as), .c_i(v_ac), .k_i(2'b00), .sum_o(s_ry));
      prim_add3 #(.W(FW)) u_rz   (.a_i(zb_q[ge*FW +: FW]), .b_i(~v_as), .c_i(~v_ac), .k_i(2'b11), .sum_o(s_rz));
      // B: B - (occ1 + A)
      prim_add3 #(.W(FW)) u_ob   (.a_i(ce1[FW-1:0]), .b_i(ce1[2*FW-1:FW]), .c_i(~v_ac), .k_i(2'b11), .sum_o(s_ob));
      // B: out - A + Q, -2^CW + Q
      prim_add3 #(.W(FW)) u_oqa  (.a_i(oq_q[ge*FW +: FW]), .b_i(~v_as), .c_i(~v_ac), .k_i(2'b11), .sum_o(s_oqa));
      prim_add3 #(.W(FW)) u_oqb  (.a_i(F_OUTMIN), .b_i(v_q), .c_i(F_ZERO), .k_i(2'b00), .sum_o(s_oqb));

      assign occ1c_all[ge*FW +: FW] = s_occ1;
      assign rxa_all[ge]            = !s_rxa[FW-1];
      assign rxb_all[ge]            = !s_rxb[FW-1];
      assign rd_all[ge]             = !s_rd[FW-1];
      assign yb_all[ge*FW +: FW]    = s_yb;
      assign zba_all[ge*FW +: FW]   = s_zba;
      assign zbb_all[ge*FW +: FW]   = s_zbb;
      assign oq_all[ge*FW +: FW]    = s_oq;
      assign accs_all[ge*FW +: FW]  = s_accs;
      assign accm_all[ge*FW +: FW]  = s_accm;
      assign pend_all[ge*FW +: FW]  = s_pend;
      assign bover_all[ge]          = s_bov[FW-1];
      assign sumo_all[ge*FW +: FW]  = s_sumo;
      assign sumu_all[ge*FW +: FW]  = s_sumu;
      assign roomy_all[ge]          = !s_ry[FW-1];
      assign roomz_all[ge]          = !s_rz[FW-1];
      assign occbuf_all[ge]         = s_ob[FW-1];
      assign outqa_all[ge*FW +: FW] = s_oqa;
      assign outqb_all[ge*FW +: FW] = s_oqb;
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
    if (!ph_q) begin
      crd_d = {V{1'b0}};
      for (ie = 0; ie < E; ie = ie + 1) begin
        // A1. Credit arrival at VOQ (cin_ing_i[e], e), saturating at BMAX
        // (the balance and the sum: gen_egr).
        if (cin_valid_i[ie] && !I_OK[cin_ing_i[ie*IW +: IW]]) err_idx_in = 1'b1;
        for (ii = 0; ii < I; ii = ii + 1) begin
          if (cin_ing_i[ie*IW +: IW] == ii[IW-1:0]) crd_d[ii*E + ie] = cin_valid_i[ie];
        end
        if (bover_all[ie]) begin
          pend_d[ie*BW +: BW] = F_BMAX[BW-1:0];
          if (cin_valid_i[ie] && I_OK[cin_ing_i[ie*IW +: IW]]) err_bal_sat = 1'b1;
        end else begin
          pend_d[ie*BW +: BW] = pend_all[ie*FW +: BW];
        end
      end
    end
  end

  // bal_a: the balances after the credits (phase B), and their eligibility.
  wire [V*BW-1:0] bal_a, bal_s;
  generate
    for (gi = 0; gi < I; gi = gi + 1) begin : gen_bal_a
      for (ge = 0; ge < E; ge = ge + 1) begin : gen_bal_a_e
        assign bal_a[(gi*E+ge)*BW +: BW] = crd_q[gi*E + ge] ? pend_q[ge*BW +: BW]
                                                             : bal_q[(gi*E+ge)*BW +: BW];
        // B2's dequeue: the balance minus the head packet's length.
        prim_add3 #(.W(BW)) u_deq_sub (
          .a_i   (bal_a[(gi*E+ge)*BW +: BW]),
          .b_i   (~{{(BW-LW){1'b0}}, hol_len_i[(gi*E+ge)*LW +: LW]}),
          .c_i   ({BW{1'b0}}),
          .k_i   (2'b01),
          .sum_o (bal_s[(gi*E+ge)*BW +: BW])
        );
      end
    end
  endgenerate

  integer             ji, je;   // this block's own loop variables
  always @(*) begin
    ji          = 0;
    je          = 0;
    bal_d       = bal_q;
    deq_valid_o = {I{1'b0}};
    deq_egr_o   = {I*EW{1'b0}};
    deq_bytes_o = {I*LW{1'b0}};
    if (ph_q) begin
      for (ji = 0; ji < I; ji = ji + 1) begin
        for (je = 0; je < E; je = je + 1) begin
          // B2. Dequeue: the packet's bytes leave the balance (may overdraw).
          bal_d[(ji*E+je)*BW +: BW] = bal_a[(ji*E+je)*BW +: BW];
          if (dgnt[ji*E + je]) begin
            bal_d[(ji*E+je)*BW +: BW] = bal_s[(ji*E+je)*BW +: BW];
            deq_bytes_o[ji*LW +: LW] = deq_bytes_o[ji*LW +: LW] | hol_len_i[(ji*E+je)*LW +: LW];
          end
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
  reg [CW-1:0]        occ2;
  reg [OW-1:0]        out2;
  reg                 clamp, sato, satu, room;
  reg [5:0]           err_eg;
  reg [E-1:0]         grant_r;
  reg [IW-1:0]        win;
  integer             ee, ei, es;

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
    rx_d        = rx_q;
    rd_d        = rd_q;
    yb_d        = yb_q;
    zb_d        = zb_q;
    oq_d        = oq_q;
    grant_r     = {E{1'b0}};
    crd_valid_o = {E{1'b0}};
    crd_ing_o   = {E*IW{1'b0}};
    crd_bytes_o = {E*LW{1'b0}};
    err_eg      = 6'd0;
    occ2 = {CW{1'b0}}; out2 = {OW{1'b0}};
    clamp = 1'b0; sato = 1'b0; satu = 1'b0; room = 1'b0;
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

    // The sums are formed in gen_egr; here the cases select.
    for (ee = 0; ee < E; ee = ee + 1) begin
      if (!ph_q) begin
        // A1. Departure, clamping at 0 (occ - dep negative).
        clamp = occ1c_all[ee*FW + FW-1];
        if (clamp) err_eg[0] = 1'b1;
        occ1_d[ee*CW +: CW] = clamp ? {CW{1'b0}} : occ1c_all[ee*FW +: CW];
        // A2. Arrivals: the compressor tree's two operands (gen_egr).
        as_d[ee*SAW +: SAW] = tree_s_all[ee*SAW +: SAW];
        ac_d[ee*SAW +: SAW] = tree_c_all[ee*SAW +: SAW];
        // A4. Accumulator: exact, free running; due when acc + num >= den.
        if (cfg_err) begin
          due_d[ee]           = 1'b0;
          accn_d[ee*RW +: RW] = {RW{1'b0}};
        end else if (!accm_all[ee*FW + FW-1]) begin
          due_d[ee]           = 1'b1;
          accn_d[ee*RW +: RW] = accm_all[ee*FW +: RW];
        end else begin
          due_d[ee]           = 1'b0;
          accn_d[ee*RW +: RW] = accs_all[ee*FW +: RW];
        end
        // The room checks' parts that do not need the arrivals.
        rx_d[ee]          = clamp ? rxb_all[ee] : rxa_all[ee];
        rd_d[ee]          = rd_all[ee];
        yb_d[ee*FW +: FW] = yb_all[ee*FW +: FW];
        zb_d[ee*FW +: FW] = clamp ? zbb_all[ee*FW +: FW] : zba_all[ee*FW +: FW];
        oq_d[ee*FW +: FW] = oq_all[ee*FW +: FW];
      end else begin
        // B2. Arrivals: from outstanding into the buffer, saturating
        // (occ1 + A above 2^CW - 1; out - A below -2^CW).
        sato = |sumo_all[ee*FW + CW +: FW-CW];
        satu = sumu_all[ee*FW + FW-1] && !(&sumu_all[ee*FW + CW +: FW-CW-1]);
        occ2 = sato ? {CW{1'b1}} : sumo_all[ee*FW +: CW];
        out2 = satu ? F_OUTMIN[OW-1:0] : sumu_all[ee*FW +: OW];
        if (sato) err_eg[1] = 1'b1;
        if (satu) err_eg[2] = 1'b1;
        // occ2 > B: 2^CW - 1 > B, or B - (occ1 + A) negative.
        if (sato ? !(&cfg_buf_i[ee*CW +: CW]) : occbuf_all[ee]) err_eg[5] = 1'b1;
        // B5. Grant: due, a backlogged VOQ, and out2 + occ2 + Q <= B, by
        // which counter saturated (none, occupancy, outstanding, both).
        case ({sato, satu})
          2'b00:   room = rx_q[ee];
          2'b10:   room = roomy_all[ee];
          2'b01:   room = roomz_all[ee];
          default: room = rd_q[ee];
        endcase
        grant_r[ee] = due_q[ee] && pvalid[ee] && room;
        // B6. Issue: out2 + Q.
        if (grant_r[ee]) begin
          out2 = satu ? outqb_all[ee*FW +: OW] : outqa_all[ee*FW +: OW];
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
        occ_d[ee*CW +: CW] = occ2;
        out_d[ee*OW +: OW] = out2;
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
  wire unused_ok = ^{svalid, sidx, mvalid, pgnt_unused, mgnt_unused, err_eg[3]};

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
