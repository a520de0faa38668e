// vsim_rt.h: error capture for the Verilator runtime (force-included in every
// translation unit, so that VL_PRINTF and the fatal/stop hooks land here).
#pragma once
#include <cstdarg>
#ifdef __cplusplus
extern "C" {
#endif
void vsim_printf(const char* fmt, ...);
void vsim_set_error(const char* msg);
void vsim_clear_error(void);
const char* vsim_last_error(void);
#ifdef __cplusplus
}
#endif
