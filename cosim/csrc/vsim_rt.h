// vsim_rt.h: error capture for the Verilator runtime (force-included in every
// translation unit, so that VL_PRINTF and the fatal/stop hooks land here).
#pragma once
#include <cstdarg>
#ifdef __cplusplus
extern "C" {
#endif
// Defined in the runtime library, which every design's library uses.
#define VSIM_RT_API __attribute__((visibility("default")))
VSIM_RT_API void vsim_printf(const char* fmt, ...);
VSIM_RT_API void vsim_set_error(const char* msg);
VSIM_RT_API void vsim_clear_error(void);
VSIM_RT_API const char* vsim_last_error(void);
// The first waveform write that failed on this thread ("" if none).
VSIM_RT_API const char* vsim_trace_error(void);
#ifdef __cplusplus
}
#endif
