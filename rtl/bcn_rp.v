// bcn_rp: the BCN reaction point at the edge (rate limiters, shaper, bypass).
//
// Spec: docs/bcn_rp.md. Golden model: model/src/bcn_rp.rs.
//
// Parameters
//   K             rate limiters, 1..8
//   D             descriptor FIFO depth per limiter, a power of two, 2..16
//   CLK_PER_STEP  clocks per step of the spec (a frame time), 7..64
//   IW            limiter id width (derived, do not set)
//   CW            FIFO count width (derived, do not set)
//
// Algorithm (one step, in order)
//   1. release: limiters whose head frame has its tokens (tokens >= len << 16)
//      and the bypass (an offered frame matching no limiter) request the
//      line; prim_rr_arb grants one (index K = bypass); a limiter's frame
//      leaves tagged with its id and its CPID (the point it answers to)
//   2. admission: an offered frame matching limiter j enters j's FIFO if j
//      is not draining (rate < line) and has room after step 1
//   3. message: Fb = Qoff - floor(W Qdelta) saturated to 16 bits; decrease
//      rate - min(rate |Fb| 2^-gd, rate / 2), at least the minimum; increase
//      rate + Fb Ru 2^-gi, at most the line rate; install on Fb < 0 for an
//      unknown key; table full: coarsen to the priority, else limiter 0 to
//      the link; Fb >= 0 acts only from the limiter's own point (msg_cpid_i
//      equal to its recorded CPID), a decrease from any point records it
//   4. removal: a limiter at the line rate with an empty FIFO, or whose idle
//      timer (prim_timer) expires
//
// Clocks of a step (docs/bcn_rp.md, "Clocks of a step"): a step is
// CLK_PER_STEP clocks, phases 0 .. CLK_PER_STEP-1 (ph_q); the inputs are
// held through it; the registers of the spec (the table, the FIFOs, the
// primitives) change only at the edge that ends its last phase, so every
// stage below reads them as they were at the start of the step. Each stage
// register loads in every clock; from the phase named it holds its value
// for this step's held inputs:
//   phase 0  lookups of the frame and the message, release requests, the
//            free and fall-back limiters, CPID match, W Qdelta     -> s1
//   phase 1  Fb saturated and |Fb|; the operand of a decrease      -> s2
//   phase 2  rate |Fb| and Fb Ru, the low byte of the multiplier   -> s3
//   phase 3  the products, the high byte added                     -> s4
//   phase 4  the 50 % cap (decrease); the sum capped at the line    -> s5
//   phase 5  the floor at the minimum rate (decrease)               -> s6
//   last     release, admission, the message's action, removal: the
//            outputs, and the registers' next values
//
// Ports
//   cfg_*   held for a run
//   in_*    the frame the source offers (valid/ready); out_* the frame sent
//   msg_*   a BCN message
//   in_ready_o, out_*, msg_fb_o, msg_act_o, msg_lim_o, rm_*_o: the step's,
//           in its last clock (0 in the other clocks)
//   lim_*_o: registers at the start of the step

`default_nettype none
`timescale 1ns / 100ps

