// stx_ingress: the OSMOSIS input adapter of one input (VOQs, RTX queues,
// speculative transmission, requests to the arbiter).
//
// Spec: docs/stx_ingress.md. Golden model: model/src/stx_ingress.rs.
//
// Parameters
//   N     outputs (VOQs), a power of two, 2..16
//   Q     VOQ depth, a power of two, 2..16
//   RTT   RTX queue entries per VOQ, 1..16
//   SW    sequence number width, 2 .. 16 - log2(N)
//   IW    cell id width, 1..16
//   CW    request counter width (the arbiter's), 2..8
//   CNTW  statistics counter width, 4..32
//   IDX   the input this adapter serves, 0..127: seeds the random policy's
//         LFSR (input IDX starts IDX * 2^26 steps along the sequence)
//   OW, QW, VW, RW, L, LW, EW  derived, do not set
//
// Algorithm (one cycle, in order)
//   1. ACK: find the RTX entry {out, seq}; SR frees it; GBN/SAW free it only
//      if it is the oldest of its queue and not stale (else void)
//   2. grant: the oldest RTX entry leaves (retransmission; GBN/SAW mark the
//      others stale), else the VOQ head, else wasted; regular if the cell's
//      seq equals the VOQ's grant count
//   3. arrival: into its VOQ unless full (after 2) or its pending request
//      counter is full; appended to the arrival-order list
//   4. STX (no cell sent in 2, cfg_stx_en_i): eligible = VOQ not empty, RTX
//      not full, snd - oldest < window (1 under SAW); OCF = first list entry
//      with an eligible output; YCF = the latest VOQ head; random = the
//      m-th eligible VOQ, m = (lfsr[15:0] * eligible count) >> 16
//   5. the departing head's list entry is removed (one per cycle at most)
//   6. request: prim_rr_arb over VOQs with pending > 0, outstanding < limit
//   7. LFSR (32 bits, 16 steps per cycle), counters
//
// Ports
//   cfg_*  held for a run
//   req_*, spec_*, cell_*, gnt_kind_o, ack_kind_o, arr_drop_o: same cycle
//   the others: registers at the start of the cycle

`default_nettype none
`timescale 1ns / 100ps

