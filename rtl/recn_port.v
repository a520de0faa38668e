// recn_port: one switch port's RECN queue manager with two virtual channels.
//
// Spec: docs/recn_port.md. Golden model: model/src/recn_port.rs.
//
// Parameters
//   D   detection queues per VC (switch outputs), a power of two, 2..16
//   S   set-aside queues (SAQs) per VC, 1..16
//   C   memory cells = descriptors, 32..1024
//   RW  route (turnpool) width, TB..32
//   TB, H, HW, NQ, QW, L, LW, AW, CW   derived, do not set (see the spec)
//
// Algorithm (one cycle, in order)
//   1. dequeue: when out_ready_i, VC0's eligible queues (not empty, not
//      stop_i, a SAQ not behind its in-order marker) strictly first, round
//      robin inside a VC (prim_rr_arb each); the head descriptor leaves
//      (its fields from the head cache) and is free at once; the next
//      cache becomes the head, and the new head's word is read from the
//      descriptor memory (u_dm, prim_ram_1r1w) for the next cache;
//      markers in that queue move up by its cells
//   2. arrival: CAM lookup (valid, same SL, route prefix equal; longest
//      prefix wins) -> SAQ, else detection queue route[TB-1:0] of the SL's
//      VC; taken when it fits after the dequeue (the word of the tail it
//      is linked behind written, or the head cache loaded); its descriptor from the
//      free list: a fresh one (fresh_q), else the head of the FIFO of
//      released ones (u_fl, prim_ram_1r1w, head shown ahead in
//      fl_hsel_q/fl_hd_q), else the one released this cycle; a released
//      descriptor the arrival does not take is pushed
//   3. notification received: exact line -> REFRESH / GONE; congestion ->
//      lowest free line of the VC (ALLOC, with its marker when
//      cfg_order_i) or DROP (prim_sat_cnt); leaf rule: a congestion
//      notification not taken is refused downstream (dn_*)
//   4. release message received: clears its sender's bit of the exact line
//      and, for one hop, of the detection queue's mask
//   5. notification sent: the arrival's queue detected congestion (to the
//      packet's sender, once per sender), else (root rule) the first queue
//      with a pending vanish
//   6. Xon/Xoff per SAQ; release: root rule, lines gone, with no notified
//      sender and empty; leaf rule, the lowest line with no notified
//      sender, that held a packet and is empty (release message dn_*)
//
// Ports
//   cfg_*   held for a run
//   in_*, out_*, ntf_*_o, rls_hit_o, up_*, dn_*, rel_o: same cycle
//   xoff_o, occ_o, used_o, cam_*_o, det_mask_o, drop_cnt_o: registers

`default_nettype none
`timescale 1ns / 100ps

