/* The old path of ffijit/jit/host_entry.h (the jit library's headers live in ffijit/jit/): kept so
 * that code written against it still compiles. */
#ifndef FFIJIT_HOST_ENTRY_H_FORWARD_
#define FFIJIT_HOST_ENTRY_H_FORWARD_
#include "ffijit/jit/host_entry.h"
#endif
