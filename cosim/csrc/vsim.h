// vsim.h: the generic half of the Verilator shim.
//
// The builder (cosim/src/builder.rs) generates, per design, a file that
// includes this header, defines put_inputs()/get_outputs()/set_clock() and
// get_state() (one line per port or signal, from the Rust port declaration
// and the design's port map) and expands VSIM_DEFINE. Everything else lives
// here once. The design is compiled into a shared library that the Rust side
// opens (or, for the mutation checker and the benchmarks, an executable).
//
// Cycle protocol (docs/conventions.md), one call per RTL clock:
//   untraced:  inputs, clk=0, eval, read outputs; clk=1, eval        (2 evals)
//   traced:    inputs, eval, dump(10n), read outputs; clk=0, eval,
//              dump(10n+5); clk=1, eval                              (3 evals)
// Both sample the outputs of clock n after its inputs settle and clock the
// same edges; the rising edge that ends clock n is taken before the call
// returns, so the registers read after a call (vsim_state) hold their values
// after that edge. In the waveform that edge shows at 10(n+1), with the next
// inputs, so that registers, inputs and outputs of a clock all change at its
// rising edge, as in the model's waveform.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>
#include "verilated.h"
#include "verilated_vcd_c.h"
#include "vsim_rt.h"

namespace vsim {

inline void put(CData& d, const uint32_t* w) { d = static_cast<CData>(w[0]); }
inline void put(SData& d, const uint32_t* w) { d = static_cast<SData>(w[0]); }
inline void put(IData& d, const uint32_t* w) { d = w[0]; }
inline void put(QData& d, const uint32_t* w) {
    d = static_cast<QData>(w[0]) | (static_cast<QData>(w[1]) << 32);
}
template <std::size_t N> inline void put(VlWide<N>& d, const uint32_t* w) {
    for (std::size_t i = 0; i < N; ++i) d[i] = w[i];
}

inline void get(const CData& d, uint32_t* w) { w[0] = d; }
inline void get(const SData& d, uint32_t* w) { w[0] = d; }
inline void get(const IData& d, uint32_t* w) { w[0] = d; }
inline void get(const QData& d, uint32_t* w) {
    w[0] = static_cast<uint32_t>(d);
    w[1] = static_cast<uint32_t>(d >> 32);
}
template <std::size_t N> inline void get(const VlWide<N>& d, uint32_t* w) {
    for (std::size_t i = 0; i < N; ++i) w[i] = d[i];
}

// Writes `width` (1..64) bits of `v` at bit `off` of `w`.
inline void put_bits(uint32_t* w, uint32_t off, uint32_t width, uint64_t v) {
    for (uint32_t done = 0; done < width;) {
        const uint32_t bit = off + done, wi = bit / 32, sh = bit % 32;
        const uint32_t n = std::min(32 - sh, width - done);
        const uint32_t m = n == 32 ? 0xffffffffu : ((1u << n) - 1);
        w[wi] = (w[wi] & ~(m << sh)) | ((static_cast<uint32_t>(v >> done) & m) << sh);
        done += n;
    }
}

// An unpacked array of packed elements (a memory, a register file) as one
// flattened vector: element k at bits [k*width +: width].
template <class T, std::size_t N>
inline void get_unpacked(const VlUnpacked<T, N>& a, uint32_t width, uint32_t* w, size_t words) {
    for (size_t i = 0; i < words; ++i) w[i] = 0;
    for (std::size_t k = 0; k < N; ++k) put_bits(w, k * width, width, static_cast<uint64_t>(a[k]));
}

// An optional output the RTL does not have: zero.
inline void zero(uint32_t* w, size_t words) {
    for (size_t i = 0; i < words; ++i) w[i] = 0;
}

template <class Top> struct Sim {
    VerilatedContext ctx;
    Top* top = nullptr;
    VerilatedVcdC* tf = nullptr;
    uint64_t n = 0;  // cycles run, including reset cycles
};

template <class Top, void (*Clk)(Top*, int)> void* create(uint64_t seed, const char* vcd) {
    vsim_clear_error();
    auto* s = new Sim<Top>;
    // --x-initial unique: uninitialised state is random, from this seed.
    s->ctx.randReset(2);
    s->ctx.randSeed(static_cast<int>((seed ^ (seed >> 31)) & 0x7fffffff));
    s->ctx.fatalOnError(false);
    if (vcd) s->ctx.traceEverOn(true);
    s->top = new Top(&s->ctx, "TOP");
    Clk(s->top, 0);
    s->top->eval();
    if (vcd) {
        s->tf = new VerilatedVcdC;
        s->top->trace(s->tf, 99);
        s->tf->open(vcd);
        if (!s->tf->isOpen()) {
            vsim_set_error("cannot open the VCD file for writing");
            delete s->tf;
            s->tf = nullptr;
            delete s->top;
            delete s;
            return nullptr;
        }
    }
    return s;
}

template <class Top> void destroy(void* h) {
    auto* s = static_cast<Sim<Top>*>(h);
    if (!s) return;
    if (s->tf) {
        s->tf->close();
        delete s->tf;
    }
    s->top->final();
    delete s->top;
    delete s;
}

// Returns 0, or 1 when the RTL raised an error ($error, $fatal, assertion).
template <class Top, void (*Put)(Top*, const uint32_t*), void (*Get)(Top*, uint32_t*),
          void (*Clk)(Top*, int)>
int cycle(void* h, const uint32_t* in, uint32_t* out) {
    auto* s = static_cast<Sim<Top>*>(h);
    Top* t = s->top;
    if (s->tf) {
        // The clock is still high from the last edge (low before the first):
        // the dump at 10n shows the edge, the registers and these inputs.
        Put(t, in);
        t->eval();
        s->tf->dump(10 * s->n);
        Get(t, out);
        Clk(t, 0);
        t->eval();
        s->tf->dump(10 * s->n + 5);
    } else {
        Put(t, in);
        Clk(t, 0);
        t->eval();
        Get(t, out);
    }
    Clk(t, 1);
    t->eval();
    s->n++;
    return s->ctx.gotError() ? 1 : 0;
}

template <class Top> void flush(void* h) {
    auto* s = static_cast<Sim<Top>*>(h);
    if (s->tf) s->tf->flush();
}

// Reads a file of little-endian 32-bit words into `w`; false if it cannot.
inline bool read_words(const char* path, std::vector<uint32_t>& w) {
    std::FILE* f = std::fopen(path, "rb");
    if (!f) return false;
    uint32_t chunk[4096];
    size_t got;
    while ((got = std::fread(chunk, 4, 4096, f)) > 0) w.insert(w.end(), chunk, chunk + got);
    std::fclose(f);
    return true;
}

// The minimal C++ harness of the benchmarks: reads `cycles` packed input
// vectors from a file, then drives a fresh model with them (reset for two
// cycles first), exactly as `cycle` does untraced, timing only the loop.
// The checksum of all outputs lets the caller check it saw what the Rust
// side saw. Returns 0, or -1 if the file cannot be read.
template <class Top, void (*Put)(Top*, const uint32_t*), void (*Get)(Top*, uint32_t*),
          void (*Clk)(Top*, int)>
int bench(const char* path, size_t in_words, size_t out_words, double* secs,
          uint64_t* cycles, uint64_t* checksum) {
    std::vector<uint32_t> buf;
    if (!read_words(path, buf)) return -1;
    size_t n = buf.size() / in_words;
    std::vector<uint32_t> out(out_words + 8);
    VerilatedContext ctx;
    ctx.randReset(2);
    Top t(&ctx, "TOP");
    std::vector<uint32_t> rst(in_words, 0);  // rst_ni = 0
    Clk(&t, 0);
    t.eval();
    for (int k = 0; k < 2; ++k) {
        Put(&t, rst.data());
        Clk(&t, 0);
        t.eval();
        Clk(&t, 1);
        t.eval();
    }
    uint64_t sum = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
        Put(&t, &buf[i * in_words]);
        Clk(&t, 0);
        t.eval();
        Get(&t, out.data());
        for (size_t w = 0; w < out_words; ++w) sum = (sum ^ out[w]) * 0x100000001b3ULL;
        Clk(&t, 1);
        t.eval();
    }
    auto t1 = std::chrono::steady_clock::now();
    t.final();
    *secs = std::chrono::duration<double>(t1 - t0).count();
    *cycles = n;
    *checksum = sum;
    return 0;
}

