// pfc: PFC pause generator of one Ethernet port (IEEE 802.1Qbb frames).
//
// Spec: docs/pfc.md. Golden model: model/src/pfc.rs.
//
// Parameters
//   QCW  width of cfg_qcyc_i (cycles per pause quantum), 1..16
//   CW   width of every event counter (saturating), 1..32
//
// Algorithm
//   Transmit: pend = (xoff ^ adv) | (xoff & adv & due), due = peer timer (as
//   tracked here) <= R quanta. When a frame may start (back to back after a
//   last beat if the gap is 0, else after cfg_gap_i idle cycles) and pend is
//   not empty, one 64-byte PFC frame carries every pending priority: XOFF
//   with cfg_quanta_i[p], RESUME with 0. 8 beats of 8 bytes, FCS per beat.
//   Receive: beats are captured (DA, EtherType, opcode, enable vector,
//   times), the CRC runs over the whole frame; on the last beat the frame is
//   classified (runt, FCS, other, long, bad control, PFC) and a PFC frame
//   loads the timers of its enabled priorities. pause_o = timer running.
//
// Ports
//   cfg_*      held for a run
//   xoff_i     request level per priority; rx_* receive stream (8 B beats,
//              valid / last / empty, byte 0 of a beat in bits 7:0)
//   tx_*, pause_o, counters: registers at the start of the cycle
//   rx_done_o: class of the frame ending this cycle (comb.); cfg_err_o: comb.

`default_nettype none
`timescale 1ns / 100ps

