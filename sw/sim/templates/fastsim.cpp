// The fast simulated device of sfdf (issue 4): a Verilator model of one generated network driven by
// C++ that moves whole frames per call, with no Python per cycle. Ports, widths and beat kinds are
// filled in per manifest by sw/sim/harness.py (harness_source); do not edit the generated copy.
//
// Protocol (docs/architecture.md, docs/hardware.md): AXI4-Stream. A transfer happens at a rising edge of clk
// when tvalid && tready were both high before it. Each cycle the harness samples every handshake,
// writes the inputs of the next cycle, then makes the rising edge. A source holds tvalid with the
// same word until it is taken; a word's flags are bit 0 = tlast (end of frame), bit 1 = tuser[0]
// (end of stream).
// A sink beat is stored as a record: tdata bytes, tuser bytes (little-endian, the widths rounded up to
// bytes), one tlast byte, then the 64-bit cycle at which it was taken.
#include <cstdint>
#include <cstring>
#include <vector>

#include "verilated.h"
#include "Vfs.h"

// Shortcuts, defined above this line by sw/sim/build.py (_shortcuts) when the model has what they use:
// FASTSIM_DIRECT_EVAL calls Verilator's own evaluation loop, without eval()'s per-call bookkeeping
// (debug assertions, first-call initialisation, the end-of-eval message queue flush with its mutex):
// the model has neither $display nor threads, and fs_create runs eval() first. FASTSIM_CLOCK_PREV
// names the model's record of the clock's last value: setting it low stands for an evaluation with
// clk low, which changes nothing else here (every input is registered, all logic is on the rising edge).
#ifdef FASTSIM_DIRECT_EVAL
class Vfs___024root;
void Vfs___024root___eval(Vfs___024root* vlSelf);
#define FASTSIM_EVAL(top) Vfs___024root___eval((top)->rootp)
#else
#define FASTSIM_EVAL(top) (top)->eval()
#endif
#ifdef FASTSIM_CLOCK_PREV
#include "Vfs___024root.h"
#endif

