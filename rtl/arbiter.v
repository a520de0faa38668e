// arbiter: OSMOSIS crossbar arbiter, iSLIP with speculative transmission (STX).
//
// Spec: docs/arbiter.md. Golden model: model/src/arbiter.rs.
//
// Parameters
//   N   ports (inputs = outputs), a power of two, 2..64; IW = log2(N)
//   CW  request counter width, 2..16 (saturating)
//
// Algorithm (one slot = one clock cycle)
//   1. request matrix = non-empty VOQ counters | this slot's new requests
//   2. iSLIP, cfg_iter_i iterations unrolled (grant: round robin from the
//      grant pointer; accept: round robin from the accept pointer); pointers
//      move one past the matched partner, first iteration only
//   3. counters: + request - grant, saturating at 2^CW - 1 (request dropped)
//   4. delay line: the matching of slot t - D holds the crossbar in slot t
//   5. STX (R3/R4): per output, capacity R (R - 1 beside an arbitrated cell);
//      on overflow a cyclic window of cap requesters from a random one
//      (m = (r * k) >> 16, r from the LFSR); winners get an ACK
//   6. crossbar receive mask per output; 7. credits (flow control): an
//      output with cfg_crd_i credits in use is not granted; ACKs leave one
//      credit for grants; grants and ACKs take credits, crd_ret_i returns
//      them (released first); 8. LFSR (16 Galois steps per slot)
//
// Ports
//   cfg_*    held for a run
//   req_*    one new request per input per slot (incremental VOQ protocol)
//   spec_*   one speculative request (SRQ) per input per slot
//   crd_ret_i  credits each output adapter returns this slot
//   gnt_*, ack_*, xb_*, req_drop_o: this slot (comb.)
//   voq_cnt_o, gptr_o, aptr_o, lfsr_o, crd_o: registers at the start of the slot
//
// Internal matrices are unpacked arrays of N-bit rows; a transpose is the
// log2(N)-stage butterfly (swap the off-diagonal blocks at each scale).

`default_nettype none
`timescale 1ns / 100ps

