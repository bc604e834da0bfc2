#!/usr/bin/python3
"""Times Python -> native calls of the benchmark natives through every Python call path.

The paths (columns): the hand-written CPython extension `ffijit_bench_handwritten` (the
yardstick), ffijit (after compile_now: the JIT thunk), ffijit's interpreter (interpret_only=True),
ctypes, cffi in ABI mode and cffi in API mode (compiled at run time into a temporary directory,
skipped with the reason printed when that fails). The signatures (rows) are the five natives of
bench/call_natives.c plus a no-argument floor; every path calls the same code in
libffijit_bench_natives.so.

Method: one process, all cases timed in interleaved rounds (every round times every case once, in
a rotated order), the median of the rounds reported as nanoseconds per call. Each measurement is a
tight loop `for _ in repeat(None, n): f(a, b, c)` over local variables; the loop's own cost is
INCLUDED in every number, equally for all paths (the "loop only" line prints it for reference).
Each path gets its arguments the way its users write them: pre-built Device/DataType objects or
structs, a numpy float32 array converted on every call (ctypes and cffi through a small Python
wrapper that builds the DLTensor, as a user of those libraries must), a str encoded on every call
for ctypes and cffi (they take bytes).

Run it with Debian's /usr/bin/python3 (the extensions are built for it):
    /usr/bin/python3 bench/python/bench_calls.py --build-dir build/v013 [--markdown out.md]
or `ninja -C <build> run_ffijit_bench_python`.
"""

import argparse
import ctypes
import gc
import importlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from itertools import repeat

HERE = os.path.dirname(os.path.abspath(__file__))

DEBIAN_PYTHON = "/usr/bin/python3"
NATIVES_LIB = "libffijit_bench_natives.so"

# The rows, in print order, and the result every path must return for them.
SIGNATURES = [
    "no_args",
    "i64_i64_i64",
    "i64_f64_i32_f32_ptr",
    "i64_f64_i32_f32_null",
    "dev_dtype_i64",
    "tensor",
    "str",
]
EXPECTED = {
    "no_args": None,
    "i64_i64_i64": 1 + 2 * 2 + 3 * 3,
    "i64_f64_i32_f32_ptr": 1 + 2.5 + 3 + 4.5 + 1.0,
    "i64_f64_i32_f32_null": 1 + 2.5 + 3 + 4.5,
    "dev_dtype_i64": 2 + 1 + 2 + 32 + 1 + 7,  # cuda:1, float32 (code 2, 32 bits, 1 lane), 7
    "tensor": 4 + 8,
    "str": ord("a"),
}
PATHS = ["handwritten", "ffijit", "ffijit interp", "ctypes", "cffi abi", "cffi api"]
NATIVE_SYMBOLS = {
    "no_args": "BenchNativeNoArgs",
    "i64_i64_i64": "BenchNativeI64x3",
    "i64_f64_i32_f32_ptr": "BenchNativeMixed",
    "i64_f64_i32_f32_null": "BenchNativeMixed",
    "dev_dtype_i64": "BenchNativeDevDtype",
    "tensor": "BenchNativeTensor",
    "str": "BenchNativeStr",
}
# ffijit's metadata for each native (docs/guide.md, "JSON metadata").
FFIJIT_SIGNATURES = {
    "no_args": '{"a":[],"r":[],"v":1}',
    "i64_i64_i64": '{"a":["i64","i64","i64"],"r":["i64"],"v":1}',
    "i64_f64_i32_f32_ptr": '{"a":["i64","f64","i32","f32","ptr"],"r":["f64"],"v":1}',
    "i64_f64_i32_f32_null": '{"a":["i64","f64","i32","f32","ptr"],"r":["f64"],"v":1}',
    "dev_dtype_i64": '{"a":["Device","DataType","i64"],"r":["i64"],"v":1}',
    "tensor": '{"a":[["ndarray","f32",2,null,null]],"r":["i64"],"v":1}',
    "str": '{"a":["str"],"r":["i64"],"v":1}',
}
WRAPPER_NOTE = ("ctypes and cffi rows of `tensor` and `str` call through a Python wrapper that "
                "builds the DLTensor from the array / encodes the str on every call, as their "
                "users must; every other row calls the path's callable directly.")
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
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers as JSON")
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
    return args