module pfc #(
  parameter integer QCW = 8,
  parameter integer CW  = 16
) (
  input  wire             clk_i,
  input  wire             rst_ni,

  input  wire [47:0]      cfg_sa_i,
  input  wire [8*16-1:0]  cfg_quanta_i,
  input  wire [QCW-1:0]   cfg_qcyc_i,
  input  wire [15:0]      cfg_refresh_i,
  input  wire [7:0]       cfg_gap_i,

  input  wire [7:0]       xoff_i,
  input  wire             rx_valid_i,
  input  wire             rx_last_i,
  input  wire [2:0]       rx_empty_i,
  input  wire [63:0]      rx_data_i,

  output wire             tx_valid_o,
  output wire             tx_last_o,
  output wire [2:0]       tx_empty_o,
  output wire [63:0]      tx_data_o,
  output wire [7:0]       tx_adv_o,
  output wire [CW-1:0]    tx_frames_o,
  output reg  [7:0]       pause_o,
  output reg  [2:0]       rx_done_o,
  output wire [CW-1:0]    rx_pfc_o,
  output wire [CW-1:0]    rx_runt_o,
  output wire [CW-1:0]    rx_fcs_o,
  output wire [CW-1:0]    rx_other_o,
  output wire [CW-1:0]    rx_long_o,
  output wire [CW-1:0]    rx_badctl_o,
  output wire             cfg_err_o
);

  localparam integer RW = 16 + QCW;          // refresh point in cycles: never wraps
  localparam [31:0] CRC_INIT    = 32'hFFFF_FFFF;
  localparam [31:0] CRC_RESIDUE = 32'hDEBB_20E3;
  // 01-80-C2-00-00-01, byte 0 in the low bits (lane order).
  localparam [47:0] PFC_DA_LANES = 48'h01_00_00_C2_80_01;

  localparam [2:0] C_NONE = 3'd0, C_PFC = 3'd1, C_RUNT = 3'd2, C_FCS = 3'd3,
                   C_OTHER = 3'd4, C_LONG = 3'd5, C_BADCTL = 3'd6;

  // ---------------------------------------------------------------------------
  // Values derived from the configuration
  // ---------------------------------------------------------------------------
  wire [QCW-1:0] qe    = (cfg_qcyc_i == {QCW{1'b0}}) ? {{(QCW-1){1'b0}}, 1'b1} : cfg_qcyc_i;
  wire [QCW-1:0] qe_m1 = qe - {{(QCW-1){1'b0}}, 1'b1};
  wire [RW-1:0]  r_cyc = {{QCW{1'b0}}, cfg_refresh_i} * {16'd0, cfg_qcyc_i};
  wire [RW-1:0]  r_need = {{(RW-8){1'b0}}, cfg_gap_i} + 8;
  // The address in lane order: byte 0 on the wire (cfg_sa_i[47:40]) lowest.
  wire [47:0]    sa_lanes = {cfg_sa_i[7:0], cfg_sa_i[15:8], cfg_sa_i[23:16],
                             cfg_sa_i[31:24], cfg_sa_i[39:32], cfg_sa_i[47:40]};

  reg            quanta_le_r;
  integer        k;
  always @(*) begin
    quanta_le_r = 1'b0;
    for (k = 0; k < 8; k = k + 1) begin
      if (cfg_quanta_i[16*k +: 16] <= cfg_refresh_i) quanta_le_r = 1'b1;
    end
  end

  wire cfg_err = (cfg_qcyc_i == {QCW{1'b0}}) || (r_cyc < r_need) || quanta_le_r || cfg_sa_i[40];
  assign cfg_err_o = cfg_err;

  // ---------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------
  reg [7:0]     tx_adv_q, tx_adv_d;
  reg [8*16-1:0] tx_tq_q, tx_tq_d;
  reg [8*QCW-1:0] tx_tc_q, tx_tc_d;
  reg           tx_busy_q, tx_busy_d;
  reg [2:0]     tx_beat_q, tx_beat_d;
  reg [7:0]     tx_gap_q, tx_gap_d;
  reg [7:0]     tx_cev_q, tx_cev_d;
  reg [7:0]     tx_off_q, tx_off_d;
  reg [31:0]    tx_crc_q, tx_crc_d;
  reg [CW-1:0]  tx_frames_q, tx_frames_d;

  reg [3:0]     rx_beat_q, rx_beat_d;
  reg [31:0]    rx_crc_q, rx_crc_d;
  reg           rx_da_q, rx_da_d;
  reg           rx_type_q, rx_type_d;
  reg           rx_op_q, rx_op_d;
  reg [7:0]     rx_cev_q, rx_cev_d;
  reg [8*16-1:0] rx_time_q, rx_time_d;
  reg [8*16-1:0] rx_tq_q, rx_tq_d;
  reg [8*QCW-1:0] rx_tc_q, rx_tc_d;
  reg [CW-1:0]  rx_pfc_q, rx_pfc_d;
  reg [CW-1:0]  rx_runt_q, rx_runt_d;
  reg [CW-1:0]  rx_fcs_q, rx_fcs_d;
  reg [CW-1:0]  rx_other_q, rx_other_d;
  reg [CW-1:0]  rx_long_q, rx_long_d;
  reg [CW-1:0]  rx_badctl_q, rx_badctl_d;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tx_adv_q    <= 8'd0;
      tx_tq_q     <= {8*16{1'b0}};
      tx_tc_q     <= {8*QCW{1'b0}};
      tx_busy_q   <= 1'b0;
      tx_beat_q   <= 3'd0;
      tx_gap_q    <= 8'd0;
      tx_cev_q    <= 8'd0;
      tx_off_q    <= 8'd0;
      tx_crc_q    <= CRC_INIT;
      tx_frames_q <= {CW{1'b0}};
    end else begin
      tx_adv_q    <= tx_adv_d;
      tx_tq_q     <= tx_tq_d;
      tx_tc_q     <= tx_tc_d;
      tx_busy_q   <= tx_busy_d;
      tx_beat_q   <= tx_beat_d;
      tx_gap_q    <= tx_gap_d;
      tx_cev_q    <= tx_cev_d;
      tx_off_q    <= tx_off_d;
      tx_crc_q    <= tx_crc_d;
      tx_frames_q <= tx_frames_d;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rx_beat_q   <= 4'd0;
      rx_crc_q    <= CRC_INIT;
      rx_da_q     <= 1'b0;
      rx_type_q   <= 1'b0;
      rx_op_q     <= 1'b0;
      rx_cev_q    <= 8'd0;
      rx_time_q   <= {8*16{1'b0}};
      rx_tq_q     <= {8*16{1'b0}};
      rx_tc_q     <= {8*QCW{1'b0}};
      rx_pfc_q    <= {CW{1'b0}};
      rx_runt_q   <= {CW{1'b0}};
      rx_fcs_q    <= {CW{1'b0}};
      rx_other_q  <= {CW{1'b0}};
      rx_long_q   <= {CW{1'b0}};
      rx_badctl_q <= {CW{1'b0}};
    end else begin
      rx_beat_q   <= rx_beat_d;
      rx_crc_q    <= rx_crc_d;
      rx_da_q     <= rx_da_d;
      rx_type_q   <= rx_type_d;
      rx_op_q     <= rx_op_d;
      rx_cev_q    <= rx_cev_d;
      rx_time_q   <= rx_time_d;
      rx_tq_q     <= rx_tq_d;
      rx_tc_q     <= rx_tc_d;
      rx_pfc_q    <= rx_pfc_d;
      rx_runt_q   <= rx_runt_d;
      rx_fcs_q    <= rx_fcs_d;
      rx_other_q  <= rx_other_d;
      rx_long_q   <= rx_long_d;
      rx_badctl_q <= rx_badctl_d;
    end
  end

  function automatic [CW-1:0] sat_inc(input [CW-1:0] v);
    sat_inc = (v == {CW{1'b1}}) ? v : v + {{(CW-1){1'b0}}, 1'b1};
  endfunction

  // One pause timer's tick (docs/pfc.md, "Timers (both sides)"; model: pfc::Timer):
  // {quanta left, cycles left in this quantum}. A running timer counts the
  // cycles of a quantum down to 0, then takes one quantum off and reloads
  // qe - 1; a stopped one (0 quanta) holds. Used by the receive timers and
  // by the peer's timers as tracked on the transmit side.
  function automatic [16+QCW-1:0] quanta_tick(input [15:0] tq, input [QCW-1:0] tc,
                                              input [QCW-1:0] reload);
    begin
      if (tq == 16'd0)               quanta_tick = {tq, tc};
      else if (tc == {QCW{1'b0}})    quanta_tick = {tq - 16'd1, reload};
      else                           quanta_tick = {tq, tc - {{(QCW-1){1'b0}}, 1'b1}};
    end
  endfunction

  // ---------------------------------------------------------------------------
  // Transmit: the beat on the bus, from the registers
  // ---------------------------------------------------------------------------
  wire       tx_last = tx_busy_q && (tx_beat_q == 3'd7);
  reg [15:0] tx_time [0:7];
  reg [63:0] tx_raw;                         // frame bytes (beat 7: bytes 56..59 only)
  integer    p;
  always @(*) begin
    for (p = 0; p < 8; p = p + 1) begin
      tx_time[p] = tx_off_q[p] ? cfg_quanta_i[16*p +: 16] : 16'd0;
    end
    case (tx_beat_q)
      3'd0: tx_raw = {sa_lanes[15:0], PFC_DA_LANES};
      3'd1: tx_raw = {8'h01, 8'h01, 8'h08, 8'h88, sa_lanes[47:16]};
      3'd2: tx_raw = {tx_time[2][7:0], tx_time[2][15:8], tx_time[1][7:0], tx_time[1][15:8],
                      tx_time[0][7:0], tx_time[0][15:8], tx_cev_q, 8'h00};
      3'd3: tx_raw = {tx_time[6][7:0], tx_time[6][15:8], tx_time[5][7:0], tx_time[5][15:8],
                      tx_time[4][7:0], tx_time[4][15:8], tx_time[3][7:0], tx_time[3][15:8]};
      3'd4: tx_raw = {48'd0, tx_time[7][7:0], tx_time[7][15:8]};
      default: tx_raw = 64'd0;
    endcase
  end

  wire [31:0] tx_crc_next;
  prim_crc32 u_tx_crc (
    .crc_i    (tx_crc_q),
    .data_i   (tx_raw),
    .nbytes_i (tx_last ? 4'd4 : 4'd8),
    .crc_o    (tx_crc_next)
  );

  assign tx_valid_o  = tx_busy_q;
  assign tx_last_o   = tx_last;
  assign tx_empty_o  = 3'd0;
  assign tx_data_o   = !tx_busy_q ? 64'd0 : tx_last ? {~tx_crc_next, 32'd0} : tx_raw;
  assign tx_adv_o    = tx_adv_q;
  assign tx_frames_o = tx_frames_q;

  // ---------------------------------------------------------------------------
  // Transmit: next state
  // ---------------------------------------------------------------------------
  reg [7:0]  due, pend;
  reg        can_start, start;
  always @(*) begin
    tx_adv_d    = tx_adv_q;
    tx_tq_d     = tx_tq_q;
    tx_tc_d     = tx_tc_q;
    tx_busy_d   = tx_busy_q;
    tx_beat_d   = tx_beat_q;
    tx_gap_d    = tx_gap_q;
    tx_cev_d    = tx_cev_q;
    tx_off_d    = tx_off_q;
    tx_crc_d    = tx_crc_q;
    tx_frames_d = tx_frames_q;

    for (p = 0; p < 8; p = p + 1) begin
      due[p] = tx_tq_q[16*p +: 16] <= cfg_refresh_i;
    end
    pend      = (xoff_i ^ tx_adv_q) | (xoff_i & tx_adv_q & due);
    can_start = tx_busy_q ? (tx_last && cfg_gap_i == 8'd0) : (tx_gap_q <= 8'd1);
    start     = can_start && (pend != 8'd0);

    // The frame in progress advances; the gap counts down while idle.
    if (tx_busy_q) begin
      if (tx_last) begin
        tx_busy_d = 1'b0;
        tx_beat_d = 3'd0;
        tx_gap_d  = cfg_gap_i;
        tx_crc_d  = CRC_INIT;
      end else begin
        tx_beat_d = tx_beat_q + 3'd1;
        tx_crc_d  = tx_crc_next;
      end
    end else if (tx_gap_q != 8'd0) begin
      tx_gap_d = tx_gap_q - 8'd1;
    end

    // The peer's timers as seen from here: load on a start, else tick.
    for (p = 0; p < 8; p = p + 1) begin
      if (start && pend[p]) begin
        tx_tq_d[16*p +: 16]   = xoff_i[p] ? cfg_quanta_i[16*p +: 16] : 16'd0;
        tx_tc_d[QCW*p +: QCW] = qe_m1;
      end else begin
        {tx_tq_d[16*p +: 16], tx_tc_d[QCW*p +: QCW]} =
          quanta_tick(tx_tq_q[16*p +: 16], tx_tc_q[QCW*p +: QCW], qe_m1);
      end
    end

    if (start) begin
      tx_busy_d   = 1'b1;
      tx_beat_d   = 3'd0;
      tx_crc_d    = CRC_INIT;
      tx_cev_d    = pend;
      tx_off_d    = xoff_i & pend;
      tx_adv_d    = (tx_adv_q & ~pend) | (xoff_i & pend);
      tx_frames_d = sat_inc(tx_frames_q);
    end
  end

  // ---------------------------------------------------------------------------
  // Receive
  // ---------------------------------------------------------------------------
  wire [3:0]  rx_nbytes = rx_last_i ? (4'd8 - {1'b0, rx_empty_i}) : 4'd8;
  wire [31:0] rx_crc_next;
  prim_crc32 u_rx_crc (
    .crc_i    (rx_crc_q),
    .data_i   (rx_data_i),
    .nbytes_i (rx_nbytes),
    .crc_o    (rx_crc_next)
  );

  // Big-endian 16-bit field starting at lane j of this beat.
  function automatic [15:0] be16(input [63:0] d, input integer j);
    be16 = {d[8*j +: 8], d[8*(j+1) +: 8]};
  endfunction

  reg [2:0] rx_class;
  always @(*) begin
    rx_beat_d   = rx_beat_q;
    rx_crc_d    = rx_crc_q;
    rx_da_d     = rx_da_q;
    rx_type_d   = rx_type_q;
    rx_op_d     = rx_op_q;
    rx_cev_d    = rx_cev_q;
    rx_time_d   = rx_time_q;
    rx_tq_d     = rx_tq_q;
    rx_tc_d     = rx_tc_q;
    rx_pfc_d    = rx_pfc_q;
    rx_runt_d   = rx_runt_q;
    rx_fcs_d    = rx_fcs_q;
    rx_other_d  = rx_other_q;
    rx_long_d   = rx_long_q;
    rx_badctl_d = rx_badctl_q;
    rx_class    = C_NONE;

    // Timers tick; a PFC frame ending this cycle overrides below.
    for (p = 0; p < 8; p = p + 1) begin
      {rx_tq_d[16*p +: 16], rx_tc_d[QCW*p +: QCW]} =
        quanta_tick(rx_tq_q[16*p +: 16], rx_tc_q[QCW*p +: QCW], qe_m1);
    end

    if (rx_valid_i) begin
      // Capture the fields of beats 0..4.
      case (rx_beat_q)
        4'd0: rx_da_d = (rx_data_i[47:0] == PFC_DA_LANES) || (rx_data_i[47:0] == sa_lanes);
        4'd1: begin
          rx_type_d = be16(rx_data_i, 4) == 16'h8808;
          rx_op_d   = be16(rx_data_i, 6) == 16'h0101;
        end
        4'd2: begin
          rx_cev_d            = rx_data_i[15:8];
          rx_time_d[0 +: 16]  = be16(rx_data_i, 2);
          rx_time_d[16 +: 16] = be16(rx_data_i, 4);
          rx_time_d[32 +: 16] = be16(rx_data_i, 6);
        end
        4'd3: begin
          rx_time_d[48 +: 16]  = be16(rx_data_i, 0);
          rx_time_d[64 +: 16]  = be16(rx_data_i, 2);
          rx_time_d[80 +: 16]  = be16(rx_data_i, 4);
          rx_time_d[96 +: 16]  = be16(rx_data_i, 6);
        end
        4'd4: rx_time_d[112 +: 16] = be16(rx_data_i, 0);
        default: ;
      endcase

      if (rx_last_i) begin
        if (rx_beat_q < 4'd7 || (rx_beat_q == 4'd7 && rx_empty_i != 3'd0)) rx_class = C_RUNT;
        else if (rx_crc_next != CRC_RESIDUE)                             rx_class = C_FCS;
        else if (!rx_type_q)                                             rx_class = C_OTHER;
        else if (rx_beat_q == 4'd8)                                      rx_class = C_LONG;
        else if (!rx_op_q || !rx_da_q)                                   rx_class = C_BADCTL;
        else                                                             rx_class = C_PFC;
        case (rx_class)
          C_PFC:    rx_pfc_d    = sat_inc(rx_pfc_q);
          C_RUNT:   rx_runt_d   = sat_inc(rx_runt_q);
          C_FCS:    rx_fcs_d    = sat_inc(rx_fcs_q);
          C_OTHER:  rx_other_d  = sat_inc(rx_other_q);
          C_LONG:   rx_long_d   = sat_inc(rx_long_q);
          default:  rx_badctl_d = sat_inc(rx_badctl_q);
        endcase
        if (rx_class == C_PFC) begin
          for (p = 0; p < 8; p = p + 1) begin
            if (rx_cev_q[p]) begin
              rx_tq_d[16*p +: 16]   = rx_time_q[16*p +: 16];
              rx_tc_d[QCW*p +: QCW] = qe_m1;
            end
          end
        end
        rx_beat_d = 4'd0;
        rx_crc_d  = CRC_INIT;
      end else begin
        rx_beat_d = (rx_beat_q == 4'd8) ? 4'd8 : rx_beat_q + 4'd1;
        rx_crc_d  = rx_crc_next;
      end
    end
  end

  always @(*) begin
    rx_done_o = rx_class;
    for (p = 0; p < 8; p = p + 1) pause_o[p] = rx_tq_q[16*p +: 16] != 16'd0;
  end

  assign rx_pfc_o    = rx_pfc_q;
  assign rx_runt_o   = rx_runt_q;
  assign rx_fcs_o    = rx_fcs_q;
  assign rx_other_o  = rx_other_q;
  assign rx_long_o   = rx_long_q;
  assign rx_badctl_o = rx_badctl_q;

  // ---------------------------------------------------------------------------
  // Assertions (the spec's invariants), for simulation only
  // ---------------------------------------------------------------------------
`ifndef SYNTHESIS
  integer a;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
    end else begin
      if (!tx_busy_q && tx_beat_q != 3'd0) $error("TxBeatInFrame_A: beat %0d while idle", tx_beat_q);
      if (rx_beat_q > 4'd8) $error("RxBeatSaturates_A: rx_beat_q = %0d", rx_beat_q);
      if (tx_empty_o != 3'd0) $error("TxEmptyZero_A");
      for (a = 0; a < 8; a = a + 1) begin
        if (tx_tc_q[QCW*a +: QCW] >= qe) $error("TimerSubInRange_A: tx priority %0d", a);
        if (rx_tc_q[QCW*a +: QCW] >= qe) $error("TimerSubInRange_A: rx priority %0d", a);
      end
    end
  end
`endif

endmodule

`default_nettype wire
