// credit: credit scheduler between the ingress VOQs and the egress ports of a
// VOQ + fabric switch.
//
// Spec: docs/credit.md. Golden model: model/src/credit.rs.
//
// Parameters
//   E   egress ports, 2..8            I   ingress ports, 2..16
//   S   slices, a power of two, 2..8  LW  length / quantum width (bytes)
//   CW  egress byte counter width     BW  VOQ balance width (signed)
//   RW  rate numerator / denominator / accumulator width
//   VOQ (i, e) has the flat index v = i * E + e.
//
// Algorithm (one cycle; the two halves share no state)
//   ingress  1. credit arrivals: bal += bytes, saturating at 2^(BW-1)-1
//            2. per ingress port, round robin from dptr over the VOQs with a
//               packet (hol_len > 0) and bal > 0; bal -= len (may overdraw)
//   egress   1. departure: occ -= min(bytes, occ)
//            2. arrivals: occ += A (saturating), out -= A (saturating)
//            3. announcements: bl = (bl & ~mt) | bl_ann (backlogged wins)
//            4. accumulator: sum = acc + num; due = sum >= den;
//               acc = due ? sum - den : sum (exact, free running)
//            5. grant iff due, legal config, a backlogged VOQ and
//               out + occ + Q <= B; receiver by round robin over ports
//               (pptr) or over slices (sptr) then members (mptr[e][s])
//            6. out += Q on a grant
//
// Ports
//   cfg_*   held for a run
//   crd_*_o, deq_*_o, err_o: same cycle (comb.); cfg_err_o: comb. of cfg
//   bal_o, occ_o, out_o, acc_o, bl_o, *ptr_o: registers at the start of the cycle

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

  localparam integer ILAST_I = I - 1;
  localparam integer ELAST_I = E - 1;
  localparam [IW-1:0] ILAST = ILAST_I[IW-1:0];
  localparam [EW-1:0] ELAST = ELAST_I[EW-1:0];
  // Valid index lookups (I, E need not be powers of two).
  localparam [(1<<IW)-1:0] I_OK = {(1<<IW){1'b1}} >> ((1 << IW) - I);
  localparam [(1<<EW)-1:0] E_OK = {(1<<EW){1'b1}} >> ((1 << EW) - E);

  localparam signed [XW-1:0]  OCC_MAX = {{(XW-CW){1'b0}}, {CW{1'b1}}};       //  2^CW - 1
  localparam signed [XW-1:0]  OUT_MIN = {{(XW-CW){1'b1}}, {CW{1'b0}}};       // -2^CW
  localparam signed [XW-1:0]  X_ZERO  = {XW{1'b0}};
  localparam signed [BXW-1:0] B_MAX   = {3'b000, {(BW-1){1'b1}}};            //  2^(BW-1) - 1
  localparam signed [BXW-1:0] B_MIN   = {{(BXW-LW){1'b1}}, {(LW-1){1'b0}}, 1'b1} + {{(BXW-1){1'b0}}, 1'b1};
  localparam signed [BXW-1:0] B_ZERO  = {BXW{1'b0}};

  // Round robin, one function for the three pickers (over I ingresses, E
  // egresses, S slices): the first set bit of el at or after ptr, wrapping,
  // as {found, index}. Callers zero-extend el to PN bits and ptr to PW + 1
  // bits, each at least one bit wider than any caller's (so the padding is
  // never empty), and take the low bits of the index.
  localparam integer PN = ((I > E) ? ((I > S) ? I : S) : ((E > S) ? E : S)) + 1;
  localparam integer PW = (IW > EW) ? ((IW > SW) ? IW : SW) : ((EW > SW) ? EW : SW);

  function automatic [PW:0] rr_pick(input [PN-1:0] el, input [PW:0] ptr);
    integer k;
    reg hi, lo;
    reg [PW-1:0] ih, il;
    begin
      hi = 1'b0; lo = 1'b0; ih = {PW{1'b0}}; il = {PW{1'b0}};
      for (k = PN - 1; k >= 0; k = k - 1) begin
        if (el[k]) begin
          lo = 1'b1; il = k[PW-1:0];
          if (k[PW:0] >= ptr) begin hi = 1'b1; ih = k[PW-1:0]; end
        end
      end
      rr_pick = hi ? {1'b1, ih} : {lo, il};
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
  reg [V*BW-1:0]     bal_q,  bal_d;
  reg [E*CW-1:0]     occ_q,  occ_d;
  reg [E*OW-1:0]     out_q,  out_d;
  reg [E*RW-1:0]     acc_q,  acc_d;
  reg [V-1:0]        bl_q,   bl_d;
  reg [E*IW-1:0]     pptr_q, pptr_d;
  reg [E*SW-1:0]     sptr_q, sptr_d;
  reg [E*S*IW-1:0]   mptr_q, mptr_d;
  reg [I*EW-1:0]     dptr_q, dptr_d;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bal_q  <= {V*BW{1'b0}};
      occ_q  <= {E*CW{1'b0}};
      out_q  <= {E*OW{1'b0}};
      acc_q  <= {E*RW{1'b0}};
      bl_q   <= {V{1'b0}};
      pptr_q <= {E*IW{1'b0}};
      sptr_q <= {E*SW{1'b0}};
      mptr_q <= {E*S*IW{1'b0}};
      dptr_q <= {I*EW{1'b0}};
    end else begin
      bal_q  <= bal_d;
      occ_q  <= occ_d;
      out_q  <= out_d;
      acc_q  <= acc_d;
      bl_q   <= bl_d;
      pptr_q <= pptr_d;
      sptr_q <= sptr_d;
      mptr_q <= mptr_d;
      dptr_q <= dptr_d;
    end
  end

  assign bal_o  = bal_q;
  assign occ_o  = occ_q;
  assign out_o  = out_q;
  assign acc_o  = acc_q;
  assign bl_o   = bl_q;
  assign pptr_o = pptr_q;
  assign sptr_o = sptr_q;
  assign mptr_o = mptr_q;
  assign dptr_o = dptr_q;

  // ---------------------------------------------------------------------------
  // Ingress half: credit arrivals, then one dequeue per ingress port
  // ---------------------------------------------------------------------------
  reg [V*BXW-1:0]       bal1;              // balances after the credits, wide
  reg signed [BXW-1:0]  ib, isum;
  reg [E-1:0]           ielig;
  reg [EW:0]            ipick;
  reg [PW:0]            rr_in;
  reg                   err_bal_sat, err_idx_in;
  integer               ii, ie;

  always @(*) begin
    bal_d       = bal_q;
    dptr_d      = dptr_q;
    deq_valid_o = {I{1'b0}};
    deq_egr_o   = {I*EW{1'b0}};
    deq_bytes_o = {I*LW{1'b0}};
    err_bal_sat = 1'b0;
    err_idx_in  = 1'b0;
    bal1        = {V*BXW{1'b0}};
    ib          = B_ZERO;
    isum        = B_ZERO;
    ielig       = {E{1'b0}};
    ipick       = {(EW+1){1'b0}};
    rr_in       = {(PW+1){1'b0}};

    // 1. Credit arrivals, saturating at BMAX.
    for (ie = 0; ie < E; ie = ie + 1) begin
      if (cin_valid_i[ie] && !I_OK[cin_ing_i[ie*IW +: IW]]) err_idx_in = 1'b1;
    end
    for (ii = 0; ii < I; ii = ii + 1) begin
      for (ie = 0; ie < E; ie = ie + 1) begin
        ib = {{(BXW-BW){bal_q[(ii*E+ie)*BW + BW-1]}}, bal_q[(ii*E+ie)*BW +: BW]};
        if (cin_valid_i[ie] && cin_ing_i[ie*IW +: IW] == ii[IW-1:0]) begin
          isum = ib + {{(BXW-LW){1'b0}}, cin_bytes_i[ie*LW +: LW]};
          if (isum > B_MAX) begin
            ib          = B_MAX;
            err_bal_sat = 1'b1;
          end else begin
            ib = isum;
          end
        end
        bal1[(ii*E+ie)*BXW +: BXW] = ib;
      end
    end

    // 2. Dequeue: round robin over VOQs with a packet and a positive balance.
    for (ii = 0; ii < I; ii = ii + 1) begin
      for (ie = 0; ie < E; ie = ie + 1) begin
        ielig[ie] = (hol_len_i[(ii*E+ie)*LW +: LW] != {LW{1'b0}}) &&
                    ($signed(bal1[(ii*E+ie)*BXW +: BXW]) > B_ZERO);
      end
      rr_in = rr_pick({{(PN-E){1'b0}}, ielig}, {{(PW+1-EW){1'b0}}, dptr_q[ii*EW +: EW]});
      ipick = {rr_in[PW], rr_in[EW-1:0]};
      if (ipick[EW]) begin
        for (ie = 0; ie < E; ie = ie + 1) begin
          if (ipick[EW-1:0] == ie[EW-1:0]) begin
            bal1[(ii*E+ie)*BXW +: BXW] = $signed(bal1[(ii*E+ie)*BXW +: BXW]) -
                                         $signed({{(BXW-LW){1'b0}}, hol_len_i[(ii*E+ie)*LW +: LW]});
            deq_bytes_o[ii*LW +: LW] = hol_len_i[(ii*E+ie)*LW +: LW];
          end
        end
        deq_valid_o[ii]        = 1'b1;
        deq_egr_o[ii*EW +: EW] = ipick[EW-1:0];
        dptr_d[ii*EW +: EW]    = (ipick[EW-1:0] == ELAST) ? {EW{1'b0}} : ipick[EW-1:0] + 1'b1;
      end
    end

    for (ii = 0; ii < V; ii = ii + 1) bal_d[ii*BW +: BW] = bal1[ii*BXW +: BW];
  end

  // ---------------------------------------------------------------------------
  // Egress half: departure, arrivals, announcements, accumulator, grant
  // ---------------------------------------------------------------------------
  reg signed [XW-1:0] occ0, occ1, occ2, out2, dep, asum, bufw, qw, need;
  reg [RW:0]          accs;
  reg                 due;
  reg [I-1:0]         blcol, melig;
  reg [S-1:0]         selig;
  reg [SW:0]          spick;
  reg [IW:0]          mpick;
  reg [PW:0]          rr_eg;
  reg [IW-1:0]        win;
  reg [5:0]           err_eg;
  integer             ee, ei, es;

  always @(*) begin
    occ_d       = occ_q;
    out_d       = out_q;
    acc_d       = acc_q;
    pptr_d      = pptr_q;
    sptr_d      = sptr_q;
    mptr_d      = mptr_q;
    crd_valid_o = {E{1'b0}};
    crd_ing_o   = {E*IW{1'b0}};
    crd_bytes_o = {E*LW{1'b0}};
    err_eg      = 6'd0;
    occ0 = X_ZERO; occ1 = X_ZERO; occ2 = X_ZERO; out2 = X_ZERO;
    dep = X_ZERO; asum = X_ZERO; bufw = X_ZERO; qw = X_ZERO; need = X_ZERO;
    accs  = {(RW+1){1'b0}};
    due   = 1'b0;
    blcol = {I{1'b0}};
    melig = {I{1'b0}};
    selig = {S{1'b0}};
    spick = {(SW+1){1'b0}};
    mpick = {(IW+1){1'b0}};
    rr_eg = {(PW+1){1'b0}};
    win   = {IW{1'b0}}; es = 0;  // the loop variable too: no latch

    for (ei = 0; ei < I; ei = ei + 1) begin
      if (earr_valid_i[ei] && !E_OK[earr_egr_i[ei*EW +: EW]]) err_eg[4] = 1'b1;
    end

    // 3. Announcements (backlogged wins).
    bl_d = (bl_q & ~ann_mt_i) | ann_bl_i;

    for (ee = 0; ee < E; ee = ee + 1) begin
      // 1. Departure, clamping at 0.
      occ0 = {{(XW-CW){1'b0}}, occ_q[ee*CW +: CW]};
      dep  = {{(XW-LW){1'b0}}, edep_bytes_i[ee*LW +: LW]};
      if (dep > occ0) begin
        occ1      = X_ZERO;
        err_eg[0] = 1'b1;
      end else begin
        occ1 = occ0 - dep;
      end
      // 2. Arrivals: from outstanding into the buffer, saturating.
      asum = X_ZERO;
      for (ei = 0; ei < I; ei = ei + 1) begin
        if (earr_valid_i[ei] && earr_egr_i[ei*EW +: EW] == ee[EW-1:0])
          asum = asum + {{(XW-LW){1'b0}}, earr_bytes_i[ei*LW +: LW]};
      end
      occ2 = occ1 + asum;
      if (occ2 > OCC_MAX) begin
        occ2      = OCC_MAX;
        err_eg[1] = 1'b1;
      end
      out2 = {{(XW-OW){out_q[ee*OW + OW-1]}}, out_q[ee*OW +: OW]} - asum;
      if (out2 < OUT_MIN) begin
        out2      = OUT_MIN;
        err_eg[2] = 1'b1;
      end
      bufw = {{(XW-CW){1'b0}}, cfg_buf_i[ee*CW +: CW]};
      if (occ2 > bufw) err_eg[5] = 1'b1;

      // 4. Accumulator: exact, free running.
      accs = {1'b0, acc_q[ee*RW +: RW]} + {1'b0, cfg_rate_num_i[ee*RW +: RW]};
      if (cfg_err) begin
        due                 = 1'b0;
        acc_d[ee*RW +: RW]  = {RW{1'b0}};
      end else if (accs >= {1'b0, cfg_rate_den_i[ee*RW +: RW]}) begin
        due                 = 1'b1;
        accs                = accs - {1'b0, cfg_rate_den_i[ee*RW +: RW]};
        acc_d[ee*RW +: RW]  = accs[RW-1:0];
      end else begin
        due                 = 1'b0;
        acc_d[ee*RW +: RW]  = accs[RW-1:0];
      end

      // 5. Grant: due, a backlogged VOQ, and the credit fits the buffer.
      for (ei = 0; ei < I; ei = ei + 1) blcol[ei] = bl_d[ei*E + ee];
      qw   = {{(XW-LW){1'b0}}, cfg_quantum_i[ee*LW +: LW]};
      need = out2 + occ2 + qw;
      if (due && (blcol != {I{1'b0}}) && need <= bufw) begin
        if (cfg_slice_mode_i[ee]) begin
          for (es = 0; es < S; es = es + 1) begin
            selig[es] = 1'b0;
            for (ei = 0; ei < I; ei = ei + 1) begin
              if (blcol[ei] && cfg_slice_i[ei*SW +: SW] == es[SW-1:0]) selig[es] = 1'b1;
            end
          end
          rr_eg = rr_pick({{(PN-S){1'b0}}, selig}, {{(PW+1-SW){1'b0}}, sptr_q[ee*SW +: SW]});
          spick = {rr_eg[PW], rr_eg[SW-1:0]};
          for (ei = 0; ei < I; ei = ei + 1) begin
            melig[ei] = blcol[ei] && cfg_slice_i[ei*SW +: SW] == spick[SW-1:0];
          end
          mpick = {(IW+1){1'b0}};
          for (es = 0; es < S; es = es + 1) begin
            if (spick[SW-1:0] == es[SW-1:0]) begin
              rr_eg = rr_pick({{(PN-I){1'b0}}, melig},
                              {{(PW+1-IW){1'b0}}, mptr_q[(ee*S+es)*IW +: IW]});
              mpick = {rr_eg[PW], rr_eg[IW-1:0]};
              mptr_d[(ee*S+es)*IW +: IW] = (mpick[IW-1:0] == ILAST) ? {IW{1'b0}}
                                                                     : mpick[IW-1:0] + 1'b1;
            end
          end
          sptr_d[ee*SW +: SW] = spick[SW-1:0] + 1'b1;   // S is a power of two: wraps
          win = mpick[IW-1:0];
        end else begin
          rr_eg = rr_pick({{(PN-I){1'b0}}, blcol}, {{(PW+1-IW){1'b0}}, pptr_q[ee*IW +: IW]});
          mpick = {rr_eg[PW], rr_eg[IW-1:0]};
          pptr_d[ee*IW +: IW] = (mpick[IW-1:0] == ILAST) ? {IW{1'b0}} : mpick[IW-1:0] + 1'b1;
          win = mpick[IW-1:0];
        end
        // 6. Issue.
        out2                     = out2 + qw;
        crd_valid_o[ee]          = 1'b1;
        crd_ing_o[ee*IW +: IW]   = win;
        crd_bytes_o[ee*LW +: LW] = cfg_quantum_i[ee*LW +: LW];
      end
      occ_d[ee*CW +: CW] = occ2[CW-1:0];
      out_d[ee*OW +: OW] = out2[OW-1:0];
    end
  end

  assign err_o = err_eg | {1'b0, err_idx_in, err_bal_sat, 3'b000};

  // A grant implies a backlogged VOQ, so the slice and member picks always
  // find one: their found bits are not needed.
  wire unused_found = ^{spick[SW], mpick[IW], rr_in, rr_eg};   // rr_*: index bits above a picker's width

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
        if (!I_OK[pptr_q[ai*IW +: IW]]) $error("PortPointerInRange_A: egress %0d", ai);
      end
      for (ai = 0; ai < I; ai = ai + 1) begin
        if (!E_OK[dptr_q[ai*EW +: EW]]) $error("DequeuePointerInRange_A: ingress %0d", ai);
      end
      for (ai = 0; ai < E * S; ai = ai + 1) begin
        if (!I_OK[mptr_q[ai*IW +: IW]]) $error("MemberPointerInRange_A: %0d", ai);
      end
    end
  end
`endif

endmodule

`default_nettype wire
