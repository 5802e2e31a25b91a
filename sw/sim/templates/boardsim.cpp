// The simulated board of sfdf (issue 16): a Verilator model of a board core (boards/core.py, the Verilog
// sfdf build writes as <name>.board.v, or Yosys's netlist of it) with its UART pins driven bit by bit:
// the host's bytes become 8N1 characters on rx at the board's own divisor (clock cycles per bit), and
// the characters the board sends on tx are sampled back into bytes. A break holds rx low. Driven from
// Python (sw/sim/boardsim.py) a run of cycles per call; no Python per cycle.
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "verilated.h"
#include "Vbs.h"

namespace {

// A queued line event: a byte (0..255), or a break of N cycles as -(N + 256).
struct Sim {
    VerilatedContext* ctx;
    Vbs* top;
    uint32_t divisor;
    // host -> board (rx pin)
    std::deque<int64_t> queue;
    bool busy = false;           // an event is on the line
    int64_t current = 0;         // that event
    uint32_t position = 0;       // cycles into it
    // board -> host (tx pin)
    bool receiving = false;
    uint32_t sample = 0;         // cycles to the next sample point
    uint32_t bit = 0;            // bits sampled of the character (0: start)
    uint32_t shift = 0;
    std::vector<uint8_t> out;
};

// The rx pin's level this cycle, advancing the host's transmitter.
inline uint8_t host_line(Sim* s) {
    if (!s->busy) {
        if (s->queue.empty()) return 1;
        s->current = s->queue.front();
        s->queue.pop_front();
        s->position = 0;
        s->busy = true;
    }
    uint8_t level;
    if (s->current >= 0) {       // 10 bits: start, 8 data (LSB first), stop
        uint32_t bit = s->position / s->divisor;
        level = bit == 0 ? 0 : bit == 9 ? 1 : (s->current >> (bit - 1)) & 1;
        if (++s->position == 10 * s->divisor) s->busy = false;
    } else {                                          // a break, then a character's time of idle line
        uint64_t low = static_cast<uint64_t>(-(s->current + 256));
        level = s->position < low ? 0 : 1;
        if (++s->position >= low + 10 * s->divisor) s->busy = false;
    }
    return level;
}

// Sample the tx pin (the host's receiver): a falling edge starts a character, sampled mid-bit.
inline void host_receive(Sim* s, uint8_t tx) {
    if (!s->receiving) {
        if (!tx) {
            s->receiving = true;
            s->sample = s->divisor / 2;
            s->bit = 0;
            s->shift = 0;
        }
        return;
    }
    if (s->sample) {
        --s->sample;
        return;
    }
    s->sample = s->divisor - 1;
    if (s->bit == 0) {
        if (tx) s->receiving = false;                 // a glitch, not a start bit
    } else if (s->bit <= 8) {
        s->shift |= static_cast<uint32_t>(tx) << (s->bit - 1);
    } else {
        if (tx) s->out.push_back(static_cast<uint8_t>(s->shift));  // a low stop bit: no character
        s->receiving = false;
        return;
    }
    ++s->bit;
}

inline void cycle(Sim* s) {
    s->top->rx = host_line(s);
    s->top->clk = 0;
    s->top->eval();
    s->top->clk = 1;
    s->top->eval();
    host_receive(s, s->top->tx);
}

}  // namespace

extern "C" {

void* bs_create(uint32_t divisor) {
    auto* s = new Sim();
    s->ctx = new VerilatedContext();
    s->top = new Vbs(s->ctx);
    s->divisor = divisor;
    s->top->rx = 1;
    s->top->rst = 1;
    s->top->clk = 0;
    s->top->eval();
    return s;
}

void bs_destroy(void* handle) {
    auto* s = static_cast<Sim*>(handle);
    s->top->final();
    delete s->top;
    delete s->ctx;
    delete s;
}

// Power-on reset: rst high for ``cycles`` cycles.
void bs_reset(void* handle, uint32_t cycles) {
    auto* s = static_cast<Sim*>(handle);
    s->top->rst = 1;
    for (uint32_t k = 0; k < cycles; ++k) cycle(s);
    s->top->rst = 0;
}

void bs_send(void* handle, const uint8_t* bytes, uint64_t n) {
    auto* s = static_cast<Sim*>(handle);
    for (uint64_t k = 0; k < n; ++k) s->queue.push_back(bytes[k]);
}

// A break: rx low for ``cycles`` cycles after what is queued before it.
void bs_break(void* handle, uint32_t cycles) {
    static_cast<Sim*>(handle)->queue.push_back(-static_cast<int64_t>(cycles) - 256);
}

// Drop what the host queued and has not started sending (its input flush).
void bs_drop_queued(void* handle) { static_cast<Sim*>(handle)->queue.clear(); }

// Run ``cycles`` cycles; stop early once the host's line is idle and ``bytes_out`` bytes wait to be read
// (0: never early). Returns the cycles run.
uint64_t bs_run(void* handle, uint64_t cycles, uint64_t bytes_out) {
    auto* s = static_cast<Sim*>(handle);
    uint64_t k = 0;
    for (; k < cycles; ++k) {
        cycle(s);
        if (bytes_out && s->out.size() >= bytes_out && !s->busy && s->queue.empty() && !s->receiving) {
            ++k;
            break;
        }
    }
    return k;
}

// Bytes the board sent: copy up to ``max`` into ``buffer``, return how many.
uint64_t bs_receive(void* handle, uint8_t* buffer, uint64_t max) {
    auto* s = static_cast<Sim*>(handle);
    uint64_t n = s->out.size() < max ? s->out.size() : max;
    std::memcpy(buffer, s->out.data(), n);
    s->out.erase(s->out.begin(), s->out.begin() + n);
    return n;
}

// Events the host has queued or is sending.
uint64_t bs_pending(void* handle) {
    auto* s = static_cast<Sim*>(handle);
    return s->queue.size() + (s->busy ? 1 : 0);
}

uint32_t bs_leds(void* handle) { return static_cast<Sim*>(handle)->top->leds; }

}  // extern "C"
