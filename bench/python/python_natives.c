/*
 * The floor native of the Python call benchmark: no arguments, no result. Built with
 * bench/call_natives.c into libffijit_bench_natives.so, the one library every Python path
 * (hand-written extension, ffijit, ctypes, cffi) calls, so all of them run the very same code.
 */
#include "python_natives.h"

void BenchNativeNoArgs(void) {}