module stx_ingress #(
  parameter integer N    = 8,
  parameter integer Q    = 8,
  parameter integer RTT  = 8,
  parameter integer SW   = 8,
  parameter integer IW   = 8,
  parameter integer CW   = 4,
  parameter integer CNTW = 32,
  parameter integer IDX  = 0,
  parameter integer OW   = $clog2(N),
  parameter integer QW   = $clog2(Q),
  parameter integer VW   = $clog2(Q + 1),
  parameter integer RW   = $clog2(RTT + 1),
  parameter integer L    = N * Q,
  parameter integer LW   = $clog2(N * Q + 2),
  parameter integer EW   = (RTT > 1) ? $clog2(RTT) : 1
) (
  input  wire              clk_i,
  input  wire              rst_ni,

  input  wire [1:0]        cfg_policy_i,
  input  wire [1:0]        cfg_scheme_i,
  input  wire              cfg_stx_en_i,
  input  wire [SW-1:0]     cfg_win_i,
  input  wire [CW-1:0]     cfg_req_lim_i,

  input  wire              arr_valid_i,
  input  wire [OW-1:0]     arr_out_i,
  input  wire [IW-1:0]     arr_id_i,
  input  wire              gnt_valid_i,
  input  wire [OW-1:0]     gnt_out_i,
  input  wire              ack_valid_i,
  input  wire [15:0]       ack_seq_i,

  output reg               req_valid_o,
  output reg  [OW-1:0]     req_out_o,
  output reg               spec_valid_o,
  output reg  [OW-1:0]     spec_out_o,
  output reg  [15:0]       spec_seq_o,
  output reg               cell_valid_o,
  output reg  [OW-1:0]     cell_out_o,
  output reg  [SW-1:0]     cell_seq_o,
  output reg  [IW-1:0]     cell_id_o,
  output reg               cell_spec_o,
  output reg               cell_retx_o,
  output reg  [1:0]        gnt_kind_o,
  output reg  [1:0]        ack_kind_o,
  output reg               arr_drop_o,
  output wire [N*VW-1:0]   voq_cnt_o,
  output reg  [N*RW-1:0]   rtx_cnt_o,
  output wire [N*SW-1:0]   snd_seq_o,
  output reg  [N*SW-1:0]   una_seq_o,
  output wire [N*CW-1:0]   pnd_cnt_o,
  output wire [N*CW-1:0]   out_cnt_o,
  output wire [CNTW-1:0]   cnt_stx_o,
  output wire [CNTW-1:0]   cnt_retx_o,
  output wire [CNTW-1:0]   cnt_wasted_o,
  output wire [CNTW-1:0]   cnt_drop_o,
  output wire              cfg_err_o
);

  localparam [SW-1:0] WMAX = {1'b1, {(SW-1){1'b0}}};   // 2^(SW-1)
  localparam [CW-1:0] CMAX = {CW{1'b1}};

  // The random policy's LFSR: x^32 + x^22 + x^2 + x + 1, 16 steps per cycle.
  // One step multiplies the state (bit k = coefficient of x^k) by
  // x^-1 = LTAPS(x) modulo P(x) = x LTAPS(x) + 1; input IDX starts from the
  // base seed moved IDX * 2^26 steps (square and multiply in GF(2)[x]/P).
  localparam [31:0] LTAPS = 32'h8020_0003;
  localparam [31:0] LBASE = 32'h0000_ACE1;

  function [31:0] lfsr_mul(input [31:0] a, input [31:0] b);
    integer k;
    reg [32:0] r;
    begin
      r = 33'd0;
      for (k = 31; k >= 0; k = k - 1) begin
        r = r << 1;
        if (r[32]) r = r ^ {LTAPS, 1'b1};
        if (b[k]) r = r ^ {1'b0, a};
      end
      lfsr_mul = r[31:0];
    end
  endfunction

  function [31:0] lfsr_seed(input integer idx);
    integer k;
    reg [31:0] g, h;
    begin
      g = LTAPS;                                    // x^-1
      for (k = 0; k < 26; k = k + 1) g = lfsr_mul(g, g);   // x^-(2^26)
      h = 32'd1;
      for (k = 6; k >= 0; k = k - 1) begin          // g^idx
        h = lfsr_mul(h, h);
        if (((idx >> k) & 1) == 1) h = lfsr_mul(h, g);
      end
      lfsr_seed = lfsr_mul(LBASE, h);
    end
  endfunction

  localparam [31:0] LSEED = lfsr_seed(IDX);

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [N*QW-1:0]       vhd_q, vhd_d;
  reg [N*VW-1:0]       vcnt_q, vcnt_d;
  reg [N*SW-1:0]       snd_q, snd_d;
  reg [N*SW-1:0]       gct_q, gct_d;
  reg [N*CW-1:0]       pnd_q, pnd_d;
  reg [N*CW-1:0]       out_q, out_d;
  reg [N*Q*IW-1:0]     vid_q, vid_d;        // data
  reg [N*RTT-1:0]      rv_q, rv_d;
  reg [N*RTT-1:0]      rst_q, rst_d;
  reg [N*RTT*SW-1:0]   rseq_q, rseq_d;
  reg [N*RTT*IW-1:0]   rid_q, rid_d;        // data
  reg [L*OW-1:0]       ord_q, ord_d;
  reg [LW-1:0]         ocnt_q, ocnt_d;

  wire pol_bad  = (cfg_policy_i == 2'd3);
  wire sch_bad  = (cfg_scheme_i == 2'd3);
  wire win_bad  = (cfg_win_i == {SW{1'b0}}) || (cfg_win_i > WMAX);
  wire lim_bad  = (cfg_req_lim_i == {CW{1'b0}});
  wire cfg_err  = pol_bad || sch_bad || win_bad || lim_bad;
  wire gbn      = (cfg_scheme_i == 2'd1) || (cfg_scheme_i == 2'd2);
  wire saw      = (cfg_scheme_i == 2'd2);
  wire [SW-1:0] win = saw ? {{(SW-1){1'b0}}, 1'b1} : cfg_win_i;
  assign cfg_err_o = cfg_err;

  // The oldest valid entry of one RTX queue: {found, distance, index}; the
  // largest distance snd - seq, the lowest index on a tie.
  function automatic [SW+EW:0] oldest_f(input [RTT-1:0] v, input [RTT*SW-1:0] sq,
                                        input [SW-1:0] snd);
    integer e;
    reg          f;
    reg [SW-1:0] bd, d;
    reg [EW-1:0] bi;
    begin
      f = 1'b0; bd = {SW{1'b0}}; bi = {EW{1'b0}};
      for (e = 0; e < RTT; e = e + 1) begin
        d = snd - sq[e*SW +: SW];
        if (v[e] && (!f || d > bd)) begin
          f = 1'b1; bd = d; bi = e[EW-1:0];
        end
      end
      oldest_f = {f, bd, bi};
    end
  endfunction

  function automatic [RW-1:0] popcount(input [RTT-1:0] v);
    integer k;
    begin
      popcount = {RW{1'b0}};
      for (k = 0; k < RTT; k = k + 1) popcount = popcount + {{(RW-1){1'b0}}, v[k]};
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Registered status outputs
  // ---------------------------------------------------------------------------
  reg [SW+EW:0] ol_r;
  reg [EW-1:0]  oi_r;
  integer jr;
  always @(*) begin
    for (jr = 0; jr < N; jr = jr + 1) begin
      rtx_cnt_o[jr*RW +: RW] = popcount(rv_q[jr*RTT +: RTT]);
      ol_r = oldest_f(rv_q[jr*RTT +: RTT], rseq_q[jr*RTT*SW +: RTT*SW], snd_q[jr*SW +: SW]);
      oi_r = ol_r[EW-1:0];
      una_seq_o[jr*SW +: SW] = ol_r[SW+EW] ? rseq_q[(jr*RTT + {{(32-EW){1'b0}}, oi_r})*SW +: SW]
                                           : {SW{1'b0}};
    end
  end
  assign voq_cnt_o = vcnt_q;
  assign snd_seq_o = snd_q;
  assign pnd_cnt_o = pnd_q;
  assign out_cnt_o = out_q;

  wire [31:0] lfsr;

  // ---------------------------------------------------------------------------
  // Steps 1 to 5
  // ---------------------------------------------------------------------------
  reg [(L+1)*OW-1:0] x;
  reg [LW-1:0]       xlen, rpos;
  reg [SW+EW:0]      ol;
  reg [EW-1:0]       oe, fe;
  reg                found, sent_g, wasted, retx, acc, stx, dep_v, ocf_f;
  reg [OW-1:0]       dep, pick, ocf_j, ycf_j, rnd_j, xo;
  reg [OW:0]         ecnt, rk;
  reg [16+OW:0]      rprod;
  reg [N-1:0]        elig, seen;
  reg [SW-1:0]       cseq;
  reg [IW-1:0]       cid;
  reg [QW-1:0]       hq, slot;
  reg [VW-1:0]       cq;
  integer ai, gi, ji, e, j, k, pe;
  always @(*) begin
    vhd_d  = vhd_q;  vcnt_d = vcnt_q; snd_d = snd_q; gct_d = gct_q;
    vid_d  = vid_q;  rv_d   = rv_q;   rst_d = rst_q; rseq_d = rseq_q; rid_d = rid_q;
    spec_valid_o = 1'b0; spec_out_o = {OW{1'b0}}; spec_seq_o = 16'd0;
    cell_valid_o = 1'b0; cell_out_o = {OW{1'b0}}; cell_seq_o = {SW{1'b0}};
    cell_id_o    = {IW{1'b0}}; cell_spec_o = 1'b0; cell_retx_o = 1'b0;
    gnt_kind_o   = 2'd0; ack_kind_o = 2'd0; arr_drop_o = 1'b0;
    found = 1'b0; fe = {EW{1'b0}}; ol = {(SW+EW+1){1'b0}}; oe = {EW{1'b0}};
    sent_g = 1'b0; wasted = 1'b0; retx = 1'b0; acc = 1'b0; stx = 1'b0;
    dep_v = 1'b0; dep = {OW{1'b0}}; cseq = {SW{1'b0}}; cid = {IW{1'b0}};
    hq = {QW{1'b0}}; slot = {QW{1'b0}}; cq = {VW{1'b0}};
    pick = {OW{1'b0}};
    // Loop variables assigned on every path (else synthesis infers latches).
    e = 0; j = 0; k = 0; pe = 0;

    // 1. ACK
    ai = {{(32-OW){1'b0}}, ack_seq_i[SW +: OW]};
    if (ack_valid_i && !cfg_err) begin
      for (e = RTT - 1; e >= 0; e = e - 1) begin
        if (rv_d[ai*RTT + e] && rseq_d[(ai*RTT + e)*SW +: SW] == ack_seq_i[SW-1:0]) begin
          found = 1'b1; fe = e[EW-1:0];
        end
      end
      if (!found) begin
        ack_kind_o = 2'd3;
      end else begin
        ol = oldest_f(rv_d[ai*RTT +: RTT], rseq_d[ai*RTT*SW +: RTT*SW], snd_q[ai*SW +: SW]);
        if (!gbn || (!rst_d[ai*RTT + {{(32-EW){1'b0}}, fe}] && ol[EW-1:0] == fe)) begin
          rv_d[ai*RTT + {{(32-EW){1'b0}}, fe}] = 1'b0;
          ack_kind_o = 2'd1;
        end else begin
          ack_kind_o = 2'd2;
        end
      end
    end

    // 2. Grant
    gi = {{(32-OW){1'b0}}, gnt_out_i};
    if (gnt_valid_i && !cfg_err) begin
      ol = oldest_f(rv_d[gi*RTT +: RTT], rseq_d[gi*RTT*SW +: RTT*SW], snd_q[gi*SW +: SW]);
      oe = ol[EW-1:0];
      if (ol[SW+EW]) begin
        rv_d[gi*RTT + {{(32-EW){1'b0}}, oe}] = 1'b0;
        if (gbn) begin
          for (e = 0; e < RTT; e = e + 1)
            if (rv_d[gi*RTT + e]) rst_d[gi*RTT + e] = 1'b1;
        end
        cseq   = rseq_d[(gi*RTT + {{(32-EW){1'b0}}, oe})*SW +: SW];
        cid    = rid_d[(gi*RTT + {{(32-EW){1'b0}}, oe})*IW +: IW];
        retx   = 1'b1;
        sent_g = 1'b1;
      end else if (vcnt_q[gi*VW +: VW] != {VW{1'b0}}) begin
        cseq   = snd_q[gi*SW +: SW];
        cid    = vid_q[(gi*Q + {{(32-QW){1'b0}}, vhd_q[gi*QW +: QW]})*IW +: IW];
        dep_v  = 1'b1;
        dep    = gnt_out_i;
        sent_g = 1'b1;
        vhd_d[gi*QW +: QW]  = vhd_q[gi*QW +: QW] + 1'b1;
        vcnt_d[gi*VW +: VW] = vcnt_q[gi*VW +: VW] - 1'b1;
      end else begin
        wasted = 1'b1;
      end
      if (sent_g) begin
        cell_valid_o = 1'b1;
        cell_out_o   = gnt_out_i;
        cell_seq_o   = cseq;
        cell_id_o    = cid;
        cell_retx_o  = retx;
        gnt_kind_o   = (cseq == gct_q[gi*SW +: SW]) ? 2'd1 : 2'd2;
      end else begin
        gnt_kind_o   = 2'd3;
      end
      gct_d[gi*SW +: SW] = gct_q[gi*SW +: SW] + 1'b1;
    end

    // 3. Arrival
    x = {{OW{1'b0}}, ord_q};
    ji = {{(32-OW){1'b0}}, arr_out_i};
    if (arr_valid_i) begin
      if (cfg_err || vcnt_d[ji*VW +: VW] == Q[VW-1:0] || pnd_q[ji*CW +: CW] == CMAX) begin
        arr_drop_o = 1'b1;
      end else begin
        cq   = vcnt_d[ji*VW +: VW];
        slot = vhd_d[ji*QW +: QW] + cq[QW-1:0];
        vid_d[(ji*Q + {{(32-QW){1'b0}}, slot})*IW +: IW] = arr_id_i;
        vcnt_d[ji*VW +: VW] = cq + 1'b1;
        x[{{(32-LW){1'b0}}, ocnt_q}*OW +: OW] = arr_out_i;
        acc = 1'b1;
      end
    end
    xlen = ocnt_q + {{(LW-1){1'b0}}, acc};

    // 4. STX
    elig = {N{1'b0}};
    if (!cfg_err && cfg_stx_en_i) begin
      for (j = 0; j < N; j = j + 1) begin
        ol = oldest_f(rv_d[j*RTT +: RTT], rseq_d[j*RTT*SW +: RTT*SW], snd_q[j*SW +: SW]);
        if (vcnt_d[j*VW +: VW] != {VW{1'b0}} && !(&rv_d[j*RTT +: RTT])
            && (!ol[SW+EW] || ol[SW+EW-1:EW] < win))
          elig[j] = 1'b1;
      end
    end
    // OCF: the first list entry whose output is eligible; YCF: the last
    // first-occurrence (VOQ head) whose output is eligible.
    seen = {N{1'b0}}; ocf_f = 1'b0; ocf_j = {OW{1'b0}}; ycf_j = {OW{1'b0}};
    for (k = 0; k <= L; k = k + 1) begin
      xo = x[k*OW +: OW];
      if (k < {{(32-LW){1'b0}}, xlen}) begin
        if (elig[xo] && !ocf_f) begin ocf_f = 1'b1; ocf_j = xo; end
        if (elig[xo] && !seen[xo]) ycf_j = xo;
        seen[xo] = 1'b1;
      end
    end
    // Random: the m-th eligible VOQ, m = (lfsr[15:0] * eligible count) >> 16.
    ecnt = {(OW+1){1'b0}};
    for (k = 0; k < N; k = k + 1) ecnt = ecnt + {{OW{1'b0}}, elig[k]};
    rprod = {{(OW+1){1'b0}}, lfsr[15:0]} * {16'd0, ecnt};
    rk = {(OW+1){1'b0}};
    rnd_j = {OW{1'b0}};
    for (k = 0; k < N; k = k + 1) begin
      if (elig[k]) begin
        if (rk == rprod[16 +: OW+1]) rnd_j = k[OW-1:0];
        rk = rk + 1'b1;
      end
    end
    case (cfg_policy_i)
      2'd1:    pick = rnd_j;
      2'd2:    pick = ycf_j;
      default: pick = ocf_j;
    endcase
    if (!sent_g && elig != {N{1'b0}}) begin
      stx   = 1'b1;
      dep_v = 1'b1;
      dep   = pick;
      hq    = vhd_d[pick*QW +: QW];
      cseq  = snd_q[pick*SW +: SW];
      cid   = vid_d[({{(32-OW){1'b0}}, pick}*Q + {{(32-QW){1'b0}}, hq})*IW +: IW];
      pe    = 0;
      for (e = RTT - 1; e >= 0; e = e - 1)
        if (!rv_d[{{(32-OW){1'b0}}, pick}*RTT + e]) pe = e;
      rv_d[{{(32-OW){1'b0}}, pick}*RTT + pe]            = 1'b1;
      rst_d[{{(32-OW){1'b0}}, pick}*RTT + pe]           = 1'b0;
      rseq_d[({{(32-OW){1'b0}}, pick}*RTT + pe)*SW +: SW] = cseq;
      rid_d[({{(32-OW){1'b0}}, pick}*RTT + pe)*IW +: IW]  = cid;
      vhd_d[pick*QW +: QW]  = hq + 1'b1;
      vcnt_d[pick*VW +: VW] = vcnt_d[pick*VW +: VW] - 1'b1;
      spec_valid_o = 1'b1;
      spec_out_o   = pick;
      spec_seq_o   = 16'd0;
      spec_seq_o[SW +: OW] = pick;
      spec_seq_o[SW-1:0]   = cseq;
      cell_valid_o = 1'b1;
      cell_out_o   = pick;
      cell_seq_o   = cseq;
      cell_id_o    = cid;
      cell_spec_o  = 1'b1;
    end

    // 5. The departing head: sequence number, list entry.
    rpos = {LW{1'b0}};
    for (k = L; k >= 0; k = k - 1)
      if (k < {{(32-LW){1'b0}}, xlen} && x[k*OW +: OW] == dep) rpos = k[LW-1:0];
    if (dep_v) snd_d[dep*SW +: SW] = snd_q[dep*SW +: SW] + 1'b1;
    for (k = 0; k < L; k = k + 1)
      ord_d[k*OW +: OW] = (dep_v && k >= {{(32-LW){1'b0}}, rpos}) ? x[(k+1)*OW +: OW]
                                                                : x[k*OW +: OW];
    ocnt_d = xlen - {{(LW-1){1'b0}}, dep_v};
  end

  // ---------------------------------------------------------------------------
  // 6. Requests
  // ---------------------------------------------------------------------------
  reg [N*CW-1:0] pn, ou;
  reg [N-1:0]    rq;
  integer jq;
  always @(*) begin
    for (jq = 0; jq < N; jq = jq + 1) begin
      pn[jq*CW +: CW] = pnd_q[jq*CW +: CW]
                      + {{(CW-1){1'b0}}, acc && arr_out_i == jq[OW-1:0]};
      ou[jq*CW +: CW] = out_q[jq*CW +: CW]
                      - {{(CW-1){1'b0}}, gnt_valid_i && !cfg_err && gnt_out_i == jq[OW-1:0]
                                         && out_q[jq*CW +: CW] != {CW{1'b0}}};
      rq[jq] = !cfg_err && pn[jq*CW +: CW] != {CW{1'b0}} && ou[jq*CW +: CW] < cfg_req_lim_i;
    end
  end

  wire          rq_valid;
  wire [OW-1:0] rq_idx;
  wire [N-1:0]  rq_gnt;
  wire [OW-1:0] rq_ptr;
  prim_rr_arb #(.N(N)) u_req_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (rq),
    .ack_i   (1'b1),
    .valid_o (rq_valid),
    .idx_o   (rq_idx),
    .gnt_o   (rq_gnt),
    .ptr_o   (rq_ptr)
  );

  always @(*) begin
    pnd_d = pn;
    out_d = ou;
    req_valid_o = rq_valid;
    req_out_o   = rq_idx;
    if (rq_valid) begin
      pnd_d[rq_idx*CW +: CW] = pn[rq_idx*CW +: CW] - 1'b1;
      out_d[rq_idx*CW +: CW] = ou[rq_idx*CW +: CW] + 1'b1;
    end
  end

  // ---------------------------------------------------------------------------
  // 7. LFSR and counters
  // ---------------------------------------------------------------------------
  prim_lfsr #(.W(32), .TAPS(LTAPS), .SEED(LSEED), .STEPS(16)) u_lfsr (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .en_i    (1'b1),
    .state_o (lfsr)
  );

  wire [3:0] sat;
  prim_sat_cnt #(.W(CNTW)) u_cnt_stx (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i ({{(CNTW-1){1'b0}}, stx}),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_stx_o), .sat_o (sat[0])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_retx (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i ({{(CNTW-1){1'b0}}, retx}),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_retx_o), .sat_o (sat[1])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_wasted (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i ({{(CNTW-1){1'b0}}, wasted}),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_wasted_o), .sat_o (sat[2])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_drop (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i ({{(CNTW-1){1'b0}}, arr_drop_o}),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_drop_o), .sat_o (sat[3])
  );

  wire unused_misc = ^{sat, rq_gnt, rq_ptr, ack_seq_i, lfsr[31:16], rprod[15:0]};

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      vhd_q  <= {N*QW{1'b0}};
      vcnt_q <= {N*VW{1'b0}};
      snd_q  <= {N*SW{1'b0}};
      gct_q  <= {N*SW{1'b0}};
      pnd_q  <= {N*CW{1'b0}};
      out_q  <= {N*CW{1'b0}};
      rv_q   <= {N*RTT{1'b0}};
      rst_q  <= {N*RTT{1'b0}};
      rseq_q <= {N*RTT*SW{1'b0}};
      ord_q  <= {L*OW{1'b0}};
      ocnt_q <= {LW{1'b0}};
    end else begin
      vhd_q  <= vhd_d;
      vcnt_q <= vcnt_d;
      snd_q  <= snd_d;
      gct_q  <= gct_d;
      pnd_q  <= pnd_d;
      out_q  <= out_d;
      rv_q   <= rv_d;
      rst_q  <= rst_d;
      rseq_q <= rseq_d;
      ord_q  <= ord_d;
      ocnt_q <= ocnt_d;
    end
  end

  always @(posedge clk_i) begin
    vid_q <= vid_d;
    rid_q <= rid_d;
  end

`ifndef SYNTHESIS
  reg [LW+4:0] tot;
  reg [SW-1:0] dd;
  reg          dist_bad;
  integer kt;
  always @(*) begin
    tot = {(LW+5){1'b0}};
    for (kt = 0; kt < N; kt = kt + 1) tot = tot + {{(LW+5-VW){1'b0}}, vcnt_q[kt*VW +: VW]};
    dist_bad = 1'b0;
    for (kt = 0; kt < N*RTT; kt = kt + 1) begin
      dd = snd_q[(kt/RTT)*SW +: SW] - rseq_q[kt*SW +: SW];
      if (rv_q[kt] && (dd == {SW{1'b0}} || dd > win)) dist_bad = 1'b1;
    end
  end
  integer ka;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      for (ka = 0; ka < N; ka = ka + 1) begin
        if (vcnt_q[ka*VW +: VW] > Q[VW-1:0]) $error("VoqBound_A: VOQ %0d", ka);
        if (saw && popcount(rv_q[ka*RTT +: RTT]) > {{(RW-1){1'b0}}, 1'b1})
          $error("RtxBound_A: VOQ %0d", ka);
        if (!cfg_err && out_q[ka*CW +: CW] > cfg_req_lim_i) $error("ReqLim_A: VOQ %0d", ka);
      end
      if (dist_bad) $error("RtxDist_A");
      if (tot != {{5{1'b0}}, ocnt_q}) $error("ListLen_A");
      if (spec_valid_o && (gnt_kind_o == 2'd1 || gnt_kind_o == 2'd2)) $error("OneCell_A");
      if (cfg_err && (ocnt_q != {LW{1'b0}} || rv_q != {N*RTT{1'b0}})) $error("ErrIdle_A");
    end
  end
`endif

endmodule

`default_nettype wire
