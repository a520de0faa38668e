// mmu: ingress admission of a PFC-enabled shared-buffer switch.
//
// Spec: docs/mmu.md. Golden model: model/src/mmu.rs.
//
// Parameters
//   P      ingress ports, a power of two, 2..32; Q = 8 * P queues (port*8 + prio)
//   CW     counter width in cells, 8..24
//   NPIPE  lanes: arrivals and departures per clock, a power of two, P >= 2 NPIPE;
//          lane l serves ports l*P/NPIPE .. (l+1)*P/NPIPE - 1 (local port numbers)
//
// Algorithm (one cycle, in order)
//   1. departures of every lane: give back headroom, then shared, then private
//   2. one snapshot T = alpha * (Bs - S), Tl = alpha_l * (Bl - Lu) after 1
//   3. the pools' free space split among the lanes (share_l, no lane chain)
//   4. arrivals of every lane: charge private, then shared (s + a2 <= T, at
//      most share_l), then headroom; all or nothing. Lossy queues: whole
//      packet under Tl and within share_l of Bl - Lu.
//   5. PAUSE an arrival queue if it was ON and did not fit private + shared
//   6. RESUME the touched queues (arrival, departure and last cycle's PAUSE
//      of each lane) OFF at the start with h = 0 and s < Xon after 1, 4
//
// Ports
//   cfg_*   held for a run; arr_* / dep_* one arrival and one departure per lane
//   verdict_o, pause_o, resume_o, thr_o, thr_lossy_o, err_o: same cycle (comb.)
//   xoff_o, *_used_o, drop_*_o: registers at the start of the cycle
//   The per-queue counters priv_q, shr_q, hdr_q are not ports (state paths).

`default_nettype none
`timescale 1ns / 100ps

