// Frame size (docs/kernels.md, "Control messages"): a kernel that takes the node's control messages.
//
// Each input beat adds its pixel to the frame's total and is filtered (o_emit = 0); the frame end
// reaches the kernel as a beat of its own (i_msg = 1, i_present = 0, the frame number on i_mdata), and
// the kernel answers it with o_msg = 1 and the total in o_data (o_emit = 1), then starts the next
// frame from 0. So a frame's size (the Hillas "size", its total charge) rides on the frame end,
// whatever the frame's length, and an empty frame gives 0. One register stage: latency 1.
module frame_size #(
    parameter integer IN = 9,
    parameter integer OUT = 24
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
    reg  [OUT-1:0] total;
    wire           take = i_valid && i_ready;
    wire [OUT-1:0] pixel = i_present ? {{(OUT - IN){1'b0}}, i_data} : {OUT{1'b0}};

    assign i_ready = !o_valid || o_ready;

    always @(posedge clk) begin
        if (rst) begin
            o_valid <= 1'b0;
            total <= {OUT{1'b0}};
        end else if (take) begin
            o_valid <= 1'b1;
            total <= i_msg ? {OUT{1'b0}} : total + pixel;
        end else if (o_ready) begin
            o_valid <= 1'b0;
        end
        if (take) begin
            o_emit <= i_msg;
            o_msg <= i_msg;
            o_data <= total;
        end
    end
endmodule
