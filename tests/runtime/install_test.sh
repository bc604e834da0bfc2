#!/usr/bin/env bash
# Installs an ffijit build tree into a temporary prefix, then configures, builds and runs a small
# consumer project against it: find_package(ffijit) must give a working ffijit::runtime (from C
# and C++) and ffijit::jit (registration, the JIT tier, errors thrown across the library).
#   install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR [SANITIZER_FLAGS]
# A sanitized ffijit needs a consumer built with the same sanitizers (their runtime must come first).
# A cross build (the AArch64 lane) passes its toolchain file in FFIJIT_CONSUMER_TOOLCHAIN and its
# emulator command in FFIJIT_CONSUMER_RUNNER: the consumer is cross-built the same way and run
# under the emulator. With FFIJIT_INSTALL_TEST_PYTHON (the interpreter), FFIJIT_INSTALL_TEST_PYTHON_DIR
# (the package's folder in the prefix) and FFIJIT_INSTALL_TEST_PYTHON_ENV (variables it runs with),
# the installed Python package must import from elsewhere and load the prefix's libraries.
set -euo pipefail
build_dir=$1
consumer_dir=$2
sanitize=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
# Only the public headers are installed: the internal ones live beside their library.
for internal in call_plan.h bound_function.h register_internal.h tagged_lexer.h; do
  if find "$work/prefix" -name "$internal" | grep -q .; then
    echo "install_test: the internal header $internal was installed" >&2
    exit 1
  fi
done
[ -f "$work/prefix/include/ffijit/export.h" ] || { echo "install_test: export.h missing" >&2; exit 1; }
cross=()
if [ -n "${FFIJIT_CONSUMER_TOOLCHAIN:-}" ]; then
  # A toolchain file re-roots package searches into its sysroot: name the package directory.
  config=$(dirname "$(find "$work/prefix" -name ffijitConfig.cmake | head -n 1)")
  cross=(-DCMAKE_TOOLCHAIN_FILE="$FFIJIT_CONSUMER_TOOLCHAIN" -Dffijit_DIR="$config")
fi
read -r -a runner <<<"${FFIJIT_CONSUMER_RUNNER:-}"
# Flags only when sanitizing: a flags variable on the command line replaces a toolchain's own.
flags=()
if [ -n "$sanitize" ]; then
  flags=(-DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize"
         -DCMAKE_EXE_LINKER_FLAGS="$sanitize")
fi
cmake -S "$consumer_dir" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" "${cross[@]}" \
  "${flags[@]}" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"${runner[@]}" "$work/build/ffijit_consumer"
"${runner[@]}" "$work/build/ffijit_consumer_cpp"
"${runner[@]}" "$work/build/ffijit_consumer_jit"

# The drop-in libtvm_ffi.so (and ffijit's SONAME beside it) resolve to the installed runtime.
runtime=$(find "$work/prefix" -name 'libffijit_runtime.so' -not -path '*/tvm-ffi/*' | head -n 1)
dropin_dir=$(dirname "$runtime")/ffijit/tvm-ffi
for name in libtvm_ffi.so libffijit_runtime.so; do
  if [ "$(readlink -f "$dropin_dir/$name")" != "$(readlink -f "$runtime")" ]; then
    echo "install_test: $dropin_dir/$name does not resolve to $runtime" >&2
    exit 1
  fi
done

# The Python package, from outside the build tree and without LD_LIBRARY_PATH: its extension finds
# the installed libraries through its rpath, not the build tree's.
if [ -n "${FFIJIT_INSTALL_TEST_PYTHON:-}" ]; then
  site="$work/prefix/$FFIJIT_INSTALL_TEST_PYTHON_DIR"
  [ -f "$site/ffijit/__init__.py" ] || { echo "install_test: no Python package in $site" >&2; exit 1; }
  read -r -a python_env <<<"${FFIJIT_INSTALL_TEST_PYTHON_ENV:-}"
  (cd "$work" && env -u LD_LIBRARY_PATH "${python_env[@]}" PYTHONPATH="$site" \
    INSTALL_PREFIX="$work/prefix" "$FFIJIT_INSTALL_TEST_PYTHON" -c '
import os, sys
import ffijit
site = sys.path[sys.path.index(os.environ["PYTHONPATH"])]
assert ffijit.__file__.startswith(site + "/"), ffijit.__file__
cos = ffijit.function(("libm.so.6", "cos"), {"a": ["f64"], "r": ["f64"]})
assert cos(0.0) == 1.0
prefix = os.environ["INSTALL_PREFIX"]
with open("/proc/self/maps") as maps:
    runtimes = {line.split()[-1] for line in maps if line.rstrip().endswith("/libffijit_runtime.so")}
assert runtimes and all(path.startswith(prefix + "/") for path in runtimes), (prefix, runtimes)
assert os.path.isfile(os.path.join(ffijit.include_dirs()[0], "ffijit", "c_api.h"))
print("install_test: the installed Python package", ffijit.__version__, "works")
')
fi
