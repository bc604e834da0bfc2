#!/usr/bin/python3
"""Times Python -> native calls of the benchmark natives through every Python call path.

The paths (columns), all timed in one process:
  handwritten       the hand-written CPython extension `ffijit_bench_handwritten` (the yardstick);
  ffijit generic    an ffijit Function after compile_now() (the JIT thunk), called through the
                    generic C entry (argument conversion by ArgPack); it has no generated entry;
  ffijit generated  the same after compile_now() and compile_entry(): the JIT-generated
                    METH_FASTCALL entry converts the arguments and calls the thunk;
  ffijit stencil    an ffijit Function on its stencil thunk, after use_entry("stencil"): the
                    copy-and-patch entry converts the arguments and runs a copy of that thunk's
                    chain (nothing of it from LLVM);
  ffijit module fn  an attribute of a TVM FFI module (ffijit_bench_module.so, `__tvm_ffi_<name>`
                    safe_calls) opened with ffijit.load_module: packed arguments, no signature;
  ffijit interp     an ffijit Function made with interpret_only=True (generic entry, interpreter);
  ctypes, cffi abi, cffi api (cffi API mode is compiled at run time into a temporary directory and
                    skipped, with the reason printed, when that fails).
ffijit Functions reach Python as builtin function objects whose __self__ is the ffijit.Function.
So that only compile_entry() and use_entry() give a function its generated entry and no thunk goes
hot during the run, the benchmark sets FFIJIT_JIT=after:1000000000 and FFIJIT_JIT_HOT=never before
importing ffijit (whatever the environment said), and checks after timing that every column still
runs the entry its title says.

The signatures (rows) are the five natives of bench/call_natives.c, a no-argument floor and
`sum_f64_1000`: a numpy float64 array of 1,000 elements summed by the native (a 1-D ndarray f64
parameter, a DLTensor* in C). Every path calls the same code in libffijit_bench_natives.so.

Method: all cases timed in interleaved rounds (every round times every case once, in a rotated
order, the paths of one signature back to back), the median of the rounds reported as
nanoseconds per call, and as ratio the median over rounds of each round's time divided by the
hand-written time of the same signature and round.
Each measurement is a tight loop `for _ in repeat(None, n): f(a, b, c)` over local variables; the
loop's own cost is INCLUDED in every number, equally for all paths (the "loop only" line prints it).
Each path gets its arguments the way its users write them: pre-built Device/DataType objects or
structs, a numpy array converted on every call (ctypes and cffi through a small Python wrapper
that builds the DLTensor, as a user of those libraries must), a str encoded on every call for
ctypes and cffi (they take bytes).

Overhead above the native (the sum_f64_1000 row): the native's own time is measured in the same
interleaved rounds by the hand-written extension's sum_f64_native_ns(array, n), which reads the
buffer once and calls the native n times back to back from C (the mean ns per native call). A
path's overhead is its median ns per call minus the native's median; its ratio to the handwritten
overhead (the buffer-protocol path) is the median over rounds of that round's ratio, the native
and every path timed next to each other. The issue's target is a ratio of at
most 1.5 for ffijit generated. The overhead is a small difference of two larger numbers: on a noisy
machine it is the least stable number printed. The native timed back to back from C runs hot
(caches and branch predictors primed by nothing else), so it may be a little faster than the same
native between Python calls; whatever it underestimates lands equally on every path's overhead,
which pulls the overhead ratios toward 1.

Entry compile time, two medians of entry_compile_us: over the ffijit generated functions whose
signature had no entry yet (compiled), leaving out the first entry compiled in the process (a
first compile can pay one-time JIT setup, such as building the LLVM engine), which is printed
apart; and over functions whose signature already had one (each generated function gets a twin,
a second Function of the same native and signature, whose entry shares the compiled code). The
ffijit generic column's compile_now() calls run before, so the engine the thunks use exists by
then. Stencil entries (the ffijit stencil column's) are made for each function, never shared: one
median over the column's functions, each made by use_entry("stencil") as a function's first call
makes it.

Callbacks, a second table (--callbacks-only times it alone): libc's qsort sorting 1,000 int32
with a Python comparator made by ffijit.callback, ctypes.CFUNCTYPE and cffi's ffi.callback; rows
`qsort_deref` (the comparator reads both ints through its pointer arguments) and `qsort_ignore`
(it returns 0); ns per comparator call (a sort's time over its comparator calls), medians of
interleaved rounds, ratio to cffi per round. The issue's target: ffijit's `qsort_deref` <= cffi's.

Run it with Debian's /usr/bin/python3 (the extensions are built for it):
    /usr/bin/python3 bench/python/bench_calls.py --build-dir build/v013 [--markdown out.md]
        [--json out.json] [--summary out.md] [--chart docs/img/python_calls.svg]
or `ninja -C <build> run_ffijit_bench_python`. --chart writes an SVG bar chart of the ratios to
handwritten (log scale), one group of bars per signature.
"""

import argparse
import ctypes
import gc
import importlib
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import repeat
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))

DEBIAN_PYTHON = "/usr/bin/python3"
NATIVES_LIB = "libffijit_bench_natives.so"
MODULE_LIB = "ffijit_bench_module.so"
# Only compile_entry() and use_entry() give a Function its generated entry, and no thunk goes hot
# (see the docstring).
ENTRY_POLICY = "after:1000000000"
HOT_POLICY = "never"

