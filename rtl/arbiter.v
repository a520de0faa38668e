// arbiter: OSMOSIS crossbar arbiter, iSLIP with speculative transmission (STX),
// one slot over CLK_PER_SLOT clocks.
//
// Spec: docs/arbiter.md. Golden model: model/src/arbiter.rs.
//
// Parameters
//   N             ports (inputs = outputs), a power of two, 2..64; IW = log2(N)
//   CW            request counter width, 2..16 (saturating)
//   CLK_PER_SLOT  K, clocks per slot, 1..64; iSLIP iterations per slot at
//                 most ITMAX = min(8, K - 1) (K = 1: 8, all in one clock)
//
// A slot is K clocks, phases 0 .. K-1 (ph_q); the slot's inputs are held
// for all K clocks, its outputs are valid in phase K-1, and every register
// of the spec (counters, pointers, credits, LFSR, delay line) takes its
// next value at the edge that ends phase K-1.
//   phase k < cfg_iter_i  iSLIP iteration k (grant and accept over N), on
//                         the partial matching registered in phase k-1
//   phases 0, 1, 2        STX stage 1 (per-output SRQ counts k, per-input
//                         rank c among its output's SRQs, the credits after
//                         the returns), stage 2 (m = (r k) >> 16, the
//                         credits ACKs may take), stage 3 (window offset
//                         d), each registered (K >= 4; with fewer clocks
//                         the first stages share a phase): they depend on
//                         the held inputs and the LFSR only
//   phase K-1             the matching of the last iteration (registered),
//                         the arbitrated cells of the slot (delay line),
//                         the credits: winners (d < cap), ACKs, crossbar,
//                         grants, counters, pointers, credits, LFSR
// With K = 1 the registers between these stages become wires: the eight
// iterations, the STX resolution and the updates are one clock.
//
// Delay line: 128 entries of N x (valid, input) in prim_ram_1r1w banks
// (at most 64 bits wide). The matching of slot t is written at the end of
// its last phase at wp_q; in the same clock the entry of slot t+1-D is
// read (registered read), for the next slot. D = 1 reads the entry being
// written: the written matching is forwarded (dlf_q). D = 0: this slot's
// matching. An entry of a slot before the reset is empty (rd_ok_q, from the
// slots counted since the reset, age_q).
//
// Ports
//   cfg_*    held for a run
//   req_*    one new request per input per slot (incremental VOQ protocol)
//   spec_*   one speculative request (SRQ) per input per slot
//   crd_ret_i  credits each output adapter returns this slot
//   gnt_*, ack_*, xb_*, req_drop_o: this slot, valid in phase K-1
//   voq_cnt_o, gptr_o, aptr_o, lfsr_o, crd_o: registers at the start of the slot
//
// Matrices are unpacked arrays of N-bit rows (a row operation is a word
// operation in simulation); a transpose is the log2(N)-stage butterfly
// (swap the off-diagonal blocks at each scale).

`default_nettype none
`timescale 1ns / 100ps

