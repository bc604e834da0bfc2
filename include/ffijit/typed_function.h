/* The old path of ffijit/jit/typed_function.h (the jit library's headers live in ffijit/jit/): kept
 * so that code written against it still compiles. */
#ifndef FFIJIT_TYPED_FUNCTION_H_FORWARD_
#define FFIJIT_TYPED_FUNCTION_H_FORWARD_
#include "ffijit/jit/typed_function.h"
#endif