class Fixture:
    """The argument values shared by every path, kept alive for the whole run."""

    def __init__(self, natives_lib):
        import numpy

        self.numpy = numpy
        self.natives = ctypes.CDLL(natives_lib)
        self.array = numpy.zeros((4, 8), dtype=numpy.float32)
        self.pointee = ctypes.c_int(0)  # what the non-NULL void* argument points at
        self.pointer = ctypes.addressof(self.pointee)

    def address(self, symbol):
        return ctypes.cast(getattr(self.natives, symbol), ctypes.c_void_p).value


# ---- the paths: each returns {signature: (callable, args)}, or raises Unavailable ----

def handwritten_cases(fx, args):
    if not args.handwritten_dir:
        raise Unavailable("no --handwritten-dir / --build-dir given")
    sys.path.insert(0, os.path.abspath(args.handwritten_dir))
    try:
        hw = importlib.import_module("ffijit_bench_handwritten")
    except ImportError as error:
        raise Unavailable(f"cannot import ffijit_bench_handwritten: {error}") from None
    finally:
        sys.path.pop(0)
    return {
        "no_args": (hw.no_args, ()),
        "i64_i64_i64": (hw.i64_i64_i64, (1, 2, 3)),
        "i64_f64_i32_f32_ptr": (hw.i64_f64_i32_f32_ptr, (1, 2.5, 3, 4.5, fx.pointer)),
        "i64_f64_i32_f32_null": (hw.i64_f64_i32_f32_ptr, (1, 2.5, 3, 4.5, None)),
        "dev_dtype_i64": (hw.dev_dtype_i64,
                          (hw.Device(DL_CUDA, 1), hw.DataType(DL_FLOAT, 32, 1), 7)),
        "tensor": (hw.tensor, (fx.array,)),
        "str": (hw.str, (STRING_ARG,)),
    }


def import_ffijit(args):
    if args.ffijit_path:
        sys.path.insert(0, os.path.abspath(args.ffijit_path))
    try:
        return importlib.import_module("ffijit")
    except ImportError as error:
        raise Unavailable(f"cannot import ffijit: {error}") from None


def ffijit_cases(fx, args, interpret_only):
    ffijit = import_ffijit(args)
    cases = {}
    for sig in SIGNATURES:
        try:
            address = fx.address(NATIVE_SYMBOLS[sig])
            if interpret_only:
                fn = ffijit.function(address, FFIJIT_SIGNATURES[sig], interpret_only=True)
            else:
                fn = ffijit.function(address, FFIJIT_SIGNATURES[sig])
                fn.compile_now()
            call_args = {
                "no_args": (),
                "i64_i64_i64": (1, 2, 3),
                "i64_f64_i32_f32_ptr": (1, 2.5, 3, 4.5, ctypes.c_void_p(fx.pointer)),
                "i64_f64_i32_f32_null": (1, 2.5, 3, 4.5, None),
                "dev_dtype_i64": (ffijit.Device("cuda", 1), ffijit.DataType("float32"), 7),
                "tensor": (fx.array,),
                "str": (STRING_ARG,),
            }[sig]
            cases[sig] = (fn, call_args)
        except Exception as error:  # one broken row must not hide the others
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
    str_native = declare("BenchNativeStr", i64, [ctypes.c_char_p])

    float32 = fx.numpy.dtype(fx.numpy.float32)
    cpu = DLDevice(DL_CPU, 0)
    f32 = DLDataType(DL_FLOAT, 32, 1)
    shape2 = ctypes.c_int64 * 2
    byref = ctypes.byref

    def tensor(array):
        # What a ctypes user writes: check the array, describe it in a DLTensor, pass its address.
        if array.dtype != float32 or array.ndim != 2 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 2-D float32 array")
        t = DLTensor(array.ctypes.data, cpu, 2, f32, shape2(*array.shape), None, 0)
        return tensor_native(byref(t))

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
    }


def cffi_cases_from(ffi, lib, fx):
    float32 = fx.numpy.dtype(fx.numpy.float32)
    tensor_native = lib.BenchNativeTensor
    str_native = lib.BenchNativeStr
    new = ffi.new
    from_buffer = ffi.from_buffer

    def tensor(array):
        # What a cffi user writes: check the array, describe it in a DLTensor, pass its address.
        if array.dtype != float32 or array.ndim != 2 or not array.flags.c_contiguous:
            raise ValueError("expected a C-contiguous 2-D float32 array")
        shape = new("int64_t[2]", array.shape)
        t = new("DLTensor*", {"data": from_buffer(array), "device": {"device_type": DL_CPU},
                              "ndim": 2, "dtype": {"code": DL_FLOAT, "bits": 32, "lanes": 1},
                              "shape": shape})
        return tensor_native(t)

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


