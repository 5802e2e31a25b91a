// A pass-through kernel with a data width parameter, for the contract's port checks.
module wide #(
    parameter integer W = 16
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         i_valid,
    output wire         i_ready,
    input  wire         i_present,
    input  wire [W-1:0] i_data,
    output wire         o_valid,
    input  wire         o_ready,
    output wire         o_emit,
    output wire [W-1:0] o_data
);
    assign o_valid = i_valid;
    assign i_ready = o_ready;
    assign o_emit = i_present;
    assign o_data = i_data;
endmodule
