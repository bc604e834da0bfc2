/* The old path of ffijit/jit/jit.h (the jit library's headers live in ffijit/jit/): kept so
 * that code written against it still compiles. */
#ifndef FFIJIT_JIT_H_FORWARD_
#define FFIJIT_JIT_H_FORWARD_
#include "ffijit/jit/jit.h"
#endif