def measure(cases, reps, target_ms):
    """cases: [(key, fn, args)] -> {key: [ns per call of each round]}, rounds interleaved."""
    prepared = []
    for key, fn, call_args in cases:
        loop = make_loop(len(call_args))
        n = 1000
        while True:  # calibrate: about target_ms per measurement
            per_call = time_once(loop, fn, call_args, n)
            if per_call * n >= 1e6 or n >= 1 << 24:
                break
            n *= 4
        n = max(1000, int(target_ms * 1e6 / per_call))
        prepared.append((key, loop, fn, call_args, n))
    samples = {key: [] for key, *_ in prepared}
    for round_index in range(reps):
        shift = round_index % len(prepared)
        for key, loop, fn, call_args, n in prepared[shift:] + prepared[:shift]:
            samples[key].append(time_once(loop, fn, call_args, n))
    return samples


def main():
    args = parse_args()
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        print(f"warning: running under {sys.executable}, not {DEBIAN_PYTHON}: the extensions are "
              f"built for Debian's interpreter", file=sys.stderr)
    fx = Fixture(args.natives_lib)
    notes = []
    table = {}  # path -> {signature: (fn, args) | error string}
    with tempfile.TemporaryDirectory(prefix="ffijit_bench_cffi_") as workdir:
        builders = {
            "handwritten": lambda: handwritten_cases(fx, args),
            "ffijit": lambda: ffijit_cases(fx, args, interpret_only=False),
            "ffijit interp": lambda: ffijit_cases(fx, args, interpret_only=True),
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
            samples = measure(cases, args.reps, args.target_ms)
            loop_samples = []
            for _ in range(args.reps):
                start = time.perf_counter_ns()
                empty_loop(1 << 20)
                loop_samples.append((time.perf_counter_ns() - start) / (1 << 20))
        finally:
            gc.enable()

    medians = {key: statistics.median(values) for key, values in samples.items()}
    paths = [p for p in PATHS if any((p, s) in medians for s in SIGNATURES)]
    loop_ns = statistics.median(loop_samples)
    print_report(args, medians, paths, loop_ns, notes)


def cell(medians, path, sig):
    ns = medians.get((path, sig))
    if ns is None:
        return "-"
    base = medians.get(("handwritten", sig))
    return f"{ns:.1f} ({ns / base:.2f}x)" if base else f"{ns:.1f}"


def print_report(args, medians, paths, loop_ns, notes):
    header = (f"Python call paths, ns/call (median of {args.reps} interleaved rounds; ratio to "
              f"handwritten); Python {platform.python_version()} at {sys.executable}, "
              f"{platform.machine()}")
    rows = [[sig] + [cell(medians, p, sig) for p in paths] for sig in SIGNATURES]
    titles = ["signature"] + paths
    widths = [max(len(str(r[i])) for r in rows + [titles]) for i in range(len(titles))]
    print(header)
    print("  ".join(t.ljust(w) for t, w in zip(titles, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    loop_line = (f"loop only (`for _ in repeat(None, n): pass`): {loop_ns:.1f} ns per iteration, "
                 f"included in every number above")
    print(loop_line)
    print(WRAPPER_NOTE)
    for note in notes:
        print("note:", note)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(header + "\n\n")
            out.write("| " + " | ".join(titles) + " |\n")
            out.write("|" + "|".join(["---"] + ["---:"] * len(paths)) + "|\n")
            for row in rows:
                out.write("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i]
                                             for i in range(len(row))) + " |\n")
            out.write(f"\n{loop_line}\n\n{WRAPPER_NOTE}\n")
            for note in notes:
                out.write(f"\n- {note}")
            out.write("\n")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"python": sys.version, "machine": platform.machine(), "reps": args.reps,
                       "loop_ns": loop_ns,
                       "ns_per_call": {p: {s: medians[(p, s)] for s in SIGNATURES
                                           if (p, s) in medians} for p in paths},
                       "notes": notes}, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