// The mutation campaign's checker (switchsim/src/mutate writes the file):
// replays golden vectors on this build, each case from a fresh instance
// exactly as the co-simulation runs one (`create`, `cycle` untraced), and
// compares the outputs of the cycles marked for checking. The file: magic
// "VSIM" (0x5653494d), input words, output words, cases; per case its seed
// and cycle count, then per cycle a check flag, the inputs and the expected
// outputs. Prints SURVIVED (returns 0), KILLED case C cycle K: why
// (returns 1; K counts from the end of the two reset cycles), or ERROR
// (returns 2).
template <class Top, void (*Put)(Top*, const uint32_t*), void (*Get)(Top*, uint32_t*),
          void (*Clk)(Top*, int)>
int check(const char* path) {
    std::vector<uint32_t> w;
    if (!read_words(path, w) || w.size() < 4 || w[0] != 0x5653494d) {
        std::printf("ERROR cannot read the vectors in %s\n", path);
        return 2;
    }
    size_t at = 1;
    const uint32_t iw = w[at++], ow = w[at++], ncases = w[at++];
    std::vector<uint32_t> out(ow + 8);
    for (uint32_t c = 0; c < ncases; ++c) {
        const uint32_t seed = w[at++], n = w[at++];
        void* h = create<Top, Clk>(seed & 0x7fffffff, nullptr);
        for (uint32_t k = 0; k < n; ++k) {
            const uint32_t chk = w[at++];
            const uint32_t* in = &w[at];
            at += iw;
            const uint32_t* exp = &w[at];
            at += ow;
            auto killed = [&](const char* what, const char* detail) {
                std::printf("KILLED case %u cycle %d: %s%s\n", c, (int)k - 2, what, detail);
                destroy<Top>(h);
                return 1;
            };
            if (cycle<Top, Put, Get, Clk>(h, in, out.data()) != 0)
                return killed("RTL error: ", vsim_last_error());
            if (chk && std::memcmp(out.data(), exp, ow * 4) != 0) return killed("outputs differ", "");
        }
        destroy<Top>(h);
    }
    std::printf("SURVIVED\n");
    return 0;
}

}  // namespace vsim

