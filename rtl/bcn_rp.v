// bcn_rp: the BCN reaction point at the edge (rate limiters, shaper, bypass).
//
// Spec: docs/bcn_rp.md. Golden model: model/src/bcn_rp.rs.
//
// Parameters
//   K   rate limiters, 1..8
//   D   descriptor FIFO depth per limiter, a power of two, 2..16
//   IW  limiter id width (derived, do not set)
//   CW  FIFO count width (derived, do not set)
//
// Algorithm (one cycle, in order)
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
// Ports
//   cfg_*   held for a run
//   in_*    the frame the source offers (valid/ready); out_* the frame sent
//   msg_*   a BCN message
//   in_ready_o, out_*, msg_fb_o, msg_act_o, msg_lim_o, rm_*_o: same cycle
//   lim_*_o: registers at the start of the cycle

`default_nettype none
`timescale 1ns / 100ps

module bcn_rp #(
  parameter integer K  = 4,
  parameter integer D  = 4,
  parameter integer IW = (K > 1) ? $clog2(K) : 1,
  parameter integer CW = $clog2(D + 1)
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
  localparam integer TW  = LW + FW + 1;     // token bucket: a frame plus K + 1 cycles of rate
  localparam integer IDW = 16;

  localparam [1:0] L_DA = 2'd0, L_PRIO = 2'd1, L_LINK = 2'd2;
  localparam [2:0] A_NONE = 3'd0, A_IGNORE = 3'd1, A_INSTALL = 3'd2, A_DEC = 3'd3,
                   A_INC = 3'd4, A_HOLD = 3'd5, A_FB_PRIO = 3'd6, A_FB_LINK = 3'd7;

  // ---------------------------------------------------------------------------
  // Registers
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

  wire cfg_err = (cfg_min_rate_i == 24'd0) || (cfg_min_rate_i > cfg_line_rate_i);
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Lookup: the finest key level that matches, the lowest index within it
  // ---------------------------------------------------------------------------
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

  wire [IW:0]   fl     = lookup(in_da_i, in_prio_i, valid_q, level_q, key_da_q, key_prio_q);
  wire          fl_hit = in_valid_i && fl[IW];
  wire [IW-1:0] fl_idx = fl[IW-1:0];
  wire [IW:0]   ml     = lookup(msg_flow_da_i, msg_prio_i, valid_q, level_q, key_da_q, key_prio_q);
  wire [IW-1:0] ml_idx = ml[IW-1:0];

  // ---------------------------------------------------------------------------
  // 1. Release
  // ---------------------------------------------------------------------------
  reg  [N-1:0]    req;
  reg  [LW*K-1:0] head_len;
  integer         r, h;
  always @(*) begin
    for (r = 0; r < K; r = r + 1) begin
      h = r * D + {{(32-PW){1'b0}}, rd_q[r*PW +: PW]};
      head_len[r*LW +: LW] = fifo_len_q[h*LW +: LW];
      req[r] = (cnt_q[r*CW +: CW] != {CW{1'b0}})
            && (tok[r*TW +: TW] >= {1'b0, fifo_len_q[h*LW +: LW], {FW{1'b0}}});
    end
    req[K] = in_valid_i && !fl[IW];
  end

  wire          arb_valid;
  wire [AW-1:0] arb_idx;
  wire [N-1:0]  arb_gnt;
  wire [AW-1:0] arb_ptr;
  prim_rr_arb #(.N(N)) u_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req),
    .ack_i   (1'b1),
    .valid_o (arb_valid),
    .idx_o   (arb_idx),
    .gnt_o   (arb_gnt),
    .ptr_o   (arb_ptr)
  );
  wire [K-1:0] rel    = arb_gnt[K-1:0];
  wire         bypass = arb_gnt[K];

  integer ho;
  always @(*) begin
    out_valid_o     = arb_valid;
    out_tag_valid_o = arb_valid && !bypass;
    out_tag_id_o    = {IW{1'b0}};
    out_tag_cpid_o  = 16'd0;
    out_da_o        = 48'd0;
    out_prio_o      = 3'd0;
    out_len_o       = 14'd0;
    ho = arb_idx[IW-1:0] * D + {{(32-PW){1'b0}}, rd_q[arb_idx[IW-1:0]*PW +: PW]};
    if (bypass) begin
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
  reg [K-1:0]  enq;
  reg [CW-1:0] room_cnt;
  always @(*) begin
    enq        = {K{1'b0}};
    in_ready_o = bypass;
    room_cnt   = cnt_q[fl_idx*CW +: CW] - {{(CW-1){1'b0}}, rel[fl_idx]};
    if (fl_hit && rate_q[fl_idx*RW +: RW] != cfg_line_rate_i && room_cnt < D[CW-1:0]) begin
      in_ready_o  = 1'b1;
      enq[fl_idx] = 1'b1;
    end
  end

  // ---------------------------------------------------------------------------
  // 3. The message
  // ---------------------------------------------------------------------------
  wire signed [21:0] wq  = $signed({1'b0, cfg_w_i}) * $signed(msg_qdelta_i);
  wire signed [21:0] fbx = $signed({{6{msg_qoff_i[15]}}, msg_qoff_i}) - (wq >>> 2);
  wire               fb_hi = !fbx[21] && fbx[20:15] != 6'd0;
  wire               fb_lo = fbx[21] && fbx[20:15] != 6'h3f;
  wire [15:0]        fb    = fb_hi ? 16'h7fff : (fb_lo ? 16'h8000 : fbx[15:0]);
  wire [15:0]        fb_abs = fb[15] ? (~fb + 16'd1) : fb;
  assign msg_fb_o = fb;

  // Every value a function reads is an argument, so that it is in the
  // sensitivity of the always @(*) that calls it.
  function automatic [RW-1:0] dec_rate(input [RW-1:0] rt, input [15:0] a, input [3:0] gd,
                                       input [RW-1:0] mn);
    reg [39:0]   want;
    reg [RW-1:0] half, dec, rr;
    begin
      want = ({16'd0, rt} * {24'd0, a}) >> gd;
      half = rt >> 1;
      dec  = (want > {16'd0, half}) ? half : want[RW-1:0];
      rr   = rt - dec;
      dec_rate = (rr < mn) ? mn : rr;
    end
  endfunction

  function automatic [RW-1:0] inc_rate(input [RW-1:0] rt, input [15:0] fbv, input [15:0] ru,
                                       input [3:0] gi, input [RW-1:0] ln);
    reg [31:0] inc;
    reg [32:0] sum;
    begin
      inc = ({16'd0, fbv} * {16'd0, ru}) >> gi;
      sum = {9'd0, rt} + {1'b0, inc};
      inc_rate = (sum > {9'd0, ln}) ? ln : sum[RW-1:0];
    end
  endfunction

  // First free limiter; first (DA, prio) limiter of the message's priority.
  reg          free_hit, fp_hit;
  reg [IW-1:0] free_idx, fp_idx;
  integer      f;
  always @(*) begin
    free_hit = 1'b0; free_idx = {IW{1'b0}};
    fp_hit   = 1'b0; fp_idx   = {IW{1'b0}};
    for (f = K - 1; f >= 0; f = f - 1) begin
      if (!valid_q[f]) begin
        free_hit = 1'b1; free_idx = f[IW-1:0];
      end
      if (level_q[2*f +: 2] == L_DA && key_prio_q[3*f +: 3] == msg_prio_i) begin
        fp_hit = 1'b1; fp_idx = f[IW-1:0];
      end
    end
  end

  // The rate a decrease applies to, for whichever action decreases (DECREASE,
  // INSTALL, FALLBACK_PRIO, FALLBACK_LINK on limiter 0): one decrease
  // multiplier for all of them.
  reg [RW-1:0] dec_op;
  always @(*) begin
    if (ml[IW])        dec_op = rate_q[ml_idx*RW +: RW];
    else if (free_hit) dec_op = cfg_line_rate_i;
    else if (fp_hit)   dec_op = rate_q[fp_idx*RW +: RW];
    else               dec_op = rate_q[RW-1:0];
  end
  wire [RW-1:0] rate_dec = dec_rate(dec_op, fb_abs, cfg_gd_i, cfg_min_rate_i);

  reg [RW-1:0] rate_new;
  reg          app;
  always @(*) begin
    msg_act_o = A_NONE;
    msg_lim_o = {IW{1'b0}};
    app       = 1'b0;
    rate_new  = rate_dec;   // every decreasing action's; INCREASE and HOLD set theirs
    if (msg_valid_i) begin
      if (cfg_err) begin
        msg_act_o = A_IGNORE;
      end else if (ml[IW]) begin
        app       = 1'b1;
        msg_lim_o = ml_idx;
        if (fb[15]) begin
          msg_act_o = A_DEC;
        end else if (msg_cpid_i != cpid_q[ml_idx*16 +: 16]) begin
          // Fb >= 0 from a point the limiter does not answer to.
          app       = 1'b0;
          msg_lim_o = {IW{1'b0}};
          msg_act_o = A_IGNORE;
        end else if (fb != 16'd0) begin
          msg_act_o = A_INC;
          rate_new  = inc_rate(rate_q[ml_idx*RW +: RW], fb, cfg_ru_i, cfg_gi_i, cfg_line_rate_i);
        end else begin
          msg_act_o = A_HOLD;
          rate_new  = rate_q[ml_idx*RW +: RW];
        end
      end else if (!fb[15]) begin
        msg_act_o = A_IGNORE;
      end else if (free_hit) begin
        app       = 1'b1;
        msg_act_o = A_INSTALL;
        msg_lim_o = free_idx;
      end else if (fp_hit) begin
        app       = 1'b1;
        msg_act_o = A_FB_PRIO;
        msg_lim_o = fp_idx;
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
      tok_inc[j*TW +: TW] = (cnt_q[j*CW +: CW] != {CW{1'b0}}) ? {7'd0, rate_q[j*RW +: RW]} : {TW{1'b0}};
      tok_dec[j*TW +: TW] = rel[j] ? {1'b0, head_len[j*LW +: LW], {FW{1'b0}}} : {TW{1'b0}};
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
      rm_line_o[j] = valid_n[j] && rate_n[j*RW +: RW] == cfg_line_rate_i
                  && cnt_n[j*CW +: CW] == {CW{1'b0}};
      load[j] = a_j[j] || enq[j];
      tick[j] = valid_q[j] && cnt_q[j*CW +: CW] == {CW{1'b0}};
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
  // Per-limiter primitives: token bucket, idle timer
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
      valid_q <= {K{1'b0}};
      level_q <= {2*K{1'b0}};
      rate_q  <= {RW*K{1'b0}};
      cpid_q  <= {16*K{1'b0}};
      cnt_q   <= {CW*K{1'b0}};
      rd_q    <= {PW*K{1'b0}};
    end else begin
      valid_q <= valid_d;
      level_q <= level_d;
      rate_q  <= rate_d;
      cpid_q  <= cpid_d;
      cnt_q   <= cnt_d;
      rd_q    <= rd_d;
    end
  end

  always @(posedge clk_i) begin
    key_da_q    <= key_da_d;
    key_prio_q  <= key_prio_d;
    fifo_da_q   <= fifo_da_d;
    fifo_prio_q <= fifo_prio_d;
    fifo_len_q  <= fifo_len_d;
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
    end
  end
`endif

endmodule

`default_nettype wire
