// A camera trigger (examples/trigger.toml): a Cherenkov telescope's pixel-multiplicity trigger, which
// answers a frame only when at least `pixels` of its pixels exceed `level`.
//
// Each input beat is filtered (o_emit = 0) and counts when its pixel is above `level`; the frame end
// reaches the kernel as a beat of its own (i_msg = 1, i_present = 0), and the kernel answers it with
// o_msg = 1 and the count in o_data, emitted (o_emit = 1) only when the count reaches `pixels`: a frame
// that does not trigger leaves no result, an absent timestamp. The count saturates at 2^OUT - 1. One
// register stage: latency 1.
module pixel_trigger #(
    parameter integer IN = 16,
    parameter integer OUT = 16,
    parameter integer level = 1000,
    parameter integer pixels = 8
) (
    input  wire           clk,
    input  wire           rst,
    input  wire           i_valid,
    output wire           i_ready,
    input  wire           i_present,
    input  wire [IN-1:0]  i_data,
    input  wire           i_msg,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0]    i_mdata,         // the frame number: not needed here
    /* verilator lint_on UNUSEDSIGNAL */
    output reg            o_valid,
    input  wire           o_ready,
    output reg            o_emit,
    output reg  [OUT-1:0] o_data,
    output reg            o_msg
);
    reg  [OUT-1:0] count;
    wire           take = i_valid && i_ready;
    wire           bright = i_present && (i_data > level) && (count != {OUT{1'b1}});

    assign i_ready = !o_valid || o_ready;

    always @(posedge clk) begin
        if (rst) begin
            o_valid <= 1'b0;
            count <= {OUT{1'b0}};
        end else if (take) begin
            o_valid <= 1'b1;
            count <= i_msg ? {OUT{1'b0}} : count + {{(OUT - 1){1'b0}}, bright};
        end else if (o_ready) begin
            o_valid <= 1'b0;
        end
        if (take) begin
            o_emit <= i_msg && (count >= pixels);
            o_msg <= i_msg;
            o_data <= count;
        end
    end
endmodule
