// stx_switch: an OSMOSIS switch with speculative transmission (STX): N input
// adapters (stx_ingress), the crossbar arbiter (arbiter) and N output
// adapters (stx_egress), joined by delay lines of RTT/2 slots on every path.
//
// Spec: docs/stx_switch.md. Golden model: model/src/stx_switch/ (a
// composition of the three blocks' models).
//
// Parameters
//   N     ports, a power of two, 4..16
//   Q     VOQ depth of the input adapters, a power of two, 2..16
//   RTX   RTX entries per VOQ (the input adapters' RTT parameter), 1..16
//   B     RSQ entries per input at the output adapters, a power of two
//   R     receivers per output, 1..4
//   RTT   round trip in slots, even, 2..32; every path is RTT/2, the
//         arbiter's crossbar delay is RTT
//   SW    sequence number width (SW + log2(N) <= 16, SW > log2(B))
//   IW    cell id width
//   CW    request counter width (input adapters and arbiter)
//   CNTW  statistics counter width
//   OW, D derived, do not set
//
// One cycle
//   1. input adapter i steps with its link's cell and the grant and ACK the
//      arbiter made D cycles ago
//   2. the arbiter steps with the requests and SRQs of D cycles ago
//   3. the crossbar routes the cells the inputs sent D cycles ago: output j
//      takes input i's cell when bit i of xb_mask[j] is set and the cell is
//      for j, on receivers 0, 1, ... by increasing input; the rest are lost
//   4. output adapter j steps with what the crossbar gave it D cycles ago;
//      its freed credits (crd_o), plus one when output j's arbitrated
//      reservation carried no unacknowledged cell, go back to the arbiter
//   The four delay lines (up: requests, SRQs, cells; down: grants, ACKs;
//   out: the crossbar's receivers; credits) are one shift register of D
//   stages.
//
// Flow control: the arbiter's credits per output are B - cfg_win_i (a
// window of B or more reaches the arbiter as cfg_recv_i = 0: flagged); with
// them no cell reaches an output adapter beyond its window (NoLoss_A).
//
// Ports
//   cfg_*  held for a run; cfg_recv_i outside 1..R reaches the arbiter as 0
//   every output but the counters: same cycle; counters: registers

`default_nettype none
`timescale 1ns / 100ps

