// prim_crc32: the Ethernet CRC-32 register after up to 8 bytes of a beat.
//
// Reflected CRC-32 (polynomial 0x04C11DB7, shifted right as 0xEDB88320), the
// register as it is kept between beats (no final complement here: the FCS is
// the complement of the register after the last covered byte; a frame with a
// correct FCS leaves the residue 0xDEBB20E3 in the register).
//
// Ports (all combinational)
//   crc_i     register before the beat (0xFFFFFFFF at the start of a frame)
//   data_i    the beat: byte k in bits [8k +: 8], byte 0 first
//   nbytes_i  number of bytes of the beat to take, 0..8 (byte 0 upwards)
//   crc_o     register after those bytes
//
// Spec: docs/pfc.md (frame format). Golden model: model::pfc::crc32_beat.

`default_nettype none
`timescale 1ns / 100ps

module prim_crc32 (
  input  wire [31:0] crc_i,
  input  wire [63:0] data_i,
  input  wire [3:0]  nbytes_i,
  output reg  [31:0] crc_o
);

  function automatic [31:0] crc_byte(input [31:0] crc, input [7:0] b);
    integer j;
    reg [31:0] c;
    begin
      c = crc ^ {24'd0, b};
      for (j = 0; j < 8; j = j + 1) begin
        c = c[0] ? ((c >> 1) ^ 32'hEDB8_8320) : (c >> 1);
      end
      crc_byte = c;
    end
  endfunction

  reg [3:0] k;
  always @(*) begin
    crc_o = crc_i;
    for (k = 4'd0; k < 4'd8; k = k + 4'd1) begin
      if (k < nbytes_i) crc_o = crc_byte(crc_o, data_i[{k[2:0], 3'b000} +: 8]);
    end
  end

endmodule

`default_nettype wire
