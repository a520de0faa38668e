// bcn_cp: the BCN congestion point at the egress queues of one switch port.
//
// Parameters
//   NQ  number of egress queues, 1..8 (queue fields on the ports are 3 bits;
//       a queue >= NQ is ignored and flagged in err_o)
//   QW  queue depth width in bytes, 14..28 (the total depth has QW + 3 bits)
//   CW  width of the event counters, 1..32 (they saturate)
//
// Per cycle (docs/bcn_cp.md, in this order): a departure releases
// min(length, depth) bytes of its queue (a longer one is clamped and flagged);
// an arrival is admitted when it fits both its queue limit and the buffer
// limit after the release, else dropped and counted; the arrival is sampled
// when it is not a BCN frame (arr_etype_i != cfg_etype_i) and the low 10
// bits of the LFSR (prim_lfsr, stepped 16 times per arrival) are below
// cfg_pm_i; on a sample, with Q the queue's depth at the end of the cycle,
// Qold = Q in the same cycle and the feedback runs in three stages:
//   stage 1: Qoff = sat16((Qeq - Q) >>> 6), Qdelta = sat16((Q - Qold) >>> 6)
//   stage 2: wq = cfg_w_i * Qdelta (exact)
//   stage 3: Fb = sat16(Qoff - (wq >>> 2)); a message is sent when Fb < 0 or
//            the frame's rate-limiter tag names this point (its CPID is
//            {cfg_cpid_i, queue})
// A departing tag is stripped only when it names this point. The message is
// output as parallel fields in stage 3 (msg_*, three cycles after the
// arrival) and as a 64-byte Ethernet frame with FCS (prim_crc32), eight
// beats from the next cycle on when the transmitter is free, else held in
// one pending slot, else dropped and counted.
//
// Ports: cfg_* held for a run; arr_* / dep_* one arrival and one departure per
// cycle; arr_drop_o, dep_strip_o, err_o combinational; sample_o and msg_*
// from feedback stage 3 (registers); the tx_* stream, q_o, tot_o and the
// counters registered.
//
// Golden model: model::bcn_cp (model/src/bcn_cp.rs).

`default_nettype none
`timescale 1ns / 100ps

