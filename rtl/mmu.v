// mmu: ingress admission of a PFC-enabled shared-buffer switch.
//
// Spec: docs/mmu.md. Golden model: model/src/mmu.rs.
//
// Parameters
//   P   ingress ports, a power of two, 2..16; Q = 8 * P queues (port*8 + prio)
//   CW  counter width in cells, 8..24
//
// Algorithm (one cycle, in order)
//   1. departure: give back headroom, then shared, then private; clamp at 0
//   2. thresholds T = alpha * (Bs - S), Tl = alpha_l * (Bl - Lu) after 1
//   3. arrival: charge private, then shared (s + a2 <= T, S <= Bs), then
//      headroom; all or nothing. Lossy queues: whole packet under Tl and Bl.
//   4. PAUSE the arrival queue if it was ON and did not fit private + shared
//   5. RESUME every queue OFF at the start with h = 0 and s < Xon after 1, 3
//
// Ports
//   cfg_*   held for a run; arr_* / dep_* one arrival and one departure per cycle
//   verdict_o, pause_o, resume_o, thr_o, thr_lossy_o, err_o: same cycle (comb.)
//   xoff_o, *_used_o, q_*_o, drop_*_o: registers at the start of the cycle

`default_nettype none
`timescale 1ns / 100ps

module mmu #(
  parameter integer P  = 4,
  parameter integer CW = 16
) (
  input  wire                  clk_i,
  input  wire                  rst_ni,

  input  wire [CW-1:0]         cfg_buf_cells_i,
  input  wire [CW-1:0]         cfg_lossy_cells_i,
  input  wire [CW-1:0]         cfg_priv_cells_i,
  input  wire [P*CW-1:0]       cfg_hdrm_cells_i,   // eta of port k in [k*CW +: CW]
  input  wire [CW-1:0]         cfg_xon_cells_i,
  input  wire [3:0]            cfg_alpha_i,
  input  wire [3:0]            cfg_alpha_lossy_i,
  input  wire [7:0]            cfg_lossless_i,

  input  wire                  arr_valid_i,
  input  wire [$clog2(P)-1:0]  arr_port_i,
  input  wire [2:0]            arr_prio_i,
  input  wire [5:0]            arr_len_i,
  input  wire                  dep_valid_i,
  input  wire [$clog2(P)-1:0]  dep_port_i,
  input  wire [2:0]            dep_prio_i,
  input  wire [5:0]            dep_len_i,

  output reg  [2:0]            verdict_o,
  output reg  [8*P-1:0]        pause_o,
  output reg  [8*P-1:0]        resume_o,
  output wire [8*P-1:0]        xoff_o,
  output reg  [CW+6:0]         thr_o,
  output reg  [CW+6:0]         thr_lossy_o,
  output wire [CW-1:0]         shr_size_o,
  output wire [CW-1:0]         priv_used_o,
  output wire [CW-1:0]         shr_used_o,
  output wire [CW-1:0]         hdr_used_o,
  output wire [CW-1:0]         lossy_used_o,
  output wire [8*P*CW-1:0]     q_priv_o,
  output wire [8*P*CW-1:0]     q_shr_o,
  output wire [8*P*CW-1:0]     q_hdr_o,
  output wire [CW-1:0]         drop_ll_o,
  output wire [CW-1:0]         drop_ly_o,
  output reg  [1:0]            err_o,
  output wire                  cfg_err_o
);

  localparam integer Q  = 8 * P;
  localparam integer PW = $clog2(P);
  localparam integer TW = CW + 7;           // threshold width: CW << 7 never wraps
  localparam integer RW = CW + PW + 5;      // reserved-cells width: Q * 2^(CW+1)
  localparam integer QW = $clog2(Q);

  localparam [2:0] V_NONE = 3'd0, V_PRIVATE = 3'd1, V_SHARED = 3'd2, V_HEADROOM = 3'd3,
                   V_DROP = 3'd4, V_LOSSY = 3'd5, V_LOSSY_DROP = 3'd6, V_INVALID = 3'd7;

  // ---------------------------------------------------------------------------
  // Values derived from the configuration
  // ---------------------------------------------------------------------------
  reg  [3:0]    n_prio_ll;                  // popcount(cfg_lossless_i)
  reg  [RW-1:0] per_prio;                   // P * phi + sum of the ports' eta
  integer       k;
  always @(*) begin
    n_prio_ll = 4'd0;
    for (k = 0; k < 8; k = k + 1) n_prio_ll = n_prio_ll + {3'd0, cfg_lossless_i[k]};
    per_prio = {{(RW-CW){1'b0}}, cfg_priv_cells_i} * P[RW-1:0];
    for (k = 0; k < P; k = k + 1) per_prio = per_prio + {{(RW-CW){1'b0}}, cfg_hdrm_cells_i[k*CW +: CW]};
  end

  wire [RW-1:0] reserved = {{(RW-4){1'b0}}, n_prio_ll} * per_prio;
  wire [RW-1:0] need     = reserved + {{(RW-CW){1'b0}}, cfg_lossy_cells_i};
  wire          cfg_err  = need > {{(RW-CW){1'b0}}, cfg_buf_cells_i};
  wire [RW-1:0] bs_wide  = {{(RW-CW){1'b0}}, cfg_buf_cells_i} - need;
  wire [CW-1:0] bs       = cfg_err ? {CW{1'b0}} : bs_wide[CW-1:0];
  wire          unused_bs_wide = ^bs_wide[RW-1:CW];  // zero when cfg_err is clear

  assign cfg_err_o  = cfg_err;
  assign shr_size_o = bs;

  // alpha * free for alpha = 2^k, k = signed 4-bit; k = -8 means alpha = 0.
  function automatic [TW-1:0] dt_thr(input [CW-1:0] free, input [3:0] k_enc);
    reg [TW-1:0] f;
    begin
      f = {7'd0, free};
      if (k_enc == 4'b1000)  dt_thr = {TW{1'b0}};
      else if (k_enc[3])     dt_thr = f >> (~k_enc + 4'd1);   // -k for k in -7..-1
      else                   dt_thr = f << k_enc[2:0];
    end
  endfunction

  function automatic [CW-1:0] min_cw(input [CW-1:0] a, input [CW-1:0] b);
    min_cw = (a < b) ? a : b;
  endfunction

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [Q*CW-1:0] priv_q, priv_d;
  reg [Q*CW-1:0] shr_q,  shr_d;
  reg [Q*CW-1:0] hdr_q,  hdr_d;
  reg [Q-1:0]    xoff_q, xoff_d;
  reg [CW-1:0]   priv_used_q, priv_used_d;
  reg [CW-1:0]   shr_used_q,  shr_used_d;
  reg [CW-1:0]   hdr_used_q,  hdr_used_d;
  reg [CW-1:0]   lossy_used_q, lossy_used_d;
  reg [CW-1:0]   drop_ll_q, drop_ll_d;
  reg [CW-1:0]   drop_ly_q, drop_ly_d;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      priv_q       <= {Q*CW{1'b0}};
      shr_q        <= {Q*CW{1'b0}};
      hdr_q        <= {Q*CW{1'b0}};
      xoff_q       <= {Q{1'b0}};
      priv_used_q  <= {CW{1'b0}};
      shr_used_q   <= {CW{1'b0}};
      hdr_used_q   <= {CW{1'b0}};
      lossy_used_q <= {CW{1'b0}};
      drop_ll_q    <= {CW{1'b0}};
      drop_ly_q    <= {CW{1'b0}};
    end else begin
      priv_q       <= priv_d;
      shr_q        <= shr_d;
      hdr_q        <= hdr_d;
      xoff_q       <= xoff_d;
      priv_used_q  <= priv_used_d;
      shr_used_q   <= shr_used_d;
      hdr_used_q   <= hdr_used_d;
      lossy_used_q <= lossy_used_d;
      drop_ll_q    <= drop_ll_d;
      drop_ly_q    <= drop_ly_d;
    end
  end

  assign xoff_o       = xoff_q;
  assign priv_used_o  = priv_used_q;
  assign shr_used_o   = shr_used_q;
  assign hdr_used_o   = hdr_used_q;
  assign lossy_used_o = lossy_used_q;
  assign q_priv_o     = priv_q;
  assign q_shr_o      = shr_q;
  assign q_hdr_o      = hdr_q;
  assign drop_ll_o    = drop_ll_q;
  assign drop_ly_o    = drop_ly_q;

  // ---------------------------------------------------------------------------
  // Next state
  // ---------------------------------------------------------------------------
  wire [QW-1:0] dq = {dep_port_i, dep_prio_i};
  wire [QW-1:0] aq = {arr_port_i, arr_prio_i};

  // Departure arithmetic (CW+1 bits: p + s + h of one queue never exceeds B).
  reg [CW-1:0] dp_v, ds_v, dh_v;            // queue d before the departure
  reg [CW:0]   have;
  reg [CW-1:0] rel, rel_h, rel_s, rel_p;
  // Arrival arithmetic.
  reg [CW-1:0] ap_v, as_v, ah_v;            // queue a after the departure
  reg [TW-1:0] thr, thr_l, room_s, room_t, pool_free;
  reg [TW-1:0] a1, a2, r1, r2, len_w, room_p, room_h;
  reg          dropped, fits_l, arr_ll;
  integer      q;

  always @(*) begin
    priv_d       = priv_q;
    shr_d        = shr_q;
    hdr_d        = hdr_q;
    xoff_d       = xoff_q;
    priv_used_d  = priv_used_q;
    shr_used_d   = shr_used_q;
    hdr_used_d   = hdr_used_q;
    lossy_used_d = lossy_used_q;
    drop_ll_d    = drop_ll_q;
    drop_ly_d    = drop_ly_q;
    verdict_o    = V_NONE;
    pause_o      = {Q{1'b0}};
    resume_o     = {Q{1'b0}};
    err_o        = 2'b00;

    // 1. Departure: headroom, then shared, then private.
    dp_v  = priv_q[dq*CW +: CW];
    ds_v  = shr_q[dq*CW +: CW];
    dh_v  = hdr_q[dq*CW +: CW];
    have  = {1'b0, dp_v} + {1'b0, ds_v} + {1'b0, dh_v};
    rel   = {CW{1'b0}};
    rel_h = {CW{1'b0}};
    rel_s = {CW{1'b0}};
    rel_p = {CW{1'b0}};
    if (dep_valid_i) begin
      if ({{(CW-5){1'b0}}, dep_len_i} > have) err_o[0] = 1'b1;
      rel   = ({{(CW-5){1'b0}}, dep_len_i} > have) ? have[CW-1:0] : {{(CW-6){1'b0}}, dep_len_i};
      rel_h = min_cw(rel, dh_v);
      rel_s = min_cw(rel - rel_h, ds_v);
      rel_p = rel - rel_h - rel_s;
      priv_d[dq*CW +: CW] = dp_v - rel_p;
      shr_d[dq*CW +: CW]  = ds_v - rel_s;
      hdr_d[dq*CW +: CW]  = dh_v - rel_h;
      if (cfg_lossless_i[dep_prio_i]) begin
        priv_used_d = priv_used_d - rel_p;
        shr_used_d  = shr_used_d - rel_s;
        hdr_used_d  = hdr_used_d - rel_h;
      end else begin
        lossy_used_d = lossy_used_d - rel_s;
      end
    end

    // 2. Thresholds after the departure.
    thr   = dt_thr((shr_used_d > bs) ? {CW{1'b0}} : bs - shr_used_d, cfg_alpha_i);
    thr_l = dt_thr((lossy_used_d > cfg_lossy_cells_i) ? {CW{1'b0}}
                                                      : cfg_lossy_cells_i - lossy_used_d,
                   cfg_alpha_lossy_i);
    thr_o       = thr;
    thr_lossy_o = thr_l;

    // 3. Arrival, on the counters after the departure.
    ap_v      = priv_d[aq*CW +: CW];
    as_v      = shr_d[aq*CW +: CW];
    ah_v      = hdr_d[aq*CW +: CW];
    arr_ll    = cfg_lossless_i[arr_prio_i];
    len_w     = {{(TW-6){1'b0}}, arr_len_i};
    room_p    = {7'd0, cfg_priv_cells_i - ap_v};
    a1        = (len_w < room_p) ? len_w : room_p;
    r1        = len_w - a1;
    room_t    = (thr > {7'd0, as_v}) ? thr - {7'd0, as_v} : {TW{1'b0}};
    pool_free = {7'd0, bs - shr_used_d};
    room_s    = (room_t < pool_free) ? room_t : pool_free;
    a2        = (r1 < room_s) ? r1 : room_s;
    r2        = r1 - a2;
    room_h    = {7'd0, cfg_hdrm_cells_i[arr_port_i*CW +: CW] - ah_v};
    dropped   = r2 > room_h;
    fits_l    = ({7'd0, as_v} + len_w <= thr_l) &&
                ({7'd0, lossy_used_d} + len_w <= {7'd0, cfg_lossy_cells_i});
    if (arr_valid_i) begin
      if (arr_len_i == 6'd0) begin
        err_o[1]  = 1'b1;
        verdict_o = V_INVALID;
      end else if (cfg_err) begin
        verdict_o = V_INVALID;
      end else if (arr_ll) begin
        // 4. PAUSE if the packet did not fit private + shared.
        if (!xoff_q[aq] && (r2 != {TW{1'b0}} || dropped)) begin
          pause_o[aq] = 1'b1;
          xoff_d[aq]  = 1'b1;
        end
        if (dropped) begin
          verdict_o = V_DROP;
          if (drop_ll_q != {CW{1'b1}}) drop_ll_d = drop_ll_q + 1'b1;
        end else begin
          priv_d[aq*CW +: CW] = ap_v + a1[CW-1:0];
          shr_d[aq*CW +: CW]  = as_v + a2[CW-1:0];
          hdr_d[aq*CW +: CW]  = ah_v + r2[CW-1:0];
          priv_used_d = priv_used_d + a1[CW-1:0];
          shr_used_d  = shr_used_d + a2[CW-1:0];
          hdr_used_d  = hdr_used_d + r2[CW-1:0];
          if (r2 != {TW{1'b0}})      verdict_o = V_HEADROOM;
          else if (a2 != {TW{1'b0}}) verdict_o = V_SHARED;
          else                       verdict_o = V_PRIVATE;
        end
      end else begin
        if (fits_l) begin
          verdict_o           = V_LOSSY;
          shr_d[aq*CW +: CW]  = as_v + {{(CW-6){1'b0}}, arr_len_i};
          lossy_used_d        = lossy_used_d + {{(CW-6){1'b0}}, arr_len_i};
        end else begin
          verdict_o = V_LOSSY_DROP;
          if (drop_ly_q != {CW{1'b1}}) drop_ly_d = drop_ly_q + 1'b1;
        end
      end
    end

    // 5. RESUME every queue OFF at the start of the cycle whose headroom is
    //    empty and whose shared occupancy is below Xon after this cycle.
    for (q = 0; q < Q; q = q + 1) begin
      if (xoff_q[q] && hdr_d[q*CW +: CW] == {CW{1'b0}} &&
          shr_d[q*CW +: CW] < cfg_xon_cells_i) begin
        resume_o[q] = 1'b1;
        xoff_d[q]   = 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), for simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  integer aq_i;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else if (!cfg_err) begin
      if (shr_used_q > bs) $error("SharedWithinPool_A: S=%0d > Bs=%0d", shr_used_q, bs);
      if (lossy_used_q > cfg_lossy_cells_i) $error("LossyWithinPool_A");
      for (aq_i = 0; aq_i < Q; aq_i = aq_i + 1) begin
        if (cfg_lossless_i[aq_i % 8]) begin
          if (priv_q[aq_i*CW +: CW] > cfg_priv_cells_i) $error("PrivateWithinPhi_A: queue %0d", aq_i);
          if (hdr_q[aq_i*CW +: CW] > cfg_hdrm_cells_i[(aq_i/8)*CW +: CW])
            $error("HeadroomWithinEta_A: queue %0d", aq_i);
        end else if (xoff_q[aq_i]) begin
          $error("LossyNeverOff_A: queue %0d", aq_i);
        end
      end
    end
  end
`endif

endmodule

`default_nettype wire
