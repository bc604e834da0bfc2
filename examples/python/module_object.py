"""A TVM FFI module compiled from C to an object file and loaded with ffijit.load_module.

The C source below exports packed functions the way TVM FFI's compilers emit them,
`__tvm_ffi_<name>` safe_calls. The script compiles it with `cc -c -fPIC` into a temporary
folder, loads the .o through ffijit's JIT linker and calls its functions as attributes and items
of the module, one of them calling back into Python. Exits non-zero when a result is wrong or
the C source cannot be compiled.

Environment: CC, the C compiler (default `cc`). The headers come with the package:
`ffijit.include_dirs()`.
"""

import os
import shlex
import subprocess
import sys
import tempfile

import ffijit

MODULE_SOURCE = r"""
#include <stdint.h>

#include "ffijit/c_api.h"

static int Fail(const char* message) {
  TVMFFIErrorSetRaisedFromCStr("TypeError", message);
  return -1;
}

/* scale_add(x, k, b) -> x * k + b, all ints */
int __tvm_ffi_scale_add(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 3) return Fail("scale_add expects 3 arguments (x, k, b)");
  for (int i = 0; i < 3; ++i) {
    if (args[i].type_index != kTVMFFIInt) return Fail("scale_add expects ints");
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 * args[1].v_int64 + args[2].v_int64;
  return 0;
}

/* apply_twice(f, x) -> f(f(x)): calls whatever Function it is given. */
int __tvm_ffi_apply_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                          TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIFunction) {
    return Fail("apply_twice expects (function, value)");
  }
  TVMFFIAny once;
  once.type_index = kTVMFFINone;
  once.zero_padding = 0;
  once.v_int64 = 0;
  if (TVMFFIFunctionCall(args[0].v_obj, &args[1], 1, &once) != 0) return -1;
  int rc = TVMFFIFunctionCall(args[0].v_obj, &once, 1, result);
  if (once.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(once.v_obj);
  return rc;
}
"""


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)


def compile_object(folder):
    source = os.path.join(folder, "scale_module.c")
    obj = os.path.join(folder, "scale_module.o")
    with open(source, "w") as out:
        out.write(MODULE_SOURCE)
    command = shlex.split(os.environ.get("CC", "cc")) + ["-c", "-fPIC", "-O1"]
    command += [f"-I{folder}" for folder in ffijit.include_dirs()] + [source, "-o", obj]
    # The compiler is not the Python process: a sanitizer runtime preloaded into the interpreter
    # (the sanitizer test lanes) stays out of it.
    compiler_env = {key: value for key, value in os.environ.items() if key != "LD_PRELOAD"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=compiler_env)
    except FileNotFoundError:
        print(f"FAILED: no C compiler `{command[0]}` (set CC)")
        sys.exit(1)
    if done.returncode != 0:
        print("FAILED: cannot compile the module:", " ".join(command))
        print(done.stderr.strip())
        sys.exit(1)
    return obj


def main():
    if not ffijit.jit_available():
        print("FAILED: loading an object file needs the JIT (this ffijit was built without LLVM)")
        sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="ffijit_example_") as folder:
        path = compile_object(folder)
        print("compiled", os.path.basename(path))
        module = ffijit.load_module(path)
    # The code lives in the process now; the file is no longer needed.
    print(f"loaded: {module!r}, kind {module.kind!r}")

    by_attribute = module.scale_add(6, 7, 0)
    by_item = module["scale_add"](3, 4, 5)
    print(f"module.scale_add(6, 7, 0) = {by_attribute}")
    print(f"module['scale_add'](3, 4, 5) = {by_item}")
    check(by_attribute == 42 and by_item == 17, "scale_add results")

    # The C code calls a Python function through the packed convention.
    twice = module.apply_twice(lambda v: v * 3, 5)
    print(f"module.apply_twice(lambda v: v * 3, 5) = {twice}")
    check(twice == 45, "apply_twice result")

    try:
        module.scale_add("six", 7, 0)
    except TypeError as error:
        print(f"module.scale_add('six', 7, 0) -> TypeError: {error}")
    else:
        check(False, "a str argument must raise the module's TypeError")
    check(module.get_function("missing") is None, "get_function of a missing name is None")
    print("OK")


if __name__ == "__main__":
    main()