namespace {

// ---- per manifest ------------------------------------------------------------------------------
@CONSTANTS@

// ---- copying between byte strings and Verilator signals of any width ------------------------------
template <typename T>
inline void put(T& signal, const uint8_t* bytes, size_t n) {
    uint64_t value = 0;
    std::memcpy(&value, bytes, n);
    signal = static_cast<T>(value);
}
template <std::size_t N>
inline void put(VlWide<N>& signal, const uint8_t* bytes, size_t n) {
    std::memset(signal.data(), 0, N * sizeof(EData));
    std::memcpy(signal.data(), bytes, n);
}
template <typename T>
inline void get(const T& signal, uint8_t* bytes, size_t n) {
    uint64_t value = signal;
    std::memcpy(bytes, &value, n);
}
template <std::size_t N>
inline void get(const VlWide<N>& signal, uint8_t* bytes, size_t n) {
    std::memcpy(bytes, signal.data(), n);
}
// Bits [lsb, lsb + width) of a little-endian byte string (width <= 8).
inline unsigned bits(const uint8_t* bytes, size_t n, unsigned lsb, unsigned width) {
    uint64_t value = 0;
    size_t first = lsb / 8;
    std::memcpy(&value, bytes + first, n - first < 8 ? n - first : 8);
    return static_cast<unsigned>((value >> (lsb % 8)) & ((1u << width) - 1));
}

// xorshift32: idle or back-pressure with probability threshold / 2^32 per cycle (0: never).
struct Pause {
    uint32_t threshold = 0;
    uint32_t state = 1;
    bool next() {
        if (threshold == 0) return false;
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        return state < threshold;
    }
};

struct Source {
    std::vector<uint8_t> words;  // WORD_BYTES[i] bytes per word
    std::vector<uint8_t> flags;  // one per word
    size_t head = 0;             // next word to present
    bool valid = false;          // the network sees tvalid high with words[head] this cycle
    bool next = false;           // ... and in the next cycle
    uint64_t accepted = 0;       // words taken by the device
    uint64_t last_accept = 0;    // cycle of the last word taken
    std::vector<uint64_t> frame_ends;  // cycle at which each frame's tlast word was taken
    Pause pause;
};

struct Sink {
    std::vector<uint8_t> records;  // RECORD_BYTES[i] bytes per beat
    size_t head = 0;               // first unread record (bytes)
    uint64_t beats = 0, messages = 0, eos = 0;
    bool ready = false;  // the network sees tready high this cycle
    bool next = false;   // ... and in the next cycle
    Pause pause;
};

struct Sim {
    VerilatedContext* context = nullptr;
    Vfs* top = nullptr;
    uint64_t cycles = 0;  // cycles since reset was released
    uint64_t idle = 0;    // cycles since the last handshake on any port
    Source sources[N_SOURCES];
    Sink sinks[N_SINKS];
};

void compact(Source& s, size_t word_bytes) {
    if (s.head > 4096 && s.head * 2 > s.flags.size()) {
        s.words.erase(s.words.begin(), s.words.begin() + s.head * word_bytes);
        s.flags.erase(s.flags.begin(), s.flags.begin() + s.head);
        s.head = 0;
    }
}

void compact(Sink& k) {
    if (k.head > 65536 && k.head * 2 > k.records.size()) {
        k.records.erase(k.records.begin(), k.records.begin() + k.head);
        k.head = 0;
    }
}

// One clock cycle. The wrapper (sw/sim/harness.py, wrapper_source) registers every input of the
// network, so the inputs written in a cycle reach the network in the next one and every signal the
// network computes from them is evaluated once per cycle, with the clock edge.
// Returns true when a frame end (message beat) arrived at a sink.
inline bool cycle(Sim* s) {
    Vfs* top = s->top;
    bool moved = false, message = false;
    const uint64_t at = s->cycles + 1;  // the cycle this edge ends, counted from 1
    // Per port: this cycle's handshake (the network sees the inputs registered at the previous edge),
    // then the inputs of the next cycle (a source holds an untaken word, else presents its next one).
@PORTS@
#ifdef FASTSIM_CLOCK_PREV
    top->rootp->FASTSIM_CLOCK_PREV = 0;
#else
    top->clk = 0;
    FASTSIM_EVAL(top);
#endif
    top->clk = 1;
    FASTSIM_EVAL(top);
    for (int i = 0; i < N_SOURCES; ++i) s->sources[i].valid = s->sources[i].next;
    for (int i = 0; i < N_SINKS; ++i) s->sinks[i].ready = s->sinks[i].next;
    s->cycles = at;
    s->idle = moved ? 0 : s->idle + 1;
    return message;
}

bool target_met(const Sim* s, uint64_t messages) {
    for (int i = 0; i < N_SINKS; ++i)
        if (s->sinks[i].messages < messages) return false;
    return true;
}

}  // namespace

// The library's interface, loaded by sw/sim/fastsim.py through ctypes.
#define FS_API __attribute__((visibility("default")))

