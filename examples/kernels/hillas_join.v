// The Hillas join (docs/kernels.md): the last node of the hillas network.
//
// Input zs_hil: the zero-suppressed pixels {last, amplitude}; input mom_hil: the frame's moments
// {Sy, Sx, S} (48 bits), which arrive at the frame's last index. The kernel counts the pixels of at
// least LEVEL (npix) and keeps their largest amplitude (peak); at the word marked last it emits
// {peak[7:0], npix[6:0], Sy[16:0], Sx[16:0], S[13:0]} (63 bits, in a 64-bit word) and starts the next
// frame. Every other computation is filtered. One register stage: latency 1.
module hillas_join #(
    parameter integer LEVEL = 16
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        i_mom_hil_valid,
    output wire        i_mom_hil_ready,
    input  wire        i_mom_hil_present,
    input  wire [47:0] i_mom_hil_data,
    input  wire        i_zs_hil_valid,
    output wire        i_zs_hil_ready,
    input  wire        i_zs_hil_present,
    input  wire [8:0]  i_zs_hil_data,
    output reg         o_valid,
    input  wire        o_ready,
    output reg         o_emit,
    output reg  [63:0] o_data
);
    reg  [6:0] npix;
    reg  [7:0] peak;
    wire       both = i_mom_hil_valid && i_zs_hil_valid;
    wire       free = !o_valid || o_ready;
    wire       take = both && free;
    wire [7:0] amplitude = i_zs_hil_data[7:0];
    wire       last = i_zs_hil_present && i_zs_hil_data[8];
    wire       counted = i_zs_hil_present && amplitude >= LEVEL[7:0];
    wire [6:0] npix_next = npix + {6'd0, counted};
    wire [7:0] peak_next = counted && amplitude > peak ? amplitude : peak;
    wire [47:0] moments = i_mom_hil_present ? i_mom_hil_data : 48'd0;

    // a beat is taken on both inputs at once (each valid and ready together)
    assign i_mom_hil_ready = free && i_zs_hil_valid;
    assign i_zs_hil_ready = free && i_mom_hil_valid;

    always @(posedge clk) begin
        if (rst) begin
            o_valid <= 1'b0;
            npix <= 7'd0;
            peak <= 8'd0;
        end else if (take) begin
            o_valid <= 1'b1;
            npix <= last ? 7'd0 : npix_next;
            peak <= last ? 8'd0 : peak_next;
        end else if (o_ready) begin
            o_valid <= 1'b0;
        end
        if (take) begin
            o_emit <= last;
            o_data <= {1'b0, peak_next, npix_next, moments};
        end
    end
endmodule