SUM_LENGTH = 1000
SUM_ROW = f"sum_f64_{SUM_LENGTH}"
# The rows, in print order, and the result every path must return for them.
SIGNATURES = [
    "no_args",
    "i64_i64_i64",
    "i64_f64_i32_f32_ptr",
    "i64_f64_i32_f32_null",
    "dev_dtype_i64",
    "tensor",
    "str",
    SUM_ROW,
]
EXPECTED = {
    "no_args": None,
    "i64_i64_i64": 1 + 2 * 2 + 3 * 3,
    "i64_f64_i32_f32_ptr": 1 + 2.5 + 3 + 4.5 + 1.0,
    "i64_f64_i32_f32_null": 1 + 2.5 + 3 + 4.5,
    "dev_dtype_i64": 2 + 1 + 2 + 32 + 1 + 7,  # cuda:1, float32 (code 2, 32 bits, 1 lane), 7
    "tensor": 4 + 8,
    "str": ord("a"),
    SUM_ROW: float(SUM_LENGTH * (SUM_LENGTH - 1) // 2),  # 0 + 1 + ... + 999, exact in float64
}
PATHS = ["handwritten", "ffijit generic", "ffijit generated", "ffijit stencil", "ffijit module fn",
         "ffijit interp", "ctypes", "cffi abi", "cffi api"]
# The entry each ffijit column's functions must run (Function.entry) when timed.
ENTRY_OF_PATH = {"ffijit generic": "generic", "ffijit interp": "generic",
                 "ffijit generated": "llvm", "ffijit stencil": "stencil"}
NATIVE_SYMBOLS = {
    "no_args": "BenchNativeNoArgs",
    "i64_i64_i64": "BenchNativeI64x3",
    "i64_f64_i32_f32_ptr": "BenchNativeMixed",
    "i64_f64_i32_f32_null": "BenchNativeMixed",
    "dev_dtype_i64": "BenchNativeDevDtype",
    "tensor": "BenchNativeTensor",
    "str": "BenchNativeStr",
    SUM_ROW: "BenchNativeSumF64",
}
# The module function (bench_module.c) serving each row.
MODULE_FUNCTIONS = {
    "no_args": "no_args",
    "i64_i64_i64": "i64_i64_i64",
    "i64_f64_i32_f32_ptr": "i64_f64_i32_f32_ptr",
    "i64_f64_i32_f32_null": "i64_f64_i32_f32_ptr",
    "dev_dtype_i64": "dev_dtype_i64",
    "tensor": "tensor",
    "str": "str",
    SUM_ROW: "sum_f64",
}
# ffijit's metadata for each native (docs/guide/04-metadata-formats.md, "The `iree.abi` JSON").
FFIJIT_SIGNATURES = {
    "no_args": '{"a":[],"r":[],"v":1}',
    "i64_i64_i64": '{"a":["i64","i64","i64"],"r":["i64"],"v":1}',
    "i64_f64_i32_f32_ptr": '{"a":["i64","f64","i32","f32","ptr"],"r":["f64"],"v":1}',
    "i64_f64_i32_f32_null": '{"a":["i64","f64","i32","f32","ptr"],"r":["f64"],"v":1}',
    "dev_dtype_i64": '{"a":["Device","DataType","i64"],"r":["i64"],"v":1}',
    "tensor": '{"a":[["ndarray","f32",2,null,null]],"r":["i64"],"v":1}',
    "str": '{"a":["str"],"r":["i64"],"v":1}',
    SUM_ROW: '{"a":[["ndarray","f64",1,null]],"r":["f64"],"v":1}',
}
WRAPPER_NOTE = (f"ctypes and cffi rows of `tensor`, `{SUM_ROW}` and `str` call through a Python "
                "wrapper that builds the DLTensor from the array / encodes the str on every call, "
                "as their users must; every other row calls the path's callable directly.")
STRING_ARG = "a string object, not inline"  # 27 characters, ASCII
DL_CPU, DL_CUDA, DL_FLOAT = 1, 2, 2

# The C declarations cffi needs. ABI mode spells DLPack's enum field as int32_t (its size on every
# target); API mode lets the compiler check the real header (`int...`: some integer type).
CDEF_TEMPLATE = """
typedef {device_type_decl} DLDeviceType;
typedef struct {{ DLDeviceType device_type; int32_t device_id; }} DLDevice;
typedef struct {{ uint8_t code; uint8_t bits; uint16_t lanes; }} DLDataType;
typedef struct {{
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
}} DLTensor;
{prototypes}
"""
# API mode compiles against the natives' own header (python_natives.h, beside this script).
CFFI_API_SOURCE = '#include "python_natives.h"\n'


def native_prototypes():
    """The natives' C prototypes, as python_natives.h declares them (cffi's cdef reads no headers)."""
    with open(os.path.join(HERE, "python_natives.h")) as header:
        return "\n".join(line.strip() for line in header
                         if line.strip().endswith(");") and line[:1].isalpha())


class Unavailable(Exception):
    """A path (or one of its rows) that cannot run here; the message says why."""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    env = os.environ.get
    parser.add_argument("--build-dir", default=env("FFIJIT_BUILD_DIR"),
                        help="CMake build directory: the defaults below are taken from it "
                             "(env FFIJIT_BUILD_DIR)")
    parser.add_argument("--natives-lib", default=env("FFIJIT_BENCH_NATIVES_LIB"),
                        help=f"path of {NATIVES_LIB} (default <build>/bench/python/{NATIVES_LIB}; "
                             "env FFIJIT_BENCH_NATIVES_LIB)")
    parser.add_argument("--module-lib", default=env("FFIJIT_BENCH_MODULE_LIB"),
                        help=f"path of the TVM FFI module {MODULE_LIB} (default beside the "
                             "natives library; env FFIJIT_BENCH_MODULE_LIB)")
    parser.add_argument("--handwritten-dir", default=env("FFIJIT_BENCH_HANDWRITTEN_DIR"),
                        help="directory holding the ffijit_bench_handwritten extension "
                             "(default <build>/bench/python; env FFIJIT_BENCH_HANDWRITTEN_DIR)")
    parser.add_argument("--ffijit-path", default=env("FFIJIT_PYTHONPATH"),
                        help="directory holding the ffijit package (default <build>/python; "
                             "env FFIJIT_PYTHONPATH)")
    parser.add_argument("--reps", type=int, default=15,
                        help="interleaved rounds; the median is reported (default 15)")
    parser.add_argument("--target-ms", type=float, default=10.0,
                        help="approximate duration of one measurement (default 10 ms)")
    parser.add_argument("--no-cffi-api", action="store_true",
                        help="skip compiling the cffi API-mode module")
    parser.add_argument("--callbacks-only", action="store_true",
                        help="time only the callback table (qsort comparators)")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers as JSON")
    parser.add_argument("--summary", metavar="FILE",
                        help="also write the targets' summary (the README's) as Markdown")
    parser.add_argument("--chart", metavar="FILE",
                        help="also write an SVG bar chart of the ratios to handwritten")
    args = parser.parse_args()
    if args.build_dir:
        bench_dir = os.path.join(args.build_dir, "bench", "python")
        args.natives_lib = args.natives_lib or os.path.join(bench_dir, NATIVES_LIB)
        args.handwritten_dir = args.handwritten_dir or bench_dir
        args.ffijit_path = args.ffijit_path or os.path.join(args.build_dir, "python")
    if not args.natives_lib:
        parser.error("give --build-dir or --natives-lib (the natives library is required)")
    args.natives_lib = os.path.abspath(args.natives_lib)
    if not os.path.exists(args.natives_lib):
        parser.error(f"{args.natives_lib} does not exist: build the ffijit_bench_python target")
    args.module_lib = os.path.abspath(args.module_lib or os.path.join(
        os.path.dirname(args.natives_lib), MODULE_LIB))
    if args.reps < 1 or args.target_ms <= 0:
        parser.error("--reps must be at least 1 and --target-ms positive")
    return args


class Fixture:
    """The argument values shared by every path, kept alive for the whole run."""

    def __init__(self, natives_lib):
        import numpy

        self.numpy = numpy
        self.natives = ctypes.CDLL(natives_lib)
        self.array = numpy.zeros((4, 8), dtype=numpy.float32)
        self.vector = numpy.arange(SUM_LENGTH, dtype=numpy.float64)
        self.pointee = ctypes.c_int(0)  # what the non-NULL void* argument points at
        self.pointer = ctypes.addressof(self.pointee)

    def address(self, symbol):
        return ctypes.cast(getattr(self.natives, symbol), ctypes.c_void_p).value


# ---- the paths: each returns {signature: (callable, args)}, or raises Unavailable ----

def import_handwritten(args):
    if not args.handwritten_dir:
        raise Unavailable("no --handwritten-dir / --build-dir given")
    sys.path.insert(0, os.path.abspath(args.handwritten_dir))
    try:
        return importlib.import_module("ffijit_bench_handwritten")
    except ImportError as error:
        raise Unavailable(f"cannot import ffijit_bench_handwritten: {error}") from None
    finally:
        sys.path.pop(0)


def handwritten_cases(fx, args):
    hw = import_handwritten(args)
    return {
        "no_args": (hw.no_args, ()),
        "i64_i64_i64": (hw.i64_i64_i64, (1, 2, 3)),
        "i64_f64_i32_f32_ptr": (hw.i64_f64_i32_f32_ptr, (1, 2.5, 3, 4.5, fx.pointer)),
        "i64_f64_i32_f32_null": (hw.i64_f64_i32_f32_ptr, (1, 2.5, 3, 4.5, None)),
        "dev_dtype_i64": (hw.dev_dtype_i64,
                          (hw.Device(DL_CUDA, 1), hw.DataType(DL_FLOAT, 32, 1), 7)),
        "tensor": (hw.tensor, (fx.array,)),
        "str": (hw.str, (STRING_ARG,)),
        SUM_ROW: (hw.sum_f64, (fx.vector,)),
    }


def import_ffijit(args):
    # Read by ffijit when it is imported: no Function gets its entry by being called.
    os.environ["FFIJIT_JIT"] = ENTRY_POLICY
    os.environ["FFIJIT_JIT_HOT"] = HOT_POLICY
    if args.ffijit_path:
        sys.path.insert(0, os.path.abspath(args.ffijit_path))
    try:
        return importlib.import_module("ffijit")
    except ImportError as error:
        raise Unavailable(f"cannot import ffijit: {error}") from None


def function_object(fn):
    """The ffijit.Function behind what Python calls (a builtin whose __self__ it is)."""
    return getattr(fn, "__self__", None) or fn


def ffijit_call_args(ffijit, fx, sig):
    return {
        "no_args": (),
        "i64_i64_i64": (1, 2, 3),
        "i64_f64_i32_f32_ptr": (1, 2.5, 3, 4.5, ctypes.c_void_p(fx.pointer)),
        "i64_f64_i32_f32_null": (1, 2.5, 3, 4.5, None),
        "dev_dtype_i64": (ffijit.Device("cuda", 1), ffijit.DataType("float32"), 7),
        "tensor": (fx.array,),
        "str": (STRING_ARG,),
        SUM_ROW: (fx.vector,),
    }[sig]


def ffijit_cases(fx, args, mode, entry_compile_us):
    """mode: "generic" (compile_now), "generated" (compile_now + compile_entry), "stencil" (the
    stencil thunk + use_entry("stencil")) or "interp"."""
    ffijit = import_ffijit(args)
    cases = {}
    for sig in SIGNATURES:
        try:
            address = fx.address(NATIVE_SYMBOLS[sig])
            fn = ffijit.function(address, FFIJIT_SIGNATURES[sig], interpret_only=mode == "interp")
            obj = function_object(fn)
            if mode in ("generic", "generated"):
                obj.compile_now()
            if mode == "generic":
                obj.use_entry("generic")  # else its first call would make its stencil entry
            if mode == "stencil":
                obj.use_entry("stencil")
                if obj.entry != "stencil":
                    raise RuntimeError(f"use_entry('stencil') returned but the entry is {obj.entry}")
                entry_compile_us.append((sig, obj.entry_compile_us, False))
            if mode == "generated":
                obj.compile_entry()
                if not obj.has_entry:
                    raise RuntimeError("compile_entry() returned but has_entry is False")
                seen = any(FFIJIT_SIGNATURES[s] == FFIJIT_SIGNATURES[sig]
                           for s, _, _ in entry_compile_us)
                entry_compile_us.append((sig, obj.entry_compile_us, seen))
                # Another Function of the same signature: its entry shares the code compiled
                # above; timed as every compile is.
                twin = function_object(ffijit.function(address, FFIJIT_SIGNATURES[sig]))
                twin.compile_entry()
                entry_compile_us.append((sig, twin.entry_compile_us, True))
            cases[sig] = (fn, ffijit_call_args(ffijit, fx, sig))
        except Exception as error:  # one broken row must not hide the others
            cases[sig] = f"{type(error).__name__}: {error}"
    return cases


def ffijit_module_cases(fx, args):
    ffijit = import_ffijit(args)
    if not os.path.exists(args.module_lib):
        raise Unavailable(f"{args.module_lib} does not exist: build the ffijit_bench_python target")
    try:
        module = ffijit.load_module(args.module_lib)
    except Exception as error:
        raise Unavailable(f"load_module failed: {type(error).__name__}: {error}") from None
    cases = {}
    for sig in SIGNATURES:
        try:
            cases[sig] = (getattr(module, MODULE_FUNCTIONS[sig]), ffijit_call_args(ffijit, fx, sig))
        except Exception as error:
            cases[sig] = f"{type(error).__name__}: {error}"
    return cases


def ctypes_cases(fx, args):
    lib = ctypes.CDLL(args.natives_lib)

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                    ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    def declare(name, restype, argtypes):
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
        return fn

    i64 = ctypes.c_int64
    no_args = declare("BenchNativeNoArgs", None, [])
    i64x3 = declare("BenchNativeI64x3", i64, [i64, i64, i64])
    mixed = declare("BenchNativeMixed", ctypes.c_double,
                    [i64, ctypes.c_double, ctypes.c_int32, ctypes.c_float, ctypes.c_void_p])
    dev_dtype = declare("BenchNativeDevDtype", i64, [DLDevice, DLDataType, i64])
    tensor_native = declare("BenchNativeTensor", i64, [ctypes.POINTER(DLTensor)])
    sum_native = declare("BenchNativeSumF64", ctypes.c_double, [ctypes.POINTER(DLTensor)])
    str_native = declare("BenchNativeStr", i64, [ctypes.c_char_p])

    float32 = fx.numpy.dtype(fx.numpy.float32)
    float64 = fx.numpy.dtype(fx.numpy.float64)
    cpu = DLDevice(DL_CPU, 0)
    f32 = DLDataType(DL_FLOAT, 32, 1)
    f64 = DLDataType(DL_FLOAT, 64, 1)
    shape1, shape2 = ctypes.c_int64 * 1, ctypes.c_int64 * 2
    byref = ctypes.byref

    # What a ctypes user writes: check the array, describe it in a DLTensor, pass its address.
    def tensor(array):
        if array.dtype != float32 or array.ndim != 2 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 2-D float32 array")
        t = DLTensor(array.ctypes.data, cpu, 2, f32, shape2(*array.shape), None, 0)
        return tensor_native(byref(t))

    def sum_f64(array):
        if array.dtype != float64 or array.ndim != 1 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 1-D float64 array")
        t = DLTensor(array.ctypes.data, cpu, 1, f64, shape1(*array.shape), None, 0)
        return sum_native(byref(t))

    def string(s):
        return str_native(s.encode())

    return {
        "no_args": (no_args, ()),
        "i64_i64_i64": (i64x3, (1, 2, 3)),
        "i64_f64_i32_f32_ptr": (mixed, (1, 2.5, 3, 4.5, fx.pointer)),
        "i64_f64_i32_f32_null": (mixed, (1, 2.5, 3, 4.5, None)),
        "dev_dtype_i64": (dev_dtype, (DLDevice(DL_CUDA, 1), DLDataType(DL_FLOAT, 32, 1), 7)),
        "tensor": (tensor, (fx.array,)),
        "str": (string, (STRING_ARG,)),
        SUM_ROW: (sum_f64, (fx.vector,)),
    }


def cffi_cases_from(ffi, lib, fx):
    float32 = fx.numpy.dtype(fx.numpy.float32)
    float64 = fx.numpy.dtype(fx.numpy.float64)
    tensor_native = lib.BenchNativeTensor
    sum_native = lib.BenchNativeSumF64
    str_native = lib.BenchNativeStr
    new = ffi.new
    from_buffer = ffi.from_buffer

    # What a cffi user writes: check the array, describe it in a DLTensor, pass its address (the
    # shape array stays referenced by a local until the native returns).
    def tensor(array):
        if array.dtype != float32 or array.ndim != 2 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 2-D float32 array")
        shape = new("int64_t[2]", array.shape)
        t = new("DLTensor*", {"data": from_buffer(array), "device": {"device_type": DL_CPU},
                              "ndim": 2, "dtype": {"code": DL_FLOAT, "bits": 32, "lanes": 1},
                              "shape": shape})
        return tensor_native(t)

    def sum_f64(array):
        if array.dtype != float64 or array.ndim != 1 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 1-D float64 array")
        shape = new("int64_t[1]", array.shape)
        t = new("DLTensor*", {"data": from_buffer(array), "device": {"device_type": DL_CPU},
                              "ndim": 1, "dtype": {"code": DL_FLOAT, "bits": 64, "lanes": 1},
                              "shape": shape})
        return sum_native(t)

    def string(s):
        return str_native(s.encode())

    device = ffi.new("DLDevice*", {"device_type": DL_CUDA, "device_id": 1})[0]
    dtype = ffi.new("DLDataType*", {"code": DL_FLOAT, "bits": 32, "lanes": 1})[0]
    return {
        "no_args": (lib.BenchNativeNoArgs, ()),
        "i64_i64_i64": (lib.BenchNativeI64x3, (1, 2, 3)),
        "i64_f64_i32_f32_ptr": (lib.BenchNativeMixed,
                                (1, 2.5, 3, 4.5, ffi.cast("void*", fx.pointer))),
        "i64_f64_i32_f32_null": (lib.BenchNativeMixed, (1, 2.5, 3, 4.5, ffi.NULL)),
        "dev_dtype_i64": (lib.BenchNativeDevDtype, (device, dtype, 7)),
        "tensor": (tensor, (fx.array,)),
        "str": (string, (STRING_ARG,)),
        SUM_ROW: (sum_f64, (fx.vector,)),
    }


def cffi_abi_cases(fx, args):
    try:
        import cffi
    except ImportError as error:
        raise Unavailable(f"cannot import cffi: {error}") from None
    ffi = cffi.FFI()
    ffi.cdef(CDEF_TEMPLATE.format(device_type_decl="int32_t", prototypes=native_prototypes()))
    lib = ffi.dlopen(args.natives_lib)
    return cffi_cases_from(ffi, lib, fx)


def cffi_api_cases(fx, args, workdir):
    if args.no_cffi_api:
        raise Unavailable("--no-cffi-api")
    try:
        import cffi
    except ImportError as error:
        raise Unavailable(f"cannot import cffi: {error}") from None
    libdir = os.path.dirname(args.natives_lib)
    libname = os.path.basename(args.natives_lib)
    if not (libname.startswith("lib") and libname.endswith(".so")):
        raise Unavailable(f"cannot link {libname}: not named lib<name>.so")
    ffi = cffi.FFI()
    ffi.cdef(CDEF_TEMPLATE.format(device_type_decl="int...", prototypes=native_prototypes()))
    module_name = "_ffijit_bench_cffi_api"
    ffi.set_source(module_name, CFFI_API_SOURCE, include_dirs=[HERE], libraries=[libname[3:-3]],
                   library_dirs=[libdir], runtime_library_dirs=[libdir],
                   extra_compile_args=["-O2"])
    try:
        # The compiler's output goes to a log: a failure is reported in one line.
        log_path = os.path.join(workdir, "build.log")
        with open(log_path, "w") as log:
            saved_out, saved_err = os.dup(1), os.dup(2)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                built = ffi.compile(tmpdir=workdir, verbose=False)
            finally:
                os.dup2(saved_out, 1)
                os.dup2(saved_err, 2)
                os.close(saved_out)
                os.close(saved_err)
    except Exception as error:
        raise Unavailable(f"compiling the API-mode module failed ({type(error).__name__}: "
                          f"{str(error).splitlines()[0] if str(error) else ''})") from None
    spec = importlib.util.spec_from_file_location(module_name, built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cffi_cases_from(module.ffi, module.lib, fx)


# ---- callbacks: a Python comparator called by libc's qsort ----

CALLBACK_LENGTH = 1000  # int32 elements sorted per qsort call
# The comparators (rows): `deref` reads both ints through its pointer arguments, as a real
# comparator must; `ignore` returns 0 without touching them (the bare cost of a callback call).
CALLBACK_ROWS = ["qsort_deref", "qsort_ignore"]
CALLBACK_PATHS = ["ffijit", "ffijit ctypes-read", "ctypes", "cffi"]
QSORT_SIG = '{"a":["ptr","u64","u64","ptr"],"r":[],"v":1}'
COMPARE_SIG = '{"a":["ptr","ptr"],"r":["i32"],"v":1}'


class QsortCase:
    """One path's qsort of the same int32 data with one comparator. sort() restores the data from
    a pristine copy and sorts it once; `calls` is how many comparator calls one sort makes
    (counted by the path's own comparator on a first sort: the data and the comparator's answers
    are the same for every path, so is the count)."""

    def __init__(self, sort, array, pristine):
        self._sort, self.array, self.pristine = sort, array, pristine
        self.calls = 0

    def sort(self):
        ctypes.memmove(self.array, self.pristine, ctypes.sizeof(self.array))
        self._sort()


def callback_data():
    """CALLBACK_LENGTH int32 values in a fixed pseudo-random order (the same for every path)."""
    values, state = [], 12345
    for _ in range(CALLBACK_LENGTH):
        state = (state * 1103515245 + 12345) % (1 << 31)
        values.append(state % 100000 - 50000)
    return values


def make_qsort_case(sort_with, compare_for, row, values):
    """sort_with(comparator, array) -> a function sorting `array` once; compare_for(read, count)
    -> the path's comparator object (count: a function called once per comparator call, or None).
    """
    array_type = ctypes.c_int32 * len(values)
    pristine, array = array_type(*values), array_type()
    counter = [0]

    def count():
        counter[0] += 1

    counting = compare_for(row, count)
    QsortCase(sort_with(counting, array), array, pristine).sort()
    if row == "qsort_deref" and list(array) != sorted(values):
        raise RuntimeError("the comparator did not sort the array")
    comparator = compare_for(row, None)
    case = QsortCase(sort_with(comparator, array), array, pristine)
    case.calls = counter[0]
    case.comparator = comparator  # its code lives as long as the object: kept with the case
    return case


def compare_body(row, count, read):
    """The comparator every path runs, given how the path reads an int through an argument."""
    if row == "qsort_ignore":
        if count is None:
            return lambda a, b: 0

        def ignore(a, b):
            count()
            return 0
        return ignore
    if count is None:
        def compare(a, b):
            x, y = read(a), read(b)
            return (x > y) - (x < y)
        return compare

    def counted(a, b):
        count()
        x, y = read(a), read(b)
        return (x > y) - (x < y)
    return counted


def ffijit_callback_cases(ffijit, values, ctypes_read=False):
    """The comparator made with ffijit.callback, handed to qsort registered with ffijit (what the
    guide's example does: the one qsort call per sort is noise next to ~9,000 comparator calls).
    A ptr argument reaches Python as an int (as ctypes gives a c_void_p argument), read with
    ffijit.load(p, int32) (ctypes_read: with ctypes.c_int32.from_address(p).value, the `qsort_deref`
    row only). A build whose callbacks still pass ctypes.c_void_p objects, or that has no
    ffijit.load, is detected and read through .value and from_address, so the benchmark can time
    the code before the change."""
    qsort = ffijit.function(("libc.so.6", "qsort"), QSORT_SIG)
    function_object(qsort).compile_now()
    seen = []
    probe = ffijit.callback(lambda a, b: seen.append(type(a)) or 0, COMPARE_SIG)
    ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(probe.address)(8, 8)
    from_address = ctypes.c_int32.from_address
    load, int32 = getattr(ffijit, "load", None), ffijit.DataType("int32")
    if not (seen and seen[0] is int):
        def read(p):
            return from_address(p.value).value
    elif ctypes_read or load is None:
        def read(p):
            return from_address(p).value
    else:
        def read(p):
            return load(p, int32)

    def compare_for(row, count):
        return ffijit.callback(compare_body(row, count, read), COMPARE_SIG)

    def sort_with(compare, array):
        base, pointer = ctypes.c_void_p(ctypes.addressof(array)), ctypes.c_void_p(compare.address)
        return lambda: qsort(base, len(array), 4, pointer)

    rows = ["qsort_deref"] if ctypes_read else CALLBACK_ROWS
    return {row: make_qsort_case(sort_with, compare_for, row, values) for row in rows}


def ctypes_callback_cases(values):
    """ctypes' documented qsort idiom: CFUNCTYPE(c_int, POINTER(c_int), POINTER(c_int)), a[0]."""
    libc = ctypes.CDLL("libc.so.6")
    qsort = libc.qsort
    qsort.restype = None
    pointer = ctypes.POINTER(ctypes.c_int32)
    compare_type = ctypes.CFUNCTYPE(ctypes.c_int32, pointer, pointer)
    qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, compare_type]

    def compare_for(row, count):
        return compare_type(compare_body(row, count, lambda p: p[0]))

    def sort_with(compare, array):
        return lambda: qsort(array, len(array), 4, compare)

    return {row: make_qsort_case(sort_with, compare_for, row, values) for row in CALLBACK_ROWS}


def cffi_callback_cases(values):
    """cffi ABI mode: qsort declared with an `int (*)(int32_t*, int32_t*)` comparator, so the
    callback's arguments are typed cdata pointers read as a[0] (the cheapest cffi idiom; a
    `const void*` comparator would add an ffi.cast per argument)."""
    try:
        import cffi
    except ImportError as error:
        raise Unavailable(f"cannot import cffi: {error}") from None
    ffi = cffi.FFI()
    ffi.cdef("void qsort(void* base, size_t count, size_t size, "
             "int (*compare)(int32_t*, int32_t*));")
    libc = ffi.dlopen("libc.so.6")

    def compare_for(row, count):
        return ffi.callback("int(int32_t*, int32_t*)", compare_body(row, count, lambda p: p[0]))

    def sort_with(compare, array):
        base = ffi.cast("void*", ctypes.addressof(array))
        return lambda: libc.qsort(base, len(array), 4, compare)

    return {row: make_qsort_case(sort_with, compare_for, row, values) for row in CALLBACK_ROWS}


def qsort_sampler(case, target_ms):
    """ns per comparator call of one measurement: enough sorts for about target_ms."""
    start = time.perf_counter_ns()
    case.sort()
    once = max(time.perf_counter_ns() - start, 1)
    sorts = max(1, int(target_ms * 1e6 / once))

    def sample():
        begin = time.perf_counter_ns()
        for _ in repeat(None, sorts):
            case.sort()
        return (time.perf_counter_ns() - begin) / (sorts * case.calls)
    return sample


def callback_samplers(args, notes):
    """[((path, row), sampler)] for the callback table, grouped by row."""
    values = callback_data()
    table = {}
    builders = {"ffijit": lambda: ffijit_callback_cases(import_ffijit(args), values),
                "ffijit ctypes-read": lambda: ffijit_callback_cases(import_ffijit(args), values,
                                                                    ctypes_read=True),
                "ctypes": lambda: ctypes_callback_cases(values),
                "cffi": lambda: cffi_callback_cases(values)}
    for path in CALLBACK_PATHS:
        try:
            table[path] = builders[path]()
        except Exception as error:  # Unavailable, or a path that fails its check
            notes.append(f"callbacks / {path}: unavailable: {type(error).__name__}: {error}")
    calls = {(p, r): c.calls for p, rows in table.items() for r, c in rows.items()}
    for row in CALLBACK_ROWS:
        counts = {c for (p, r), c in calls.items() if r == row}
        if len(counts) > 1:
            notes.append(f"callbacks / {row}: the paths counted different numbers of comparator "
                         f"calls per sort: {calls}")
    return [(("cb " + path, row), qsort_sampler(table[path][row], args.target_ms))
            for row in CALLBACK_ROWS for path in CALLBACK_PATHS
            if row in table.get(path, {})], calls


# ---- timing ----

def make_loop(arity):
    """A loop calling f with `arity` local arguments, n times: the same code for every path."""
    names = ", ".join(f"a{i}" for i in range(arity))
    params = f"n, f, {names}" if arity else "n, f"
    source = (f"def loop({params}):\n"
              f"    for _ in repeat(None, n):\n"
              f"        f({names})\n")
    namespace = {"repeat": repeat}
    exec(source, namespace)
    return namespace["loop"]


def empty_loop(n):
    for _ in repeat(None, n):
        pass


def time_once(loop, fn, call_args, n):
    start = time.perf_counter_ns()
    loop(n, fn, *call_args)
    return (time.perf_counter_ns() - start) / n


def same_result(got, expected):
    if isinstance(expected, float):
        return isinstance(got, float) and abs(got - expected) < 1e-9
    return got == expected and type(got) is type(expected)


def call_sampler(fn, call_args, target_ms):
    """A function timing one measurement of fn(*call_args) (ns per call), calibrated first."""
    loop = make_loop(len(call_args))
    n = 1000
    while True:  # calibrate: about target_ms per measurement
        per_call = time_once(loop, fn, call_args, n)
        if per_call * n >= 1e6 or n >= 1 << 24:
            break
        n *= 4
    n = max(1000, int(target_ms * 1e6 / per_call))
    return lambda: time_once(loop, fn, call_args, n)


def native_sampler(native_ns, array, target_ms):
    """The native alone: native_ns(array, n) calls it n times from C and returns ns per call."""
    per_call = native_ns(array, 1000)
    n = max(100, int(target_ms * 1e6 / max(per_call, 1.0)))
    return lambda: native_ns(array, n)


def measure(samplers, reps):
    """samplers: [(key, sample)] -> {key: [ns per call of each round]}, rounds interleaved.

    The cells of one signature are timed back to back (the samplers come grouped by signature), so
    a ratio compares measurements taken within a fraction of a second of each other: on a shared
    machine, other tenants change the speed of everything from one second to the next."""
    samples = {key: [] for key, _ in samplers}
    for round_index in range(reps):
        shift = round_index % len(samplers)
        for key, sample in samplers[shift:] + samplers[:shift]:
            samples[key].append(sample())
    return samples


def round_overhead_ratios(samples):
    """{path: median over rounds of (path - native alone) / (handwritten - native alone)} for the
    numpy row: the native is timed next to the row's cells in every round."""
    native = samples.get(("native alone", SUM_ROW))
    base = samples.get(("handwritten", SUM_ROW))
    if not native or not base:
        return {}
    ratios = {}
    for (path, sig), values in samples.items():
        if sig != SUM_ROW or path == "native alone" or len(values) != len(base):
            continue
        per_round = [(v - n) / (b - n) for v, b, n in zip(values, base, native) if b > n]
        if per_round:
            ratios[path] = statistics.median(per_round)
    return ratios


def round_ratios(samples):
    """{(path, sig): median over rounds of that round's time / the same round's handwritten time}."""
    ratios = {}
    for (path, sig), values in samples.items():
        base = samples.get(("handwritten", sig))
        if base and len(base) == len(values):
            ratios[(path, sig)] = statistics.median(v / b for v, b in zip(values, base) if b > 0)
    return ratios


def main():
    args = parse_args()
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        print(f"warning: running under {sys.executable}, not {DEBIAN_PYTHON}: the extensions are "
              f"built for Debian's interpreter", file=sys.stderr)
    fx = Fixture(args.natives_lib)
    notes = []
    table = {}  # path -> {signature: (fn, args) | error string}
    entry_compile_us = []  # (signature, µs) of the generated column, in compile order
    stencil_entry_us = []  # (signature, µs) of the stencil column
    callback_calls = {}
    callback_samples = {}
    samples, loop_samples = {}, []
    with tempfile.TemporaryDirectory(prefix="ffijit_bench_cffi_") as workdir:
        if args.callbacks_only:
            PATHS[:] = []  # the call table's paths are not built, so not timed
        builders = {
            "handwritten": lambda: handwritten_cases(fx, args),
            "ffijit generic": lambda: ffijit_cases(fx, args, "generic", None),
            "ffijit generated": lambda: ffijit_cases(fx, args, "generated", entry_compile_us),
            "ffijit stencil": lambda: ffijit_cases(fx, args, "stencil", stencil_entry_us),
            "ffijit module fn": lambda: ffijit_module_cases(fx, args),
            "ffijit interp": lambda: ffijit_cases(fx, args, "interp", None),
            "ctypes": lambda: ctypes_cases(fx, args),
            "cffi abi": lambda: cffi_abi_cases(fx, args),
            "cffi api": lambda: cffi_api_cases(fx, args, workdir),
        }
        for path in PATHS:
            try:
                table[path] = builders[path]()
            except Unavailable as reason:
                notes.append(f"{path}: unavailable: {reason}")

        # Every case must return the right answer before it is timed.
        cases = []
        for path, rows in table.items():
            for sig in SIGNATURES:
                case = rows.get(sig)
                if isinstance(case, str) or case is None:
                    notes.append(f"{path} / {sig}: {case or 'not provided'}")
                    continue
                fn, call_args = case
                try:
                    got = fn(*call_args)
                except Exception as error:
                    notes.append(f"{path} / {sig}: call failed: {type(error).__name__}: {error}")
                    continue
                if not same_result(got, EXPECTED[sig]):
                    notes.append(f"{path} / {sig}: returned {got!r}, expected "
                                 f"{EXPECTED[sig]!r}; not timed")
                    continue
                cases.append(((path, sig), fn, call_args))

        gc.collect()
        gc.disable()
        try:
            by_signature = sorted(cases, key=lambda case: SIGNATURES.index(case[0][1]))
            samplers = [(key, call_sampler(fn, call_args, args.target_ms))
                        for key, fn, call_args in by_signature]
            if ("handwritten", SUM_ROW) in dict(samplers):
                hw = import_handwritten(args)
                samplers.append((("native alone", SUM_ROW),
                                 native_sampler(hw.sum_f64_native_ns, fx.vector, args.target_ms)))
            samples = measure(samplers, args.reps) if samplers else {}
            # The callback table: its own rounds (its ratios are to cffi, timed next to it).
            callback_list, callback_calls = callback_samplers(args, notes)
            callback_samples = measure(callback_list, args.reps)
            for _ in range(args.reps):
                start = time.perf_counter_ns()
                empty_loop(1 << 20)
                loop_samples.append((time.perf_counter_ns() - start) / (1 << 20))
        finally:
            gc.enable()

    import_ms = import_times_ms(args)
    notes.extend(check_entries(cases))
    medians = {key: statistics.median(values) for key, values in samples.items()}
    paths = [p for p in PATHS if any((p, s) in medians for s in SIGNATURES)]
    loop_ns = statistics.median(loop_samples)
    report = Report(args, medians, round_ratios(samples), round_overhead_ratios(samples), paths,
                    loop_ns, notes, entry_compile_us, stencil_entry_us,
                    CallbackReport(callback_samples, callback_calls), import_ms)
    report.print()
    if args.markdown:
        report.write_markdown(args.markdown)
    if args.json:
        report.write_json(args.json)
    if args.summary:
        report.write_summary(args.summary)
    if args.chart:
        report.write_chart(args.chart)


IMPORT_RUNS = 21
IMPORT_PROBE = "import time; t = time.perf_counter(); import {}; print(time.perf_counter() - t)"


def import_times_ms(args):
    """Median ms of `import ffijit` and of `import ctypes`, each in IMPORT_RUNS fresh processes
    (interleaved; perf_counter around the import), or None for one that cannot be imported."""
    env = dict(os.environ)
    if args.ffijit_path:
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(args.ffijit_path)] + env.get("PYTHONPATH", "").split(os.pathsep))
    times = {"ffijit": [], "ctypes": []}
    for _ in range(IMPORT_RUNS):
        for module in times:
            done = subprocess.run([sys.executable, "-c", IMPORT_PROBE.format(module)], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0 or times[module] is None:
                times[module] = None
                continue
            times[module].append(float(done.stdout) * 1e3)
    return {m: statistics.median(xs) if xs else None for m, xs in times.items()}


def check_entries(cases):
    """After timing: every ffijit column's functions still run the entry its title says."""
    problems = []
    for (path, sig), fn, _ in cases:
        if path not in ENTRY_OF_PATH:
            continue
        entry = getattr(function_object(fn), "entry", None)
        if entry != ENTRY_OF_PATH[path]:
            problems.append(f"{path} / {sig}: the entry is {entry} after the run: this "
                            f"column's number is not what its title says")
    return problems


# ---- the report ----

class Report:
    def __init__(self, args, medians, round_ratios, overhead_ratios, paths, loop_ns, notes,
                 entry_compile_us, stencil_entry_us, callbacks, import_ms):
        self.callbacks = callbacks
        self.args = args
        self.medians = medians
        self.round_ratios = round_ratios
        self.overhead_ratios = overhead_ratios
        self.paths = paths
        self.loop_ns = loop_ns
        self.notes = notes
        self.entry_compile_us = entry_compile_us
        self.stencil_entry_us = stencil_entry_us
        self.import_ms = import_ms
        self.header = (f"Python call paths, ns/call (median of {args.reps} interleaved rounds; "
                       f"ratio: median of the rounds' ratios to handwritten); Python {platform.python_version()} at "
                       f"{sys.executable}, {platform.machine()}")
        self.titles = ["signature"] + paths
        self.rows = [[sig] + [self.cell(p, sig) for p in paths] for sig in SIGNATURES]
        self.native_ns = medians.get(("native alone", SUM_ROW))
        self.overheads = {}  # path -> ns above the native alone
        if self.native_ns is not None:
            for p in paths:
                if (p, SUM_ROW) in medians:
                    self.overheads[p] = medians[(p, SUM_ROW)] - self.native_ns
        self.lines = self.summary_lines()

    def ratio(self, path, sig):
        """The median of the rounds' ratios (each against handwritten timed next to it)."""
        return self.round_ratios.get((path, sig))

    def cell(self, path, sig):
        ns = self.medians.get((path, sig))
        if ns is None:
            return "—"
        ratio = self.ratio(path, sig)
        return f"{ns:.1f} ({ratio:.2f}x)" if ratio is not None else f"{ns:.1f}"

    def overhead_ratio(self, path):
        """The median of the rounds' overhead ratios (round_overhead_ratios)."""
        return self.overhead_ratios.get(path)

    def summary_lines(self):
        lines = []
        if self.native_ns is not None:
            parts = []
            for p, value in self.overheads.items():
                ratio = self.overhead_ratio(p)
                parts.append(f"{p} {value:.1f}" + (f" ({ratio:.2f}x)" if ratio is not None else ""))
            lines.append(f"`{SUM_ROW}` overhead above the native alone ({self.native_ns:.1f} ns per "
                         f"call, measured from C), ns (ratio to handwritten's): "
                         + ", ".join(parts))
            generated = self.overhead_ratio("ffijit generated")
            if generated is not None:
                verdict = "met" if generated <= 1.5 else "NOT met"
                lines.append(f"target, ffijit generated overhead <= 1.5x handwritten's: "
                             f"{generated:.2f}x, {verdict}")
        elif any((p, SUM_ROW) in self.medians for p in self.paths):
            lines.append(f"`{SUM_ROW}`: the native alone was not measured (needs handwritten)")
        if self.entry_compile_us:
            first_sig, first_us, _ = self.entry_compile_us[0]
            fresh = [us for _, us, seen in self.entry_compile_us[1:] if not seen]
            shared = [us for _, us, seen in self.entry_compile_us if seen]
            if fresh:
                lines.append(f"generated entries, the first of a signature (compiled): median "
                             f"{statistics.median(fresh):.0f} µs over {len(fresh)} signatures "
                             f"(min {min(fresh):.0f}, max {max(fresh):.0f}); the process's "
                             f"first, `{first_sig}`, took {first_us:.0f} µs and is left out (a "
                             f"process's first compile can pay one-time JIT setup)")
            if shared:
                lines.append(f"generated entries of a signature already compiled (the code is "
                             f"shared): median {statistics.median(shared):.1f} µs over "
                             f"{len(shared)} functions (max {max(shared):.1f})")
        if self.stencil_entry_us:
            made = [us for _, us, _ in self.stencil_entry_us]
            lines.append(f"stencil entries (ffijit stencil), each made for its function: median "
                         f"{statistics.median(made):.1f} µs over {len(made)} signatures (min "
                         f"{min(made):.1f}, max {max(made):.1f})")
        if self.import_ms.get("ffijit") is not None:
            ffijit_ms, ctypes_ms = self.import_ms["ffijit"], self.import_ms.get("ctypes")
            verdict = "met" if ffijit_ms <= 20 else "NOT met"
            lines.append(f"`import ffijit`: median {ffijit_ms:.1f} ms over {IMPORT_RUNS} fresh "
                         f"processes (perf_counter around the import)"
                         + (f"; `import ctypes` {ctypes_ms:.1f} ms" if ctypes_ms is not None
                            else "")
                         + f"; target <= 20 ms: {verdict}")
        lines.append(f"loop only (`for _ in repeat(None, n): pass`): {self.loop_ns:.1f} ns per "
                     f"iteration, included in every number above")
        lines.append(f"FFIJIT_JIT={ENTRY_POLICY} FFIJIT_JIT_HOT={HOT_POLICY} for the run: only "
                     "compile_entry() and use_entry() made entries (ffijit generated, ffijit "
                     "stencil); ffijit generic and interp run the generic entry; generic and "
                     "generated's functions run their cold LLVM thunks, ffijit stencil's its "
                     "stencil thunk.")
        lines.append(WRAPPER_NOTE)
        return lines

    def print(self):
        if self.paths:
            print_table(self.header, self.titles, self.rows)
            for line in self.lines:
                print(line.replace("`", ""))
        if self.callbacks.rows:
            print()
            print_table(self.callbacks.header, self.callbacks.titles, self.callbacks.rows)
            for line in self.callbacks.lines:
                print(line.replace("`", ""))
        for note in self.notes:
            print("note:", note)

    def write_markdown(self, path):
        with open(path, "w") as out:
            if self.paths:
                write_markdown_table(out, self.header, self.titles, self.rows, self.lines)
            if self.callbacks.rows:
                out.write("\n" if self.paths else "")
                write_markdown_table(out, self.callbacks.header, self.callbacks.titles,
                                     self.callbacks.rows, self.callbacks.lines)
            for note in self.notes:
                out.write(f"\n- {note}")
            out.write("\n")

    def ratio_range(self, path):
        """The smallest and largest ratio to handwritten of a path over the signatures."""
        ratios = [r for r in (self.ratio(path, sig) for sig in SIGNATURES) if r is not None]
        return (min(ratios), max(ratios)) if ratios else None

    def write_summary(self, path):
        """Each target of the Python paths against what this run measured, one row each."""
        rows = []
        for name, target in [("ffijit generated", 1.1), ("ffijit stencil", 1.2),
                             ("ffijit generic", 2.0)]:
            span = self.ratio_range(name)
            if span:
                rows.append((f"{name} / handwritten, every signature",
                             f"{span[0]:.2f}–{span[1]:.2f}×", f"≤ {target}×",
                             span[1] <= target))
        generated = self.overhead_ratio("ffijit generated")
        if generated is not None:
            rows.append((f"`{SUM_ROW}`: generated's overhead above the native / handwritten's",
                         f"{generated:.2f}×", "≤ 1.5×", generated <= 1.5))
        fresh = [us for _, us, seen in self.entry_compile_us[1:] if not seen]
        shared = [us for _, us, seen in self.entry_compile_us if seen]
        if fresh:
            first = statistics.median(fresh)
            rows.append(("a signature's first LLVM entry (compile)", f"{first:.0f} µs",
                         "≤ 1 ms", first <= 1000))
        if shared:
            later = statistics.median(shared)
            rows.append(("a later LLVM entry of the same signature", f"{later:.1f} µs", "≤ 1 ms",
                         later <= 1000))
        if self.stencil_entry_us:
            made = statistics.median(us for _, us, _ in self.stencil_entry_us)
            rows.append(("a signature's first stencil entry (made)", f"{made:.1f} µs", "≤ 50 µs",
                         made <= 50))
        deref = self.callbacks.ratio("ffijit", "qsort_deref")
        if deref is not None:
            rows.append(("a Python callback call / cffi's (qsort comparator, both pointers read)",
                         f"{deref:.2f}×", "≤ 1.0×", deref <= 1.0))
        with open(path, "w") as out:
            out.write(f"Python {platform.python_version()}, {platform.machine()}: medians of "
                      f"{self.args.reps} interleaved rounds.\n\n")
            out.write("| Python path | measured | target | met |\n|---|---:|---:|:---:|\n")
            for what, measured, target, met in rows:
                out.write(f"| {what} | {measured} | {target} | {'yes' if met else 'no'} |\n")

    def write_json(self, path):
        with open(path, "w") as out:
            json.dump({"python": sys.version, "machine": platform.machine(),
                       "reps": self.args.reps, "loop_ns": self.loop_ns,
                       "ns_per_call": {p: {s: self.medians[(p, s)] for s in SIGNATURES
                                           if (p, s) in self.medians} for p in self.paths},
                       "native_alone_ns": {SUM_ROW: self.native_ns},
                       "overhead_above_native_ns": {SUM_ROW: self.overheads},
                       "entry_compile_us": [
                           {"signature": sig, "us": us, "shared": seen}
                           for sig, us, seen in self.entry_compile_us],
                       "stencil_entry_us": [
                           {"signature": sig, "us": us} for sig, us, _ in self.stencil_entry_us],
                       "callback_ns_per_call": {
                           p: {r: self.callbacks.medians[(p, r)] for r in CALLBACK_ROWS
                               if (p, r) in self.callbacks.medians} for p in CALLBACK_PATHS},
                       "callback_calls_per_sort": {
                           f"{p} / {r}": c for (p, r), c in self.callbacks.calls.items()},
                       "notes": self.notes}, out, indent=2)
            out.write("\n")

    def write_chart(self, path):
        groups = [(sig, {p: self.ratio(p, sig) for p in self.paths if p != "handwritten"})
                  for sig in SIGNATURES]
        if self.overheads:
            groups.append((f"{SUM_ROW}: overhead above the native",
                           {p: self.overhead_ratio(p) for p in self.paths if p != "handwritten"}))
        title = ("Python → native calls: time per call relative to the hand-written extension "
                 "(log scale, lower is better)")
        subtitle = (f"median of {self.args.reps} interleaved rounds; Python "
                    f"{platform.python_version()}, {platform.machine()}")
        svg = ratio_chart_svg(groups, [p for p in self.paths if p != "handwritten"], title,
                              subtitle)
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "w") as out:
            out.write(svg)


