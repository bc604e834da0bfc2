/* The old path of ffijit/reflect/metadata.h (the reflect library's headers live in
 * ffijit/reflect/): kept so that code written against it still compiles. */
#ifndef FFIJIT_METADATA_H_FORWARD_
#define FFIJIT_METADATA_H_FORWARD_
#include "ffijit/reflect/metadata.h"
#endif