module stx_switch #(
  parameter integer N    = 8,
  parameter integer Q    = 4,
  parameter integer RTX  = 4,
  parameter integer B    = 16,
  parameter integer R    = 2,
  parameter integer RTT  = 8,
  parameter integer SW   = 8,
  parameter integer IW   = 8,
  parameter integer CW   = 3,
  parameter integer CNTW = 16,
  parameter integer OW   = $clog2(N),
  parameter integer D    = RTT / 2
) (
  input  wire               clk_i,
  input  wire               rst_ni,

  input  wire [6:0]         cfg_recv_i,
  input  wire [3:0]         cfg_iter_i,
  input  wire               cfg_stx_en_i,
  input  wire [1:0]         cfg_policy_i,
  input  wire [1:0]         cfg_scheme_i,
  input  wire [SW-1:0]      cfg_win_i,
  input  wire [CW-1:0]      cfg_req_lim_i,

  input  wire [N-1:0]       arr_valid_i,
  input  wire [N*OW-1:0]    arr_out_i,
  input  wire [N*IW-1:0]    arr_id_i,
  input  wire [N-1:0]       dlv_ready_i,

  output wire [N-1:0]       arr_drop_o,
  output wire [N-1:0]       tx_valid_o,
  output wire [N-1:0]       tx_spec_o,
  output wire [N-1:0]       tx_retx_o,
  output wire [N*2-1:0]     gnt_kind_o,
  output wire [N*2-1:0]     ack_kind_o,
  output wire [N*N-1:0]     xb_mask_o,
  output reg  [N-1:0]       xb_drop_o,
  output wire [N-1:0]       dlv_valid_o,
  output wire [N*OW-1:0]    dlv_src_o,
  output wire [N*SW-1:0]    dlv_seq_o,
  output wire [N*IW-1:0]    dlv_id_o,
  output wire [N*R*3-1:0]   arr_fate_o,
  output wire [N*CNTW-1:0]  cnt_stx_o,
  output wire [N*CNTW-1:0]  cnt_retx_o,
  output wire [N*CNTW-1:0]  cnt_wasted_o,
  output wire [N*CNTW-1:0]  cnt_drop_o,
  output wire [N*CNTW-1:0]  cnt_dlv_o,
  output wire [N*CNTW-1:0]  cnt_dup_o,
  output wire [N*CNTW-1:0]  cnt_oow_o,
  output wire [N*CNTW-1:0]  cnt_ooo_o,
  output wire [N*CNTW-1:0]  cnt_wait_o,
  output wire               cfg_err_o
);

  // Delay line entry layout, per input (up, down) and per output (out).
  localparam integer UPW = (1 + OW) + (1 + OW + 16) + (1 + 1 + OW + SW + IW);
  localparam integer DNW = (1 + OW) + (1 + 16);
  localparam integer RXW = 1 + OW + SW + IW;          // one receiver
  localparam integer XW  = R * RXW;
  localparam integer CRW = 8;                        // a credit return
  localparam integer KW  = $clog2(R + 2);            // stx_egress crd_o
  localparam integer W   = N * (UPW + DNW + XW + CRW);   // one stage

  // ---------------------------------------------------------------------------
  // The delay lines: one shift register of D stages; stage D-1 is what was
  // written D cycles ago.
  // ---------------------------------------------------------------------------
  wire [W-1:0] dl_in;
  wire [W-1:0] dl_out;

  generate
    if (D == 1) begin : gen_dl_one
      reg [W-1:0] dl_q;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) dl_q <= {W{1'b0}};
        else         dl_q <= dl_in;
      end
      assign dl_out = dl_q;
    end else begin : gen_dl_chain
      reg [D*W-1:0] dl_q;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) dl_q <= {(D*W){1'b0}};
        else         dl_q <= {dl_q[(D-1)*W-1:0], dl_in};
      end
      assign dl_out = dl_q[(D-1)*W +: W];
    end
  endgenerate

  wire [N*UPW-1:0] up_in,  up_out;
  wire [N*DNW-1:0] dn_in,  dn_out;
  wire [N*XW-1:0]  xo_in,  xo_out;
  wire [N*CRW-1:0] cr_in,  cr_out;
  assign dl_in = {cr_in, xo_in, dn_in, up_in};
  assign {cr_out, xo_out, dn_out, up_out} = dl_out;

  // ---------------------------------------------------------------------------
  // Input adapters
  // ---------------------------------------------------------------------------
  wire [N-1:0]      ing_err;
  wire [N-1:0]      a_req_v,  a_spec_v;
  wire [N*OW-1:0]   a_req_o,  a_spec_o;
  wire [N*16-1:0]   a_spec_s;
  wire [N-1:0]      c_v, c_p;       // cell in the crossbar, speculative
  wire [N*OW-1:0]   c_o;
  wire [N*SW-1:0]   c_s;
  wire [N*IW-1:0]   c_i;

  genvar gi;
  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : gen_in
      wire          req_v, spec_v, cell_v, cell_p;
      wire [OW-1:0] req_o, spec_o, cell_o;
      wire [15:0]   spec_s;
      wire [SW-1:0] cell_s;
      wire [IW-1:0] cell_i;
      wire [DNW-1:0] dn = dn_out[gi*DNW +: DNW];
      wire [UPW-1:0] up = up_out[gi*UPW +: UPW];

      // verilator lint_off PINCONNECTEMPTY
      stx_ingress #(
        .N(N), .Q(Q), .RTT(RTX), .SW(SW), .IW(IW), .CW(CW), .CNTW(CNTW), .IDX(gi)
      ) u_ing (
        .clk_i         (clk_i),
        .rst_ni        (rst_ni),
        .cfg_policy_i  (cfg_policy_i),
        .cfg_scheme_i  (cfg_scheme_i),
        .cfg_stx_en_i  (cfg_stx_en_i),
        .cfg_win_i     (cfg_win_i),
        .cfg_req_lim_i (cfg_req_lim_i),
        .arr_valid_i   (arr_valid_i[gi]),
        .arr_out_i     (arr_out_i[gi*OW +: OW]),
        .arr_id_i      (arr_id_i[gi*IW +: IW]),
        .gnt_valid_i   (dn[0]),
        .gnt_out_i     (dn[1 +: OW]),
        .ack_valid_i   (dn[1 + OW]),
        .ack_seq_i     (dn[2 + OW +: 16]),
        .req_valid_o   (req_v),
        .req_out_o     (req_o),
        .spec_valid_o  (spec_v),
        .spec_out_o    (spec_o),
        .spec_seq_o    (spec_s),
        .cell_valid_o  (cell_v),
        .cell_out_o    (cell_o),
        .cell_seq_o    (cell_s),
        .cell_id_o     (cell_i),
        .cell_spec_o   (cell_p),
        .cell_retx_o   (tx_retx_o[gi]),
        .gnt_kind_o    (gnt_kind_o[gi*2 +: 2]),
        .ack_kind_o    (ack_kind_o[gi*2 +: 2]),
        .arr_drop_o    (arr_drop_o[gi]),
        .voq_cnt_o     (),
        .rtx_cnt_o     (),
        .snd_seq_o     (),
        .una_seq_o     (),
        .pnd_cnt_o     (),
        .out_cnt_o     (),
        .cnt_stx_o     (cnt_stx_o[gi*CNTW +: CNTW]),
        .cnt_retx_o    (cnt_retx_o[gi*CNTW +: CNTW]),
        .cnt_wasted_o  (cnt_wasted_o[gi*CNTW +: CNTW]),
        .cnt_drop_o    (cnt_drop_o[gi*CNTW +: CNTW]),
        .cfg_err_o     (ing_err[gi])
      );
      // verilator lint_on PINCONNECTEMPTY

      assign tx_valid_o[gi] = cell_v;
      assign tx_spec_o[gi]  = cell_p;
      assign up_in[gi*UPW +: UPW] =
        {cell_i, cell_s, cell_o, cell_p, cell_v, spec_s, spec_o, spec_v, req_o, req_v};

      // What reaches the arbiter and the crossbar now (sent D cycles ago).
      assign a_req_v[gi]              = up[0];
      assign a_req_o[gi*OW +: OW]     = up[1 +: OW];
      assign a_spec_v[gi]             = up[1 + OW];
      assign a_spec_o[gi*OW +: OW]    = up[2 + OW +: OW];
      assign a_spec_s[gi*16 +: 16]    = up[2 + 2*OW +: 16];
      assign c_v[gi]                  = up[18 + 2*OW];
      assign c_p[gi]                  = up[19 + 2*OW];
      assign c_o[gi*OW +: OW]         = up[20 + 2*OW +: OW];
      assign c_s[gi*SW +: SW]         = up[20 + 3*OW +: SW];
      assign c_i[gi*IW +: IW]         = up[20 + 3*OW + SW +: IW];
    end
  endgenerate

  // ---------------------------------------------------------------------------
  // Arbiter
  // ---------------------------------------------------------------------------
  localparam [31:0] B32 = B;
  wire       win_ok  = ({{(32-SW){1'b0}}, cfg_win_i} < B32);
  wire       recv_ok = (cfg_recv_i != 7'd0) && (cfg_recv_i <= R[6:0]) && win_ok;
  wire [6:0] arb_recv = recv_ok ? cfg_recv_i : 7'd0;
  wire [6:0] arb_delay = RTT[6:0];
  wire [31:0] crd32   = B32 - {{(32-SW){1'b0}}, cfg_win_i};
  wire [9:0] arb_crd  = win_ok ? crd32[9:0] : 10'd0;
  wire       unused_crd = ^crd32[31:10];    // B <= 1024: the pool fits 10 bits
  wire [N-1:0]    g_v, k_v, xb_arb;
  wire [N*OW-1:0] g_o;
  wire [N*16-1:0] k_s;
  wire            arb_err;
  wire [N*N-1:0]  xb_mask;

  // verilator lint_off PINCONNECTEMPTY
  // One clock per slot (CLK_PER_SLOT = 1): the adapters step every clock.
  arbiter #(.N(N), .CW(CW), .CLK_PER_SLOT(1)) u_arb (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .cfg_recv_i       (arb_recv),
    .cfg_iter_i       (cfg_iter_i),
    .cfg_stx_en_i     (cfg_stx_en_i),
    .cfg_xbar_delay_i (arb_delay),
    .cfg_crd_i        (arb_crd),
    .req_valid_i      (a_req_v),
    .req_out_i        (a_req_o),
    .spec_valid_i     (a_spec_v),
    .spec_out_i       (a_spec_o),
    .spec_seq_i       (a_spec_s),
    .crd_ret_i        (cr_out),
    .gnt_valid_o      (g_v),
    .gnt_out_o        (g_o),
    .gnt_iter_o       (),
    .ack_valid_o      (k_v),
    .ack_seq_o        (k_s),
    .xb_arb_o         (xb_arb),
    .xb_mask_o        (xb_mask),
    .req_drop_o       (),
    .voq_cnt_o        (),
    .gptr_o           (),
    .aptr_o           (),
    .lfsr_o           (),
    .crd_o            (),
    .cfg_err_o        (arb_err)
  );
  // verilator lint_on PINCONNECTEMPTY
  assign xb_mask_o = xb_mask;

  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : gen_dn
      assign dn_in[gi*DNW +: DNW] = {k_s[gi*16 +: 16], k_v[gi], g_o[gi*OW +: OW], g_v[gi]};
    end
  endgenerate

  // ---------------------------------------------------------------------------
  // Crossbar: output j takes the cells of the inputs in xb_mask[j] that are
  // for j, by increasing input, on receivers 0 .. R-1. Output j's
  // arbitrated reservation is unused when none of the cells taken lacks an
  // ACK (the granted input sent nothing for j, or a cell that won its own
  // ACK): its credit goes back.
  // ---------------------------------------------------------------------------
  reg [N*XW-1:0] xo_d;
  reg [N-1:0]    unacked, unused;
  integer xj, xi, xk;
  always @(*) begin
    xo_d      = {(N*XW){1'b0}};
    xb_drop_o = c_v;
    unacked   = {N{1'b0}};
    for (xj = 0; xj < N; xj = xj + 1) begin
      xk = 0;
      for (xi = 0; xi < N; xi = xi + 1) begin
        if (xb_mask[xj*N + xi] && c_v[xi] && c_o[xi*OW +: OW] == xj[OW-1:0] && xk < R) begin
          xo_d[xj*XW + xk*RXW +: RXW] =
            {c_i[xi*IW +: IW], c_s[xi*SW +: SW], xi[OW-1:0], 1'b1};
          xb_drop_o[xi] = 1'b0;
          if (!k_v[xi]) unacked[xj] = 1'b1;
          xk = xk + 1;
        end
      end
    end
    unused = xb_arb & ~unacked;
  end
  assign xo_in = xo_d;

  // ---------------------------------------------------------------------------
  // Output adapters
  // ---------------------------------------------------------------------------
  wire [N-1:0] eg_err;
  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : gen_out
      wire [XW-1:0] rx = xo_out[gi*XW +: XW];
      wire [R-1:0]      rv;
      wire [R*OW-1:0]   rs;
      wire [R*SW-1:0]   rq;
      wire [R*IW-1:0]   ri;
      wire [KW-1:0]     crd;
      wire [N*SW-1:0]   head;
      wire              dv;
      wire [OW-1:0]     dsrc;
      genvar gk;
      for (gk = 0; gk < R; gk = gk + 1) begin : gen_rx
        assign rv[gk]             = rx[gk*RXW];
        assign rs[gk*OW +: OW]    = rx[gk*RXW + 1 +: OW];
        assign rq[gk*SW +: SW]    = rx[gk*RXW + 1 + OW +: SW];
        assign ri[gk*IW +: IW]    = rx[gk*RXW + 1 + OW + SW +: IW];
      end

      // verilator lint_off PINCONNECTEMPTY
      stx_egress #(
        .N(N), .R(R), .B(B), .SW(SW), .IW(IW), .CNTW(CNTW)
      ) u_eg (
        .clk_i        (clk_i),
        .rst_ni       (rst_ni),
        .cfg_scheme_i (cfg_scheme_i),
        .arr_valid_i  (rv),
        .arr_src_i    (rs),
        .arr_seq_i    (rq),
        .arr_id_i     (ri),
        .dlv_ready_i  (dlv_ready_i[gi]),
        .dlv_valid_o  (dv),
        .dlv_src_o    (dsrc),
        .dlv_seq_o    (dlv_seq_o[gi*SW +: SW]),
        .dlv_id_o     (dlv_id_o[gi*IW +: IW]),
        .dlv_byp_o    (),
        .arr_fate_o   (arr_fate_o[gi*R*3 +: R*3]),
        .crd_o        (crd),
        .head_seq_o   (head),
        .exp_seq_o    (),
        .rsq_vld_o    (),
        .rsq_cnt_o    (),
        .cnt_dlv_o    (cnt_dlv_o[gi*CNTW +: CNTW]),
        .cnt_dup_o    (cnt_dup_o[gi*CNTW +: CNTW]),
        .cnt_oow_o    (cnt_oow_o[gi*CNTW +: CNTW]),
        .cnt_ooo_o    (cnt_ooo_o[gi*CNTW +: CNTW]),
        .cnt_wait_o   (cnt_wait_o[gi*CNTW +: CNTW]),
        .cfg_err_o    (eg_err[gi])
      );
      // verilator lint_on PINCONNECTEMPTY
      assign dlv_valid_o[gi]         = dv;
      assign dlv_src_o[gi*OW +: OW]  = dsrc;
      assign cr_in[gi*CRW +: CRW]    = {{(CRW-KW){1'b0}}, crd} + {{(CRW-1){1'b0}}, unused[gi]};

`ifndef SYNTHESIS
      // NoLoss_A: with the credits, no cell reaches this output adapter
      // beyond its window (B <= seq - head < 2^(SW-1), the head after this
      // cycle's delivery).
      reg [SW-1:0] nl_h, nl_d;
      reg          nl_bad;
      integer      nk;
      always @(*) begin
        nl_bad = 1'b0;
        nl_h   = {SW{1'b0}};
        nl_d   = {SW{1'b0}};
        for (nk = 0; nk < R; nk = nk + 1) begin
          if (rv[nk]) begin
            nl_h = head[rs[nk*OW +: OW]*SW +: SW]
                 + {{(SW-1){1'b0}}, dv && dsrc == rs[nk*OW +: OW]};
            nl_d = rq[nk*SW +: SW] - nl_h;
            if ({{(32-SW){1'b0}}, nl_d} >= B32 && !nl_d[SW-1]) nl_bad = 1'b1;
          end
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
        end else if (!cfg_err_o && nl_bad) begin
          $error("NoLoss_A: output %0d", gi);
        end
      end
`endif
    end
  endgenerate

  assign cfg_err_o = arb_err | (|ing_err) | (|eg_err);

`ifndef SYNTHESIS
  // A cell sent on a grant always passes the crossbar (only speculative
  // cells lose); an output never takes more than R cells.
  integer ka;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else if (!cfg_err_o) begin
      for (ka = 0; ka < N; ka = ka + 1) begin
        if (xb_drop_o[ka] && !c_p[ka]) $error("ArbCellPasses_A: input %0d", ka);
      end
    end
  end
`endif

endmodule