extern "C" {

// The manifest facts this library was built for, checked by sw/sim/fastsim.py before any call.
FS_API const char* fs_signature() { return SIGNATURE; }

FS_API void* fs_create(uint32_t reset_cycles) {
    Sim* s = new Sim();
    s->context = new VerilatedContext;
    s->top = new Vfs{s->context, "top"};
    Vfs* top = s->top;
@ZERO_INPUTS@
    // fs_rst reaches the network's reset one edge later (the wrapper registers it).
    top->fs_rst = 1;
    for (uint32_t i = 0; i <= reset_cycles; ++i) {
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
    }
    top->fs_rst = 0;
@READY_INPUTS@
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();  // from here the network is out of reset, sinks ready, sources idle
    for (int i = 0; i < N_SINKS; ++i) s->sinks[i].ready = s->sinks[i].next = true;
    return s;
}

FS_API void fs_destroy(void* handle) {
    Sim* s = static_cast<Sim*>(handle);
    if (!s) return;
    s->top->final();
    delete s->top;
    delete s->context;
    delete s;
}

// Queue n words for source port `source` (WORD_BYTES[source] bytes each, little-endian) with one
// flags byte each. Returns 0, or -1 for an unknown port.
FS_API int fs_push(void* handle, int source, const uint8_t* words, const uint8_t* flags, uint64_t n) {
    Sim* s = static_cast<Sim*>(handle);
    if (source < 0 || source >= N_SOURCES) return -1;
    Source& src = s->sources[source];
    compact(src, WORD_BYTES[source]);
    src.words.insert(src.words.end(), words, words + n * WORD_BYTES[source]);
    src.flags.insert(src.flags.end(), flags, flags + n);  // presented from the next cycle on
    return 0;
}

// Run up to max_cycles cycles. Stops early when messages > 0 and every sink has delivered at least
// that many message beats in all (reason 1), when idle_cycles > 0 and no port moved for that many
// cycles (reason 2), or when a kernel broke its contract (reason 3: the network's contract_violation
// output, docs/kernels.md); reason 0 is the budget. Returns the cycles run.
FS_API uint64_t fs_run(void* handle, uint64_t max_cycles, uint64_t messages, uint64_t idle_cycles, int* reason) {
    Sim* s = static_cast<Sim*>(handle);
    *reason = 0;
    if (messages && target_met(s, messages)) {
        *reason = 1;
        return 0;
    }
    uint64_t start = s->cycles;
    for (uint64_t n = 0; n < max_cycles; ++n) {
        if (cycle(s) && messages && target_met(s, messages)) {
            *reason = 1;
            break;
        }
        if (idle_cycles && s->idle >= idle_cycles) {
            *reason = 2;
            break;
        }
        if (violation(s->top)) {
            *reason = 3;
            break;
        }
    }
    return s->cycles - start;
}

// The network's contract_violation bits (the first 64; 0 without the port): which promising kernels filtered.
FS_API uint64_t fs_violation(void* handle) { return violation(static_cast<Sim*>(handle)->top); }

// Beats waiting at sink port `sink`.
FS_API uint64_t fs_available(void* handle, int sink) {
    Sim* s = static_cast<Sim*>(handle);
    if (sink < 0 || sink >= N_SINKS) return 0;
    const Sink& k = s->sinks[sink];
    return (k.records.size() - k.head) / RECORD_BYTES[sink];
}

// Move up to max waiting beats of `sink` into out (RECORD_BYTES[sink] bytes each); returns how many.
FS_API uint64_t fs_read(void* handle, int sink, uint8_t* out, uint64_t max) {
    Sim* s = static_cast<Sim*>(handle);
    if (sink < 0 || sink >= N_SINKS) return 0;
    Sink& k = s->sinks[sink];
    uint64_t n = (k.records.size() - k.head) / RECORD_BYTES[sink];
    if (n > max) n = max;
    if (n == 0) return 0;
    std::memcpy(out, k.records.data() + k.head, n * RECORD_BYTES[sink]);
    k.head += n * RECORD_BYTES[sink];
    compact(k);
    return n;
}

// Counters: out[0] = cycles, out[1] = cycles without a handshake; then per source (waiting words,
// words taken, frames taken, cycle of the last word taken); then per sink (beats, messages, eos).
FS_API void fs_counters(void* handle, uint64_t* out) {
    Sim* s = static_cast<Sim*>(handle);
    *out++ = s->cycles;
    *out++ = s->idle;
    for (int i = 0; i < N_SOURCES; ++i) {
        const Source& src = s->sources[i];
        *out++ = src.flags.size() - src.head;
        *out++ = src.accepted;
        *out++ = src.frame_ends.size();
        *out++ = src.last_accept;
    }
    for (int i = 0; i < N_SINKS; ++i) {
        *out++ = s->sinks[i].beats;
        *out++ = s->sinks[i].messages;
        *out++ = s->sinks[i].eos;
    }
}

// Cycle at which frame `frame` (0, 1, ...) of `source` had its tlast word taken; UINT64_MAX if not yet.
FS_API uint64_t fs_frame_end_cycle(void* handle, int source, uint64_t frame) {
    Sim* s = static_cast<Sim*>(handle);
    if (source < 0 || source >= N_SOURCES) return UINT64_MAX;
    const Source& src = s->sources[source];
    return frame < src.frame_ends.size() ? src.frame_ends[frame] : UINT64_MAX;
}

// Random idle cycles (a source) or back-pressure (a sink, sink != 0) with probability
// threshold / 2^32 per cycle, from a xorshift32 seeded with seed (0 is replaced by 1).
FS_API int fs_set_pause(void* handle, int sink, int port, uint32_t threshold, uint32_t seed) {
    Sim* s = static_cast<Sim*>(handle);
    Pause* pause = nullptr;
    if (sink && port >= 0 && port < N_SINKS) pause = &s->sinks[port].pause;
    if (!sink && port >= 0 && port < N_SOURCES) pause = &s->sources[port].pause;
    if (!pause) return -1;
    pause->threshold = threshold;
    pause->state = seed ? seed : 1;
    return 0;
}

}  // extern "C"