module bcn_rp #(
  parameter integer K            = 4,
  parameter integer D            = 4,
  parameter integer CLK_PER_STEP = 8,
  parameter integer IW           = (K > 1) ? $clog2(K) : 1,
  parameter integer CW           = $clog2(D + 1)
) (
  input  wire              clk_i,
  input  wire              rst_ni,

  input  wire [23:0]       cfg_line_rate_i,
  input  wire [23:0]       cfg_min_rate_i,
  input  wire [3:0]        cfg_gd_i,
  input  wire [3:0]        cfg_gi_i,
  input  wire [15:0]       cfg_ru_i,
  input  wire [4:0]        cfg_w_i,
  input  wire [15:0]       cfg_idle_i,

  input  wire              in_valid_i,
  input  wire [47:0]       in_da_i,
  input  wire [2:0]        in_prio_i,
  input  wire [13:0]       in_len_i,
  input  wire              msg_valid_i,
  input  wire [47:0]       msg_flow_da_i,
  input  wire [2:0]        msg_prio_i,
  input  wire [15:0]       msg_cpid_i,
  input  wire [15:0]       msg_qoff_i,
  input  wire [15:0]       msg_qdelta_i,

  output reg               in_ready_o,
  output reg               out_valid_o,
  output reg  [47:0]       out_da_o,
  output reg  [2:0]        out_prio_o,
  output reg  [13:0]       out_len_o,
  output reg               out_tag_valid_o,
  output reg  [IW-1:0]     out_tag_id_o,
  output reg  [15:0]       out_tag_cpid_o,
  output wire [15:0]       msg_fb_o,
  output reg  [2:0]        msg_act_o,
  output reg  [IW-1:0]     msg_lim_o,
  output reg  [K-1:0]      rm_line_o,
  output reg  [K-1:0]      rm_idle_o,
  output wire [K-1:0]      lim_valid_o,
  output wire [2*K-1:0]    lim_level_o,
  output wire [24*K-1:0]   lim_rate_o,
  output wire [CW*K-1:0]   lim_cnt_o,
  output wire [16*K-1:0]   lim_cpid_o,
  output wire              cfg_err_o
);

  localparam integer N   = K + 1;           // arbiter requesters: K limiters, bypass
  localparam integer AW  = $clog2(N);
  localparam integer PW  = $clog2(D);
  localparam integer LW  = 14;
  localparam integer RW  = 24;
  localparam integer FW  = 16;
  localparam integer TW  = LW + FW + 1;     // token bucket: a frame plus K + 1 steps of rate
  localparam integer IDW = 16;
  localparam integer SPW = $clog2(CLK_PER_STEP);
  localparam integer SM1 = CLK_PER_STEP - 1;
  localparam [SPW-1:0] PH_LAST = SM1[SPW-1:0];

  localparam [1:0] L_DA = 2'd0, L_PRIO = 2'd1, L_LINK = 2'd2;
  localparam [2:0] A_NONE = 3'd0, A_IGNORE = 3'd1, A_INSTALL = 3'd2, A_DEC = 3'd3,
                   A_INC = 3'd4, A_HOLD = 3'd5, A_FB_PRIO = 3'd6, A_FB_LINK = 3'd7;

  // ---------------------------------------------------------------------------
  // Registers of the spec (change at the end of a step)
  // ---------------------------------------------------------------------------
  reg [K-1:0]       valid_q, valid_d;
  reg [2*K-1:0]     level_q, level_d;
  reg [48*K-1:0]    key_da_q, key_da_d;         // data: read only while valid
  reg [3*K-1:0]     key_prio_q, key_prio_d;     // data: read only while valid
  reg [RW*K-1:0]    rate_q, rate_d;
  reg [16*K-1:0]    cpid_q, cpid_d;
  reg [CW*K-1:0]    cnt_q, cnt_d;
  reg [PW*K-1:0]    rd_q, rd_d;
  reg [48*K*D-1:0]  fifo_da_q, fifo_da_d;       // data: read only below the count
  reg [3*K*D-1:0]   fifo_prio_q, fifo_prio_d;
  reg [LW*K*D-1:0]  fifo_len_q, fifo_len_d;

  wire [TW*K-1:0]   tok;                        // u_tok counts
  wire [K-1:0]      expire;                     // u_idle expiries

  reg  [SPW-1:0]    ph_q;                       // phase in the step
  wire              last = (ph_q == PH_LAST);

  wire cfg_err = (cfg_min_rate_i == 24'd0) || (cfg_min_rate_i > cfg_line_rate_i);
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Phase 0: lookups, release requests, free and fall-back limiters, W Qdelta
  // ---------------------------------------------------------------------------
  // The finest key level that matches, the lowest index within it.
  function automatic [IW:0] lookup(input [47:0] da, input [2:0] pr, input [K-1:0] v,
                                   input [2*K-1:0] lv, input [48*K-1:0] kda, input [3*K-1:0] kpr);
    integer j;
    reg f0, f1, f2;
    reg [IW-1:0] i0, i1, i2;
    begin
      f0 = 1'b0; f1 = 1'b0; f2 = 1'b0;
      i0 = {IW{1'b0}}; i1 = {IW{1'b0}}; i2 = {IW{1'b0}};
      for (j = K - 1; j >= 0; j = j - 1) begin
        if (v[j]) begin
          if (lv[2*j +: 2] == L_DA && kda[48*j +: 48] == da && kpr[3*j +: 3] == pr) begin
            f0 = 1'b1; i0 = j[IW-1:0];
          end
          if (lv[2*j +: 2] == L_PRIO && kpr[3*j +: 3] == pr) begin
            f1 = 1'b1; i1 = j[IW-1:0];
          end
          if (lv[2*j +: 2] == L_LINK) begin
            f2 = 1'b1; i2 = j[IW-1:0];
          end
        end
      end
      lookup = f0 ? {1'b1, i0} : (f1 ? {1'b1, i1} : {f2, i2});
    end
  endfunction

  wire [IW:0] fl_s0 = lookup(in_da_i, in_prio_i, valid_q, level_q, key_da_q, key_prio_q);
  wire [IW:0] ml_s0 = lookup(msg_flow_da_i, msg_prio_i, valid_q, level_q, key_da_q, key_prio_q);

  // A limiter requests the line when its head frame has its tokens.
  reg  [K-1:0]    lreq_s0;
  reg  [LW*K-1:0] head_len;
  integer         r, h;
  always @(*) begin
    for (r = 0; r < K; r = r + 1) begin
      h = r * D + {{(32-PW){1'b0}}, rd_q[r*PW +: PW]};
      head_len[r*LW +: LW] = fifo_len_q[h*LW +: LW];
      lreq_s0[r] = (cnt_q[r*CW +: CW] != {CW{1'b0}})
                && (tok[r*TW +: TW] >= {1'b0, fifo_len_q[h*LW +: LW], {FW{1'b0}}});
    end
  end

  // First free limiter; first (DA, prio) limiter of the message's priority.
  reg          free_hit_s0, fp_hit_s0;
  reg [IW-1:0] free_idx_s0, fp_idx_s0;
  integer      f;
  always @(*) begin
    free_hit_s0 = 1'b0; free_idx_s0 = {IW{1'b0}};
    fp_hit_s0   = 1'b0; fp_idx_s0   = {IW{1'b0}};
    for (f = K - 1; f >= 0; f = f - 1) begin
      if (!valid_q[f]) begin
        free_hit_s0 = 1'b1; free_idx_s0 = f[IW-1:0];
      end
      if (level_q[2*f +: 2] == L_DA && key_prio_q[3*f +: 3] == msg_prio_i) begin
        fp_hit_s0 = 1'b1; fp_idx_s0 = f[IW-1:0];
      end
    end
  end

  // The message's limiter answers to the message's point.
  wire cpm_s0 = msg_cpid_i == cpid_q[ml_s0[IW-1:0]*16 +: 16];

  // W Qdelta (exact: a signed 16-bit Qdelta times a 5-bit W in 22 bits).
  wire [21:0] wq_s0;
  prim_madd #(.W(22)) u_wq (
    .acc_i (22'd0),
    .a_i   ({{6{msg_qdelta_i[15]}}, msg_qdelta_i}),
    .b_i   ({3'd0, cfg_w_i}),
    .sum_o (wq_s0)
  );

  reg [IW:0]   fl_q, ml_q;
  reg [K-1:0]  lreq_q;
  reg          free_hit_q, fp_hit_q, cpm_q;
  reg [IW-1:0] free_idx_q, fp_idx_q;
  reg [19:0]   wq_q;                           // floor(W Qdelta / 4)

  // ---------------------------------------------------------------------------
  // Phase 1: Fb and |Fb|; the rate a decrease applies to
  // ---------------------------------------------------------------------------
  // fbx = Qoff - floor(W Qdelta / 4) and its negation, side by side; Fb is
  // fbx saturated to 16 bits, |Fb| (0..32768) the negation's where fbx < 0.
  wire [21:0] qo_x  = {{6{msg_qoff_i[15]}}, msg_qoff_i};
  wire [21:0] wq4   = {{2{wq_q[19]}}, wq_q};
  wire [21:0] fbx, nfbx;
  prim_add3 #(.W(22)) u_fbx  (.a_i(qo_x), .b_i(~wq4), .c_i(22'd0), .k_i(2'b01), .sum_o(fbx));
  prim_add3 #(.W(22)) u_nfbx (.a_i(wq4), .b_i(~qo_x), .c_i(22'd0), .k_i(2'b01), .sum_o(nfbx));
  wire        fb_hi  = !fbx[21] && fbx[20:15] != 6'd0;
  wire        fb_lo  = fbx[21] && fbx[20:15] != 6'h3f;
  wire [15:0] fb_s1  = fb_hi ? 16'h7fff : (fb_lo ? 16'h8000 : fbx[15:0]);
  wire [15:0] abs_s1 = !fbx[21] ? fb_s1 : (fb_lo ? 16'h8000 : nfbx[15:0]);
  wire unused_fb = ^{wq_s0[1:0], nfbx[21:16]};

  // The matched limiter's rate (an increase's and a hold's); the rate a
  // decrease applies to, for whichever action decreases (DECREASE, INSTALL,
  // FALLBACK_PRIO, FALLBACK_LINK on limiter 0): one decrease multiplier.
  wire [RW-1:0] rin_s1 = rate_q[ml_q[IW-1:0]*RW +: RW];
  reg  [RW-1:0] dop_s1;
  always @(*) begin
    if (ml_q[IW])        dop_s1 = rin_s1;
    else if (free_hit_q) dop_s1 = cfg_line_rate_i;
    else if (fp_hit_q)   dop_s1 = rate_q[fp_idx_q*RW +: RW];
    else                 dop_s1 = rate_q[RW-1:0];
  end

  reg [15:0]   fb_q, abs_q;
  reg [RW-1:0] dop_q, rin_q;

  // ---------------------------------------------------------------------------
  // Phases 2 and 3: rate |Fb| (40 bits) and Fb Ru (31 bits), a byte of the
  // multiplier per phase (prim_madd)
  // ---------------------------------------------------------------------------
  wire [31:0] dlo_s2, ilo_s2;
  prim_madd #(.W(32)) u_dlo (.acc_i(32'd0), .a_i({8'd0, dop_q}), .b_i(abs_q[7:0]), .sum_o(dlo_s2));
  prim_madd #(.W(32)) u_ilo (.acc_i(32'd0), .a_i({16'd0, cfg_ru_i}), .b_i(fb_q[7:0]), .sum_o(ilo_s2));
  reg [31:0] dlo_q, ilo_q;

  wire [31:0] dhi_s3, ihi_s3;
  prim_madd #(.W(32)) u_dhi (.acc_i({8'd0, dlo_q[31:8]}), .a_i({8'd0, dop_q}), .b_i(abs_q[15:8]),
                             .sum_o(dhi_s3));
  prim_madd #(.W(32)) u_ihi (.acc_i({8'd0, ilo_q[31:8]}), .a_i({16'd0, cfg_ru_i}), .b_i(fb_q[15:8]),
                             .sum_o(ihi_s3));
  wire [39:0] dprod_s3 = {dhi_s3, dlo_q[7:0]};       // < 2^39: 24 x 16 bits, |Fb| <= 2^15
  wire [31:0] iprod_s3 = {ihi_s3[23:0], ilo_q[7:0]}; // < 2^31: read only for Fb > 0
  reg [39:0] dprod_q;
  reg [31:0] iprod_q;
  wire unused_hi = ^ihi_s3[31:24];

  // ---------------------------------------------------------------------------
  // Phase 4: the decrease capped at half the rate; the increased rate capped
  // at the line rate. Each compare is the sign of a difference.
  // ---------------------------------------------------------------------------
  wire [39:0] want  = dprod_q >> cfg_gd_i;
  wire [40:0] half  = {18'd0, dop_q[RW-1:1]};
  wire [40:0] d_hw;                                   // half - want
  prim_add3 #(.W(41)) u_hw (.a_i(half), .b_i(~{1'b0, want}), .c_i(41'd0), .k_i(2'b01),
                            .sum_o(d_hw));
  wire [RW-1:0] dec_s4 = d_hw[40] ? dop_q >> 1 : want[RW-1:0];
  wire unused_hw = ^d_hw[39:0];

  wire [32:0] incv = {1'b0, iprod_q >> cfg_gi_i};
  wire [32:0] isum, iovr;                             // rate + inc; that - line - 1
  prim_add3 #(.W(33)) u_isum (.a_i({9'd0, rin_q}), .b_i(incv), .c_i(33'd0), .k_i(2'b00),
                              .sum_o(isum));
  prim_add3 #(.W(33)) u_iovr (.a_i({9'd0, rin_q}), .b_i(incv), .c_i(~{9'd0, cfg_line_rate_i}),
                              .k_i(2'b00), .sum_o(iovr));
  wire [RW-1:0] inc_s4 = !iovr[32] ? cfg_line_rate_i : isum[RW-1:0];
  wire unused_isum = ^{isum[32:RW], iovr[31:0]};

  reg [RW-1:0] dec_q, inc_q;

  // ---------------------------------------------------------------------------
  // Phase 5: rate - dec, at least the minimum rate
  // ---------------------------------------------------------------------------
  wire [RW:0] rr, rmn;                                // rate - dec; that - min
  prim_add3 #(.W(RW+1)) u_rr  (.a_i({1'b0, dop_q}), .b_i(~{1'b0, dec_q}), .c_i({RW+1{1'b0}}),
                               .k_i(2'b01), .sum_o(rr));
  prim_add3 #(.W(RW+1)) u_rmn (.a_i({1'b0, dop_q}), .b_i(~{1'b0, dec_q}),
                               .c_i(~{1'b0, cfg_min_rate_i}), .k_i(2'b11), .sum_o(rmn));
  wire [RW-1:0] rdec_s5 = rmn[RW] ? cfg_min_rate_i : rr[RW-1:0];
  wire unused_rr = rr[RW];

  reg [RW-1:0] rdec_q;

  // ---------------------------------------------------------------------------
  // Last phase. 1. Release
  // ---------------------------------------------------------------------------
  wire [N-1:0]  req = {in_valid_i && !fl_q[IW], lreq_q};
  wire          arb_valid;
  wire [AW-1:0] arb_idx;
  wire [N-1:0]  arb_gnt;
  wire [AW-1:0] arb_ptr;
  prim_rr_arb #(.N(N)) u_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req),
    .ack_i   (last),
    .valid_o (arb_valid),
    .idx_o   (arb_idx),
    .gnt_o   (arb_gnt),
    .ptr_o   (arb_ptr)
  );
  wire [K-1:0] rel    = arb_gnt[K-1:0];
  wire         bypass = arb_gnt[K];

  integer ho;
  always @(*) begin
    out_valid_o     = last && arb_valid;
    out_tag_valid_o = last && arb_valid && !bypass;
    out_tag_id_o    = {IW{1'b0}};
    out_tag_cpid_o  = 16'd0;
    out_da_o        = 48'd0;
    out_prio_o      = 3'd0;
    out_len_o       = 14'd0;
    ho = arb_idx[IW-1:0] * D + {{(32-PW){1'b0}}, rd_q[arb_idx[IW-1:0]*PW +: PW]};
    if (!last) begin
      // the step's frame leaves in its last clock
    end else if (bypass) begin
      out_da_o   = in_da_i;
      out_prio_o = in_prio_i;
      out_len_o  = in_len_i;
    end else if (arb_valid) begin
      out_tag_id_o   = arb_idx[IW-1:0];
      out_tag_cpid_o = cpid_q[arb_idx[IW-1:0]*16 +: 16];
      out_da_o     = fifo_da_q[ho*48 +: 48];
      out_prio_o   = fifo_prio_q[ho*3 +: 3];
      out_len_o    = fifo_len_q[ho*LW +: LW];
    end
  end

  // ---------------------------------------------------------------------------
  // 2. Admission
  // ---------------------------------------------------------------------------
  wire [IW-1:0] fl_idx = fl_q[IW-1:0];
  reg  [K-1:0]  enq;
  reg  [CW-1:0] room_cnt;
  always @(*) begin
    enq        = {K{1'b0}};
    in_ready_o = last && bypass;
    room_cnt   = cnt_q[fl_idx*CW +: CW] - {{(CW-1){1'b0}}, rel[fl_idx]};
    if (last && in_valid_i && fl_q[IW] && rate_q[fl_idx*RW +: RW] != cfg_line_rate_i
        && room_cnt < D[CW-1:0]) begin
      in_ready_o  = 1'b1;
      enq[fl_idx] = 1'b1;
    end
  end

  // ---------------------------------------------------------------------------
  // 3. The message
  // ---------------------------------------------------------------------------
  assign msg_fb_o = last ? fb_q : 16'd0;

  wire [IW-1:0] ml_idx = ml_q[IW-1:0];
  reg  [RW-1:0] rate_new;
  reg           app;
  always @(*) begin
    msg_act_o = A_NONE;
    msg_lim_o = {IW{1'b0}};
    app       = 1'b0;
    rate_new  = rdec_q;   // every decreasing action's; INCREASE and HOLD set theirs
    if (last && msg_valid_i) begin
      if (cfg_err) begin
        msg_act_o = A_IGNORE;
      end else if (ml_q[IW]) begin
        app       = 1'b1;
        msg_lim_o = ml_idx;
        if (fb_q[15]) begin
          msg_act_o = A_DEC;
        end else if (!cpm_q) begin
          // Fb >= 0 from a point the limiter does not answer to.
          app       = 1'b0;
          msg_lim_o = {IW{1'b0}};
          msg_act_o = A_IGNORE;
        end else if (fb_q != 16'd0) begin
          msg_act_o = A_INC;
          rate_new  = inc_q;
        end else begin
          msg_act_o = A_HOLD;
          rate_new  = rin_q;
        end
      end else if (!fb_q[15]) begin
        msg_act_o = A_IGNORE;
      end else if (free_hit_q) begin
        app       = 1'b1;
        msg_act_o = A_INSTALL;
        msg_lim_o = free_idx_q;
      end else if (fp_hit_q) begin
        app       = 1'b1;
        msg_act_o = A_FB_PRIO;
        msg_lim_o = fp_idx_q;
      end else begin
        app       = 1'b1;
        msg_act_o = A_FB_LINK;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Next state per limiter; 4. removal (line rate now, idle timer)
  // ---------------------------------------------------------------------------
  reg [K-1:0]      a_j, load, tick, free, valid_n;
  reg [2*K-1:0]    level_n;
  reg [RW*K-1:0]   rate_n;
  reg [CW*K-1:0]   cnt_n;
  reg [TW*K-1:0]   tok_inc, tok_dec;
  reg [PW-1:0]     wr;
  integer          j, ws;
  always @(*) begin
    valid_n     = valid_q;
    level_n     = level_q;
    key_da_d    = key_da_q;
    key_prio_d  = key_prio_q;
    rate_n      = rate_q;
    cpid_d      = cpid_q;
    rd_d        = rd_q;
    fifo_da_d   = fifo_da_q;
    fifo_prio_d = fifo_prio_q;
    fifo_len_d  = fifo_len_q;
    for (j = 0; j < K; j = j + 1) begin
      a_j[j] = app && msg_lim_o == j[IW-1:0];
      cnt_n[j*CW +: CW] = cnt_q[j*CW +: CW] - {{(CW-1){1'b0}}, rel[j]} + {{(CW-1){1'b0}}, enq[j]};
      tok_inc[j*TW +: TW] = (last && cnt_q[j*CW +: CW] != {CW{1'b0}}) ? {7'd0, rate_q[j*RW +: RW]}
                                                                       : {TW{1'b0}};
      tok_dec[j*TW +: TW] = (last && rel[j]) ? {1'b0, head_len[j*LW +: LW], {FW{1'b0}}} : {TW{1'b0}};
      wr = rd_q[j*PW +: PW] + cnt_q[j*CW +: PW];
      ws = j * D + {{(32-PW){1'b0}}, wr};
      if (enq[j]) begin
        fifo_da_d[ws*48 +: 48]   = in_da_i;
        fifo_prio_d[ws*3 +: 3]   = in_prio_i;
        fifo_len_d[ws*LW +: LW]  = in_len_i;
      end
      if (rel[j]) rd_d[j*PW +: PW] = rd_q[j*PW +: PW] + {{(PW-1){1'b0}}, 1'b1};
      if (a_j[j]) begin
        rate_n[j*RW +: RW] = rate_new;
        cpid_d[j*16 +: 16] = msg_cpid_i;
        if (msg_act_o == A_INSTALL) begin
          valid_n[j]            = 1'b1;
          level_n[2*j +: 2]     = L_DA;
          key_da_d[48*j +: 48]  = msg_flow_da_i;
          key_prio_d[3*j +: 3]  = msg_prio_i;
        end
        if (msg_act_o == A_FB_PRIO) level_n[2*j +: 2] = L_PRIO;
        if (msg_act_o == A_FB_LINK) level_n[2*j +: 2] = L_LINK;
      end
      rm_line_o[j] = last && valid_n[j] && rate_n[j*RW +: RW] == cfg_line_rate_i
                  && cnt_n[j*CW +: CW] == {CW{1'b0}};
      load[j] = a_j[j] || enq[j];
      tick[j] = last && valid_q[j] && cnt_q[j*CW +: CW] == {CW{1'b0}};
    end
  end

  integer e;
  always @(*) begin
    rm_idle_o = expire;
    free      = rm_line_o | expire;
    cnt_d     = cnt_n;
    valid_d   = valid_n & ~free;
    rate_d    = rate_n;
    level_d   = level_n;
    for (e = 0; e < K; e = e + 1) begin
      if (free[e]) begin
        rate_d[e*RW +: RW]  = {RW{1'b0}};
        level_d[2*e +: 2]   = L_DA;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Per-limiter primitives: token bucket, idle timer (they move only in the
  // last clock: their inputs are 0 in the others)
  // ---------------------------------------------------------------------------
  wire [K-1:0]     tok_sat;
  wire [IDW*K-1:0] idle_cnt;
  wire [K-1:0]     idle_run;
  genvar gj;
  generate
    for (gj = 0; gj < K; gj = gj + 1) begin : gen_lim
      prim_sat_cnt #(.W(TW)) u_tok (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .clr_i   (free[gj]),
        .inc_i   (tok_inc[gj*TW +: TW]),
        .dec_i   (tok_dec[gj*TW +: TW]),
        .count_o (tok[gj*TW +: TW]),
        .sat_o   (tok_sat[gj])
      );
      prim_timer #(.W(IDW)) u_idle (
        .clk_i     (clk_i),
        .rst_ni    (rst_ni),
        .load_i    (load[gj]),
        .value_i   (cfg_idle_i),
        .tick_i    (tick[gj]),
        .count_o   (idle_cnt[gj*IDW +: IDW]),
        .running_o (idle_run[gj]),
        .expire_o  (expire[gj])
      );
    end
  endgenerate

  wire unused_prims = ^{tok_sat, idle_cnt, idle_run, arb_ptr, arb_idx};

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q    <= {SPW{1'b0}};
      valid_q <= {K{1'b0}};
      level_q <= {2*K{1'b0}};
      rate_q  <= {RW*K{1'b0}};
      cpid_q  <= {16*K{1'b0}};
      cnt_q   <= {CW*K{1'b0}};
      rd_q    <= {PW*K{1'b0}};
    end else begin
      ph_q <= last ? {SPW{1'b0}} : ph_q + 1'b1;
      if (last) begin
        valid_q <= valid_d;
        level_q <= level_d;
        rate_q  <= rate_d;
        cpid_q  <= cpid_d;
        cnt_q   <= cnt_d;
        rd_q    <= rd_d;
      end
    end
  end

  // Data, and the stages (each loads in every clock; read in the last).
  always @(posedge clk_i) begin
    if (last) begin
      key_da_q    <= key_da_d;
      key_prio_q  <= key_prio_d;
      fifo_da_q   <= fifo_da_d;
      fifo_prio_q <= fifo_prio_d;
      fifo_len_q  <= fifo_len_d;
    end
    fl_q       <= fl_s0;
    ml_q       <= ml_s0;
    lreq_q     <= lreq_s0;
    free_hit_q <= free_hit_s0;
    free_idx_q <= free_idx_s0;
    fp_hit_q   <= fp_hit_s0;
    fp_idx_q   <= fp_idx_s0;
    cpm_q      <= cpm_s0;
    wq_q       <= wq_s0[21:2];
    fb_q       <= fb_s1;
    abs_q      <= abs_s1;
    dop_q      <= dop_s1;
    rin_q      <= rin_s1;
    dlo_q      <= dlo_s2;
    ilo_q      <= ilo_s2;
    dprod_q    <= dprod_s3;
    iprod_q    <= iprod_s3;
    dec_q      <= dec_s4;
    inc_q      <= inc_s4;
    rdec_q     <= rdec_s5;
  end

  assign lim_valid_o = valid_q;
  assign lim_level_o = level_q;
  assign lim_rate_o  = rate_q;
  assign lim_cnt_o   = cnt_q;
  assign lim_cpid_o  = cpid_q;

`ifndef SYNTHESIS
  integer a;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      for (a = 0; a < K; a = a + 1) begin
        if (cnt_q[a*CW +: CW] > D[CW-1:0]) $error("FifoBound_A: limiter %0d", a);
        if (!valid_q[a] && cnt_q[a*CW +: CW] != {CW{1'b0}}) $error("FreeEmpty_A: limiter %0d", a);
        if (valid_q[a] && !cfg_err && (rate_q[a*RW +: RW] < cfg_min_rate_i
                                       || rate_q[a*RW +: RW] > cfg_line_rate_i))
          $error("RateRange_A: limiter %0d", a);
        if (tok_sat[a]) $error("TokensNoSat_A: limiter %0d", a);
      end
      if (in_ready_o && !in_valid_i) $error("ReadyImpliesValid_A");
      // A step's outputs are shown in its last clock only (a frame leaves,
      // an offer is taken, a message acts once per step).
      if (!last && (in_ready_o || out_valid_o || out_tag_valid_o || out_da_o != 48'd0
                    || out_prio_o != 3'd0 || out_len_o != 14'd0 || out_tag_id_o != {IW{1'b0}}
                    || out_tag_cpid_o != 16'd0 || msg_fb_o != 16'd0 || msg_act_o != A_NONE
                    || msg_lim_o != {IW{1'b0}} || rm_line_o != {K{1'b0}} || rm_idle_o != {K{1'b0}}))
        $error("OutsideLastClockZero_A");
    end
  end
`endif

endmodule

`default_nettype wire