module arbiter #(
  parameter integer N            = 4,
  parameter integer CW           = 4,
  parameter integer CLK_PER_SLOT = 4
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

  localparam integer K      = CLK_PER_SLOT;
  localparam integer IW     = $clog2(N);
  localparam integer SW     = 16;
  localparam integer MAXIT  = 8;
  localparam integer ITMAX  = (K == 1) ? MAXIT : ((K - 1 < MAXIT) ? K - 1 : MAXIT);
  localparam integer IPC    = (K == 1) ? MAXIT : 1;     // iterations per clock
  localparam integer PW     = (K <= 2) ? 1 : $clog2(K); // phase counter width
  localparam integer S1REG  = (K >= 4) ? 1 : 0;         // STX stage 1 registered
  localparam integer S2REG  = (K >= 3) ? 1 : 0;         // STX stage 2 registered
  localparam integer S3REG  = (K >= 2) ? 1 : 0;         // STX stage 3 registered
  localparam integer DL     = 128;
  localparam integer EW     = IW + 1;                   // delay line entry per output
  localparam integer DW     = N * EW;
  localparam integer NB     = (DW + 63) / 64;           // RAM banks, <= 64 bits each
  localparam [31:0]  SEED   = 32'hACE1_ACE1;
  localparam [31:0]  TAPS   = 32'h8020_0003;            // x^32 + x^22 + x^2 + x + 1
  localparam [CW-1:0] CMAX  = {CW{1'b1}};
  localparam [N-1:0]  ONE   = {{(N-1){1'b0}}, 1'b1};
  localparam integer  KM1     = K - 1;
  localparam [PW-1:0] PH_LAST = KM1[PW-1:0];
  localparam [3:0]    ITMAX4  = ITMAX[3:0];

  // Constant masks. TMASK[s*N + c] = ((c >> s) & 1) == 0 (butterfly stage
  // of block 2^s).
  function automatic [IW*N-1:0] t_masks(input integer n);
    integer s, c;
    begin
      t_masks = {IW*N{1'b0}};
      for (s = 0; s < IW; s = s + 1)
        for (c = 0; c < n; c = c + 1)
          t_masks[s*N + c] = ((c >> s) & 1) == 0;
    end
  endfunction
  localparam [IW*N-1:0] TMASK    = t_masks(N);

  // Lowest set bit of v: {some bit set, its index} (index all ones when
  // none), as a binary tree over log2(N) levels. After level l a node
  // (bit m 2^(l+1)) holds its range's "some bit" and index: the lower
  // half's when it has a bit, else the upper half's (index bit l says
  // which). Written on whole vectors (v >> 2^l brings the upper half to its
  // node; the other bits carry unused values): Verilator simulates a level
  // as a few word operations. A tree, not a prefix: ABC's area rewriting
  // (dc2) turns an OR prefix over all positions into a chain of N.
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

  // 1 << i and {N{1'b1}} << p by levels of constant shifts (a mux per
  // level): a shift by a variable amount is a $shl cell, and Yosys' SAT
  // resource sharing compares pairs of them (minutes at N = 16), where
  // muxes are not its business; Verilator runs a level as a word operation.
  function automatic [N-1:0] shl_n(input [N-1:0] v, input [IW-1:0] i);
    reg [N-1:0] x;
    integer     l;
    begin
      x = v;
      for (l = 0; l < IW; l = l + 1) x = i[l] ? (x << (1 << l)) : x;
      shl_n = x;
    end
  endfunction

  // First set bit of v at or after position p, cyclically: {some bit set,
  // its index} (index all ones when none): the two trees side by side, a
  // mux after them.
  function automatic [IW:0] rr_pick(input [N-1:0] v, input [IW-1:0] p);
    reg [IW:0] fh, fv;
    begin
      fh      = ffs(v & shl_n({N{1'b1}}, p));
      fv      = ffs(v);
      rr_pick = {fv[IW], fh[IW] ? fh[IW-1:0] : fv[IW-1:0]};
    end
  endfunction

  // Output a has a credit for this slot: the credits in use after the
  // returns are below the limit, u = max(0, use - ret) < C. With C > 0 that
  // is use < C + ret (ret >= use gives u = 0 < C, and use < ret + C too),
  // the sign of C + ret + ~use = C + ret - use - 1 in 12 bits: one 3:2
  // compressor and a prefix carry (the subtract-then-compare of u was the
  // start of the iteration clock's longest path).
  function automatic crd_ok(input [9:0] use_a, input [7:0] ret, input [9:0] c);
    reg [11:0] x, y, z, p, gg, pp;
    integer    d;
    begin
      x  = {2'd0, c};
      y  = {4'd0, ret};
      z  = ~{2'd0, use_a};
      // x + y + z = sm + cy (3:2 compressor), then the carries of sm + cy
      // on whole vectors (Kogge-Stone, as credit.v's ks_add).
      pp = x ^ y ^ z;                                 // sm
      gg = ((x & y) | (x & z) | (y & z)) << 1;        // cy
      p  = pp ^ gg;
      gg = pp & gg;
      pp = p;
      for (d = 1; d < 12; d = d * 2) begin
        gg = gg | (pp & (gg << d));
        pp = pp & ((pp << d) | ~({12{1'b1}} << d));
      end
      crd_ok = ~(p[11] ^ gg[10]);                     // sign bit clear
    end
  endfunction

  // a <= b on 7 bits: the carry out of b + ~a + 1 as a prefix carry (log2(7)
  // levels of generate/propagate), where a compare synthesises to a ripple.
  function automatic le7(input [6:0] a, input [6:0] b);
    reg [6:0] gg, pp;
    integer   d;
    begin
      pp = ~(a ^ b);
      gg = b & ~a;
      gg[0] = gg[0] | pp[0];
      for (d = 1; d < 7; d = d * 2) begin
        gg = gg | (pp & (gg << d));
        pp = pp & ((pp << d) | ~({7{1'b1}} << d));
      end
      le7 = gg[6];
    end
  endfunction

  // a + b + cin in 10 bits (wrapping) as a Kogge-Stone prefix adder: about
  // 2 log2(10) + 2 levels, where '+' synthesises to a ripple carry.
  function automatic [9:0] add10(input [9:0] a, input [9:0] b, input cin);
    reg [9:0] p, gg, pp;
    integer   d;
    begin
      p     = a ^ b;
      gg    = a & b;
      gg[0] = gg[0] | (p[0] & cin);
      pp    = p;
      for (d = 1; d < 10; d = d * 2) begin
        gg = gg | (pp & (gg << d));
        pp = pp & ((pp << d) | ~({10{1'b1}} << d));
      end
      add10 = p ^ {gg[8:0], cin};
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

  // In-place transpose of the unpacked matrix T (N rows of N bits), a
  // butterfly over log2(N) stages: at stage st, the off-diagonal blocks of
  // size 2^st are swapped. ST, ROW, BLK (integers) and X (N bits) are the
  // calling block's own work variables.
`define ARB_TRANSPOSE(T, ST, ROW, BLK, X) \
    for (ST = IW - 1; ST >= 0; ST = ST - 1) begin \
      BLK = 1 << ST; \
      for (ROW = 0; ROW < N; ROW = ROW + 1) begin \
        if (((ROW >> ST) & 1) == 0) begin \
          X = ((T[ROW] >> BLK) ^ T[ROW + BLK]) & TMASK[ST*N +: N]; \
          T[ROW + BLK] = T[ROW + BLK] ^ X; \
          T[ROW]       = T[ROW] ^ (X << BLK); \
        end \
      end \
    end

  // (j * 16'h9E37) mod 2^16: spreads the output index over the random bits.
  function automatic [15:0] out_hash(input [15:0] j);
    begin
      out_hash = j * 16'h9E37;
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Configuration
  // ---------------------------------------------------------------------------
  wire       cfg_err = (cfg_recv_i == 7'd0) || (cfg_iter_i == 4'd0) || (cfg_iter_i > ITMAX4);
  wire [3:0] iters   = cfg_err ? 4'd0 : cfg_iter_i;
  wire       stx_on  = cfg_stx_en_i && !cfg_err;
  wire       fc_on   = (cfg_crd_i != 10'd0);
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Slot registers (take their next value at the end of phase K-1)
  // ---------------------------------------------------------------------------
  reg [PW-1:0]     ph_q, ph_d;           // phase in the slot
  reg [N*N*CW-1:0] cnt_q, cnt_d;
  reg [N*N-1:0]    nz_q, nz_d;          // row i bit j: cnt of VOQ (i, j) != 0
  reg [N*IW-1:0]   gptr_q, gptr_d;
  reg [N*IW-1:0]   aptr_q, aptr_d;
  wire [31:0]      lfsr_q;              // prim_lfsr below
  reg [6:0]        wp_q, wp_d;          // delay line write pointer
  reg [6:0]        age_q, age_d;        // slots since the reset, saturating at 127
  reg              rd_ok_q, rd_ok_d;    // the entry read for this slot exists
  reg              fwd_q, fwd_d;        // D = 1: this slot's entry is dlf_q
  reg [DW-1:0]     dlf_q, dlf_d;        // the entry written at the end of the last slot
  reg [N*10-1:0]   use_q, use_d;        // credits in use per output
  wire             last = (ph_q == PH_LAST);

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q    <= {PW{1'b0}};
      cnt_q   <= {N*N{{CW{1'b0}}}};
      nz_q    <= {N{{N{1'b0}}}};
      gptr_q  <= {N*IW{1'b0}};
      aptr_q  <= {N*IW{1'b0}};
      wp_q    <= 7'd0;
      age_q   <= 7'd0;
      rd_ok_q <= 1'b0;
      fwd_q   <= 1'b0;
      dlf_q   <= {DW{1'b0}};
      use_q   <= {N{10'd0}};
    end else begin
      ph_q    <= ph_d;
      cnt_q   <= cnt_d;
      nz_q    <= nz_d;
      gptr_q  <= gptr_d;
      aptr_q  <= aptr_d;
      wp_q    <= wp_d;
      age_q   <= age_d;
      rd_ok_q <= rd_ok_d;
      fwd_q   <= fwd_d;
      dlf_q   <= dlf_d;
      use_q   <= use_d;
    end
  end

  assign voq_cnt_o = cnt_q;
  assign gptr_o    = gptr_q;
  assign aptr_o    = aptr_q;
  assign lfsr_o    = lfsr_q;
  assign crd_o     = use_q;

  // ---------------------------------------------------------------------------
  // Every phase: credits after the returns, the request matrix (the held
  // inputs and the slot registers: the same in every phase of a slot)
  // ---------------------------------------------------------------------------
  reg [N*10-1:0] u;                // credits in use after the returns
  reg [N-1:0]    has_crd;
  reg [N-1:0]    req_t [0:N-1];    // row j: inputs requesting output j
  reg [9:0]      u_j;
  reg [N-1:0]    t0_x;
  integer        a, t0_st, t0_row, t0_blk;

  always @(*) begin
    u_j = 10'd0;
    for (a = 0; a < N; a = a + 1) begin
      u_j = use_q[a*10 +: 10];
      if (!fc_on)                                     u[a*10 +: 10] = 10'd0;
      else if ({2'd0, crd_ret_i[a*8 +: 8]} >= u_j)    u[a*10 +: 10] = 10'd0;
      else                                            u[a*10 +: 10] = u_j - {2'd0, crd_ret_i[a*8 +: 8]};
    end
    // Needed only in the phases that iterate.
    t0_x   = {N{1'b0}};
    t0_st  = 0;
    t0_row = 0;
    t0_blk = 0;
    has_crd = {N{1'b0}};
    for (a = 0; a < N; a = a + 1) req_t[a] = {N{1'b0}};
    if (K == 1 || {{(32-PW){1'b0}}, ph_q} < {28'd0, iters}) begin
      for (a = 0; a < N; a = a + 1)
        req_t[a] = nz_q[a*N +: N]
                 | (req_valid_i[a] ? shl_n(ONE, req_out_i[a*IW +: IW]) : {N{1'b0}});
      `ARB_TRANSPOSE(req_t, t0_st, t0_row, t0_blk, t0_x)
      for (a = 0; a < N; a = a + 1) begin
        has_crd[a] = !fc_on || crd_ok(use_q[a*10 +: 10], crd_ret_i[a*8 +: 8], cfg_crd_i);
        req_t[a]   = req_t[a] & {N{has_crd[a]}};
      end
    end
  end

  // ---------------------------------------------------------------------------
  // iSLIP: iteration k in phase k (K = 1: all in phase 0), on the partial
  // matching of the phase before (empty in phase 0)
  // ---------------------------------------------------------------------------
  reg [N-1:0]    ui_q, ui_d;       // unmatched inputs
  reg [N-1:0]    uo_q, uo_d;       // unmatched outputs
  reg [N*IW-1:0] mi_q, mi_d;       // per input: matched output
  reg [N*IW-1:0] mo_q, mo_d;       // per output: matched input
  reg [N-1:0]    m0i_q, m0i_d;     // input matched in iteration 0
  reg [N-1:0]    m0o_q, m0o_d;     // output matched in iteration 0
  reg [N*3-1:0]  gi_q, gi_d;       // per input: iteration of its match

  reg [N-1:0]    gm [0:N-1];       // row j: the input output j grants (one-hot)
  reg [N-1:0]    gt [0:N-1];       // row i: the outputs granting input i
  reg [N-1:0]    acc, a_oh, t1_x;
  reg [IW:0]     pk;               // a pick: {some, index}
  reg [N*IW-1:0] gix;              // per output: the input it grants (index)
  integer        it, kk, i, j, t1_st, t1_row, t1_blk;

  always @(*) begin
    if (K == 1 || ph_q == {PW{1'b0}}) begin
      ui_d  = {N{1'b1}};
      uo_d  = {N{1'b1}};
      mi_d  = {N*IW{1'b0}};
      mo_d  = {N*IW{1'b0}};
      m0i_d = {N{1'b0}};
      m0o_d = {N{1'b0}};
      gi_d  = {N*3{1'b0}};
    end else begin
      ui_d  = ui_q;
      uo_d  = uo_q;
      mi_d  = mi_q;
      mo_d  = mo_q;
      m0i_d = m0i_q;
      m0o_d = m0o_q;
      gi_d  = gi_q;
    end
    for (j = 0; j < N; j = j + 1) begin
      gm[j] = {N{1'b0}};
      gt[j] = {N{1'b0}};
    end
    t1_x   = {N{1'b0}};
    t1_st  = 0;
    t1_row = 0;
    t1_blk = 0;
    i      = 0;
    acc    = {N{1'b0}};
    a_oh   = {N{1'b0}};
    pk     = {(IW+1){1'b0}};
    gix    = {N*IW{1'b0}};
    it   = 0;
    for (kk = 0; kk < IPC; kk = kk + 1) begin
      it = (K == 1) ? kk : {{(32-PW){1'b0}}, ph_q};
      if (it < {28'd0, iters}) begin
        // Grant: each unmatched output picks from the unmatched requesters.
        for (j = 0; j < N; j = j + 1) begin
          pk              = rr_pick(req_t[j] & ui_d, gptr_q[j*IW +: IW]);
          gix[j*IW +: IW] = pk[IW-1:0];
          gm[j]           = (uo_d[j] && pk[IW]) ? shl_n(ONE, pk[IW-1:0]) : {N{1'b0}};
          gt[j]           = gm[j];
        end
        `ARB_TRANSPOSE(gt, t1_st, t1_row, t1_blk, t1_x)
        // Accept: each input with grants picks one.
        acc = {N{1'b0}};
        for (i = 0; i < N; i = i + 1) begin
          pk   = rr_pick(gt[i], aptr_q[i*IW +: IW]);
          a_oh = pk[IW] ? shl_n(ONE, pk[IW-1:0]) : {N{1'b0}};
          if (pk[IW]) begin
            mi_d[i*IW +: IW] = pk[IW-1:0];
            ui_d[i]          = 1'b0;
            acc              = acc | a_oh;
            gi_d[i*3 +: 3]   = it[2:0];
            if (it == 0) m0i_d[i] = 1'b1;
          end
        end
        for (j = 0; j < N; j = j + 1) begin
          if (acc[j]) begin
            mo_d[j*IW +: IW] = gix[j*IW +: IW];
            if (it == 0) m0o_d[j] = 1'b1;
          end
        end
        uo_d = uo_d & ~acc;
      end
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ui_q  <= {N{1'b0}};
      uo_q  <= {N{1'b0}};
      mi_q  <= {N*IW{1'b0}};
      mo_q  <= {N*IW{1'b0}};
      m0i_q <= {N{1'b0}};
      m0o_q <= {N{1'b0}};
      gi_q  <= {N*3{1'b0}};
    end else begin
      ui_q  <= ui_d;
      uo_q  <= uo_d;
      mi_q  <= mi_d;
      mo_q  <= mo_d;
      m0i_q <= m0i_d;
      m0o_q <= m0o_d;
      gi_q  <= gi_d;
    end
  end

  // The slot's matching, read in phase K-1: registered (K >= 2; the phase
  // K-1 makes no iteration, iterations <= K-1), or this clock's (K = 1).
  wire [N-1:0]    f_ui  = (K == 1) ? ui_d  : ui_q;
  wire [N-1:0]    f_uo  = (K == 1) ? uo_d  : uo_q;
  wire [N*IW-1:0] f_mi  = (K == 1) ? mi_d  : mi_q;
  wire [N*IW-1:0] f_mo  = (K == 1) ? mo_d  : mo_q;
  wire [N-1:0]    f_m0i = (K == 1) ? m0i_d : m0i_q;
  wire [N-1:0]    f_m0o = (K == 1) ? m0o_d : m0o_q;
  wire [N*3-1:0]  f_gi  = (K == 1) ? gi_d  : gi_q;

  // ---------------------------------------------------------------------------
  // STX stage 1: SRQs per output (k), each SRQ's rank among its output's
  // SRQs by input index (c), the credits after the returns (u); stage 2:
  // the window start m = (r k) >> 16, the credits ACKs may take; stage 3:
  // each SRQ's offset from the window start, d = (c - m) mod k. Inputs,
  // LFSR and the slot's registers only.
  // ---------------------------------------------------------------------------
  reg [N-1:0]   srq [0:N-1];       // row j: inputs speculating to output j
  reg [N-1:0]   t2_x;
  integer       t2_st, t2_row, t2_blk;
  reg [N*7-1:0] k1_d, k1_q;        // per output: SRQs
  reg [N*7-1:0] c1_d, c1_q;        // per input: rank among its output's SRQs
  reg [N*7-1:0] k2_d, k2_q;        // per output: SRQs
  reg [N*7-1:0] m2_d, m2_q;        // per output: window start m
  reg [N*7-1:0] ki3_d, ki3_q;      // per input: SRQs at its output
  reg [N*7-1:0] d3_d, d3_q;        // per input: offset from the window start
  reg [N*10-1:0] u1_d, u1_q;       // per output: credits in use after the returns
  reg [N*7-1:0] av0_d, av0_q;      // per output: credits ACKs may take, no grant
  reg [N*7-1:0] av1_d, av1_q;      // ... with a grant (at most 127)
  reg [10:0]    s_u;
  reg [22:0]    prod;
  reg [15:0]    r_j;
  reg [6:0]     s_k, s_m, s_c;
  reg [IW-1:0]  so1, so2;
  integer       a1, a2, a3;
  wire [N*7-1:0] k1 = (S1REG != 0) ? k1_q : k1_d;
  wire [N*7-1:0] c1 = (S1REG != 0) ? c1_q : c1_d;
  wire [N*10-1:0] u1 = (S1REG != 0) ? u1_q : u1_d;
  wire           unused_prod = ^prod[15:0];   // m uses the high bits

  // Stage 1 in phase 0, stage 2 and stage 3 each in the phase after the
  // stage before when that one is registered (in the same phase when it is
  // not); their registers hold in the other phases. srq is needed by stage
  // 1 and by the crossbar in phase K-1.
  localparam integer  PH2   = (S1REG != 0) ? 1 : 0;
  localparam integer  PH3   = PH2 + ((S2REG != 0) ? 1 : 0);
  localparam [PW-1:0] PH_S2 = PH2[PW-1:0];
  localparam [PW-1:0] PH_S3 = PH3[PW-1:0];
  wire s1_en = (ph_q == {PW{1'b0}});
  wire s2_en = (ph_q == PH_S2);
  wire s3_en = (ph_q == PH_S3);

  always @(*) begin
    so1    = {IW{1'b0}};
    t2_x   = {N{1'b0}};
    t2_st  = 0;
    t2_row = 0;
    t2_blk = 0;
    k1_d = k1_q;
    c1_d = c1_q;
    u1_d = s1_en ? u : u1_q;
    for (a1 = 0; a1 < N; a1 = a1 + 1) srq[a1] = {N{1'b0}};
    if (s1_en || last) begin
      for (a1 = 0; a1 < N; a1 = a1 + 1)
        srq[a1] = (stx_on && spec_valid_i[a1])
                ? shl_n(ONE, spec_out_i[a1*IW +: IW]) : {N{1'b0}};
      `ARB_TRANSPOSE(srq, t2_st, t2_row, t2_blk, t2_x)
    end
    if (s1_en) begin
      for (a1 = 0; a1 < N; a1 = a1 + 1) begin
        k1_d[a1*7 +: 7] = popcnt(srq[a1]);
        so1             = spec_out_i[a1*IW +: IW];
        c1_d[a1*7 +: 7] = popcnt(srq[so1] & ~({N{1'b1}} << a1));
      end
    end
  end

  always @(*) begin
    prod  = 23'd0;
    r_j   = 16'd0;
    a2    = 0;
    s_u   = 11'd0;
    k2_d  = k2_q;
    m2_d  = m2_q;
    av0_d = av0_q;
    av1_d = av1_q;
    if (s2_en) begin
      // The credits left less one kept for grants, without and with this
      // slot's grant: max(0, C - u - g - 1), at most 127 (a capacity is
      // at most R <= 127).
      for (a2 = 0; a2 < N; a2 = a2 + 1) begin
        s_u = {1'b0, u1[a2*10 +: 10]};
        av0_d[a2*7 +: 7] = (s_u + 11'd1 >= {1'b0, cfg_crd_i}) ? 7'd0
                         : (s_u + 11'd128 <= {1'b0, cfg_crd_i}) ? 7'd127
                         : cfg_crd_i[6:0] - s_u[6:0] - 7'd1;
        av1_d[a2*7 +: 7] = (s_u + 11'd2 >= {1'b0, cfg_crd_i}) ? 7'd0
                         : (s_u + 11'd129 <= {1'b0, cfg_crd_i}) ? 7'd127
                         : cfg_crd_i[6:0] - s_u[6:0] - 7'd2;
      end
      // The window start per output: m = (r k) >> 16.
      for (a2 = 0; a2 < N; a2 = a2 + 1) begin
        r_j  = lfsr_q[15:0] ^ out_hash(a2[15:0]);
        prod = {7'd0, r_j} * {16'd0, k1[a2*7 +: 7]};
        m2_d[a2*7 +: 7] = prod[22:16];
      end
      k2_d = k1;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      k1_q  <= {N*7{1'b0}};
      c1_q  <= {N*7{1'b0}};
      u1_q  <= {N*10{1'b0}};
      k2_q  <= {N*7{1'b0}};
      m2_q  <= {N*7{1'b0}};
      av0_q <= {N*7{1'b0}};
      av1_q <= {N*7{1'b0}};
      ki3_q <= {N*7{1'b0}};
      d3_q  <= {N*7{1'b0}};
    end else begin
      k1_q  <= k1_d;
      c1_q  <= c1_d;
      u1_q  <= u1_d;
      k2_q  <= k2_d;
      m2_q  <= m2_d;
      av0_q <= av0_d;
      av1_q <= av1_d;
      ki3_q <= ki3_d;
      d3_q  <= d3_d;
    end
  end

  wire [N*7-1:0] k2  = (S2REG != 0) ? k2_q  : k2_d;
  wire [N*7-1:0] m2  = (S2REG != 0) ? m2_q  : m2_d;
  wire [N*7-1:0] av0 = (S2REG != 0) ? av0_q : av0_d;
  wire [N*7-1:0] av1 = (S2REG != 0) ? av1_q : av1_d;

  // Stage 3: each SRQ's offset from its output's window start.
  always @(*) begin
    s_k   = 7'd0;
    s_m   = 7'd0;
    s_c   = 7'd0;
    so2   = {IW{1'b0}};
    a3    = 0;
    ki3_d = ki3_q;
    d3_d  = d3_q;
    if (s3_en) begin
      for (a3 = 0; a3 < N; a3 = a3 + 1) begin
        so2 = spec_out_i[a3*IW +: IW];
        s_k = k2[so2*7 +: 7];
        s_m = m2[so2*7 +: 7];
        s_c = c1[a3*7 +: 7];
        ki3_d[a3*7 +: 7] = s_k;
        d3_d[a3*7 +: 7]  = (s_c >= s_m) ? s_c - s_m : s_c + s_k - s_m;
      end
    end
  end

  wire [N*7-1:0] ki3 = (S3REG != 0) ? ki3_q : ki3_d;
  wire [N*7-1:0] d3  = (S3REG != 0) ? d3_q  : d3_d;

  // ---------------------------------------------------------------------------
  // Delay line: prim_ram_1r1w banks of at most 64 bits
  // ---------------------------------------------------------------------------
  reg  [DW-1:0] dl_wdata;          // this slot's matching, per output (valid, input)
  wire [DW-1:0] dl_rdata;
  wire [6:0]    dl_raddr = wp_q + 7'd1 - cfg_xbar_delay_i;

  genvar gb;
  generate
    for (gb = 0; gb < NB; gb = gb + 1) begin : gen_dl
      localparam integer BW = (gb == NB - 1) ? DW - 64 * (NB - 1) : 64;
      prim_ram_1r1w #(.W(BW), .D(DL)) u_dl (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .we_i    (last),
        .waddr_i (wp_q),
        .wdata_i (dl_wdata[gb*64 +: BW]),
        .re_i    (last),
        .raddr_i (dl_raddr),
        .rdata_o (dl_rdata[gb*64 +: BW])
      );
    end
  endgenerate

  // ---------------------------------------------------------------------------
  // Phase K-1: the slot's results and the registers' next values
  // ---------------------------------------------------------------------------
  reg [DW-1:0]   arb_e;
  reg [N*7-1:0]  cap_of;
  reg [N-1:0]    win;
  reg [6:0]      cap_j, k_j, recv_m1;
  reg [6:0]      cap_n, cap_a, nwin_n, nwin_a;  // capacity, winners: no arbitrated cell, one
  reg [N*7-1:0]  nwin_of;                       // per output: winners min(k, cap)
  reg            lim_n, lim_a, k_av;            // cap limited by the credits; k <= avail
  reg [6:0]      avail;
  reg [IW-1:0]   rj, gj, mo_j;
  reg [CW-1:0]   v;
  reg            up, dn;                        // the row's counter moves
  reg [IW-1:0]   so3;
  integer        fi, fj;

  always @(*) begin
    cnt_d       = cnt_q;
    nz_d        = nz_q;
    gptr_d      = gptr_q;
    aptr_d      = aptr_q;
    use_d       = use_q;
    wp_d        = wp_q;
    age_d       = age_q;
    rd_ok_d     = rd_ok_q;
    fwd_d       = fwd_q;
    dlf_d       = dlf_q;
    ph_d        = last ? {PW{1'b0}} : ph_q + 1'b1;
    gnt_valid_o = {N{1'b0}};
    gnt_out_o   = {N*IW{1'b0}};
    gnt_iter_o  = {N*3{1'b0}};
    dl_wdata    = {DW{1'b0}};
    arb_e       = {DW{1'b0}};
    cap_of      = {N*7{1'b0}};
    so3         = {IW{1'b0}};
    fi          = 0;
    fj          = 0;
    ack_valid_o = {N{1'b0}};
    ack_seq_o   = {N*SW{1'b0}};
    xb_arb_o    = {N{1'b0}};
    xb_mask_o   = {N*N{1'b0}};
    req_drop_o  = {N{1'b0}};
    win         = {N{1'b0}};
    rj          = {IW{1'b0}};
    up          = 1'b0;
    dn          = 1'b0;
    gj          = {IW{1'b0}};
    mo_j        = {IW{1'b0}};
    v           = {CW{1'b0}};
    cap_j       = 7'd0;
    k_j         = 7'd0;
    cap_n       = 7'd0;
    cap_a       = 7'd0;
    nwin_n      = 7'd0;
    nwin_a      = 7'd0;
    nwin_of     = {N*7{1'b0}};
    lim_n       = 1'b0;
    lim_a       = 1'b0;
    k_av        = 1'b0;
    avail       = 7'd0;
    recv_m1     = cfg_recv_i - 7'd1;

    // Everything below is the slot's result, needed only in phase K-1: the
    // outputs are 0 and the registers hold in the other phases.
    if (last) begin
      gnt_valid_o = ~f_ui;
      gnt_out_o   = f_mi;
      gnt_iter_o  = f_gi;

      // The matching into the delay line; the arbitrated cells of this slot.
      for (fj = 0; fj < N; fj = fj + 1)
        dl_wdata[fj*EW +: EW] = {~f_uo[fj], f_mo[fj*IW +: IW]};
      if (cfg_xbar_delay_i == 7'd0) arb_e = dl_wdata;
      else if (fwd_q)               arb_e = dlf_q;
      else if (rd_ok_q)             arb_e = dl_rdata;
      else                          arb_e = {DW{1'b0}};

      // STX resolution: capacity per output, winners d < cap (or all).
      // Both capacities (with and without an arbitrated cell) and their
      // winner counts min(k, cap) are computed ahead of the delay line's
      // entry, which only selects (the entry's mux chain is not in series
      // with the compares and the credit sum).
      for (fj = 0; fj < N; fj = fj + 1) begin
        xb_arb_o[fj] = arb_e[fj*EW + IW];
        // With flow control, at most the credits left after this slot's grant,
        // less one kept for grants: an acknowledged cell may wait in the output
        // adapter for a predecessor only a grant brings (selective retry).
        avail = f_uo[fj] ? av0[fj*7 +: 7] : av1[fj*7 +: 7];
        // cap = min(R or R - 1, avail) with flow control, min(k, cap) winners:
        // the compares side by side, k <= cap taken from k's compare with
        // whichever value cap is.
        k_j    = k2[fj*7 +: 7];
        lim_n  = fc_on && !le7(cfg_recv_i, avail);
        lim_a  = fc_on && !le7(recv_m1, avail);
        k_av   = le7(k_j, avail);
        cap_n  = lim_n ? avail : cfg_recv_i;
        cap_a  = lim_a ? avail : recv_m1;
        nwin_n = (lim_n ? k_av : le7(k_j, cfg_recv_i)) ? k_j : cap_n;
        nwin_a = (lim_a ? k_av : le7(k_j, recv_m1)) ? k_j : cap_a;
        cap_of[fj*7 +: 7]  = xb_arb_o[fj] ? cap_a : cap_n;
        nwin_of[fj*7 +: 7] = xb_arb_o[fj] ? nwin_a : nwin_n;
      end
      for (fi = 0; fi < N; fi = fi + 1) begin
        so3    = spec_out_i[fi*IW +: IW];
        cap_j = cap_of[so3*7 +: 7];
        k_j   = ki3[fi*7 +: 7];
        if (stx_on && spec_valid_i[fi] && (k_j <= cap_j || d3[fi*7 +: 7] < cap_j)) begin
          win[fi] = 1'b1;
          ack_valid_o[fi] = 1'b1;
          ack_seq_o[fi*SW +: SW] = spec_seq_i[fi*SW +: SW];
        end
      end

      // Crossbar; credits: the grant and the winners (min(k, cap)) take theirs.
      for (fj = 0; fj < N; fj = fj + 1) begin
        mo_j = arb_e[fj*EW +: IW];
        xb_mask_o[fj*N +: N] = (srq[fj] & win)
                            | shl_n({{(N-1){1'b0}}, arb_e[fj*EW + IW]}, mo_j);
        use_d[fj*10 +: 10] = fc_on ? add10(u1[fj*10 +: 10], {3'd0, nwin_of[fj*7 +: 7]}, ~f_uo[fj])
                                   : 10'd0;
      end

      // Counters (release before arrival, saturating) and pointers (first
      // iteration only). Every VOQ's counter compares its own index with the
      // row's request and grant (a decoded write enable, a counter's own
      // increment and decrement): a write at a variable index is a shifter
      // over all N*N*CW bits in synthesis (over 16 min of proc at N = 16).
      for (fi = 0; fi < N; fi = fi + 1) begin
        rj = req_out_i[fi*IW +: IW];
        gj = f_mi[fi*IW +: IW];
        up = req_valid_i[fi] && !(gnt_valid_o[fi] && gj == rj);
        dn = gnt_valid_o[fi] && !(req_valid_i[fi] && gj == rj);
        for (fj = 0; fj < N; fj = fj + 1) begin
          v = cnt_q[(fi*N + fj)*CW +: CW];
          if (up && rj == fj[IW-1:0]) begin
            if (v == CMAX) begin
              req_drop_o[fi] = 1'b1;
            end else begin
              cnt_d[(fi*N + fj)*CW +: CW] = v + 1'b1;
              nz_d[fi*N + fj] = 1'b1;
            end
          end
          if (dn && gj == fj[IW-1:0]) begin
            cnt_d[(fi*N + fj)*CW +: CW] = v - 1'b1;
            if (v == {{(CW-1){1'b0}}, 1'b1}) nz_d[fi*N + fj] = 1'b0;
          end
        end
        if (f_m0i[fi]) aptr_d[fi*IW +: IW] = f_mi[fi*IW +: IW] + 1'b1;
        if (f_m0o[fi]) gptr_d[fi*IW +: IW] = f_mo[fi*IW +: IW] + 1'b1;
      end

      // Delay line pointers; the read of the next slot's entry.
      wp_d    = wp_q + 7'd1;
      age_d   = (age_q == 7'd127) ? age_q : age_q + 7'd1;
      rd_ok_d = ({1'b0, age_q} + 8'd1 >= {1'b0, cfg_xbar_delay_i});
      fwd_d   = (cfg_xbar_delay_i == 7'd1);
      dlf_d   = dl_wdata;
    end
  end

  // LFSR: 16 steps per slot, at the end of its last phase.
  prim_lfsr #(
    .W     (32),
    .TAPS  (TAPS),
    .SEED  (SEED),
    .STEPS (16)
  ) u_lfsr (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .en_i    (last),
    .state_o (lfsr_q)
  );

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), checked on the slot's results in
  // phase K-1; simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  initial begin
    if (K < 1 || K > 64) $error("ParamRange_A: CLK_PER_SLOT = %0d (1..64)", K);
  end

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
    for (a_i = 0; a_i < N && last; a_i = a_i + 1) begin
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
      if (lfsr_q == 32'd0) $error("LfsrNonZero_A");
      if (last) begin
        if (a_crd) $error("CrdBound_A: an output uses more credits than cfg_crd_i");
        if (a_empty) $error("GntImpliesReq_A: a grant for an empty VOQ");
        if (a_xbar) $error("XbarWithinR_A: an output receives more than R inputs");
        if (a_ack) $error("AckImpliesSrq_A: an ACK without a speculative request");
        if ({1'b0, popcnt(a_or)} != a_sum) $error("OneToOneMatching_A: an output granted twice");
      end
    end
  end
`endif

endmodule

`undef ARB_TRANSPOSE
`default_nettype wire
