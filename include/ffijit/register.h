/* The old path of ffijit/jit/register.h (the jit library's headers live in ffijit/jit/): kept so
 * that code written against it still compiles. */
#ifndef FFIJIT_REGISTER_H_FORWARD_
#define FFIJIT_REGISTER_H_FORWARD_
#include "ffijit/jit/register.h"
#endif
