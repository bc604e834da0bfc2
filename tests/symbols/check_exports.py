#!/usr/bin/env python3
"""Compares the dynamic symbols a shared library exports with a list checked in under this folder.

    check_exports.py --nm NM --library LIB.so --expected LIST.txt [--update]

The lists live in one directory per TVM FFI ABI revision (e98b94e1/, v0.1.13/): the revision
changes what the runtime exports. CMakeLists.txt passes the configured revision's list.

The exported set is `nm -D -C --defined-only` (demangled, so the list reads like the headers),
one name per line, sorted, without the symbol kind, minus three kinds of noise that are not
ffijit's API (each removed by the rules in NOISE below):
  * the linker's section markers (__bss_start, _edata, _end, _init, _fini);
  * weak copies (nm kinds W, V, u) of C++ standard library templates and inline functions that
    ffijit's code instantiates (std::..., __gnu_cxx::...): libstdc++ declares its namespaces with
    default visibility, so -fvisibility=hidden cannot hide them; every library that uses one has
    its own copy and the dynamic linker merges them;
  * sanitizer instrumentation (__asan*, __odr_asan*, __ubsan*, __lsan*, __tsan*, __sanitizer*),
    which ASan/UBSan/TSan builds add to every instrumented library.
Everything else must match the list exactly: a symbol that appears (an internal that leaked) or
disappears (an export that was lost) fails with a unified diff. --update rewrites the list instead
(the update-symbol-lists build target runs it for every library).
"""
import argparse
import difflib
import re
import subprocess
import sys

LINKER_MARKERS = {"__bss_start", "_edata", "_end", "_init", "_fini"}
WEAK_KINDS = {"W", "V", "u", "w", "v"}
# "typeinfo for std::...", "void std::__detail::f<...>(...)", "std::vector<...>::~vector()", ...
STD_LIBRARY = re.compile(
    r"^(?:(?:typeinfo name|typeinfo|vtable|VTT|guard variable|construction vtable) for )?"
    r"(?:[\w:<>,*& ]+? )?(?:std|__gnu_cxx|__cxxabiv1)::")
SANITIZER = re.compile(r"^_*(?:asan|odr_asan|ubsan|lsan|tsan|sanitizer)")


def is_noise(kind, name):
    if name in LINKER_MARKERS:
        return True
    if SANITIZER.match(name):
        return True
    return kind in WEAK_KINDS and STD_LIBRARY.match(name) is not None


def exported_symbols(nm, library):
    out = subprocess.run([nm, "-D", "-C", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)  # address, kind, demangled name (which may contain spaces)
        if len(parts) != 3:
            continue
        _, kind, name = parts
        if not is_noise(kind, name):
            names.add(name)
    return sorted(names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--library", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args()

    actual = exported_symbols(args.nm, args.library)
    if args.update:
        with open(args.expected, "w", encoding="utf-8") as f:
            f.write("".join(name + "\n" for name in actual))
        print(f"{args.expected}: {len(actual)} symbols")
        return 0
    with open(args.expected, encoding="utf-8") as f:
        expected = [line.rstrip("\n") for line in f if line.strip()]
    if actual == expected:
        print(f"{args.library}: the {len(actual)} exported symbols match {args.expected}")
        return 0
    sys.stdout.writelines(
        difflib.unified_diff([e + "\n" for e in expected], [a + "\n" for a in actual],
                             fromfile=args.expected + " (expected)",
                             tofile=args.library + " (exported)"))
    print(f"\nThe exported symbols of {args.library} differ from {args.expected} ('+' lines are "
          "exported but not listed, '-' lines are listed but not exported). If the change is "
          "intended (a new public function), update the lists with\n"
          "  cmake --build <build dir> --target update-symbol-lists\nand commit them (in a build "
          "of each TVM FFI ABI revision whose exports changed).")
    return 1


if __name__ == "__main__":
    sys.exit(main())
