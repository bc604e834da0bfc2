// ffijit's C++ API in one include: values, objects, strings, functions, containers, tensors,
// modules and the env API.
#ifndef FFIJIT_FFIJIT_H_
#define FFIJIT_FFIJIT_H_

#include "ffijit/any.h"
#include "ffijit/c_api.h"
#include "ffijit/c_env_api.h"
#include "ffijit/c_ext.h"
#include "ffijit/container.h"
#include "ffijit/dtype.h"
#include "ffijit/error.h"
#include "ffijit/function.h"
#include "ffijit/module.h"
#include "ffijit/object.h"
#include "ffijit/registry.h"
#include "ffijit/string.h"
#include "ffijit/tensor.h"

#endif  // FFIJIT_FFIJIT_H_