module bcn_cp #(
  parameter integer NQ = 8,
  parameter integer QW = 24,
  parameter integer CW = 16
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  // configuration
  input  wire [47:0]          cfg_cp_sa_i,
  input  wire [12:0]          cfg_cpid_i,
  input  wire [2:0]           cfg_pcp_i,
  input  wire [15:0]          cfg_etype_i,
  input  wire [NQ*QW-1:0]     cfg_qeq_i,
  input  wire [QW-1:0]        cfg_qmax_i,
  input  wire [QW+2:0]        cfg_buf_i,
  input  wire [4:0]           cfg_w_i,
  input  wire [10:0]          cfg_pm_i,
  // arrival (header fields of the arriving frame)
  input  wire                 arr_valid_i,
  input  wire [2:0]           arr_queue_i,
  input  wire [13:0]          arr_len_i,
  input  wire [47:0]          arr_da_i,
  input  wire [47:0]          arr_sa_i,
  input  wire [2:0]           arr_prio_i,
  input  wire                 arr_rlt_i,
  input  wire [15:0]          arr_rlt_id_i,
  input  wire [15:0]          arr_rlt_cpid_i,
  input  wire [15:0]          arr_etype_i,
  // departure
  input  wire                 dep_valid_i,
  input  wire [2:0]           dep_queue_i,
  input  wire [13:0]          dep_len_i,
  input  wire                 dep_rlt_i,
  input  wire [15:0]          dep_rlt_cpid_i,
  // combinational results of this cycle
  output wire                 arr_drop_o,
  output wire                 sample_o,
  output wire                 msg_valid_o,
  output wire [47:0]          msg_flow_da_o,
  output wire [47:0]          msg_sa_o,
  output wire [2:0]           msg_prio_o,
  output wire [15:0]          msg_cpid_o,
  output wire signed [15:0]   msg_qoff_o,
  output wire signed [15:0]   msg_qdelta_o,
  output wire signed [15:0]   msg_fb_o,
  output wire                 msg_rlt_o,
  output wire [15:0]          msg_rlt_id_o,
  output wire [15:0]          msg_rlt_cpid_o,
  output wire                 msg_rlt_own_o,
  output wire [15:0]          msg_etype_o,
  output wire [31:0]          msg_ts_o,
  output wire                 dep_strip_o,
  output wire [2:0]           err_o,
  // BCN frame stream (registered)
  output wire                 tx_valid_o,
  output wire                 tx_last_o,
  output wire [2:0]           tx_empty_o,
  output wire [63:0]          tx_data_o,
  // depths and counters (registered)
  output wire [NQ*QW-1:0]     q_o,
  output wire [QW+2:0]        tot_o,
  output wire [CW-1:0]        samples_o,
  output wire [CW-1:0]        msgs_o,
  output wire [CW-1:0]        msg_drops_o,
  output wire [CW-1:0]        drops_o,
  output wire [CW-1:0]        strips_o,
  output wire                 cfg_err_o
);

  localparam integer TW = QW + 3;            // total depth
  localparam integer LW = 14;                // frame length
  localparam integer MW = 16 + 16 + 16 + 1 + 32 + 16 + 16 + 16 + 3 + 48 + 48;  // a message
  localparam integer PW = 16 + 16 + 16 + 1 + 1 + 3 + 3 + 48 + 48;  // a sample's header fields
  localparam integer WW = 21;                // cfg_w_i * Qdelta, signed, exact
  localparam [31:0] CRC_INIT  = 32'hFFFF_FFFF;
  localparam [15:0] TPID      = 16'h8100;
  localparam [15:0] RLT_ETYPE = 16'h22E9;

  // ---------------------------------------------------------------------------
  // Configuration check
  // ---------------------------------------------------------------------------
  reg     qeq_hi;
  integer k;
  always @(*) begin
    qeq_hi = 1'b0;
    for (k = 0; k < NQ; k = k + 1) begin
      if (cfg_qeq_i[QW*k +: QW] > cfg_qmax_i) qeq_hi = 1'b1;
    end
  end
  assign cfg_err_o = cfg_cp_sa_i[40] || (cfg_pm_i > 11'd1024) || qeq_hi;

  // ---------------------------------------------------------------------------
  // Registers (the depths and the counters are further below, the LFSR a primitive)
  // ---------------------------------------------------------------------------
  reg [NQ*QW-1:0] qold_q, qold_d;
  reg [31:0]      ts_q;
  reg             tx_busy_q, tx_busy_d;
  reg [2:0]       tx_beat_q, tx_beat_d;
  reg [31:0]      tx_crc_q, tx_crc_d;
  reg             pend_valid_q, pend_valid_d;
  // The message payloads: data registers, loaded before they are read (the
  // frame is read only while tx_busy_q, the pending slot only while
  // pend_valid_q), so not reset.
  reg [47:0]      cur_sa_q, cur_da_q, pend_sa_q, pend_da_q;
  reg [2:0]       cur_prio_q, pend_prio_q;
  reg [15:0]      cur_cpid_q, cur_qoff_q, cur_qdelta_q, cur_rlt_id_q, cur_rlt_cpid_q, cur_etype_q;
  reg [15:0]      pend_cpid_q, pend_qoff_q, pend_qdelta_q, pend_rlt_id_q, pend_rlt_cpid_q, pend_etype_q;
  reg [31:0]      cur_ts_q, pend_ts_q;
  reg             cur_rlt_q, pend_rlt_q;
  reg [MW-1:0]    cur_d, pend_d;
  // The feedback stages (docs/bcn_cp.md, "Pipeline and latency"): valid bits
  // reset, data registers loaded before they are read (only while valid).
  reg             s1_valid_q, s2_valid_q, s3_valid_q;
  reg [QW-1:0]    s1_qn_q, s1_qeq_q, s1_qold_q;
  reg [PW-1:0]    s1_pay_q, s2_pay_q, s3_pay_q;
  reg [15:0]      s2_qoff_q, s2_qdelta_q, s3_qoff_q, s3_qdelta_q;
  reg [WW-1:0]    s3_wq_q;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      qold_q       <= {NQ*QW{1'b0}};
      ts_q         <= 32'd0;
      tx_busy_q    <= 1'b0;
      tx_beat_q    <= 3'd0;
      tx_crc_q     <= CRC_INIT;
      pend_valid_q <= 1'b0;
      s1_valid_q   <= 1'b0;
      s2_valid_q   <= 1'b0;
      s3_valid_q   <= 1'b0;
    end else begin
      qold_q       <= qold_d;
      ts_q         <= ts_q + 32'd1;
      tx_busy_q    <= tx_busy_d;
      tx_beat_q    <= tx_beat_d;
      tx_crc_q     <= tx_crc_d;
      pend_valid_q <= pend_valid_d;
      s1_valid_q   <= sample;
      s2_valid_q   <= s1_valid_q;
      s3_valid_q   <= s2_valid_q;
    end
  end

  always @(posedge clk_i) begin
    {cur_etype_q, cur_rlt_cpid_q, cur_rlt_id_q, cur_rlt_q, cur_ts_q, cur_qdelta_q,
     cur_qoff_q, cur_cpid_q, cur_prio_q, cur_da_q, cur_sa_q} <= cur_d;
    {pend_etype_q, pend_rlt_cpid_q, pend_rlt_id_q, pend_rlt_q, pend_ts_q, pend_qdelta_q,
     pend_qoff_q, pend_cpid_q, pend_prio_q, pend_da_q, pend_sa_q} <= pend_d;
  end

  // ---------------------------------------------------------------------------
  // Departure, then arrival (release first)
  // ---------------------------------------------------------------------------
  wire [NQ*QW-1:0] q_all;
  wire             arr_in = arr_valid_i && ({29'd0, arr_queue_i} < NQ);
  wire             dep_in = dep_valid_i && ({29'd0, dep_queue_i} < NQ);

  // The values of the arrival's and the departure's queue: a multiplexer
  // tree over the queues, 0 for an index >= NQ (not used: arr_in / dep_in
  // gate it).
  reg [8*QW-1:0] q_pad, qeq_pad, qold_pad;
  always @(*) begin
    q_pad    = {8*QW{1'b0}};
    qeq_pad  = {8*QW{1'b0}};
    qold_pad = {8*QW{1'b0}};
    q_pad[NQ*QW-1:0]    = q_all;
    qeq_pad[NQ*QW-1:0]  = cfg_qeq_i;
    qold_pad[NQ*QW-1:0] = qold_q;
  end
  wire [QW-1:0] q_a    = q_pad[arr_queue_i*QW +: QW];
  wire [QW-1:0] qeq_a  = qeq_pad[arr_queue_i*QW +: QW];
  wire [QW-1:0] qold_a = qold_pad[arr_queue_i*QW +: QW];
  wire [QW-1:0] q_dq   = q_pad[dep_queue_i*QW +: QW];

  // The release is none (no departure), the departure's whole queue (its
  // length over the depth) or its length; the arrival's queue sees it when
  // it is the same queue. Every sum the admission reads is formed at once
  // for the three cases (a 3:2 compressor, two for four operands, and one
  // prefix adder, prim_add3), and the case then selects: no carry chain
  // runs after another. Each sum is taken in FW bits, whose top bit is the
  // sign: every one lies in (-2^(TW+1), 2^(TW+1)).
  localparam integer FW = TW + 2;
  wire [FW-1:0] x_qa = {{(FW-QW){1'b0}}, q_a};
  wire [FW-1:0] x_qd = {{(FW-QW){1'b0}}, q_dq};
  wire [FW-1:0] x_t  = {2'b00, tot_q};
  wire [FW-1:0] x_al = {{(FW-LW){1'b0}}, arr_len_i};
  wire [FW-1:0] x_dl = {{(FW-LW){1'b0}}, dep_len_i};
  wire [FW-1:0] x_qm = {{(FW-QW){1'b0}}, cfg_qmax_i};
  wire [FW-1:0] x_bf = {2'b00, cfg_buf_i};
  wire [FW-1:0] z    = {FW{1'b0}};

  // a + b + c = s + (c2 << 1): the first compressor of a four-operand sum,
  // whose carry vector's free bit 0 takes one of its two +1s.
  function automatic [2*FW-1:0] csa(input [FW-1:0] a, input [FW-1:0] b, input [FW-1:0] c);
    reg [FW-2:0] m;   // the carries out of bits 0..FW-2 (the top one is beyond 2^FW)
    begin
      m   = (a[FW-2:0] & b[FW-2:0]) | (a[FW-2:0] & c[FW-2:0]) | (b[FW-2:0] & c[FW-2:0]);
      csa = {m, 1'b1, a ^ b ^ c};
    end
  endfunction
  wire [2*FW-1:0] c_fq2 = csa(x_qm, ~x_qa, ~x_al);
  wire [2*FW-1:0] c_fb  = csa(x_bf, ~x_t, ~x_al);

  // name: value (each a prim_add3 below)
  //   dq:  q_dq - dep_len          (its sign: the release is the whole queue)
  //   nq0: q_a + arr_len           nq2: q_a + arr_len - dep_len
  //   fq0: qmax - q_a - arr_len    fq1: qmax - arr_len
  //   fq2: qmax - q_a - arr_len + dep_len
  //   t1:  tot - q_dq              t2:  tot - dep_len
  //   nb0: tot + arr_len           nb1: tot - q_dq + arr_len
  //   nb2: tot - dep_len + arr_len
  //   fb0: buf - tot - arr_len     fb1: buf - tot - arr_len + q_dq
  //   fb2: buf - tot - arr_len + dep_len
  localparam integer NS = 14;
  wire [NS*FW-1:0] add_a = {c_fb[FW-1:0],  c_fb[FW-1:0],  x_bf,  x_t,  x_t,  x_t,  x_t,  x_t,
                            c_fq2[FW-1:0], x_qm,  x_qm,  x_qa, x_qa, x_qd};
  wire [NS*FW-1:0] add_b = {c_fb[2*FW-1:FW], c_fb[2*FW-1:FW], ~x_t, ~x_dl, ~x_qd, x_al, ~x_dl,
                            ~x_qd, c_fq2[2*FW-1:FW], ~x_al, ~x_qa, x_al, x_al, ~x_dl};
  wire [NS*FW-1:0] add_c = {x_dl, x_qd, ~x_al, x_al, x_al, z, z, z, x_dl, z, ~x_al, ~x_dl, z, z};
  wire [2*NS-1:0]  add_k = {2'b01, 2'b01, 2'b11, 2'b01, 2'b01, 2'b00, 2'b01, 2'b01,
                            2'b01, 2'b01, 2'b11, 2'b01, 2'b00, 2'b01};
  wire [NS*FW-1:0] sums;
  genvar ga;
  generate
    for (ga = 0; ga < NS; ga = ga + 1) begin : gen_add
      prim_add3 #(.W(FW)) u_add (
        .a_i   (add_a[ga*FW +: FW]),
        .b_i   (add_b[ga*FW +: FW]),
        .c_i   (add_c[ga*FW +: FW]),
        .k_i   (add_k[2*ga +: 2]),
        .sum_o (sums[ga*FW +: FW])
      );
    end
  endgenerate
  wire [FW-1:0] s_dq  = sums[0*FW +: FW];
  wire [FW-1:0] s_nq0 = sums[1*FW +: FW];
  wire [FW-1:0] s_nq2 = sums[2*FW +: FW];
  wire [FW-1:0] s_fq0 = sums[3*FW +: FW];
  wire [FW-1:0] s_fq1 = sums[4*FW +: FW];
  wire [FW-1:0] s_fq2 = sums[5*FW +: FW];
  wire [FW-1:0] s_t1  = sums[6*FW +: FW];
  wire [FW-1:0] s_t2  = sums[7*FW +: FW];
  wire [FW-1:0] s_nb0 = sums[8*FW +: FW];
  wire [FW-1:0] s_nb1 = sums[9*FW +: FW];
  wire [FW-1:0] s_nb2 = sums[10*FW +: FW];
  wire [FW-1:0] s_fb0 = sums[11*FW +: FW];
  wire [FW-1:0] s_fb1 = sums[12*FW +: FW];
  wire [FW-1:0] s_fb2 = sums[13*FW +: FW];

  // The bits above those read (in range, copies of the sign).
  wire          unused_sums = ^{s_nq0[FW-1:QW], s_nq2[FW-1:QW], s_t1[FW-1:TW], s_t2[FW-1:TW],
                                s_nb0[FW-1:TW], s_nb1[FW-1:TW], s_nb2[FW-1:TW]};

  wire          dep_over = s_dq[FW-1];
  wire          same     = dep_queue_i == arr_queue_i;
  wire          sq       = dep_in && same;
  // The cases: 0 no release, 1 the whole queue, 2 the departure's length.
  wire          q_whole  = sq && dep_over;
  wire          q_part   = sq && !dep_over;
  wire          t_whole  = dep_in && dep_over;
  wire          t_part   = dep_in && !dep_over;
  wire          fits_q   = q_whole ? !s_fq1[FW-1] : q_part ? !s_fq2[FW-1] : !s_fq0[FW-1];
  wire          fits_b   = t_whole ? !s_fb1[FW-1] : t_part ? !s_fb2[FW-1] : !s_fb0[FW-1];
  wire          admit    = arr_in && fits_q && fits_b;
  // The arrival queue after the release, and with the frame; the total
  // likewise; the departure's queue after the release.
  wire [QW-1:0] q1_a   = q_whole ? {QW{1'b0}} : q_part ? s_dq[QW-1:0] : q_a;
  wire [QW-1:0] need_q = q_whole ? {{(QW-LW){1'b0}}, arr_len_i} : q_part ? s_nq2[QW-1:0] : s_nq0[QW-1:0];
  wire [TW-1:0] tot1   = t_whole ? s_t1[TW-1:0] : t_part ? s_t2[TW-1:0] : tot_q;
  wire [TW-1:0] need_b = t_whole ? s_nb1[TW-1:0] : t_part ? s_nb2[TW-1:0] : s_nb0[TW-1:0];
  wire [QW-1:0] q1_d   = dep_over ? {QW{1'b0}} : s_dq[QW-1:0];
  // The arrival queue's depth at the end of the cycle.
  wire [QW-1:0] qn     = admit ? need_q : q1_a;

  assign arr_drop_o  = arr_in && !admit;
  // A departing tag is stripped only when it names this point.
  assign dep_strip_o = dep_in && dep_rlt_i && (dep_rlt_cpid_i == {cfg_cpid_i, dep_queue_i});
  assign err_o       = {dep_valid_i && !dep_in, arr_valid_i && !arr_in, dep_in && dep_over};

  // The depths: the admitted arrival's queue takes need_q (its depth after
  // the release plus the frame), the departure's queue loses the release,
  // the total takes need_b or tot1. They never leave [0, cfg_qmax_i] and
  // [0, cfg_buf_i] (the admission, the clamped release), so the sums the
  // admission compares are the next values: no adder and no saturation
  // after the admission decision.
  reg [NQ*QW-1:0] q_q, q_d;
  reg [TW-1:0]    tot_q, tot_d;
  always @(*) begin
    q_d = q_q;
    for (k = 0; k < NQ; k = k + 1) begin
      if (dep_in && {29'd0, dep_queue_i} == k) q_d[QW*k +: QW] = q1_d;
      if (admit && {29'd0, arr_queue_i} == k)  q_d[QW*k +: QW] = need_q;
    end
    tot_d = admit ? need_b : tot1;
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_q   <= {NQ*QW{1'b0}};
      tot_q <= {TW{1'b0}};
    end else begin
      q_q   <= q_d;
      tot_q <= tot_d;
    end
  end
  assign q_all = q_q;

  assign q_o   = q_all;
  assign tot_o = tot_q;

  // ---------------------------------------------------------------------------
  // Sampling and feedback
  // ---------------------------------------------------------------------------
  wire [15:0] lfsr;
  prim_lfsr #(.W(16), .TAPS(32'h0000_B400), .SEED(32'h0000_ACE1), .STEPS(16)) u_lfsr (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .en_i    (arr_valid_i),
    .state_o (lfsr)
  );
  // A BCN frame (the BCN EtherType) is never sampled: no BCN about BCN.
  wire bcn    = arr_etype_i == cfg_etype_i;
  wire sample = arr_in && !bcn && ({1'b0, lfsr[9:0]} < cfg_pm_i);

  wire [15:0] cpid_a = {cfg_cpid_i, arr_queue_i};
  // The sampled frame's tag names this point: answered with any Fb.
  wire        own_a  = arr_rlt_i && (arr_rlt_cpid_i == cpid_a);

  // Stage 0: Qold is written where it is read, so back-to-back samples of
  // one queue see each other.
  always @(*) begin
    qold_d = qold_q;
    for (k = 0; k < NQ; k = k + 1) begin
      if (sample && {29'd0, arr_queue_i} == k) qold_d[QW*k +: QW] = qn;
    end
  end

  // x saturated to signed 16 bits: in range when bits 31..15 are all equal.
  function automatic [15:0] sat16(input [31:0] x);
    if (x[31:15] == {17{1'b0}} || x[31:15] == {17{1'b1}}) sat16 = x[15:0];
    else if (x[31])                                        sat16 = 16'h8000;
    else                                                   sat16 = 16'h7FFF;
  endfunction

  // Stage 1: the two differences in feedback units, each a prefix adder
  // of QW + 1 bits (the differences of two depths), sign-extended.
  wire [QW:0] qoff_d, qdel_d;
  prim_add3 #(.W(QW + 1)) u_qoff (
    .a_i   ({1'b0, s1_qeq_q}),
    .b_i   (~{1'b0, s1_qn_q}),
    .c_i   ({(QW + 1){1'b0}}),
    .k_i   (2'b01),
    .sum_o (qoff_d)
  );
  prim_add3 #(.W(QW + 1)) u_qdel (
    .a_i   ({1'b0, s1_qn_q}),
    .b_i   (~{1'b0, s1_qold_q}),
    .c_i   ({(QW + 1){1'b0}}),
    .k_i   (2'b01),
    .sum_o (qdel_d)
  );
  wire signed [31:0] qoff_x = $signed({{(31-QW){qoff_d[QW]}}, qoff_d});
  wire signed [31:0] qdel_x = $signed({{(31-QW){qdel_d[QW]}}, qdel_d});
  // Stage 2: the multiply (5 unsigned by 16 signed bits: 21 bits, exact).
  wire signed [WW-1:0] wq = $signed({16'd0, cfg_w_i}) * $signed({{5{s2_qdelta_q[15]}}, s2_qdelta_q});

  always @(posedge clk_i) begin
    if (sample) begin
      s1_qn_q   <= qn;
      s1_qeq_q  <= qeq_a;
      s1_qold_q <= qold_a;
      s1_pay_q  <= {arr_etype_i, arr_rlt_cpid_i, arr_rlt_id_i, arr_rlt_i, own_a, arr_queue_i,
                    arr_prio_i, arr_da_i, arr_sa_i};
    end
    s2_qoff_q   <= sat16(qoff_x >>> 6);
    s2_qdelta_q <= sat16(qdel_x >>> 6);
    s2_pay_q    <= s1_pay_q;
    s3_qoff_q   <= s2_qoff_q;
    s3_qdelta_q <= s2_qdelta_q;
    s3_wq_q     <= wq;
    s3_pay_q    <= s2_pay_q;
  end

  // Stage 3: Fb and the decision; the sample's fields on the ports.
  wire [15:0] p_etype, p_rlt_cpid, p_rlt_id;
  wire        p_rlt, p_own;
  wire [2:0]  p_queue, p_prio;
  wire [47:0] p_da, p_sa;
  assign {p_etype, p_rlt_cpid, p_rlt_id, p_rlt, p_own, p_queue, p_prio, p_da, p_sa} = s3_pay_q;

  // Qoff - (wq >>> 2): a prefix adder of WW bits (a 16-bit and a 19-bit
  // signed operand), sign-extended.
  wire [WW-1:0] fb_d;
  prim_add3 #(.W(WW)) u_fb (
    .a_i   ({{(WW-16){s3_qoff_q[15]}}, s3_qoff_q}),
    .b_i   (~{{2{s3_wq_q[WW-1]}}, s3_wq_q[WW-1:2]}),
    .c_i   ({WW{1'b0}}),
    .k_i   (2'b01),
    .sum_o (fb_d)
  );
  wire signed [31:0] fb_x = $signed({{(32-WW){fb_d[WW-1]}}, fb_d});
  wire [15:0]        fb   = sat16(fb_x);
  wire [15:0]        cpid = {cfg_cpid_i, p_queue};
  wire               samp = s3_valid_q;
  wire               msg  = samp && (fb[15] || p_own);
  // The cycle counter of the sample's cycle.
  wire [31:0]        ts_s = ts_q - 32'd3;

  wire [15:0] rlt_id   = (samp && p_rlt) ? p_rlt_id : 16'd0;
  wire [15:0] rlt_cpid = (samp && p_rlt) ? p_rlt_cpid : 16'd0;
  wire [MW-1:0] msg_new = {p_etype, rlt_cpid, rlt_id, p_rlt, ts_s, s3_qdelta_q, s3_qoff_q, cpid,
                           p_prio, p_da, p_sa};

  assign sample_o      = samp;
  assign msg_valid_o   = msg;
  assign msg_flow_da_o = samp ? p_da : 48'd0;
  assign msg_sa_o      = samp ? p_sa : 48'd0;
  assign msg_prio_o    = samp ? p_prio : 3'd0;
  assign msg_cpid_o    = samp ? cpid : 16'd0;
  assign msg_qoff_o    = samp ? s3_qoff_q : 16'd0;
  assign msg_qdelta_o  = samp ? s3_qdelta_q : 16'd0;
  assign msg_fb_o      = samp ? fb : 16'd0;
  assign msg_rlt_o     = samp && p_rlt;
  assign msg_rlt_id_o  = rlt_id;
  assign msg_rlt_cpid_o = rlt_cpid;
  assign msg_rlt_own_o = samp && p_own;
  assign msg_etype_o   = samp ? p_etype : 16'd0;
  assign msg_ts_o      = samp ? ts_s : 32'd0;

  // ---------------------------------------------------------------------------
  // Transmitter: the frame of cur_*, eight beats
  // ---------------------------------------------------------------------------
  function automatic [15:0] l16(input [15:0] a);   // big-endian field, lane order
    l16 = {a[7:0], a[15:8]};
  endfunction
  function automatic [31:0] l32(input [31:0] a);
    l32 = {l16(a[15:0]), l16(a[31:16])};
  endfunction
  function automatic [47:0] l48(input [47:0] a);
    l48 = {l16(a[15:0]), l16(a[31:16]), l16(a[47:32])};
  endfunction

  // Frame bytes 0..63, byte b in bits [8b +: 8]; bytes 60..63 (the FCS) are
  // inserted on the last beat.
  // Bytes 44..51: the sampled frame's rate-limiter tag (0x22E9, CPID, id)
  // and its EtherType; untagged, its EtherType and six zero bytes.
  wire [63:0] tail = cur_rlt_q ? {l16(cur_etype_q), l16(cur_rlt_id_q), l16(cur_rlt_cpid_q), l16(RLT_ETYPE)}
                               : {48'd0, l16(cur_etype_q)};
  wire [511:0] head = {
    32'd0,                                            // 60..63 FCS
    64'd0,                                            // 52..59 padding
    tail,                                             // 44..51 RLT tag, EtherType
    8'd0, cur_prio_q, 5'd0, l16(TPID),                // 40..43 Q-tag of the sampled frame
    l48(cur_sa_q),                                    // 34..39 its SA
    l48(cur_da_q),                                    // 28..33 its DA
    l32(cur_ts_q),                                    // 24..27 timestamp
    l16(cur_qdelta_q), l16(cur_qoff_q), l16(cur_cpid_q),  // 18..23
    l16(cfg_etype_i),                                 // 16..17 EtherType
    8'd0, cfg_pcp_i, 5'd0, l16(TPID),                 // 12..15 802.1Q tag
    l48(cfg_cp_sa_i),                                 // 6..11 SA
    l48(cur_sa_q)                                     // 0..5 DA = sampled SA
  };

  wire        tx_last = tx_busy_q && (tx_beat_q == 3'd7);
  wire [63:0] tx_raw  = head[{tx_beat_q, 6'd0} +: 64];
  wire [31:0] tx_crc_next;
  prim_crc32 u_crc (
    .crc_i    (tx_crc_q),
    .data_i   (tx_raw),
    .nbytes_i (tx_last ? 4'd4 : 4'd8),
    .crc_o    (tx_crc_next)
  );

  assign tx_valid_o = tx_busy_q;
  assign tx_last_o  = tx_last;
  assign tx_empty_o = 3'd0;
  assign tx_data_o  = !tx_busy_q ? 64'd0 : tx_last ? {~tx_crc_next, tx_raw[31:0]} : tx_raw;

  wire [MW-1:0] cur_q  = {cur_etype_q, cur_rlt_cpid_q, cur_rlt_id_q, cur_rlt_q, cur_ts_q,
                          cur_qdelta_q, cur_qoff_q, cur_cpid_q, cur_prio_q, cur_da_q, cur_sa_q};
  wire [MW-1:0] pend_q = {pend_etype_q, pend_rlt_cpid_q, pend_rlt_id_q, pend_rlt_q, pend_ts_q,
                          pend_qdelta_q, pend_qoff_q, pend_cpid_q, pend_prio_q, pend_da_q, pend_sa_q};
  wire free = !tx_busy_q || tx_last;
  reg  msg_drop;
  always @(*) begin
    tx_busy_d    = tx_busy_q;
    tx_beat_d    = tx_beat_q;
    tx_crc_d     = tx_crc_q;
    pend_valid_d = pend_valid_q;
    cur_d        = cur_q;
    pend_d       = pend_q;
    msg_drop     = 1'b0;
    if (free) begin
      // The wire is free for a new frame from the next cycle: the pending
      // message first, this cycle's message into the freed slot.
      tx_beat_d = 3'd0;
      tx_crc_d  = CRC_INIT;
      if (pend_valid_q) begin
        cur_d        = pend_q;
        tx_busy_d    = 1'b1;
        pend_valid_d = msg;
        if (msg) pend_d = msg_new;
      end else if (msg) begin
        cur_d     = msg_new;
        tx_busy_d = 1'b1;
      end else begin
        tx_busy_d = 1'b0;
      end
    end else begin
      tx_beat_d = tx_beat_q + 3'd1;
      tx_crc_d  = tx_crc_next;
      if (msg) begin
        if (pend_valid_q) begin
          msg_drop = 1'b1;
        end else begin
          pend_d       = msg_new;
          pend_valid_d = 1'b1;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Event counters
  // ---------------------------------------------------------------------------
  // Five saturating counters. The increment is formed from the register
  // alone and the event only selects it, so the event's logic (the
  // admission's, for the drops) and the carry chain are side by side.
  wire [4:0]    ev = {dep_strip_o, arr_drop_o, msg_drop, msg, samp};
  reg [5*CW-1:0] cnt_q, cnt_d;
  always @(*) begin
    for (k = 0; k < 5; k = k + 1) begin
      cnt_d[CW*k +: CW] = (ev[k] && cnt_q[CW*k +: CW] != {CW{1'b1}})
                        ? cnt_q[CW*k +: CW] + {{(CW-1){1'b0}}, 1'b1} : cnt_q[CW*k +: CW];
    end
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) cnt_q <= {5*CW{1'b0}};
    else         cnt_q <= cnt_d;
  end
  assign samples_o   = cnt_q[0 +: CW];
  assign msgs_o      = cnt_q[CW +: CW];
  assign msg_drops_o = cnt_q[2*CW +: CW];
  assign drops_o     = cnt_q[3*CW +: CW];
  assign strips_o    = cnt_q[4*CW +: CW];

  wire [5:0] unused_lfsr = lfsr[15:10];

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), for simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  reg [TW-1:0] sum_a;
  integer a, b;
  always @(*) begin
    sum_a = {TW{1'b0}};
    for (b = 0; b < NQ; b = b + 1) sum_a = sum_a + {3'd0, q_all[QW*b +: QW]};
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      for (a = 0; a < NQ; a = a + 1) begin
        if (q_all[QW*a +: QW] > cfg_qmax_i) $error("QueueUnderLimit_A: queue %0d", a);
      end
      if (sum_a != tot_q) $error("TotalIsSum_A: %0d != %0d", sum_a, tot_q);
      if (tot_q > cfg_buf_i) $error("BufferUnderLimit_A: %0d", tot_q);
      if (!tx_busy_q && (tx_beat_q != 3'd0 || tx_crc_q != CRC_INIT))
        $error("TxIdleAtRest_A: beat %0d while idle", tx_beat_q);
      if (pend_valid_q && !tx_busy_q) $error("PendingImpliesBusy_A");
    end
  end
`endif

endmodule

`default_nettype wire
