/* The old path of ffijit/reflect/signature.h (the reflect library's headers live in
 * ffijit/reflect/): kept so that code written against it still compiles. */
#ifndef FFIJIT_SIGNATURE_H_FORWARD_
#define FFIJIT_SIGNATURE_H_FORWARD_
#include "ffijit/reflect/signature.h"
#endif
