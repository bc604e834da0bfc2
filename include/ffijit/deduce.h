/* The old path of ffijit/reflect/deduce.h (the reflect library's headers live in ffijit/reflect/):
 * kept so that code written against it still compiles. */
#ifndef FFIJIT_DEDUCE_H_FORWARD_
#define FFIJIT_DEDUCE_H_FORWARD_
#include "ffijit/reflect/deduce.h"
#endif
