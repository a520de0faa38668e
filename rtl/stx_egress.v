// stx_egress: the OSMOSIS output adapter (resequencing, in-order delivery,
// duplicate dropping, statistics).
//
// Spec: docs/stx_egress.md. Golden model: model/src/stx_egress.rs.
//
// Parameters
//   N     inputs (sources), a power of two, 2..16
//   R     arrival ports (crossbar receivers of this output), 1..4
//   B     RSQ entries per input, a power of two, 2..64
//   SW    sequence number width, log2(B) + 1 .. 16
//   IW    cell id width, 1..16
//   CNTW  statistics counter width, clog2(N B + 1) .. 32
//   SRCW, PW, CW, KW  derived, do not set
//
// Algorithm (one cycle, in order)
//   0. receivers: a receiver whose source a lower receiver also carries is a
//      CONFLICT; with cfg_err_o every cell is REFUSED; at most one effective
//      arrival per input remains
//   1. per input: the run of held slots from the head slot; the expected
//      sequence number head + run; ready = head slot held, or the arrival is
//      the head (bypass)
//   2. delivery: when dlv_ready_i, prim_rr_arb grants one ready input; its
//      head leaves (from the RSQ or straight from the receiver), the head
//      advances (mod 2^SW)
//   3. admission, after 2: d = seq - head (mod 2^SW); d < B: slot held ->
//      DUPLICATE, seq = expected -> IN_ORDER, else SR: OUT_OF_ORDER (stored),
//      GBN/SAW: OUT_OF_WINDOW; d >= 2^(SW-1): DUPLICATE; else OUT_OF_WINDOW
//   4. credits freed (flow control): the delivered cell, and every cell not
//      stored (duplicate, out of window, conflict, refused)
//   5. counters (prim_sat_cnt): delivered, duplicates, out of window, out of
//      order, cells held at the start of the cycle
//
// Ports
//   cfg_scheme_i   held for a run (0 SR, 1 GBN, 2 SAW, 3 illegal)
//   dlv_*_o, arr_fate_o, crd_o: same cycle; the others: registers

`default_nettype none
`timescale 1ns / 100ps