module arbiter #(
  parameter integer N  = 4,
  parameter integer CW = 4
) (
  input  wire                    clk_i,
  input  wire                    rst_ni,

  input  wire [6:0]              cfg_recv_i,
  input  wire [3:0]              cfg_iter_i,
  input  wire                    cfg_stx_en_i,
  input  wire [6:0]              cfg_xbar_delay_i,
  input  wire [9:0]              cfg_crd_i,

  input  wire [N-1:0]            req_valid_i,
  input  wire [N*$clog2(N)-1:0]  req_out_i,
  input  wire [N-1:0]            spec_valid_i,
  input  wire [N*$clog2(N)-1:0]  spec_out_i,
  input  wire [N*16-1:0]         spec_seq_i,
  input  wire [N*8-1:0]          crd_ret_i,

  output reg  [N-1:0]            gnt_valid_o,
  output reg  [N*$clog2(N)-1:0]  gnt_out_o,
  output reg  [N*3-1:0]          gnt_iter_o,
  output reg  [N-1:0]            ack_valid_o,
  output reg  [N*16-1:0]         ack_seq_o,
  output reg  [N-1:0]            xb_arb_o,
  output reg  [N*N-1:0]          xb_mask_o,
  output reg  [N-1:0]            req_drop_o,
  output wire [N*N*CW-1:0]       voq_cnt_o,
  output wire [N*$clog2(N)-1:0]  gptr_o,
  output wire [N*$clog2(N)-1:0]  aptr_o,
  output wire [31:0]             lfsr_o,
  output wire [N*10-1:0]         crd_o,
  output wire                    cfg_err_o
);

  localparam integer IW     = $clog2(N);
  localparam integer SW     = 16;
  localparam integer MAXIT  = 8;
  localparam integer DL     = 128;
  localparam integer EW     = IW + 1;             // delay line entry per output
  localparam [31:0]  SEED   = 32'hACE1_ACE1;
  localparam [31:0]  TAPS   = 32'h8020_0003;      // x^32 + x^22 + x^2 + x + 1
  localparam [CW-1:0] CMAX  = {CW{1'b1}};

  // Constant masks. ENC_MASK[b*N + i] = bit b of i (one-hot -> index).
  // TMASK[s*N + c] = ((c >> s) & 1) == 0 (butterfly stage of block 2^s).
  function automatic [IW*N-1:0] enc_masks(input integer n);
    integer b, i;
    begin
      enc_masks = {IW*N{1'b0}};
      for (b = 0; b < IW; b = b + 1)
        for (i = 0; i < n; i = i + 1)
          enc_masks[b*N + i] = ((i >> b) & 1) == 1;
    end
  endfunction
  function automatic [IW*N-1:0] t_masks(input integer n);
    integer s, c;
    begin
      t_masks = {IW*N{1'b0}};
      for (s = 0; s < IW; s = s + 1)
        for (c = 0; c < n; c = c + 1)
          t_masks[s*N + c] = ((c >> s) & 1) == 0;
    end
  endfunction
  localparam [IW*N-1:0] ENC_MASK = enc_masks(N);
  localparam [IW*N-1:0] TMASK    = t_masks(N);

  // One-hot (or zero) to index.
  function automatic [IW-1:0] enc(input [N-1:0] oh);
    integer b;
    begin
      for (b = 0; b < IW; b = b + 1) enc[b] = |(oh & ENC_MASK[b*N +: N]);
    end
  endfunction

  // First set bit of v at or after position p, cyclically, as a one-hot.
  function automatic [N-1:0] rr_pick(input [N-1:0] v, input [IW-1:0] p);
    reg [N-1:0] hi, x;
    begin
      hi      = v & ({N{1'b1}} << p);
      x       = (|hi) ? hi : v;
      rr_pick = x & (~x + {{(N-1){1'b0}}, 1'b1});
    end
  endfunction

  function automatic [6:0] popcnt(input [N-1:0] x);
    reg [63:0] v;
    begin
      v = 64'd0;
      v[N-1:0] = x;
      v = v - ((v >> 1) & 64'h5555_5555_5555_5555);
      v = (v & 64'h3333_3333_3333_3333) + ((v >> 2) & 64'h3333_3333_3333_3333);
      v = (v + (v >> 4)) & 64'h0f0f_0f0f_0f0f_0f0f;
      v = v + (v >> 8);
      v = v + (v >> 16);
      v = v + (v >> 32);
      popcnt = v[6:0];
    end
  endfunction

  // (j * 16'h9E37) mod 2^16: spreads the output index over the random bits.
  function automatic [15:0] out_hash(input [15:0] j);
    begin
      out_hash = j * 16'h9E37;
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Configuration
  // ---------------------------------------------------------------------------
  wire       cfg_err = (cfg_recv_i == 7'd0) || (cfg_iter_i == 4'd0) || (cfg_iter_i > 4'd8);
  wire [3:0] iters   = cfg_err ? 4'd0 : cfg_iter_i;
  wire       stx_on  = cfg_stx_en_i && !cfg_err;
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [N*N*CW-1:0] cnt_q, cnt_d;
  reg [N*N-1:0]    nz_q, nz_d;          // row i bit j: cnt of VOQ (i, j) != 0
  reg [N*IW-1:0]   gptr_q, gptr_d;
  reg [N*IW-1:0]   aptr_q, aptr_d;
  wire [31:0]      lfsr_q;              // prim_lfsr below
  reg [DL*N*EW-1:0] dl_q;               // DL entries of N x (valid, input)
  reg [N*EW-1:0]   dl_wdata;
  reg [6:0]        wp_q, wp_d;
  reg [N*10-1:0]   use_q, use_d;        // credits in use per output

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q  <= {N*N{{CW{1'b0}}}};
      gptr_q <= {N*IW{1'b0}};
      aptr_q <= {N*IW{1'b0}};
      wp_q   <= 7'd0;
      nz_q   <= {N{{N{1'b0}}}};
      dl_q   <= {DL{{N*EW{1'b0}}}};
      use_q  <= {N{10'd0}};
    end else begin
      cnt_q  <= cnt_d;
      gptr_q <= gptr_d;
      aptr_q <= aptr_d;
      wp_q   <= wp_d;
      nz_q   <= nz_d;
      use_q  <= use_d;
      dl_q[wp_q*N*EW +: N*EW] <= dl_wdata;
    end
  end

  assign voq_cnt_o = cnt_q;
  assign gptr_o    = gptr_q;
  assign aptr_o    = aptr_q;
  assign lfsr_o    = lfsr_q;
  assign crd_o     = use_q;

  // ---------------------------------------------------------------------------
  // One slot
  // ---------------------------------------------------------------------------
  reg [N-1:0]  tr      [0:N-1];   // transpose work array
  reg [N-1:0]  req_t   [0:N-1];   // per output: requesting inputs
  reg [N-1:0]  gm      [0:N-1];   // per output: granted input (one-hot)
  reg [N-1:0]  gt      [0:N-1];   // per input: granting outputs
  reg [N-1:0]  m_in    [0:N-1];   // per input: matched output (one-hot)
  reg [N-1:0]  m_out   [0:N-1];   // per output: matched input (one-hot)
  reg [N-1:0]  srq     [0:N-1];   // per output: speculating inputs
  reg [N-1:0]  ui, uo, acc, m0_in, m0_out, a_oh, win;
  reg [N*EW-1:0] arb_e;
  reg [N*7-1:0]  k_of, m_of, cap_of;
  reg [6:0]      k_j, cap_j, c_i, d_i, recv_m1;
  reg [22:0]     prod;
  reg [15:0]     r_j;
  reg [IW-1:0]   rj, gj, so;
  reg [CW-1:0]   v;
  reg [6:0]      rd_idx;
  reg [N*10-1:0] u;                // credits in use after the returns
  reg [N-1:0]    has_crd;
  reg [9:0]      u_j, avail;
  wire           fc_on = (cfg_crd_i != 10'd0);
  integer i, j, k;
  wire    unused_prod = ^prod[15:0];   // m = (r * k) >> 16 uses the high bits

  // In-place transpose of `tr` (butterfly over log2(N) stages).
  task automatic transpose_tr;
    reg [N-1:0] x;
    integer st, row, blk;
    begin
      for (st = IW - 1; st >= 0; st = st - 1) begin
        blk = 1 << st;
        for (row = 0; row < N; row = row + 1) begin
          if (((row >> st) & 1) == 0) begin
            x = ((tr[row] >> blk) ^ tr[row + blk]) & TMASK[st*N +: N];
            tr[row + blk] = tr[row + blk] ^ x;
            tr[row]       = tr[row] ^ (x << blk);
          end
        end
      end
    end
  endtask

  always @(*) begin
    cnt_d       = cnt_q;
    gptr_d      = gptr_q;
    aptr_d      = aptr_q;
    nz_d        = nz_q;
    gnt_valid_o = {N{1'b0}};
    gnt_out_o   = {N*IW{1'b0}};
    gnt_iter_o  = {N*3{1'b0}};
    ack_valid_o = {N{1'b0}};
    ack_seq_o   = {N*SW{1'b0}};
    xb_arb_o    = {N{1'b0}};
    xb_mask_o   = {N*N{1'b0}};
    req_drop_o  = {N{1'b0}};
    a_oh        = {N{1'b0}};
    rj          = {IW{1'b0}};
    gj          = {IW{1'b0}};
    so          = {IW{1'b0}};
    v           = {CW{1'b0}};
    dl_wdata    = {N*EW{1'b0}};
    rd_idx      = 7'd0;
    k_j         = 7'd0;
    cap_j       = 7'd0;
    c_i         = 7'd0;
    d_i         = 7'd0;
    r_j         = 16'd0;
    prod        = 23'd0;
    u_j         = 10'd0;
    avail       = 10'd0;

    // 0. Credit returns (release first; a return beyond the credits in use
    //    is clamped at 0); the outputs with a credit.
    for (j = 0; j < N; j = j + 1) begin
      u_j = use_q[j*10 +: 10];
      if (!fc_on)                                     u[j*10 +: 10] = 10'd0;
      else if ({2'd0, crd_ret_i[j*8 +: 8]} >= u_j)    u[j*10 +: 10] = 10'd0;
      else                                            u[j*10 +: 10] = u_j - {2'd0, crd_ret_i[j*8 +: 8]};
      has_crd[j] = !fc_on || (u[j*10 +: 10] < cfg_crd_i);
    end
    use_d = u;

    // 1. Request matrix, transposed to per-output rows; an output without a
    //    credit has no requests.
    for (i = 0; i < N; i = i + 1) begin
      tr[i] = nz_q[i*N +: N];
      if (req_valid_i[i]) tr[i] = tr[i] | ({{(N-1){1'b0}}, 1'b1} << req_out_i[i*IW +: IW]);
    end
    transpose_tr;
    for (j = 0; j < N; j = j + 1) req_t[j] = tr[j] & {N{has_crd[j]}};

    // 2. iSLIP.
    ui     = {N{1'b1}};
    uo     = {N{1'b1}};
    m0_in  = {N{1'b0}};
    m0_out = {N{1'b0}};
    acc    = {N{1'b0}};
    for (i = 0; i < N; i = i + 1) begin
      m_in[i]  = {N{1'b0}};
      m_out[i] = {N{1'b0}};
      gm[i]    = {N{1'b0}};
      gt[i]    = {N{1'b0}};
    end
    for (k = 0; k < MAXIT; k = k + 1) begin
      if (k < iters) begin
        // Grant: each unmatched output picks from the unmatched requesters.
        for (j = 0; j < N; j = j + 1) begin
          gm[j] = uo[j] ? rr_pick(req_t[j] & ui, gptr_q[j*IW +: IW]) : {N{1'b0}};
          tr[j] = gm[j];
        end
        transpose_tr;
        for (i = 0; i < N; i = i + 1) gt[i] = tr[i];
        // Accept: each input with grants picks one.
        acc = {N{1'b0}};
        for (i = 0; i < N; i = i + 1) begin
          a_oh = rr_pick(gt[i], aptr_q[i*IW +: IW]);
          if (|gt[i]) begin
            m_in[i]  = a_oh;
            ui[i]    = 1'b0;
            acc      = acc | a_oh;
            gnt_iter_o[i*3 +: 3] = k[2:0];
            if (k == 0) m0_in[i] = 1'b1;
          end
        end
        for (j = 0; j < N; j = j + 1) begin
          if (acc[j]) begin
            m_out[j] = gm[j];
            if (k == 0) m0_out[j] = 1'b1;
          end
        end
        uo = uo & ~acc;
      end
    end

    // Grants and pointers (first iteration only).
    for (i = 0; i < N; i = i + 1) begin
      gnt_valid_o[i]          = |m_in[i];
      gnt_out_o[i*IW +: IW]   = enc(m_in[i]);
      if (m0_in[i])  aptr_d[i*IW +: IW] = enc(m_in[i]) + 1'b1;
      if (m0_out[i]) gptr_d[i*IW +: IW] = enc(m_out[i]) + 1'b1;
    end

    // 3. Counters: release before arrival, saturating.
    for (i = 0; i < N; i = i + 1) begin
      rj = req_out_i[i*IW +: IW];
      gj = gnt_out_o[i*IW +: IW];
      if (req_valid_i[i] && !(gnt_valid_o[i] && gj == rj)) begin
        v = cnt_q[(i*N + {{(32-IW){1'b0}}, rj})*CW +: CW];
        if (v == CMAX) begin
          req_drop_o[i] = 1'b1;
        end else begin
          cnt_d[(i*N + {{(32-IW){1'b0}}, rj})*CW +: CW] = v + 1'b1;
          nz_d[i*N + {{(32-IW){1'b0}}, rj}] = 1'b1;
        end
      end
      if (gnt_valid_o[i] && !(req_valid_i[i] && gj == rj)) begin
        v = cnt_q[(i*N + {{(32-IW){1'b0}}, gj})*CW +: CW];
        cnt_d[(i*N + {{(32-IW){1'b0}}, gj})*CW +: CW] = v - 1'b1;
        if (v == {{(CW-1){1'b0}}, 1'b1}) nz_d[i*N + {{(32-IW){1'b0}}, gj}] = 1'b0;
      end
    end

    // 4. Delay line: this slot's matching, and the one in the crossbar now.
    for (j = 0; j < N; j = j + 1)
      dl_wdata[j*EW +: EW] = {|m_out[j], enc(m_out[j])};
    rd_idx = wp_q - cfg_xbar_delay_i;
    arb_e  = (cfg_xbar_delay_i == 7'd0) ? dl_wdata : dl_q[rd_idx*N*EW +: N*EW];
    wp_d   = wp_q + 7'd1;

    // 5. STX resolution.
    for (i = 0; i < N; i = i + 1) begin
      tr[i] = (stx_on && spec_valid_i[i])
            ? ({{(N-1){1'b0}}, 1'b1} << spec_out_i[i*IW +: IW]) : {N{1'b0}};
    end
    transpose_tr;
    recv_m1 = cfg_recv_i - 7'd1;
    for (j = 0; j < N; j = j + 1) begin
      srq[j]   = tr[j];
      xb_arb_o[j] = arb_e[j*EW + IW];
      k_j      = popcnt(srq[j]);
      cap_j    = xb_arb_o[j] ? recv_m1 : cfg_recv_i;
      // With flow control, at most the credits left after this slot's grant,
      // less one kept for grants: an acknowledged cell may wait in the output
      // adapter for a predecessor only a grant brings (selective retry).
      avail    = ({1'b0, u[j*10 +: 10]} + {10'd0, |m_out[j]} + 11'd1 >= {1'b0, cfg_crd_i}) ? 10'd0
               : cfg_crd_i - u[j*10 +: 10] - {9'd0, |m_out[j]} - 10'd1;
      if (fc_on && {3'd0, cap_j} > avail) cap_j = avail[6:0];
      r_j      = lfsr_q[15:0] ^ out_hash(j[15:0]);
      prod     = {7'd0, r_j} * {16'd0, k_j};
      k_of[j*7 +: 7]   = k_j;
      cap_of[j*7 +: 7] = cap_j;
      m_of[j*7 +: 7]   = prod[22:16];
    end
    win = {N{1'b0}};
    for (i = 0; i < N; i = i + 1) begin
      so  = spec_out_i[i*IW +: IW];
      k_j = k_of[so*7 +: 7];
      cap_j = cap_of[so*7 +: 7];
      c_i = popcnt(srq[so] & ~({N{1'b1}} << i));
      d_i = (c_i >= m_of[so*7 +: 7]) ? c_i - m_of[so*7 +: 7] : c_i + k_j - m_of[so*7 +: 7];
      if (stx_on && spec_valid_i[i] && (k_j <= cap_j || d_i < cap_j)) begin
        win[i] = 1'b1;
        ack_valid_o[i] = 1'b1;
        ack_seq_o[i*SW +: SW] = spec_seq_i[i*SW +: SW];
      end
    end

    // 6. Crossbar. 7. Credits: this slot's grant and ACKs take theirs.
    for (j = 0; j < N; j = j + 1) begin
      xb_mask_o[j*N +: N] = (srq[j] & win)
                          | ({{(N-1){1'b0}}, arb_e[j*EW + IW]} << arb_e[j*EW +: IW]);
      if (fc_on)
        use_d[j*10 +: 10] = u[j*10 +: 10] + {9'd0, |m_out[j]} + {3'd0, popcnt(srq[j] & win)};
    end
  end

  // 8. LFSR: 16 steps per slot.
  prim_lfsr #(
    .W     (32),
    .TAPS  (TAPS),
    .SEED  (SEED),
    .STEPS (16)
  ) u_lfsr (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .en_i    (1'b1),
    .state_o (lfsr_q)
  );

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), for simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  integer     a_i;
  reg [N-1:0] a_or;
  reg [7:0]   a_sum;
  reg         a_empty, a_xbar, a_ack, a_crd;
  always @(*) begin
    a_or    = {N{1'b0}};
    a_sum   = 8'd0;
    a_empty = 1'b0;
    a_xbar  = 1'b0;
    a_ack   = 1'b0;
    a_crd   = 1'b0;
    for (a_i = 0; a_i < N; a_i = a_i + 1) begin
      if (fc_on && use_q[a_i*10 +: 10] > cfg_crd_i) a_crd = 1'b1;
      if (gnt_valid_o[a_i]) begin
        a_or  = a_or | ({{(N-1){1'b0}}, 1'b1} << gnt_out_o[a_i*IW +: IW]);
        a_sum = a_sum + 8'd1;
        if (cnt_q[(a_i*N + {{(32-IW){1'b0}}, gnt_out_o[a_i*IW +: IW]})*CW +: CW] == {CW{1'b0}} &&
            !(req_valid_i[a_i] && req_out_i[a_i*IW +: IW] == gnt_out_o[a_i*IW +: IW]))
          a_empty = 1'b1;
      end
      if (popcnt(xb_mask_o[a_i*N +: N]) > cfg_recv_i && !cfg_err) a_xbar = 1'b1;
      if (ack_valid_o[a_i] && !spec_valid_i[a_i]) a_ack = 1'b1;
    end
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (a_empty) $error("GntImpliesReq_A: a grant for an empty VOQ");
      if (a_xbar) $error("XbarWithinR_A: an output receives more than R inputs");
      if (a_ack) $error("AckImpliesSrq_A: an ACK without a speculative request");
      if (a_crd) $error("CrdBound_A: an output uses more credits than cfg_crd_i");
      if ({1'b0, popcnt(a_or)} != a_sum) $error("OneToOneMatching_A: an output granted twice");
      if (lfsr_q == 32'd0) $error("LfsrNonZero_A");
    end
  end
`endif

endmodule

`default_nettype wire
