// vsim_rt.cpp: replaces Verilator's fatal/stop handlers so that an RTL error
// ($error, $fatal, a failed assertion) is reported to Rust as a failed cycle
// with its message, instead of aborting the process.
#include <cstdio>
#include <cstring>
#include <string>
#include "verilated.h"
#include "vsim_rt.h"

namespace {
thread_local std::string t_last;   // last error message (cleared per model)
thread_local std::string t_lines;  // text printed by the RTL since the last error
thread_local std::string t_trace;  // the first failed write of a waveform
}

extern "C" void vsim_printf(const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fputs(buf, stderr);
    t_lines += buf;
    if (t_lines.size() > 8192) t_lines.erase(0, t_lines.size() - 8192);
}

extern "C" void vsim_set_error(const char* msg) {
    if (t_last.empty()) t_last = msg;
}

extern "C" void vsim_clear_error(void) {
    t_last.clear();
    t_lines.clear();
    t_trace.clear();
}

extern "C" const char* vsim_last_error(void) { return t_last.c_str(); }

extern "C" const char* vsim_trace_error(void) { return t_trace.c_str(); }

static void record(const char* filename, int linenum, const char* msg) {
    std::string m;
    // Prefer what the RTL printed (it names the assertion), else the location.
    std::string lines = t_lines;
    while (!lines.empty() && (lines.back() == '\n' || lines.back() == '\r')) lines.pop_back();
    std::size_t nl = lines.rfind('\n');
    std::string last_line = nl == std::string::npos ? lines : lines.substr(nl + 1);
    if (!last_line.empty()) {
        m = last_line;
    } else {
        m = std::string(msg) + " at " + (filename ? filename : "?") + ":" + std::to_string(linenum);
    }
    if (t_last.empty()) t_last = m;
    t_lines.clear();
    Verilated::threadContextp()->gotError(true);
}

void vl_stop(const char* filename, int linenum, const char* hier) VL_MT_UNSAFE {
    (void)hier;
    record(filename, linenum, "Verilog $stop");
}

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) VL_MT_UNSAFE {
    (void)hier;
    // A waveform that cannot be written (a full disk) is not the RTL's
    // error: the tracer closes its file and the simulation goes on; the
    // run reports the file as not written.
    if (std::strncmp(msg, "VerilatedVcd", 12) == 0) {
        if (t_trace.empty()) t_trace = msg;
        return;
    }
    record(filename, linenum, msg);
}