module stx_egress #(
  parameter integer N    = 8,
  parameter integer R    = 2,
  parameter integer B    = 8,
  parameter integer SW   = 8,
  parameter integer IW   = 8,
  parameter integer CNTW = 32,
  parameter integer SRCW = $clog2(N),
  parameter integer PW   = $clog2(B),
  parameter integer CW   = $clog2(B + 1),
  parameter integer KW   = $clog2(R + 2)
) (
  input  wire              clk_i,
  input  wire              rst_ni,

  input  wire [1:0]        cfg_scheme_i,

  input  wire [R-1:0]      arr_valid_i,
  input  wire [R*SRCW-1:0] arr_src_i,
  input  wire [R*SW-1:0]   arr_seq_i,
  input  wire [R*IW-1:0]   arr_id_i,
  input  wire              dlv_ready_i,

  output reg               dlv_valid_o,
  output reg  [SRCW-1:0]   dlv_src_o,
  output reg  [SW-1:0]     dlv_seq_o,
  output reg  [IW-1:0]     dlv_id_o,
  output reg               dlv_byp_o,
  output reg  [R*3-1:0]    arr_fate_o,
  output reg  [KW-1:0]     crd_o,
  output wire [N*SW-1:0]   head_seq_o,
  output reg  [N*SW-1:0]   exp_seq_o,
  output wire [N*B-1:0]    rsq_vld_o,
  output reg  [N*CW-1:0]   rsq_cnt_o,
  output wire [CNTW-1:0]   cnt_dlv_o,
  output wire [CNTW-1:0]   cnt_dup_o,
  output wire [CNTW-1:0]   cnt_oow_o,
  output wire [CNTW-1:0]   cnt_ooo_o,
  output wire [CNTW-1:0]   cnt_wait_o,
  output wire              cfg_err_o
);

  localparam integer OW = $clog2(N * B + 1);   // cells held in all RSQs

  localparam [2:0] F_NONE = 3'd0, F_DLV = 3'd1, F_INO = 3'd2, F_OOO = 3'd3,
                   F_DUP = 3'd4, F_OOW = 3'd5, F_CONF = 3'd6, F_REF = 3'd7;

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [N*SW-1:0]   head_q, head_d;
  reg [N*B-1:0]    vld_q, vld_d;
  reg [N*B*IW-1:0] id_q, id_d;          // data: read only where vld_q is set

  wire cfg_err = (cfg_scheme_i == 2'd3);
  wire sr      = (cfg_scheme_i == 2'd0);
  assign cfg_err_o = cfg_err;

  // Every value a function reads is an argument (Icarus sensitivity).
  // Held slots in a row from slot h (0..B).
  function automatic [CW-1:0] run_len(input [B-1:0] v, input [PW-1:0] h);
    integer k;
    reg [PW-1:0] hk;
    reg          go;
    begin
      run_len = {CW{1'b0}};
      go = 1'b1;
      for (k = 0; k < B; k = k + 1) begin
        hk = h + k[PW-1:0];
        if (go && v[hk]) run_len = run_len + 1'b1;
        else go = 1'b0;
      end
    end
  endfunction

  function automatic [CW-1:0] popcount(input [B-1:0] v);
    integer k;
    begin
      popcount = {CW{1'b0}};
      for (k = 0; k < B; k = k + 1) popcount = popcount + {{(CW-1){1'b0}}, v[k]};
    end
  endfunction

  // ---------------------------------------------------------------------------
  // 0. Receivers
  // ---------------------------------------------------------------------------
  reg [R-1:0] conf, eff;
  integer x, y;
  always @(*) begin
    for (x = 0; x < R; x = x + 1) begin
      conf[x] = 1'b0;
      for (y = 0; y < x; y = y + 1) begin
        if (arr_valid_i[y] && arr_src_i[y*SRCW +: SRCW] == arr_src_i[x*SRCW +: SRCW])
          conf[x] = 1'b1;
      end
      eff[x] = arr_valid_i[x] && !conf[x] && !cfg_err;
    end
  end

  // The effective arrival of each input.
  reg [N-1:0]    a;
  reg [N*SW-1:0] a_seq;
  reg [N*IW-1:0] a_id;
  integer ai, ax;
  always @(*) begin
    a     = {N{1'b0}};
    a_seq = {N*SW{1'b0}};
    a_id  = {N*IW{1'b0}};
    for (ax = 0; ax < R; ax = ax + 1) begin
      for (ai = 0; ai < N; ai = ai + 1) begin
        if (eff[ax] && arr_src_i[ax*SRCW +: SRCW] == ai[SRCW-1:0]) begin
          a[ai]               = 1'b1;
          a_seq[ai*SW +: SW]  = arr_seq_i[ax*SW +: SW];
          a_id[ai*IW +: IW]   = arr_id_i[ax*IW +: IW];
        end
      end
    end
  end

  // ---------------------------------------------------------------------------
  // 1. Per input, on the registers
  // ---------------------------------------------------------------------------
  reg [N-1:0]    buf_rdy, req;
  reg [OW-1:0]   occ_total;
  reg [31:0]     sum32;
  reg [PW-1:0]   hs;
  integer i1;
  always @(*) begin
    occ_total = {OW{1'b0}};
    for (i1 = 0; i1 < N; i1 = i1 + 1) begin
      hs = head_q[i1*SW +: PW];
      rsq_cnt_o[i1*CW +: CW] = popcount(vld_q[i1*B +: B]);
      sum32 = {{(32-SW){1'b0}}, head_q[i1*SW +: SW]}
            + {{(32-CW){1'b0}}, run_len(vld_q[i1*B +: B], hs)};
      exp_seq_o[i1*SW +: SW] = sum32[SW-1:0];
      occ_total = occ_total + {{(OW-CW){1'b0}}, rsq_cnt_o[i1*CW +: CW]};
      buf_rdy[i1] = vld_q[i1*B + {{(32-PW){1'b0}}, hs}];
      req[i1] = dlv_ready_i
             && (buf_rdy[i1] || (a[i1] && a_seq[i1*SW +: SW] == head_q[i1*SW +: SW]));
    end
  end

  // ---------------------------------------------------------------------------
  // 2. Delivery
  // ---------------------------------------------------------------------------
  wire            arb_valid;
  wire [SRCW-1:0] arb_idx;
  wire [N-1:0]    gnt;
  wire [SRCW-1:0] arb_ptr;
  prim_rr_arb #(.N(N)) u_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req),
    .ack_i   (1'b1),
    .valid_o (arb_valid),
    .idx_o   (arb_idx),
    .gnt_o   (gnt),
    .ptr_o   (arb_ptr)
  );

  reg [PW-1:0] gs;
  always @(*) begin
    dlv_valid_o = arb_valid;
    dlv_src_o   = {SRCW{1'b0}};
    dlv_seq_o   = {SW{1'b0}};
    dlv_id_o    = {IW{1'b0}};
    dlv_byp_o   = 1'b0;
    gs          = head_q[arb_idx*SW +: PW];
    if (arb_valid) begin
      dlv_src_o = arb_idx;
      dlv_seq_o = head_q[arb_idx*SW +: SW];
      if (buf_rdy[arb_idx]) begin
        dlv_id_o = id_q[(arb_idx*B + {{(32-PW){1'b0}}, gs})*IW +: IW];
      end else begin
        dlv_id_o  = a_id[arb_idx*IW +: IW];
        dlv_byp_o = 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // 3. Admission (after the delivery)
  // ---------------------------------------------------------------------------
  reg [N*3-1:0] f_in;      // fate of each input's arrival
  reg [SW-1:0]  hn, d, sq;
  reg [PW-1:0]  sl;
  reg [31:0]    d32;
  integer i3;
  always @(*) begin
    head_d = head_q;
    vld_d  = vld_q;
    id_d   = id_q;
    f_in   = {N*3{1'b0}};
    for (i3 = 0; i3 < N; i3 = i3 + 1) begin
      hn = head_q[i3*SW +: SW] + {{(SW-1){1'b0}}, gnt[i3]};
      head_d[i3*SW +: SW] = hn;
      // the delivered head slot is freed first
      if (gnt[i3] && buf_rdy[i3]) vld_d[i3*B + {{(32-PW){1'b0}}, head_q[i3*SW +: PW]}] = 1'b0;
      sq  = a_seq[i3*SW +: SW];
      sl  = sq[PW-1:0];
      d   = sq - hn;
      d32 = {{(32-SW){1'b0}}, d};
      if (a[i3]) begin
        if (gnt[i3] && !buf_rdy[i3]) begin
          f_in[i3*3 +: 3] = F_DLV;
        end else if (d32 < B) begin
          if (vld_d[i3*B + {{(32-PW){1'b0}}, sl}]) begin
            f_in[i3*3 +: 3] = F_DUP;
          end else if (sq == exp_seq_o[i3*SW +: SW] || sr) begin
            f_in[i3*3 +: 3] = (sq == exp_seq_o[i3*SW +: SW]) ? F_INO : F_OOO;
            vld_d[i3*B + {{(32-PW){1'b0}}, sl}] = 1'b1;
            id_d[(i3*B + {{(32-PW){1'b0}}, sl})*IW +: IW] = a_id[i3*IW +: IW];
          end else begin
            f_in[i3*3 +: 3] = F_OOW;
          end
        end else if (d[SW-1]) begin
          f_in[i3*3 +: 3] = F_DUP;
        end else begin
          f_in[i3*3 +: 3] = F_OOW;
        end
      end
    end
  end

  // Fates per receiver and their counts; the credits freed.
  reg [2:0] n_dup, n_oow, n_ooo;
  integer fx;
  always @(*) begin
    n_dup = 3'd0;
    n_oow = 3'd0;
    n_ooo = 3'd0;
    crd_o = {{(KW-1){1'b0}}, arb_valid};
    for (fx = 0; fx < R; fx = fx + 1) begin
      if (!arr_valid_i[fx])  arr_fate_o[fx*3 +: 3] = F_NONE;
      else if (conf[fx])     arr_fate_o[fx*3 +: 3] = F_CONF;
      else if (cfg_err)      arr_fate_o[fx*3 +: 3] = F_REF;
      else                   arr_fate_o[fx*3 +: 3] = f_in[arr_src_i[fx*SRCW +: SRCW]*3 +: 3];
      if (arr_fate_o[fx*3 +: 3] == F_DUP) n_dup = n_dup + 3'd1;
      if (arr_fate_o[fx*3 +: 3] == F_OOW) n_oow = n_oow + 3'd1;
      if (arr_fate_o[fx*3 +: 3] == F_OOO) n_ooo = n_ooo + 3'd1;
      if (arr_fate_o[fx*3 +: 3] >= F_DUP) crd_o = crd_o + {{(KW-1){1'b0}}, 1'b1};
    end
  end

  // ---------------------------------------------------------------------------
  // 4. Counters
  // ---------------------------------------------------------------------------
  reg [31:0] inc_dlv, inc_dup, inc_oow, inc_ooo, inc_wait;
  always @(*) begin
    inc_dlv  = {31'd0, arb_valid};
    inc_dup  = {29'd0, n_dup};
    inc_oow  = {29'd0, n_oow};
    inc_ooo  = {29'd0, n_ooo};
    inc_wait = 32'd0;
    inc_wait[OW-1:0] = occ_total;
  end

  wire [4:0] sat;
  prim_sat_cnt #(.W(CNTW)) u_cnt_dlv (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i (inc_dlv[CNTW-1:0]),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_dlv_o), .sat_o (sat[0])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_dup (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i (inc_dup[CNTW-1:0]),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_dup_o), .sat_o (sat[1])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_oow (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i (inc_oow[CNTW-1:0]),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_oow_o), .sat_o (sat[2])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_ooo (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i (inc_ooo[CNTW-1:0]),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_ooo_o), .sat_o (sat[3])
  );
  prim_sat_cnt #(.W(CNTW)) u_cnt_wait (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (1'b0), .inc_i (inc_wait[CNTW-1:0]),
    .dec_i ({CNTW{1'b0}}), .count_o (cnt_wait_o), .sat_o (sat[4])
  );

  wire unused_misc = ^{sat, arb_ptr, inc_dlv, inc_dup, inc_oow, inc_ooo, inc_wait, sum32, d32};

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      head_q <= {N*SW{1'b0}};
      vld_q  <= {N*B{1'b0}};
    end else begin
      head_q <= head_d;
      vld_q  <= vld_d;
    end
  end

  always @(posedge clk_i) begin
    id_q <= id_d;
  end

  assign head_seq_o = head_q;
  assign rsq_vld_o  = vld_q;

`ifndef SYNTHESIS
  integer ka;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (dlv_valid_o && dlv_seq_o != head_q[dlv_src_o*SW +: SW]) $error("DlvIsHead_A");
      if (dlv_valid_o && !dlv_ready_i) $error("DlvImpliesReady_A");
      for (ka = 0; ka < N; ka = ka + 1) begin
        if (rsq_cnt_o[ka*CW +: CW] > B[CW-1:0]) $error("OccBound_A: input %0d", ka);
        if (!sr && !cfg_err && run_len(vld_q[ka*B +: B], head_q[ka*SW +: PW])
                               != rsq_cnt_o[ka*CW +: CW])
          $error("GbnRun_A: input %0d", ka);
        if (cfg_err && vld_q[ka*B +: B] != {B{1'b0}}) $error("ErrEmpty_A: input %0d", ka);
      end
    end
  end
`endif

endmodule

`default_nettype wire
