"""Register a C function from metadata and call it from Python.

libm's `double hypot(double x, double y)` is described by `iree.abi` JSON that names both
arguments, registered under a global name, and called with positional and keyword arguments;
the same function is found again by name, and a wrong argument type shows ffijit's message.
Exits non-zero when a result is wrong.
"""

import sys

import ffijit

HYPOT_SIG = {"a": [["named", "x", "f64"], ["named", "y", "f64"]], "r": ["f64"], "v": 1}


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)


def main():
    # The target is (library, symbol): ffijit loads libm and keeps it loaded.
    hypot = ffijit.register("example.hypot", ("libm.so.6", "hypot"), HYPOT_SIG, override=True)
    print("registered:", hypot.__self__.describe().splitlines()[0])

    positional = hypot(3.0, 4.0)
    keywords = hypot(y=12.0, x=5)  # an int converts to f64; keywords in any order
    mixed = hypot(8.0, y=15.0)
    print(f"hypot(3.0, 4.0) = {positional}")
    print(f"hypot(y=12.0, x=5) = {keywords}")
    print(f"hypot(8.0, y=15.0) = {mixed}")
    check(positional == 5.0 and keywords == 13.0 and mixed == 17.0, "hypot results")

    # Any caller (Python, C, C++, a module) finds the function by its global name.
    again = ffijit.get_global_func("example.hypot")
    check("example.hypot" in ffijit.list_global_funcs(), "example.hypot is listed")
    print(f"get_global_func('example.hypot')(20, 21) = {again(20, 21)}")
    check(again(20, 21) == 29.0, "the function found by name")

    # Bad input is a Python exception carrying ffijit's message, never a crash.
    try:
        hypot("three", 4.0)
    except TypeError as error:
        print(f"hypot('three', 4.0) -> TypeError: {error}")
    else:
        check(False, "a str for an f64 must raise TypeError")
    try:
        hypot(3.0, z=4.0)
    except TypeError as error:
        print(f"hypot(3.0, z=4.0) -> TypeError: {error}")
    else:
        check(False, "an unknown keyword must raise TypeError")

    ffijit.remove_global_func("example.hypot")
    print("OK")


if __name__ == "__main__":
    main()
