// Zero suppression (docs/kernels.md): a source kernel of the hillas network.
//
// Each camera word is one pixel's charge; the kernel saturates it to 8 bits and sends {last, amplitude}
// on both outputs when the amplitude is at least LEVEL (image cleaning), or when the word ends its frame
// (tlast: the frame's last word always goes, with amplitude 0 if below LEVEL, so every frame leaves one
// token that says "last" on each output). Every other pixel is filtered (o_*_emit = 0). One register stage: latency 1. Each output holds its
// beat until it is taken; a new word is taken only when both outputs are free.
module zsup #(
    parameter integer LEVEL = 16
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        i_valid,
    output wire        i_ready,
    input  wire        i_present,
    input  wire [63:0] i_data,
    input  wire        i_last,
    output reg         o_zs_mom_valid,
    input  wire        o_zs_mom_ready,
    output reg         o_zs_mom_emit,
    output reg  [8:0]  o_zs_mom_data,
    output reg         o_zs_hil_valid,
    input  wire        o_zs_hil_ready,
    output reg         o_zs_hil_emit,
    output reg  [8:0]  o_zs_hil_data
);
    wire [7:0] amplitude = |i_data[63:8] ? 8'hff : i_data[7:0];
    wire       bright = amplitude >= LEVEL[7:0];
    wire       keep = i_last || bright;
    wire [8:0] word = {i_last, bright ? amplitude : 8'd0};
    wire       free_mom = !o_zs_mom_valid || o_zs_mom_ready;
    wire       free_hil = !o_zs_hil_valid || o_zs_hil_ready;
    wire       take = i_valid && i_ready;

    assign i_ready = free_mom && free_hil;

    always @(posedge clk) begin
        if (rst) begin
            o_zs_mom_valid <= 1'b0;
            o_zs_hil_valid <= 1'b0;
        end else begin
            if (take) begin
                o_zs_mom_valid <= 1'b1;
                o_zs_hil_valid <= 1'b1;
            end else begin
                if (o_zs_mom_ready) o_zs_mom_valid <= 1'b0;
                if (o_zs_hil_ready) o_zs_hil_valid <= 1'b0;
            end
        end
        if (take) begin
            o_zs_mom_emit <= keep & i_present;
            o_zs_mom_data <= word;
            o_zs_hil_emit <= keep & i_present;
            o_zs_hil_data <= word;
        end
    end
endmodule