def print_table(header, titles, rows):
    widths = [max(len(str(r[i])) for r in rows + [titles]) for i in range(len(titles))]
    print(header)
    print("  ".join(t.ljust(w) for t, w in zip(titles, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def write_markdown_table(out, header, titles, rows, lines):
    out.write(header + "\n\n")
    out.write("| " + " | ".join(titles) + " |\n")
    out.write("|" + "|".join(["---"] + ["---:"] * (len(titles) - 1)) + "|\n")
    for row in rows:
        out.write("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i]
                                     for i in range(len(row))) + " |\n")
    out.write("\n" + "\n\n".join(lines) + "\n")


class CallbackReport:
    """The callback table: ns per comparator call, and each path's ratio to cffi (the median over
    rounds of that round's ratio)."""

    def __init__(self, samples, calls):
        self.calls = calls
        self.medians = {}
        self.ratios = {}
        for (path, row), values in samples.items():
            path = path[len("cb "):]
            self.medians[(path, row)] = statistics.median(values)
            base = samples.get(("cb cffi", row))
            if base and len(base) == len(values):
                self.ratios[(path, row)] = statistics.median(
                    v / b for v, b in zip(values, base) if b > 0)
        paths = [p for p in CALLBACK_PATHS if any((p, r) in self.medians for r in CALLBACK_ROWS)]
        self.header = (f"Python callbacks: ns per call of a Python qsort comparator called by "
                       f"libc's qsort ({CALLBACK_LENGTH} int32 values per sort; median of the "
                       f"interleaved rounds; ratio: median of the rounds' ratios to cffi)")
        self.titles = ["comparator"] + paths
        self.rows = [] if not paths else [
            [row] + [self.cell(p, row) for p in paths] for row in CALLBACK_ROWS]
        counts = sorted({c for c in calls.values()})
        self.lines = [
            "`qsort_deref` reads the ints behind both pointer arguments and compares them; "
            "`qsort_ignore` returns 0 and touches nothing. ffijit: `ffijit.callback` handed to "
            "qsort registered with `ffijit.function`, pointer arguments as ints read with "
            "`ffijit.load(p, int32)` (ffijit ctypes-read: with "
            "`ctypes.c_int32.from_address(p).value`); ctypes: `CFUNCTYPE(c_int, POINTER(c_int), "
            "POINTER(c_int))`, read as `p[0]`; cffi (ABI mode): `ffi.callback(\"int(int32_t*, "
            "int32_t*)\")`, read as `p[0]`. The time includes the qsort call and restoring "
            "the data, divided among the comparator calls of a sort "
            f"({', '.join(str(c) for c in counts)})."]

    def ratio(self, path, row):
        return self.ratios.get((path, row))

    def cell(self, path, row):
        ns = self.medians.get((path, row))
        if ns is None:
            return "—"
        ratio = self.ratio(path, row)
        return f"{ns:.1f} ({ratio:.2f}x)" if ratio is not None else f"{ns:.1f}"


# Colors for the non-handwritten paths, in PATHS order (ffijit blues/greens, the others warm).
CHART_COLORS = ["#6baed6", "#08519c", "#41ab5d", "#74c476", "#9e9ac8", "#fd8d3c", "#e6550d",
                "#a63603"]


def ratio_chart_svg(groups, paths, title, subtitle):
    """Grouped horizontal bars of ratios (log scale, 1 = handwritten): groups = [(label, {path:
    ratio or None})]. Missing or non-positive ratios leave the bar out."""
    values = [r for _, ratios in groups for r in ratios.values() if r is not None and r > 0]
    lo = min([0.5] + [2 ** math.floor(math.log2(v)) for v in values])
    hi = max([2.0] + [2 ** math.ceil(math.log2(v)) for v in values])
    label_w, plot_w, value_w = 250, 560, 60
    bar_h, bar_gap, group_gap = 11, 2, 16
    top, legend_h = 62, 20 * ((len(paths) + 3) // 4) + 10
    width = label_w + plot_w + value_w + 20

    def x_of(ratio):
        return label_w + plot_w * (math.log(ratio) - math.log(lo)) / (math.log(hi) - math.log(lo))

    group_h = len(paths) * (bar_h + bar_gap) + group_gap
    plot_h = len(groups) * group_h
    height = top + plot_h + 30 + legend_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
           f'<text x="10" y="38" fill="#555">{escape(subtitle)}</text>']
    # Grid: powers of two, the 1x line (handwritten) in black.
    tick = lo
    while tick <= hi * 1.0001:
        x = x_of(tick)
        color, stroke = ("#000", 1.5) if abs(tick - 1) < 1e-9 else ("#ddd", 1)
        out.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{top + plot_h}" '
                   f'stroke="{color}" stroke-width="{stroke}"/>')
        text = f"{tick:g}x" + (" handwritten" if abs(tick - 1) < 1e-9 else "")
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
                   f'fill="#333">{escape(text)}</text>')
        tick *= 2
    for index, (label, ratios) in enumerate(groups):
        y0 = top + index * group_h
        out.append(f'<text x="{label_w - 8}" y="{y0 + (group_h - group_gap) / 2 + 4:.1f}" '
                   f'text-anchor="end">{escape(label)}</text>')
        for bar, path in enumerate(paths):
            ratio = ratios.get(path)
            y = y0 + bar * (bar_h + bar_gap)
            if ratio is None or ratio <= 0:
                continue
            x_end = x_of(ratio)
            color = CHART_COLORS[bar % len(CHART_COLORS)]
            out.append(f'<rect x="{label_w}" y="{y}" width="{max(x_end - label_w, 1):.1f}" '
                       f'height="{bar_h}" fill="{color}"><title>{escape(path)}: '
                       f'{ratio:.2f}x</title></rect>')
            out.append(f'<text x="{x_end + 4:.1f}" y="{y + bar_h - 2}" font-size="9" '
                       f'fill="#333">{ratio:.2f}x</text>')
    legend_y = top + plot_h + 34
    for index, path in enumerate(paths):
        x = 10 + (index % 4) * 210
        y = legend_y + (index // 4) * 20
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" '
                   f'fill="{CHART_COLORS[index % len(CHART_COLORS)]}"/>')
        out.append(f'<text x="{x + 18}" y="{y + 10}">{escape(path)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