module recn_port #(
  parameter integer D  = 4,
  parameter integer S  = 2,
  parameter integer C  = 64,
  parameter integer RW = 16,
  parameter integer TB = $clog2(D),
  parameter integer H  = RW / TB,
  parameter integer HW = $clog2(H + 1),
  parameter integer NQ = 2 * (D + S),
  parameter integer QW = $clog2(NQ),
  parameter integer L  = 2 * S,
  parameter integer LW = $clog2(L),
  parameter integer AW = $clog2(C),
  parameter integer CW = $clog2(C + 1)
) (
  input  wire              clk_i,
  input  wire              rst_ni,

  input  wire [7:0]        cfg_sl_vc_i,
  input  wire [CW-1:0]     cfg_det_thr_i,
  input  wire [CW-1:0]     cfg_rel_thr_i,
  input  wire [CW-1:0]     cfg_xoff_i,
  input  wire [CW-1:0]     cfg_xon_i,
  input  wire              cfg_leaf_i,
  input  wire              cfg_order_i,
  input  wire [7:0]        cfg_idle_i,

  input  wire              in_valid_i,
  input  wire [7:0]        in_id_i,
  input  wire [2:0]        in_sl_i,
  input  wire [4:0]        in_len_i,
  input  wire [RW-1:0]     in_route_i,
  input  wire [TB-1:0]     in_src_i,
  input  wire              out_ready_i,
  input  wire [NQ-1:0]     stop_i,
  input  wire              ntf_valid_i,
  input  wire              ntf_kind_i,
  input  wire [RW-1:0]     ntf_route_i,
  input  wire [HW-1:0]     ntf_hops_i,
  input  wire [2:0]        ntf_sl_i,
  input  wire              rls_valid_i,
  input  wire [TB-1:0]     rls_src_i,
  input  wire [RW-1:0]     rls_route_i,
  input  wire [HW-1:0]     rls_hops_i,
  input  wire [2:0]        rls_sl_i,

  output wire              in_ready_o,
  output wire [QW-1:0]     in_queue_o,
  output wire [AW-1:0]     in_desc_o,
  output wire              out_valid_o,
  output wire [QW-1:0]     out_queue_o,
  output wire [7:0]        out_id_o,
  output wire [2:0]        out_sl_o,
  output wire [4:0]        out_len_o,
  output reg  [2:0]        ntf_act_o,
  output reg  [LW-1:0]     ntf_line_o,
  output reg               rls_hit_o,
  output reg               up_valid_o,
  output reg               up_kind_o,
  output reg  [RW-1:0]     up_route_o,
  output reg  [HW-1:0]     up_hops_o,
  output reg  [2:0]        up_sl_o,
  output reg  [TB-1:0]     up_dst_o,
  output reg               dn_valid_o,
  output reg  [RW-1:0]     dn_route_o,
  output reg  [HW-1:0]     dn_hops_o,
  output reg  [2:0]        dn_sl_o,
  output reg  [L-1:0]      rel_o,
  output wire [L-1:0]      xoff_o,
  output wire [CW*NQ-1:0]  occ_o,
  output wire [CW-1:0]     used_o,
  output wire [L-1:0]      cam_valid_o,
  output wire [L-1:0]      cam_gone_o,
  output wire [L-1:0]      cam_hold_o,
  output wire [L-1:0]      cam_mark_o,
  output wire [D*L-1:0]    cam_up_o,
  output wire [RW*L-1:0]   cam_route_o,
  output wire [HW*L-1:0]   cam_hops_o,
  output wire [3*L-1:0]    cam_sl_o,
  output wire [16*D*D-1:0] det_mask_o,
  output wire [7:0]        drop_cnt_o,
  output wire              cfg_err_o
);

  localparam integer QV = D + S;                 // queues per VC
  localparam integer IW = $clog2(QV);            // arbiter index width
  localparam integer XW = CW + 6;                // cell sums with a packet
  localparam integer DW = AW + 16;               // descriptor word {nxt, id, sl, len}
  localparam [2:0] A_NONE = 3'd0, A_IGNORE = 3'd1, A_ALLOC = 3'd2, A_REFRESH = 3'd3,
                   A_DROP = 3'd4, A_GONE = 3'd5;

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [CW*NQ-1:0] occ_q, occ_d;
  reg [AW*NQ-1:0] head_q, head_d, tail_q, tail_d;
  reg [CW-1:0]    used_q, used_d;
  // Free list: fresh descriptors in index order, then a FIFO of released
  // ones (words in u_fl; head = fl_hsel_q ? RAM read register : fl_hd_q).
  reg [AW:0]      fresh_q, fresh_d;
  reg [AW-1:0]    fl_rd_q, fl_rd_d, fl_wr_q, fl_wr_d, fl_hd_q, fl_hd_d;
  reg [AW:0]      fl_cnt_q, fl_cnt_d;
  reg             fl_hsel_q, fl_hsel_d;
  reg [L-1:0]     valid_q, valid_d, gone_q, gone_d, hold_q, hold_d, xoff_q, xoff_d;
  reg [8*L-1:0]   age_q, age_d;                  // cycles valid without a packet
  reg [L-1:0]     mk_q, mk_d;                    // in-order marker ahead
  reg [QW*L-1:0]  mkq_q, mkq_d;                  // its queue
  reg [CW*L-1:0]  mkc_q, mkc_d;                  // cells ahead of it
  reg [D*L-1:0]   up_q, up_d;                    // senders notified, per line
  reg [RW*L-1:0]  route_q, route_d;
  reg [HW*L-1:0]  hops_q, hops_d;
  reg [3*L-1:0]   sl_q, sl_d;
  reg [16*D*D-1:0] mask_q, mask_d;               // SLs notified, per (det queue, sender)
  // Head cache per queue (the head packet's fields) and next cache (the
  // head descriptor's word: the next descriptor and its packet's fields),
  // data read only while the queue holds the packets; the next cache is
  // u_dm's read register when nx_sel_q and nx_qn_q names the queue.
  reg [8*NQ-1:0]  hid_q, hid_d;
  reg [3*NQ-1:0]  hsl_q, hsl_d;
  reg [5*NQ-1:0]  hlen_q, hlen_d;
  reg [DW*NQ-1:0] nx_q, nx_d;
  reg             nx_sel_q, nx_sel_d;
  reg [QW-1:0]    nx_qn_q, nx_qn_d;

  wire cfg_err = (cfg_rel_thr_i == {CW{1'b0}}) || (cfg_rel_thr_i > cfg_det_thr_i)
              || (cfg_det_thr_i > C[CW-1:0]) || (cfg_xoff_i > C[CW-1:0])
              || (cfg_xon_i >= cfg_xoff_i);   // (an Xoff of 0 is caught by the last)
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // 1. Dequeue
  // ---------------------------------------------------------------------------
  // A SAQ behind its in-order marker is not eligible.
  reg [NQ-1:0] req;
  reg          marked;
  integer      r;
  always @(*) begin
    for (r = 0; r < NQ; r = r + 1) begin
      marked = 1'b0;
      if ((r % QV) >= D) marked = mk_q[(r / QV) * S + (r % QV) - D];
      req[r] = (occ_q[r*CW +: CW] != {CW{1'b0}}) && !stop_i[r] && !marked;
    end
  end

  wire          v0, v1;
  wire [IW-1:0] i0, i1;
  wire [QV-1:0] gnt0, gnt1;
  wire [IW-1:0] ptr0, ptr1;
  prim_rr_arb #(.N(QV)) u_arb0 (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req[QV-1:0]),
    .ack_i   (out_ready_i),
    .valid_o (v0),
    .idx_o   (i0),
    .gnt_o   (gnt0),
    .ptr_o   (ptr0)
  );
  prim_rr_arb #(.N(QV)) u_arb1 (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req[NQ-1:QV]),
    .ack_i   (out_ready_i && !v0),
    .valid_o (v1),
    .idx_o   (i1),
    .gnt_o   (gnt1),
    .ptr_o   (ptr1)
  );

  wire          deq = out_ready_i && (v0 || v1);
  wire [QW-1:0] dq  = v0 ? {{(QW-IW){1'b0}}, i0} : QV[QW-1:0] + {{(QW-IW){1'b0}}, i1};
  wire [AW-1:0] h   = head_q[dq*AW +: AW];
  wire [4:0]    h_len = hlen_q[dq*5 +: 5];
  // The head's word: the next descriptor and its packet, the new head.
  wire [DW-1:0] dm_rdata;
  wire [DW-1:0] nw     = (nx_sel_q && nx_qn_q == dq) ? dm_rdata : nx_q[dq*DW +: DW];
  wire [AW-1:0] nw_nxt = nw[DW-1:16];
  wire [AW-1:0] d_tail = tail_q[dq*AW +: AW];
  // Read the new head's word when the queue keeps two packets or more (h
  // and the new head are not the tail): that word was written when the
  // packet behind the new head arrived, in an earlier cycle. With one
  // packet, nw is no word of the queue (unknown in simulation after a
  // reset) and nothing here depends on it.
  wire          dm_re  = deq && h != d_tail && nw_nxt != d_tail;
  wire [CW-1:0] rel_cells = deq ? {{(CW-5){1'b0}}, h_len} + {{(CW-1){1'b0}}, 1'b1}
                                : {CW{1'b0}};

  assign out_valid_o = deq;
  assign out_queue_o = deq ? dq : {QW{1'b0}};
  assign out_id_o    = deq ? hid_q[dq*8 +: 8] : 8'd0;
  assign out_sl_o    = deq ? hsl_q[dq*3 +: 3] : 3'd0;
  assign out_len_o   = deq ? h_len : 5'd0;

  // ---------------------------------------------------------------------------
  // 2. Arrival
  // ---------------------------------------------------------------------------
  // Every value a function reads is an argument (Icarus' @* sees only them).
  function automatic [RW-1:0] pmask(input [HW-1:0] hops);
    begin
      pmask = ~({RW{1'b1}} << (hops * TB));
    end
  endfunction

  // The line hit by (rt, s) among the lines of fewer than lim hops: the
  // longest prefix, then the lowest index.
  function automatic [LW:0] lookup(input [RW-1:0] rt, input [2:0] s, input [HW:0] lim,
                                   input [L-1:0] v, input [3*L-1:0] sls,
                                   input [HW*L-1:0] hs, input [RW*L-1:0] rts);
    integer jl;
    reg f;
    reg [LW-1:0] b;
    reg [HW-1:0] bh;
    begin
      f = 1'b0; b = {LW{1'b0}}; bh = {HW{1'b0}};
      for (jl = 0; jl < L; jl = jl + 1) begin
        if (v[jl] && sls[jl*3 +: 3] == s && hs[jl*HW +: HW] > bh
            && {1'b0, hs[jl*HW +: HW]} < lim
            && ((rt ^ rts[jl*RW +: RW]) & pmask(hs[jl*HW +: HW])) == {RW{1'b0}}) begin
          f = 1'b1; b = jl[LW-1:0]; bh = hs[jl*HW +: HW];
        end
      end
      lookup = {f, b};
    end
  endfunction

  localparam [HW:0] NOLIM = {1'b1, {HW{1'b0}}};   // above every hop count
  wire [LW:0]   lk    = lookup(in_route_i, in_sl_i, NOLIM, valid_q, sl_q, hops_q, route_q);
  wire          hit   = lk[LW];
  wire [LW-1:0] hl    = lk[LW-1:0];
  wire          hl_v1 = hl >= S[LW-1:0];
  wire [QW-1:0] hl_s  = {{(QW-LW){1'b0}}, hl_v1 ? hl - S[LW-1:0] : hl};
  wire          in_v1 = cfg_sl_vc_i[in_sl_i];
  wire [QW-1:0] aq    = hit ? (hl_v1 ? QV[QW-1:0] : {QW{1'b0}}) + D[QW-1:0] + hl_s
                            : (in_v1 ? QV[QW-1:0] : {QW{1'b0}})
                              + {{(QW-TB){1'b0}}, in_route_i[TB-1:0]};
  wire [XW-1:0] len   = {{(XW-5){1'b0}}, in_len_i} + {{(XW-1){1'b0}}, 1'b1};
  wire          fits  = {6'd0, used_q} - {6'd0, rel_cells} + len <= C[XW-1:0];
  wire          enq   = in_valid_i && !cfg_err && fits;

  assign in_ready_o = enq;
  assign in_queue_o = enq ? aq : {QW{1'b0}};

  // The free list: a fresh descriptor, else the FIFO's head (a pop), else
  // the one released this cycle; a released one not taken is pushed.
  localparam [AW:0]   CN   = C[AW:0];
  localparam [AW-1:0] LAST = C[AW-1:0] - {{(AW-1){1'b0}}, 1'b1};
  wire [AW-1:0] fl_rdata;
  wire          fresh_ok = fresh_q < CN;
  wire          fl_ne    = fl_cnt_q != {(AW+1){1'b0}};
  wire          fl_pop   = enq && !fresh_ok && fl_ne;
  wire          fl_reuse = enq && !fresh_ok && !fl_ne;
  wire          fl_push  = deq && !fl_reuse;
  wire [AW-1:0] fl_head  = fl_hsel_q ? fl_rdata : fl_hd_q;
  wire [AW-1:0] e        = fresh_ok ? fresh_q[AW-1:0] : (fl_ne ? fl_head : h);
  wire          fl_many  = fl_cnt_q > {{AW{1'b0}}, 1'b1};
  // Read the next head when one remains (pushed in an earlier cycle);
  // forward h when it becomes the head this cycle (the RAM is read-first).
  wire          fl_re    = fl_pop && fl_many;
  wire          fl_fwd   = fl_push && (fl_pop ? !fl_many : !fl_ne);
  wire [AW-1:0] fl_rd_n  = fl_rd_q == LAST ? {AW{1'b0}} : fl_rd_q + {{(AW-1){1'b0}}, 1'b1};
  wire [AW-1:0] fl_wr_n  = fl_wr_q == LAST ? {AW{1'b0}} : fl_wr_q + {{(AW-1){1'b0}}, 1'b1};

  always @(*) begin
    fresh_d   = (enq && fresh_ok) ? fresh_q + {{AW{1'b0}}, 1'b1} : fresh_q;
    fl_rd_d   = fl_pop ? fl_rd_n : fl_rd_q;
    fl_wr_d   = fl_push ? fl_wr_n : fl_wr_q;
    fl_cnt_d  = fl_cnt_q + {{AW{1'b0}}, fl_push} - {{AW{1'b0}}, fl_pop};
    fl_hsel_d = fl_hsel_q;
    fl_hd_d   = fl_hd_q;
    if (fl_fwd) begin
      fl_hsel_d = 1'b0;
      fl_hd_d   = h;
    end else if (fl_re) begin
      fl_hsel_d = 1'b1;
    end
  end

  assign in_desc_o = enq ? e : {AW{1'b0}};

  prim_ram_1r1w #(.W(AW), .D(C)) u_fl (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .we_i    (fl_push),
    .waddr_i (fl_wr_q),
    .wdata_i (h),
    .re_i    (fl_re),
    .raddr_i (fl_rd_n),
    .rdata_o (fl_rdata)
  );

  // List updates, head and next caches: the read register goes to its
  // queue's next cache; a dequeue moves the next cache to the head; an
  // arrival into an empty queue loads the head cache, else it writes the
  // word of the tail it is linked behind, which is also the next cache
  // when that tail is the head.
  wire [AW-1:0] lnk_a    = tail_q[aq*AW +: AW];
  wire [DW-1:0] dm_wdata = {e, in_id_i, in_sl_i, in_len_i};
  reg [CW-1:0] aocc;
  reg [AW-1:0] ahd;
  reg          dm_we, nx_fwd;
  always @(*) begin
    occ_d  = occ_q;
    head_d = head_q;
    tail_d = tail_q;
    hid_d  = hid_q;
    hsl_d  = hsl_q;
    hlen_d = hlen_q;
    nx_d   = nx_q;
    if (nx_sel_q) nx_d[nx_qn_q*DW +: DW] = dm_rdata;
    if (deq) begin
      occ_d[dq*CW +: CW]  = occ_q[dq*CW +: CW] - rel_cells;
      head_d[dq*AW +: AW] = nw_nxt;
      hid_d[dq*8 +: 8]    = nw[15:8];
      hsl_d[dq*3 +: 3]    = nw[7:5];
      hlen_d[dq*5 +: 5]   = nw[4:0];
    end
    aocc   = occ_d[aq*CW +: CW];
    ahd    = head_d[aq*AW +: AW];
    dm_we  = enq && aocc != {CW{1'b0}};
    nx_fwd = dm_we && lnk_a == ahd;
    if (enq) begin
      if (aocc == {CW{1'b0}}) begin
        head_d[aq*AW +: AW] = e;
        hid_d[aq*8 +: 8]    = in_id_i;
        hsl_d[aq*3 +: 3]    = in_sl_i;
        hlen_d[aq*5 +: 5]   = in_len_i;
      end
      if (nx_fwd) nx_d[aq*DW +: DW] = dm_wdata;
      tail_d[aq*AW +: AW] = e;
      occ_d[aq*CW +: CW]  = aocc + len[CW-1:0];
    end
    used_d   = used_q - rel_cells + (enq ? len[CW-1:0] : {CW{1'b0}});
    nx_sel_d = dm_re;
    nx_qn_d  = dm_re ? dq : nx_qn_q;
  end

  prim_ram_1r1w #(.W(DW), .D(C)) u_dm (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .we_i    (dm_we),
    .waddr_i (lnk_a),
    .wdata_i (dm_wdata),
    .re_i    (dm_re),
    .raddr_i (nw_nxt),
    .rdata_o (dm_rdata)
  );

  // ---------------------------------------------------------------------------
  // 3. Notification received
  // ---------------------------------------------------------------------------
  wire [RW-1:0] nroute = ntf_route_i & pmask(ntf_hops_i);
  wire          nbad   = ntf_hops_i == {HW{1'b0}} || ntf_hops_i > H[HW-1:0];
  wire          n_v1   = cfg_sl_vc_i[ntf_sl_i];

  reg          ex_f, fr_f;
  reg [LW-1:0] ex_j, fr_j;
  integer      x;
  always @(*) begin
    ex_f = 1'b0; ex_j = {LW{1'b0}};
    fr_f = 1'b0; fr_j = {LW{1'b0}};
    for (x = L - 1; x >= 0; x = x - 1) begin
      if (valid_q[x] && sl_q[x*3 +: 3] == ntf_sl_i && hops_q[x*HW +: HW] == ntf_hops_i
          && route_q[x*RW +: RW] == nroute) begin
        ex_f = 1'b1; ex_j = x[LW-1:0];
      end
      if (!valid_q[x] && ((x >= S) == n_v1)) begin
        fr_f = 1'b1; fr_j = x[LW-1:0];
      end
    end
  end

  always @(*) begin
    ntf_act_o  = A_NONE;
    ntf_line_o = {LW{1'b0}};
    if (ntf_valid_i) begin
      if (nbad) begin
        ntf_act_o = A_IGNORE;
      end else if (ntf_kind_i) begin
        ntf_act_o  = ex_f ? A_GONE : A_IGNORE;
        ntf_line_o = ex_j;
      end else if (ex_f) begin
        ntf_act_o  = A_REFRESH;
        ntf_line_o = ex_j;
      end else if (fr_f) begin
        ntf_act_o  = A_ALLOC;
        ntf_line_o = fr_j;
      end else begin
        ntf_act_o  = A_DROP;
      end
    end
  end

  // The marker queue of an allocation: where the new point's packets went
  // so far (the longest line of fewer hops, else the detection queue).
  wire [LW:0]   mk_lk = lookup(nroute, ntf_sl_i, {1'b0, ntf_hops_i}, valid_q, sl_q, hops_q,
                               route_q);
  wire          mk_v1 = mk_lk[LW-1:0] >= S[LW-1:0];
  wire [QW-1:0] mk_s  = {{(QW-LW){1'b0}}, mk_v1 ? mk_lk[LW-1:0] - S[LW-1:0] : mk_lk[LW-1:0]};
  wire [QW-1:0] mk_qn = mk_lk[LW] ? (mk_v1 ? QV[QW-1:0] : {QW{1'b0}}) + D[QW-1:0] + mk_s
                                  : (n_v1 ? QV[QW-1:0] : {QW{1'b0}})
                                    + {{(QW-TB){1'b0}}, nroute[TB-1:0]};
  wire [CW-1:0] mk_cn = occ_d[mk_qn*CW +: CW];

  // A congestion notification not taken is refused (leaf rule).
  wire refuse = cfg_leaf_i && ntf_valid_i && !ntf_kind_i
                && (ntf_act_o == A_DROP || ntf_act_o == A_IGNORE);

  wire [7:0] drop_cnt;
  wire       drop_sat;
  prim_sat_cnt #(.W(8)) u_drop (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .clr_i   (1'b0),
    .inc_i   ({7'd0, ntf_act_o == A_DROP}),
    .dec_i   (8'd0),
    .count_o (drop_cnt),
    .sat_o   (drop_sat)
  );

  // ---------------------------------------------------------------------------
  // 4. Release message received (CAM and masks at the start of the cycle)
  // ---------------------------------------------------------------------------
  wire [RW-1:0] rroute = rls_route_i & pmask(rls_hops_i);
  wire          rgood  = rls_valid_i && rls_hops_i != {HW{1'b0}} && rls_hops_i <= H[HW-1:0];
  wire [QW-1:0] r_mi   = (cfg_sl_vc_i[rls_sl_i] ? D[QW-1:0] : {QW{1'b0}})
                         + {{(QW-TB){1'b0}}, rroute[TB-1:0]};

  reg          rx_f;
  reg [LW-1:0] rx_j;
  integer      z;
  always @(*) begin
    rx_f = 1'b0; rx_j = {LW{1'b0}};
    for (z = L - 1; z >= 0; z = z - 1) begin
      if (valid_q[z] && sl_q[z*3 +: 3] == rls_sl_i && hops_q[z*HW +: HW] == rls_hops_i
          && route_q[z*RW +: RW] == rroute) begin
        rx_f = 1'b1; rx_j = z[LW-1:0];
      end
    end
  end

  // Index arithmetic in 32 bits.
  wire [31:0] rsrc_w = {{(32-TB){1'b0}}, rls_src_i};
  wire [31:0] rsl_w  = {29'd0, rls_sl_i};
  wire [31:0] src_w  = {{(32-TB){1'b0}}, in_src_i};

  // The masks after the release message.
  reg [16*D*D-1:0] mask_r;
  reg [D*L-1:0]    up_r;
  always @(*) begin
    mask_r    = mask_q;
    up_r      = up_q;
    rls_hit_o = 1'b0;
    if (rgood && rx_f) begin
      rls_hit_o                = up_q[rx_j*D + rsrc_w];
      up_r[rx_j*D + rsrc_w] = 1'b0;
    end
    if (rgood && rls_hops_i == {{(HW-1){1'b0}}, 1'b1}) begin
      rls_hit_o = rls_hit_o || mask_q[(r_mi*D + rsrc_w)*8 + rsl_w];
      mask_r[(r_mi*D + rsrc_w)*8 + rsl_w] = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------
  // 5. Notification sent
  // ---------------------------------------------------------------------------
  function automatic [2:0] lsb8(input [7:0] m);
    integer b;
    begin
      lsb8 = 3'd0;
      for (b = 7; b >= 0; b = b - 1)
        if (m[b]) lsb8 = b[2:0];
    end
  endfunction

  wire          a_v1  = aq >= QV[QW-1:0];
  wire [QW-1:0] a_k   = a_v1 ? aq - QV[QW-1:0] : aq;
  wire          a_saq = a_k >= D[QW-1:0];
  wire [LW-1:0] a_j   = (a_v1 ? S[LW-1:0] : {LW{1'b0}}) + a_k[LW-1:0] - D[LW-1:0];
  wire [QW-1:0] a_mi  = (a_v1 ? D[QW-1:0] : {QW{1'b0}}) + a_k;
  wire [7:0]    a_msk = mask_r[(a_mi*D + src_w)*8 +: 8];
  wire          a_det = enq && aocc + len[CW-1:0] >= cfg_det_thr_i;

  reg          sent, pf;
  reg [7:0]    em;
  integer      v, q, mi, jj, vq, pq, kk, ks;
  always @(*) begin
    mask_d     = mask_r;
    up_d       = up_r;
    sent       = 1'b0;
    mi         = 0;
    jj         = 0;
    vq         = 0;
    kk         = 0;
    ks         = 0;
    em         = 8'd0;
    up_kind_o  = 1'b0;
    up_route_o = {RW{1'b0}};
    up_hops_o  = {HW{1'b0}};
    up_sl_o    = 3'd0;
    up_dst_o   = {TB{1'b0}};
    if (a_det && !a_saq && !a_msk[in_sl_i]) begin
      sent                                  = 1'b1;
      mask_d[(a_mi*D + src_w)*8 +: 8]    = a_msk | (8'd1 << in_sl_i);
      up_route_o                            = {{(RW-TB){1'b0}}, a_k[TB-1:0]};
      up_hops_o                             = {{(HW-1){1'b0}}, 1'b1};
      up_sl_o                               = in_sl_i;
      up_dst_o                              = in_src_i;
    end
    if (a_det && a_saq && !up_r[a_j*D + src_w]) begin
      sent                     = 1'b1;
      up_d[a_j*D + src_w]   = 1'b1;
      up_route_o               = route_q[a_j*RW +: RW];
      up_hops_o                = hops_q[a_j*HW +: HW];
      up_sl_o                  = sl_q[a_j*3 +: 3];
      up_dst_o                 = in_src_i;
    end
    // Root rule: the first queue (index order) with a pending vanish.
    pf = 1'b0;
    pq = 0;
    for (v = 1; v >= 0; v = v - 1) begin
      for (q = QV - 1; q >= 0; q = q - 1) begin
        vq = v*QV + q;
        if (occ_d[(v*QV + q)*CW +: CW] < cfg_rel_thr_i) begin
          if (q < D) begin
            if (mask_r[(v*D + q)*D*8 +: D*8] != {(D*8){1'b0}}) begin
              pf = 1'b1; pq = vq;
            end
          end else if (up_r[(v*S + q - D)*D +: D] != {D{1'b0}}) begin
            pf = 1'b1; pq = vq;
          end
        end
      end
    end
    if (!sent && pf && !cfg_leaf_i) begin
      sent      = 1'b1;
      up_kind_o = 1'b1;
      for (v = 0; v < 2; v = v + 1) begin
        for (q = 0; q < QV; q = q + 1) begin
          vq = v*QV + q;
          if (pq == vq) begin
            if (q < D) begin
              mi = v*D + q;
              // Its lowest sender with a bit set, then that sender's lowest SL.
              for (kk = D - 1; kk >= 0; kk = kk - 1) begin
                if (mask_r[(mi*D + kk)*8 +: 8] != 8'd0) ks = kk;
              end
              em                          = mask_r[(mi*D + ks)*8 +: 8];
              up_route_o                  = {{(RW-TB){1'b0}}, q[TB-1:0]};
              up_hops_o                   = {{(HW-1){1'b0}}, 1'b1};
              up_sl_o                     = lsb8(em);
              up_dst_o                    = ks[TB-1:0];
              mask_d[(mi*D + ks)*8 +: 8]  = em & ~(8'd1 << lsb8(em));
            end else begin
              jj = v*S + q - D;
              for (kk = D - 1; kk >= 0; kk = kk - 1) begin
                if (up_r[jj*D + kk]) ks = kk;
              end
              up_d[jj*D + ks] = 1'b0;
              up_route_o      = route_q[jj*RW +: RW];
              up_hops_o       = hops_q[jj*HW +: HW];
              up_sl_o         = sl_q[jj*3 +: 3];
              up_dst_o        = ks[TB-1:0];
            end
          end
        end
      end
    end
    up_valid_o = sent;
  end

  // ---------------------------------------------------------------------------
  // 6. CAM updates, markers, Xon/Xoff and release
  // ---------------------------------------------------------------------------
  reg [CW-1:0] locc;
  reg          lfree, lone;
  integer      y;
  always @(*) begin
    valid_d = valid_q;
    gone_d  = gone_q;
    hold_d  = hold_q;
    route_d = route_q;
    hops_d  = hops_q;
    sl_d    = sl_q;
    mk_d    = mk_q;
    mkq_d   = mkq_q;
    mkc_d   = mkc_q;
    // Markers in the dequeued queue move up.
    for (y = 0; y < L; y = y + 1) begin
      if (deq && mk_q[y] && mkq_q[y*QW +: QW] == dq) begin
        mkc_d[y*CW +: CW] = mkc_q[y*CW +: CW] - rel_cells;
        if (mkc_q[y*CW +: CW] == rel_cells) mk_d[y] = 1'b0;
      end
    end
    if (enq && hit) hold_d[hl] = 1'b1;
    // Ages of the lines valid at the start of the cycle, saturating.
    age_d = age_q;
    for (y = 0; y < L; y = y + 1)
      if (valid_q[y] && !hold_d[y] && age_q[y*8 +: 8] != 8'hff)
        age_d[y*8 +: 8] = age_q[y*8 +: 8] + 8'd1;
    if (ntf_act_o == A_GONE)    gone_d[ntf_line_o] = 1'b1;
    if (ntf_act_o == A_REFRESH) gone_d[ntf_line_o] = 1'b0;
    if (ntf_act_o == A_ALLOC) begin
      valid_d[ntf_line_o]             = 1'b1;
      route_d[ntf_line_o*RW +: RW]    = nroute;
      hops_d[ntf_line_o*HW +: HW]     = ntf_hops_i;
      sl_d[ntf_line_o*3 +: 3]         = ntf_sl_i;
      // An empty SAQ that waits for its own marker passes that marker on.
      if (cfg_order_i && mk_cn == {CW{1'b0}} && mk_lk[LW] && mk_d[mk_lk[LW-1:0]]) begin
        mkq_d[ntf_line_o*QW +: QW]    = mkq_d[mk_lk[LW-1:0]*QW +: QW];
        mkc_d[ntf_line_o*CW +: CW]    = mkc_d[mk_lk[LW-1:0]*CW +: CW];
        mk_d[ntf_line_o]              = 1'b1;
      end else if (cfg_order_i) begin
        mkq_d[ntf_line_o*QW +: QW]    = mk_qn;
        mkc_d[ntf_line_o*CW +: CW]    = mk_cn;
        mk_d[ntf_line_o]              = mk_cn != {CW{1'b0}};
      end
    end
    dn_valid_o = refuse;
    dn_route_o = refuse ? ntf_route_i : {RW{1'b0}};
    dn_hops_o  = refuse ? ntf_hops_i : {HW{1'b0}};
    dn_sl_o    = refuse ? ntf_sl_i : 3'd0;
    rel_o  = {L{1'b0}};
    xoff_d = xoff_q;
    lone   = 1'b0;
    for (y = 0; y < L; y = y + 1) begin
      locc = occ_d[((y / S) * QV + D + (y % S))*CW +: CW];
      if (locc >= cfg_xoff_i)      xoff_d[y] = 1'b1;
      else if (locc <= cfg_xon_i)  xoff_d[y] = 1'b0;
      if (cfg_leaf_i)
        lfree = valid_q[y] && up_d[y*D +: D] == {D{1'b0}}
                && (hold_d[y] || (cfg_idle_i != 8'd0 && age_q[y*8 +: 8] >= cfg_idle_i))
                && locc == {CW{1'b0}} && !refuse && !lone;
      else
        lfree = valid_q[y] && gone_d[y] && up_d[y*D +: D] == {D{1'b0}}
                && locc == {CW{1'b0}};
      if (lfree) begin
        if (cfg_leaf_i) begin
          lone       = 1'b1;
          dn_valid_o = 1'b1;
          dn_route_o = route_q[y*RW +: RW];
          dn_hops_o  = hops_q[y*HW +: HW];
          dn_sl_o    = sl_q[y*3 +: 3];
        end
        rel_o[y]            = 1'b1;
        valid_d[y]          = 1'b0;
        gone_d[y]           = 1'b0;
        hold_d[y]           = 1'b0;
        age_d[y*8 +: 8]     = 8'd0;
        mk_d[y]             = 1'b0;
        mkq_d[y*QW +: QW]   = {QW{1'b0}};
        mkc_d[y*CW +: CW]   = {CW{1'b0}};
        route_d[y*RW +: RW] = {RW{1'b0}};
        hops_d[y*HW +: HW]  = {HW{1'b0}};
        sl_d[y*3 +: 3]      = 3'd0;
      end
    end
  end

  wire unused_prims = ^{gnt0, gnt1, ptr0, ptr1, drop_sat};

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      occ_q   <= {CW*NQ{1'b0}};
      head_q  <= {AW*NQ{1'b0}};
      tail_q  <= {AW*NQ{1'b0}};
      used_q  <= {CW{1'b0}};
      fresh_q   <= {(AW+1){1'b0}};
      fl_rd_q   <= {AW{1'b0}};
      fl_wr_q   <= {AW{1'b0}};
      fl_cnt_q  <= {(AW+1){1'b0}};
      fl_hd_q   <= {AW{1'b0}};
      fl_hsel_q <= 1'b0;
      nx_sel_q  <= 1'b0;
      nx_qn_q   <= {QW{1'b0}};
      valid_q <= {L{1'b0}};
      gone_q  <= {L{1'b0}};
      hold_q  <= {L{1'b0}};
      age_q   <= {8*L{1'b0}};
      up_q    <= {D*L{1'b0}};
      mk_q    <= {L{1'b0}};
      mkq_q   <= {QW*L{1'b0}};
      mkc_q   <= {CW*L{1'b0}};
      xoff_q  <= {L{1'b0}};
      route_q <= {RW*L{1'b0}};
      hops_q  <= {HW*L{1'b0}};
      sl_q    <= {3*L{1'b0}};
      mask_q  <= {16*D*D{1'b0}};
    end else begin
      occ_q   <= occ_d;
      head_q  <= head_d;
      tail_q  <= tail_d;
      used_q  <= used_d;
      fresh_q   <= fresh_d;
      fl_rd_q   <= fl_rd_d;
      fl_wr_q   <= fl_wr_d;
      fl_cnt_q  <= fl_cnt_d;
      fl_hd_q   <= fl_hd_d;
      fl_hsel_q <= fl_hsel_d;
      nx_sel_q  <= nx_sel_d;
      nx_qn_q   <= nx_qn_d;
      valid_q <= valid_d;
      gone_q  <= gone_d;
      hold_q  <= hold_d;
      age_q   <= age_d;
      up_q    <= up_d;
      mk_q    <= mk_d;
      mkq_q   <= mkq_d;
      mkc_q   <= mkc_d;
      xoff_q  <= xoff_d;
      route_q <= route_d;
      hops_q  <= hops_d;
      sl_q    <= sl_d;
      mask_q  <= mask_d;
    end
  end

  // The caches' data (read only while their queue holds the packets).
  always @(posedge clk_i) begin
    hid_q  <= hid_d;
    hsl_q  <= hsl_d;
    hlen_q <= hlen_d;
    nx_q   <= nx_d;
  end

  assign xoff_o      = xoff_q;
  assign occ_o       = occ_q;
  assign used_o      = used_q;
  assign cam_valid_o = valid_q;
  assign cam_gone_o  = gone_q;
  assign cam_hold_o  = hold_q;
  assign cam_mark_o  = mk_q;
  assign cam_up_o    = up_q;
  assign cam_route_o = route_q;
  assign cam_hops_o  = hops_q;
  assign cam_sl_o    = sl_q;
  assign det_mask_o  = mask_q;
  assign drop_cnt_o  = drop_cnt;

`ifndef SYNTHESIS
  // Descriptors in use (= packets in the queues), for DescConserve_A only.
  reg [AW:0] ndesc_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ndesc_q <= {(AW+1){1'b0}};
    else         ndesc_q <= ndesc_q + {{AW{1'b0}}, enq} - {{AW{1'b0}}, deq};
  end
  integer a, b;
  reg [CW+6:0] sum;
  always @(*) begin
    sum = {(CW+7){1'b0}};
    for (b = 0; b < NQ; b = b + 1) sum = sum + {7'd0, occ_q[b*CW +: CW]};
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (used_q > C[CW-1:0] || sum != {7'd0, used_q}) $error("UsedBound_A");
      for (a = 0; a < L; a = a + 1) begin
        if (!valid_q[a] && (occ_q[((a / S) * QV + D + (a % S))*CW +: CW] != {CW{1'b0}}
                            || up_q[a*D +: D] != {D{1'b0}} || hold_q[a] || mk_q[a]
                            || age_q[a*8 +: 8] != 8'd0
                            || gone_q[a]))
          $error("FreeEmpty_A: line %0d", a);
        if (mk_q[a] ? (mkc_q[a*CW +: CW] == {CW{1'b0}}
                       || mkc_q[a*CW +: CW] > occ_q[mkq_q[a*QW +: QW]*CW +: CW])
                    : mkc_q[a*CW +: CW] != {CW{1'b0}})
          $error("MarkerBound_A: line %0d", a);
      end
      if (in_ready_o && !in_valid_i) $error("ReadyImpliesValid_A");
      if (fl_cnt_q > CN || (fl_push && !fl_pop && fl_cnt_q == CN)) $error("FlOverflow_A");
      if (fl_pop && !fl_ne) $error("FlUnderflow_A");
      if (fl_reuse && !deq) $error("DescAvail_A");
      if (fresh_q > CN || {1'b0, ndesc_q} + {1'b0, fl_cnt_q} != {1'b0, fresh_q})
        $error("DescConserve_A: in use %0d + fresh %0d + free list %0d != C",
               ndesc_q, CN - fresh_q, fl_cnt_q);
    end
  end
`endif

endmodule

`default_nettype wire
