"""A Python comparison function handed to libc's qsort as a plain C function pointer.

qsort is registered from ("libc.so.6", "qsort") with metadata; ffijit.callback JIT-compiles a
C function pointer `int32_t (*)(void*, void*)` that calls the Python function, whose arguments
arrive as int addresses, read with ffijit.load. qsort then sorts a ctypes array of C ints in
place.
Exits non-zero when the array does not come back sorted.
"""

import ctypes
import sys

import ffijit

# void qsort(void* base, size_t count, size_t size, int (*compare)(const void*, const void*))
QSORT_SIG = {
    "a": [["named", "base", "ptr"], ["named", "count", "u64"], ["named", "size", "u64"],
          ["named", "compare", "ptr"]],
    "r": [],
    "v": 1,
}
# int compare(const void* a, const void* b)
COMPARE_SIG = {"a": ["ptr", "ptr"], "r": ["i32"], "v": 1}


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)


def main():
    if not ffijit.jit_available():
        print("FAILED: native callbacks need the JIT (this ffijit was built without LLVM)")
        sys.exit(1)
    qsort = ffijit.register("example.qsort", ("libc.so.6", "qsort"), QSORT_SIG, override=True)

    calls = 0
    int32 = ffijit.DataType("int32")

    def compare_ints(a, b):
        nonlocal calls
        calls += 1
        x = ffijit.load(a, int32)  # what the pointer points at, read in place
        y = ffijit.load(b, int32)
        return (x > y) - (x < y)

    # Keep `compare` alive while C may call its pointer: its code goes with the object.
    compare = ffijit.callback(compare_ints, COMPARE_SIG)
    values = [5, -3, 9, 0, 7, 7, -10, 2]
    array = (ctypes.c_int * len(values))(*values)
    print("before:", list(array))
    qsort(ctypes.c_void_p(ctypes.addressof(array)), len(array), ctypes.sizeof(ctypes.c_int),
          ctypes.c_void_p(compare.address))
    print("after: ", list(array), f"({calls} calls of the Python comparison)")
    check(list(array) == sorted(values), "the array is sorted")
    check(calls > 0, "qsort called the Python function")

    # Keywords work for any argument the metadata names.
    descending = ffijit.callback(lambda a, b: -compare_ints(a, b), COMPARE_SIG)
    qsort(base=ctypes.c_void_p(ctypes.addressof(array)), count=len(array),
          size=ctypes.sizeof(ctypes.c_int), compare=ctypes.c_void_p(descending.address))
    print("descending:", list(array))
    check(list(array) == sorted(values, reverse=True), "the array is sorted descending")

    ffijit.remove_global_func("example.qsort")
    print("OK")


if __name__ == "__main__":
    main()