module mmu #(
  parameter integer P     = 4,
  parameter integer CW    = 16,
  parameter integer NPIPE = 1
) (
  input  wire                                           clk_i,
  input  wire                                           rst_ni,

  input  wire [CW-1:0]                                  cfg_buf_cells_i,
  input  wire [CW-1:0]                                  cfg_lossy_cells_i,
  input  wire [CW-1:0]                                  cfg_priv_cells_i,
  input  wire [P*CW-1:0]                                cfg_hdrm_cells_i,  // eta of port k in [k*CW +: CW]
  input  wire [CW-1:0]                                  cfg_xon_cells_i,
  input  wire [3:0]                                     cfg_alpha_i,
  input  wire [3:0]                                     cfg_alpha_lossy_i,
  input  wire [7:0]                                     cfg_lossless_i,

  input  wire [NPIPE-1:0]                               arr_valid_i,
  input  wire [NPIPE*($clog2(P)-$clog2(NPIPE))-1:0]     arr_port_i,
  input  wire [3*NPIPE-1:0]                             arr_prio_i,
  input  wire [6*NPIPE-1:0]                             arr_len_i,
  input  wire [NPIPE-1:0]                               dep_valid_i,
  input  wire [NPIPE*($clog2(P)-$clog2(NPIPE))-1:0]     dep_port_i,
  input  wire [3*NPIPE-1:0]                             dep_prio_i,
  input  wire [6*NPIPE-1:0]                             dep_len_i,

  output reg  [3*NPIPE-1:0]                             verdict_o,
  output reg  [8*P-1:0]                                 pause_o,
  output reg  [8*P-1:0]                                 resume_o,
  output wire [8*P-1:0]                                 xoff_o,
  output reg  [CW+6:0]                                  thr_o,
  output reg  [CW+6:0]                                  thr_lossy_o,
  output wire [CW-1:0]                                  shr_size_o,
  output wire [CW-1:0]                                  priv_used_o,
  output wire [CW-1:0]                                  shr_used_o,
  output wire [CW-1:0]                                  hdr_used_o,
  output wire [CW-1:0]                                  lossy_used_o,
  output wire [CW-1:0]                                  drop_ll_o,
  output wire [CW-1:0]                                  drop_ly_o,
  output reg  [1:0]                                     err_o,
  output wire                                           cfg_err_o
);

  localparam integer Q   = 8 * P;
  localparam integer PW  = $clog2(P);
  localparam integer NW  = $clog2(NPIPE);
  localparam integer LPW = PW - NW;         // port index inside a lane's slice
  localparam integer LQW = LPW + 3;         // queue index inside a lane's slice
  localparam integer LQ  = Q / NPIPE;       // queues per lane
  localparam integer TW  = CW + 7;          // threshold width: CW << 7 never wraps
  localparam integer RW  = CW + PW + 5;     // reserved-cells width: Q * 2^(CW+1)
  localparam integer SW  = CW + 4;          // sums over at most 8 lanes

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
  reg [Q*CW-1:0]      priv_q, priv_d;
  reg [Q*CW-1:0]      shr_q , shr_d;
  reg [Q*CW-1:0]      hdr_q , hdr_d;
  reg [Q-1:0]         xoff_q, xoff_d;
  reg [NPIPE-1:0]     pz_v_q, pz_v_d;
  reg [NPIPE*LQW-1:0] pz_idx_q, pz_idx_d;
  reg [CW-1:0]        priv_used_q, priv_used_d;
  reg [CW-1:0]        shr_used_q,  shr_used_d;
  reg [CW-1:0]        hdr_used_q,  hdr_used_d;
  reg [CW-1:0]        lossy_used_q, lossy_used_d;
  reg [CW-1:0]        drop_ll_q, drop_ll_d;
  reg [CW-1:0]        drop_ly_q, drop_ly_d;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      priv_q       <= {Q*CW{1'b0}};
      shr_q        <= {Q*CW{1'b0}};
      hdr_q        <= {Q*CW{1'b0}};
      xoff_q       <= {Q{1'b0}};
      pz_v_q       <= {NPIPE{1'b0}};
      pz_idx_q     <= {NPIPE*LQW{1'b0}};
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
      pz_v_q       <= pz_v_d;
      pz_idx_q     <= pz_idx_d;
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
  assign drop_ll_o    = drop_ll_q;
  assign drop_ly_o    = drop_ly_q;

  // Sum of a saturating counter and up to 8 increments.
  function automatic [CW-1:0] sat_add(input [CW-1:0] a, input [3:0] n);
    reg [SW-1:0] s;
    begin
      s = {4'd0, a} + {{(SW-4){1'b0}}, n};
      sat_add = (s > {4'd0, {CW{1'b1}}}) ? {CW{1'b1}} : s[CW-1:0];
    end
  endfunction

  // Lane `lane`'s share of `f` free cells: floor(f / NPIPE) + (lane < f mod NPIPE).
  function automatic [CW-1:0] share_of(input [CW-1:0] f, input [CW-1:0] lane);
    reg [CW-1:0] rem;
    begin
      rem      = f & (NPIPE[CW-1:0] - 1'b1);
      share_of = (f >> NW) + {{(CW-1){1'b0}}, lane < rem};
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Next state. Lane l reads and writes only the queues of its slice,
  // l*LQ .. l*LQ + LQ - 1 (index l*LQ + local); lanes meet in the totals,
  // the thresholds and the shares.
  // ---------------------------------------------------------------------------
  integer      l, c;
  reg [LQW-1:0] lq;                         // a queue index inside the lane's slice
  reg [31:0]   g;                           // the global queue index l*LQ + lq
  reg [LPW-1:0] lport;
  reg [5:0]    len6;
  // Departure arithmetic (CW+1 bits: p + s + h of one queue never exceeds B).
  reg [CW-1:0] dp_v, ds_v, dh_v;            // the queue before the departure
  reg [CW:0]   have;
  reg [CW-1:0] rel, rel_h, rel_s, rel_p;
  reg [SW-1:0] rel_p_t, rel_s_t, rel_h_t, rel_l_t, add_p_t, add_s_t, add_h_t, add_l_t;
  reg [CW-1:0] shr_used_dep, lossy_used_dep;
  // Thresholds and shares.
  reg [CW-1:0] free, free_l, share, share_l;
  reg [TW-1:0] thr, thr_l;
  // Arrival arithmetic.
  reg [CW-1:0] ap_v, as_v, ah_v;            // the queue after the departure
  reg [TW-1:0] room_s, room_t, a1, a2, r1, r2, len_w, room_p, room_h;
  reg          dropped, fits_l, arr_ll;
  reg [3:0]    n_drop_ll, n_drop_ly;
  reg [2:0]    v;
  reg          cand_v;

  always @(*) begin
    priv_d       = priv_q;
    shr_d        = shr_q;
    hdr_d        = hdr_q;
    xoff_d       = xoff_q;
    pz_v_d       = {NPIPE{1'b0}};
    pz_idx_d     = pz_idx_q;
    verdict_o    = {3*NPIPE{1'b0}};
    pause_o      = {Q{1'b0}};
    resume_o     = {Q{1'b0}};
    err_o        = 2'b00;
    rel_p_t      = {SW{1'b0}};
    rel_s_t      = {SW{1'b0}};
    rel_h_t      = {SW{1'b0}};
    rel_l_t      = {SW{1'b0}};
    add_p_t      = {SW{1'b0}};
    add_s_t      = {SW{1'b0}};
    add_h_t      = {SW{1'b0}};
    add_l_t      = {SW{1'b0}};
    n_drop_ll    = 4'd0;
    n_drop_ly    = 4'd0;
    rel          = {CW{1'b0}};
    rel_h        = {CW{1'b0}};
    rel_s        = {CW{1'b0}};
    rel_p        = {CW{1'b0}};

    // 1. Departures of every lane: headroom, then shared, then private.
    for (l = 0; l < NPIPE; l = l + 1) begin
      lport = dep_port_i[l*LPW +: LPW];
      lq    = {lport, dep_prio_i[l*3 +: 3]};
      g     = l * LQ + {{(32-LQW){1'b0}}, lq};
      len6  = dep_len_i[l*6 +: 6];
      dp_v  = priv_q[g*CW +: CW];
      ds_v  = shr_q[g*CW +: CW];
      dh_v  = hdr_q[g*CW +: CW];
      have  = {1'b0, dp_v} + {1'b0, ds_v} + {1'b0, dh_v};
      if (dep_valid_i[l]) begin
        if ({{(CW-5){1'b0}}, len6} > have) err_o[0] = 1'b1;
        rel   = ({{(CW-5){1'b0}}, len6} > have) ? have[CW-1:0] : {{(CW-6){1'b0}}, len6};
        rel_h = min_cw(rel, dh_v);
        rel_s = min_cw(rel - rel_h, ds_v);
        rel_p = rel - rel_h - rel_s;
        priv_d[g*CW +: CW] = dp_v - rel_p;
        shr_d[g*CW +: CW]  = ds_v - rel_s;
        hdr_d[g*CW +: CW]  = dh_v - rel_h;
        if (cfg_lossless_i[dep_prio_i[l*3 +: 3]]) begin
          rel_p_t = rel_p_t + {4'd0, rel_p};
          rel_s_t = rel_s_t + {4'd0, rel_s};
          rel_h_t = rel_h_t + {4'd0, rel_h};
        end else begin
          rel_l_t = rel_l_t + {4'd0, rel_s};
        end
      end
    end
    shr_used_dep   = shr_used_q - rel_s_t[CW-1:0];
    lossy_used_dep = lossy_used_q - rel_l_t[CW-1:0];

    // 2. One threshold snapshot for every lane, after the departures.
    free   = (shr_used_dep > bs) ? {CW{1'b0}} : bs - shr_used_dep;
    free_l = (lossy_used_dep > cfg_lossy_cells_i) ? {CW{1'b0}}
                                                  : cfg_lossy_cells_i - lossy_used_dep;
    thr    = dt_thr(free, cfg_alpha_i);
    thr_l  = dt_thr(free_l, cfg_alpha_lossy_i);
    thr_o       = thr;
    thr_lossy_o = thr_l;

    // 3./4./5. Arrivals of every lane on the counters after its departure.
    for (l = 0; l < NPIPE; l = l + 1) begin
      // This lane's shares of the pools: floor(F / NPIPE) + (l < F mod NPIPE).
      share   = share_of(free, l[CW-1:0]);
      share_l = share_of(free_l, l[CW-1:0]);
      lport   = arr_port_i[l*LPW +: LPW];
      lq      = {lport, arr_prio_i[l*3 +: 3]};
      g       = l * LQ + {{(32-LQW){1'b0}}, lq};
      len6    = arr_len_i[l*6 +: 6];
      ap_v    = priv_d[g*CW +: CW];
      as_v    = shr_d[g*CW +: CW];
      ah_v    = hdr_d[g*CW +: CW];
      arr_ll  = cfg_lossless_i[arr_prio_i[l*3 +: 3]];
      len_w   = {{(TW-6){1'b0}}, len6};
      room_p  = {7'd0, cfg_priv_cells_i - ap_v};
      a1      = (len_w < room_p) ? len_w : room_p;
      r1      = len_w - a1;
      room_t  = (thr > {7'd0, as_v}) ? thr - {7'd0, as_v} : {TW{1'b0}};
      room_s  = (room_t < {7'd0, share}) ? room_t : {7'd0, share};
      a2      = (r1 < room_s) ? r1 : room_s;
      r2      = r1 - a2;
      room_h  = {7'd0, cfg_hdrm_cells_i[(g/8)*CW +: CW] - ah_v};
      dropped = r2 > room_h;
      fits_l  = ({7'd0, as_v} + len_w <= thr_l) && (len_w <= {7'd0, share_l});
      v       = V_NONE;
      if (arr_valid_i[l]) begin
        if (len6 == 6'd0) begin
          err_o[1] = 1'b1;
          v        = V_INVALID;
        end else if (cfg_err) begin
          v = V_INVALID;
        end else if (arr_ll) begin
          // 5. PAUSE if the packet did not fit private + shared.
          if (!xoff_q[g] && (r2 != {TW{1'b0}} || dropped)) begin
            pause_o[g]           = 1'b1;
            xoff_d[g]            = 1'b1;
            pz_v_d[l]            = 1'b1;
            pz_idx_d[l*LQW +: LQW] = lq;
          end
          if (dropped) begin
            v         = V_DROP;
            n_drop_ll = n_drop_ll + 4'd1;
          end else begin
            priv_d[g*CW +: CW] = ap_v + a1[CW-1:0];
            shr_d[g*CW +: CW]  = as_v + a2[CW-1:0];
            hdr_d[g*CW +: CW]  = ah_v + r2[CW-1:0];
            add_p_t = add_p_t + {4'd0, a1[CW-1:0]};
            add_s_t = add_s_t + {4'd0, a2[CW-1:0]};
            add_h_t = add_h_t + {4'd0, r2[CW-1:0]};
            if (r2 != {TW{1'b0}})      v = V_HEADROOM;
            else if (a2 != {TW{1'b0}}) v = V_SHARED;
            else                       v = V_PRIVATE;
          end
        end else begin
          if (fits_l) begin
            v                  = V_LOSSY;
            shr_d[g*CW +: CW]  = as_v + {{(CW-6){1'b0}}, len6};
            add_l_t            = add_l_t + {{(SW-6){1'b0}}, len6};
          end else begin
            v         = V_LOSSY_DROP;
            n_drop_ly = n_drop_ly + 4'd1;
          end
        end
      end
      verdict_o[l*3 +: 3] = v;
    end
    priv_used_d  = priv_used_q - rel_p_t[CW-1:0] + add_p_t[CW-1:0];
    shr_used_d   = shr_used_dep + add_s_t[CW-1:0];
    hdr_used_d   = hdr_used_q - rel_h_t[CW-1:0] + add_h_t[CW-1:0];
    lossy_used_d = lossy_used_dep + add_l_t[CW-1:0];
    drop_ll_d    = sat_add(drop_ll_q, n_drop_ll);
    drop_ly_d    = sat_add(drop_ly_q, n_drop_ly);

    // 6. RESUME on each lane's touched queues (arrival, departure) and the
    //    queue it paused in the cycle before: OFF at the start, headroom
    //    empty and shared below Xon after this cycle. Exact (docs/mmu.md).
    for (l = 0; l < NPIPE; l = l + 1) begin
      for (c = 0; c < 3; c = c + 1) begin
        if (c == 0) begin
          lq     = {arr_port_i[l*LPW +: LPW], arr_prio_i[l*3 +: 3]};
          cand_v = arr_valid_i[l];
        end else if (c == 1) begin
          lq     = {dep_port_i[l*LPW +: LPW], dep_prio_i[l*3 +: 3]};
          cand_v = dep_valid_i[l];
        end else begin
          lq     = pz_idx_q[l*LQW +: LQW];
          cand_v = pz_v_q[l];
        end
        g = l * LQ + {{(32-LQW){1'b0}}, lq};
        if (cand_v && xoff_q[g] && hdr_d[g*CW +: CW] == {CW{1'b0}} &&
            shr_d[g*CW +: CW] < cfg_xon_cells_i) begin
          resume_o[g] = 1'b1;
          xoff_d[g]   = 1'b0;
        end
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
