/* The old path of ffijit/jit/jit_module.h (the jit library's headers live in ffijit/jit/): kept so
 * that code written against it still compiles. */
#ifndef FFIJIT_JIT_MODULE_H_FORWARD_
#define FFIJIT_JIT_MODULE_H_FORWARD_
#include "ffijit/jit/jit_module.h"
#endif
