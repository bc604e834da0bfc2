/* The old path of ffijit/jit/bridge.h (the jit library's headers live in ffijit/jit/): kept so
 * that code written against it still compiles. */
#ifndef FFIJIT_BRIDGE_H_FORWARD_
#define FFIJIT_BRIDGE_H_FORWARD_
#include "ffijit/jit/bridge.h"
#endif