// The entry points of one design (visible: everything else in the library
// is hidden). IW, OW, AW, SW: words of the inputs, outputs, outputs read
// besides the declared ones (a strobe), and state.
#define VSIM_API extern "C" __attribute__((visibility("default")))
#define VSIM_DEFINE(TOP, IW, OW, AW, SW)                                                   \
    VSIM_API void vsim_words(size_t* iw, size_t* ow, size_t* aw, size_t* sw) {              \
        *iw = IW;                                                                           \
        *ow = OW;                                                                           \
        *aw = AW;                                                                           \
        *sw = SW;                                                                           \
    }                                                                                       \
    VSIM_API void* vsim_new(uint64_t seed, const char* vcd) {                               \
        return vsim::create<TOP, set_clock>(seed, vcd);                                     \
    }                                                                                       \
    VSIM_API void vsim_free(void* h) { vsim::destroy<TOP>(h); }                             \
    VSIM_API int vsim_cycle(void* h, const uint32_t* in, uint32_t* out) {                   \
        return vsim::cycle<TOP, put_inputs, get_outputs, set_clock>(h, in, out);            \
    }                                                                                       \
    VSIM_API void vsim_state(void* h, uint32_t* w) {                                        \
        get_state(static_cast<vsim::Sim<TOP>*>(h)->top, w);                                 \
    }                                                                                       \
    VSIM_API void vsim_flush(void* h) { vsim::flush<TOP>(h); }                              \
    VSIM_API int vsim_bench(const char* path, size_t iw, size_t ow, double* secs,           \
                            uint64_t* n, uint64_t* sum) {                                   \
        return vsim::bench<TOP, put_inputs, get_outputs, set_clock>(path, iw, ow, secs, n,  \
                                                                   sum);                    \
    }                                                                                       \
    VSIM_API int vsim_check(const char* path) {                                             \
        return vsim::check<TOP, put_inputs, get_outputs, set_clock>(path);                  \
    }
