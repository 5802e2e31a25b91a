// A simulation model of the ECP5 DSP multiplier MULT18X18D, for sfdf board-sim (boards/netlist.py).
// Yosys ships MULT18X18D only as a black box (share/ecp5/cells_bb.v).
// Modelled, after Lattice TN1267 (ECP5 sysDSP Usage Guide): P = A * B of 18-bit operands, signed by
// SIGNEDA/SIGNEDB, a 36-bit product; input registers (REG_INPUTA_CLK, REG_INPUTB_CLK), a pipeline
// register (REG_PIPELINE_CLK) and an output register (REG_OUTPUT_CLK), each NONE or on CLK0 with clock
// enable CE0 and synchronous reset RST0. Other clocks, enables or resets, the C input's use, the shift
// inputs (SOURCEA/SOURCEB = 1) and cascades stop the simulation rather than be ignored.
module MULT18X18D(
  input A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0,
  input B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0,
  input C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0,
  input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB,
  input CLK3, CLK2, CLK1, CLK0, CE3, CE2, CE1, CE0, RST3, RST2, RST1, RST0,
  output P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18,
  output P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0,
  output SIGNEDP
);
  parameter REG_INPUTA_CLK = "NONE";
  parameter REG_INPUTA_CE = "CE0";
  parameter REG_INPUTA_RST = "RST0";
  parameter REG_INPUTB_CLK = "NONE";
  parameter REG_INPUTB_CE = "CE0";
  parameter REG_INPUTB_RST = "RST0";
  parameter REG_INPUTC_CLK = "NONE";
  parameter REG_INPUTC_CE = "CE0";
  parameter REG_INPUTC_RST = "RST0";
  parameter REG_PIPELINE_CLK = "NONE";
  parameter REG_PIPELINE_CE = "CE0";
  parameter REG_PIPELINE_RST = "RST0";
  parameter REG_OUTPUT_CLK = "NONE";
  parameter REG_OUTPUT_CE = "CE0";
  parameter REG_OUTPUT_RST = "RST0";
  parameter CLK0_DIV = "ENABLED";
  parameter CLK1_DIV = "ENABLED";
  parameter CLK2_DIV = "ENABLED";
  parameter CLK3_DIV = "ENABLED";
  parameter HIGHSPEED_CLK = "NONE";
  parameter GSR = "ENABLED";
  parameter CAS_MATCH_REG = "FALSE";
  parameter SOURCEB_MODE = "B_SHIFT";
  parameter MULT_BYPASS = "DISABLED";
  parameter RESETMODE = "SYNC";

  localparam IN_A = REG_INPUTA_CLK == "CLK0", IN_B = REG_INPUTB_CLK == "CLK0";
  localparam PIPE = REG_PIPELINE_CLK == "CLK0", OUT = REG_OUTPUT_CLK == "CLK0";

  initial begin
    if ((REG_INPUTA_CLK != "NONE" && !IN_A) || (REG_INPUTB_CLK != "NONE" && !IN_B) ||
        (REG_PIPELINE_CLK != "NONE" && !PIPE) || (REG_OUTPUT_CLK != "NONE" && !OUT) ||
        REG_INPUTA_CE != "CE0" || REG_INPUTB_CE != "CE0" || REG_PIPELINE_CE != "CE0" || REG_OUTPUT_CE != "CE0" ||
        REG_INPUTA_RST != "RST0" || REG_INPUTB_RST != "RST0" || REG_PIPELINE_RST != "RST0" ||
        REG_OUTPUT_RST != "RST0" || REG_INPUTC_CLK != "NONE" || RESETMODE != "SYNC" || MULT_BYPASS != "DISABLED")
      $fatal(1, "MULT18X18D model: only registers on CLK0/CE0/RST0, no C register, synchronous reset");
  end

  wire [17:0] a = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0};
  wire [17:0] b = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
  reg [17:0] ra = 0, rb = 0;
  reg sa = 0, sb = 0;
  reg [35:0] rp = 0, ro = 0;
  wire [17:0] ua = IN_A ? ra : a, ub = IN_B ? rb : b;
  wire usa = IN_A ? sa : SIGNEDA, usb = IN_B ? sb : SIGNEDB;
  wire [35:0] xa = usa ? {{18{ua[17]}}, ua} : {18'b0, ua};
  wire [35:0] xb = usb ? {{18{ub[17]}}, ub} : {18'b0, ub};
  wire [35:0] product = xa * xb;
  wire [35:0] piped = PIPE ? rp : product;
  wire [35:0] p = OUT ? ro : piped;

  always @(posedge CLK0) begin
    if (SOURCEA || SOURCEB) $fatal(1, "MULT18X18D model: the shift inputs (SOURCEA/SOURCEB) are not modelled");
    if (RST0) begin
      ra <= 0; rb <= 0; sa <= 0; sb <= 0; rp <= 0; ro <= 0;
    end else if (CE0) begin
      ra <= a; rb <= b; sa <= SIGNEDA; sb <= SIGNEDB; rp <= product; ro <= piped;
    end
  end

  assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18,
          P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = p;
  assign SIGNEDP = p[35];
endmodule
