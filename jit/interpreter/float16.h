// IEEE binary16 and bfloat16 conversions with round-to-nearest-even (no hardware support needed).
//
// Both formats are produced straight from the exact input (a double, or an int64) with a single
// rounding, so there is no double-rounding error through an intermediate float.
#ifndef FFIJIT_JIT_INTERPRETER_FLOAT16_H_
#define FFIJIT_JIT_INTERPRETER_FLOAT16_H_

#include <cstdint>

#include "base/plugin_export.h"
#include "ffijit/c_api.h"

extern "C" {
// Bit patterns of the nearest binary16 / bfloat16 value (ties to even; NaN stays NaN, overflow
// goes to infinity). Hidden like every internal symbol: JIT-generated code gets the addresses it
// calls from ThunkRuntimeSymbols (ORC absolute symbols), never by a lookup in the process.
FFIJIT_JIT_PLUGIN_API uint16_t FFIJITDoubleToF16Bits(double value);
FFIJIT_JIT_PLUGIN_API uint16_t FFIJITDoubleToBF16Bits(double value);
FFIJIT_JIT_PLUGIN_API uint16_t FFIJITInt64ToF16Bits(int64_t value);
FFIJIT_JIT_PLUGIN_API uint16_t FFIJITInt64ToBF16Bits(int64_t value);
// Exact widening of the bit patterns back to double (used when boxing results).
FFIJIT_JIT_PLUGIN_API double FFIJITF16BitsToDouble(uint16_t bits);
FFIJIT_JIT_PLUGIN_API double FFIJITBF16BitsToDouble(uint16_t bits);
}

#endif  // FFIJIT_JIT_INTERPRETER_FLOAT16_H_
