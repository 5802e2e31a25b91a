// A simulation model of the ECP5 block RAM DP16KD, for sfdf board-sim --netlist (boards/netlist.py).
// Yosys ships DP16KD only as a black box (share/ecp5/cells_sim.v), whose outputs a simulator leaves at 0.
// Modelled, after Lattice TN1264 (ECP5 Memory Usage Guide): both ports of one width (1, 2, 4, 9 or 18
// bits; mixed widths stop the simulation), a synchronous read registered at the clock edge (NOREG) plus
// an optional output register (OUTREG, enabled by OCE), chip select by CSDECODE, clock enable, a
// synchronous reset of the outputs, and per-port write modes: NORMAL and WRITETHROUGH show the written
// word on the writing port, READBEFOREWRITE the old one; a port reading a word the other writes in the
// same cycle reads the old word. 18-bit ports take AD1/AD0 as byte enables. Initial contents must be
// zero (the FIFOs sfdf builds need none; a nonzero INITVAL stops the simulation rather than be ignored).
module DP16KD(
  input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input CEA, OCEA, CLKA, WEA, RSTA,
  input CSA2, CSA1, CSA0,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input CEB, OCEB, CLKB, WEB, RSTB,
  input CSB2, CSB1, CSB0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  parameter DATA_WIDTH_A = 18;
  parameter DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter GSR = "ENABLED";
  parameter CLKAMUX = "CLKA";
  parameter CLKBMUX = "CLKB";
  parameter INITVAL_00 = 320'h0;
  parameter INITVAL_01 = 320'h0;
  parameter INITVAL_02 = 320'h0;
  parameter INITVAL_03 = 320'h0;
  parameter INITVAL_04 = 320'h0;
  parameter INITVAL_05 = 320'h0;
  parameter INITVAL_06 = 320'h0;
  parameter INITVAL_07 = 320'h0;
  parameter INITVAL_08 = 320'h0;
  parameter INITVAL_09 = 320'h0;
  parameter INITVAL_0A = 320'h0;
  parameter INITVAL_0B = 320'h0;
  parameter INITVAL_0C = 320'h0;
  parameter INITVAL_0D = 320'h0;
  parameter INITVAL_0E = 320'h0;
  parameter INITVAL_0F = 320'h0;
  parameter INITVAL_10 = 320'h0;
  parameter INITVAL_11 = 320'h0;
  parameter INITVAL_12 = 320'h0;
  parameter INITVAL_13 = 320'h0;
  parameter INITVAL_14 = 320'h0;
  parameter INITVAL_15 = 320'h0;
  parameter INITVAL_16 = 320'h0;
  parameter INITVAL_17 = 320'h0;
  parameter INITVAL_18 = 320'h0;
  parameter INITVAL_19 = 320'h0;
  parameter INITVAL_1A = 320'h0;
  parameter INITVAL_1B = 320'h0;
  parameter INITVAL_1C = 320'h0;
  parameter INITVAL_1D = 320'h0;
  parameter INITVAL_1E = 320'h0;
  parameter INITVAL_1F = 320'h0;
  parameter INITVAL_20 = 320'h0;
  parameter INITVAL_21 = 320'h0;
  parameter INITVAL_22 = 320'h0;
  parameter INITVAL_23 = 320'h0;
  parameter INITVAL_24 = 320'h0;
  parameter INITVAL_25 = 320'h0;
  parameter INITVAL_26 = 320'h0;
  parameter INITVAL_27 = 320'h0;
  parameter INITVAL_28 = 320'h0;
  parameter INITVAL_29 = 320'h0;
  parameter INITVAL_2A = 320'h0;
  parameter INITVAL_2B = 320'h0;
  parameter INITVAL_2C = 320'h0;
  parameter INITVAL_2D = 320'h0;
  parameter INITVAL_2E = 320'h0;
  parameter INITVAL_2F = 320'h0;
  parameter INITVAL_30 = 320'h0;
  parameter INITVAL_31 = 320'h0;
  parameter INITVAL_32 = 320'h0;
  parameter INITVAL_33 = 320'h0;
  parameter INITVAL_34 = 320'h0;
  parameter INITVAL_35 = 320'h0;
  parameter INITVAL_36 = 320'h0;
  parameter INITVAL_37 = 320'h0;
  parameter INITVAL_38 = 320'h0;
  parameter INITVAL_39 = 320'h0;
  parameter INITVAL_3A = 320'h0;
  parameter INITVAL_3B = 320'h0;
  parameter INITVAL_3C = 320'h0;
  parameter INITVAL_3D = 320'h0;
  parameter INITVAL_3E = 320'h0;
  parameter INITVAL_3F = 320'h0;

  localparam W = DATA_WIDTH_A;
  localparam ABITS = W == 18 ? 10 : W == 9 ? 11 : W == 4 ? 12 : W == 2 ? 13 : 14;
  localparam [2:0] CSA = CSDECODE_A == "0b000" ? 0 : CSDECODE_A == "0b001" ? 1 : CSDECODE_A == "0b010" ? 2 :
                         CSDECODE_A == "0b011" ? 3 : CSDECODE_A == "0b100" ? 4 : CSDECODE_A == "0b101" ? 5 :
                         CSDECODE_A == "0b110" ? 6 : 7;
  localparam [2:0] CSB = CSDECODE_B == "0b000" ? 0 : CSDECODE_B == "0b001" ? 1 : CSDECODE_B == "0b010" ? 2 :
                         CSDECODE_B == "0b011" ? 3 : CSDECODE_B == "0b100" ? 4 : CSDECODE_B == "0b101" ? 5 :
                         CSDECODE_B == "0b110" ? 6 : 7;

  initial begin
    if (DATA_WIDTH_A != DATA_WIDTH_B || !(W == 1 || W == 2 || W == 4 || W == 9 || W == 18))
      $fatal(1, "DP16KD model: ports of %0d and %0d bits (only equal widths of 1, 2, 4, 9, 18)", DATA_WIDTH_A, DATA_WIDTH_B);
    if ((
        INITVAL_00 | INITVAL_01 | INITVAL_02 | INITVAL_03 | INITVAL_04 | INITVAL_05 | INITVAL_06 | INITVAL_07 |
        INITVAL_08 | INITVAL_09 | INITVAL_0A | INITVAL_0B | INITVAL_0C | INITVAL_0D | INITVAL_0E | INITVAL_0F |
        INITVAL_10 | INITVAL_11 | INITVAL_12 | INITVAL_13 | INITVAL_14 | INITVAL_15 | INITVAL_16 | INITVAL_17 |
        INITVAL_18 | INITVAL_19 | INITVAL_1A | INITVAL_1B | INITVAL_1C | INITVAL_1D | INITVAL_1E | INITVAL_1F |
        INITVAL_20 | INITVAL_21 | INITVAL_22 | INITVAL_23 | INITVAL_24 | INITVAL_25 | INITVAL_26 | INITVAL_27 |
        INITVAL_28 | INITVAL_29 | INITVAL_2A | INITVAL_2B | INITVAL_2C | INITVAL_2D | INITVAL_2E | INITVAL_2F |
        INITVAL_30 | INITVAL_31 | INITVAL_32 | INITVAL_33 | INITVAL_34 | INITVAL_35 | INITVAL_36 | INITVAL_37 |
        INITVAL_38 | INITVAL_39 | INITVAL_3A | INITVAL_3B | INITVAL_3C | INITVAL_3D | INITVAL_3E | INITVAL_3F) != 0)
      $fatal(1, "DP16KD model: nonzero initial contents are not modelled");
  end

  wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  wire [17:0] dib = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
  wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  wire [13:0] adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  wire [ABITS-1:0] addr_a = ada[13 -: ABITS];
  wire [ABITS-1:0] addr_b = adb[13 -: ABITS];
  wire [1:0] be_a = W == 18 ? ada[1:0] : 2'b11;
  wire [1:0] be_b = W == 18 ? adb[1:0] : 2'b11;
  wire en_a = CEA && {CSA2, CSA1, CSA0} == CSA;
  wire en_b = CEB && {CSB2, CSB1, CSB0} == CSB;

  reg [17:0] mem [0:(1 << ABITS) - 1];
  reg [17:0] qa = 0, qb = 0, ra = 0, rb = 0;
  integer k;
  initial for (k = 0; k < (1 << ABITS); k = k + 1) mem[k] = 0;

  function [17:0] merged(input [17:0] old, input [17:0] data, input [1:0] be);
    merged = {be[1] ? data[17:9] : old[17:9], be[0] ? data[8:0] : old[8:0]};
  endfunction

  wire [17:0] old_a = mem[addr_a], old_b = mem[addr_b];
  wire [17:0] new_a = merged(old_a, dia, be_a), new_b = merged(old_b, dib, be_b);

  always @(posedge CLKA) begin
    if (en_a) begin
      if (RSTA) qa <= 0;
      else if (WEA) qa <= WRITEMODE_A == "READBEFOREWRITE" ? old_a : new_a;
      else qa <= old_a;
      if (WEA) mem[addr_a] <= new_a;
    end
    if (RSTA) ra <= 0;
    else if (OCEA) ra <= qa;
  end
  always @(posedge CLKB) begin
    if (en_b) begin
      if (RSTB) qb <= 0;
      else if (WEB) qb <= WRITEMODE_B == "READBEFOREWRITE" ? old_b : new_b;
      else qb <= old_b;
      if (WEB) mem[addr_b] <= new_b;
    end
    if (RSTB) rb <= 0;
    else if (OCEB) rb <= qb;
  end

  wire [17:0] doa = REGMODE_A == "OUTREG" ? ra : qa;
  wire [17:0] dob = REGMODE_B == "OUTREG" ? rb : qb;
  wire [17:0] mask = W == 18 ? 18'h3ffff : (18'h1 << W) - 1;
  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = doa & mask;
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = dob & mask;
endmodule
