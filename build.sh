#!/usr/bin/env bash
# ffijit's one entry point for people and CI: installs missing Debian packages, builds, runs.
#
#   ./build.sh demo    build and run the headline example (the main job)
#   ./build.sh test    build and run the whole test suite
#   ./build.sh wheel   package the test build (build/test, built if needed) as a wheel in
#                      build/dist, install it into a fresh venv and run the Python suites and
#                      examples against the installed package, from outside the checkout; then
#                      check that `pip install --no-build-isolation .` installs a working package
#   ./build.sh asan    build and run the test suite under ASan + UBSan (LeakSanitizer on), against
#                      LLVM 22 (every other lane builds against LLVM 19: CI proves both)
#   ./build.sh nojit   build without LLVM (the interpreted bridge alone) and run its test suite
#   ./build.sh revision NAME  the suite of a build for the TVM FFI ABI revision NAME, a row of
#                      cmake/tvm_ffi_revisions.txt, in build/revision-NAME; its `lane` column says
#                      whether with LLVM (full) or without (nojit: the runtime, reflection,
#                      interpreter, module, tool and layout suites)
#   ./build.sh revisions  print the names of the revisions that are not the default, one a line
#   ./build.sh addon PREFIX  the add-on build over the TVM FFI installed in PREFIX (its include/
#                      and lib/libtvm_ffi.so; FFIJIT_TVM_FFI_RUNTIME) in build/addon, and the suites
#                      that do not test ffijit's own runtime
#   ./build.sh tsan    build and run the suites labelled `threads` under TSan (those that start
#                      threads or test a library folder that does; tests/CMakeLists.txt derives it);
#                      `./build.sh tsan build` only builds them
#   ./build.sh fuzz    build the libFuzzer targets with clang-NN (the lane's LLVM) and run each on its seed corpus
#                      for FUZZ_SECONDS (30) each (the metadata parsers, hand-made DLPack
#                      structs, hostile call values on both tiers, and the object and IR loaders
#                      in a JIT-enabled build);
#                      FUZZ_OBJECTS=0 replays the object loader's seeds without mutating
#   ./build.sh bench   build and run ffijit_bench (Release)
#   ./build.sh report  run the benchmarks once; write docs/performance.{md,svg} and the README table
#   ./build.sh aarch64 cross-build for Linux AArch64 (LLVM 19, the sysroot's) and run the test suite
#                      under qemu-aarch64-static
#   ./build.sh deps    only install the packages (LLVM 19 and 22 both: 22 from bookworm-security)
# FFIJIT_LLVM=NN builds the LLVM lanes but asan against LLVM NN (cmake/llvm.cmake lists those
# ffijit supports); 19 unless set.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(cmake ninja-build ccache g++ llvm-19-dev clang-19 libclang-rt-19-dev llvm-22-dev clang-22
          libclang-rt-22-dev nlohmann-json3-dev
          libffi-dev libgtest-dev libgmock-dev libbenchmark-dev libdlpack-dev gnuplot-nox python3
          python3-dev python3-numpy python3-pytest python3-cffi python3-setuptools python3-wheel
          python3-build python3-venv python3-pip)
JOBS=${JOBS:-$(nproc)}
# The LLVM of every lane with the JIT but asan (and aarch64, whose sysroot has LLVM 19), and asan's.
LLVM_MAJOR=${FFIJIT_LLVM:-19}
LLVM=(-DFFIJIT_LLVM_VERSION="$LLVM_MAJOR")
ASAN_LLVM=(-DFFIJIT_LLVM_VERSION=22)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}

deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "build.sh: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
  fi
}

# build DIR [cmake args...]: configure once, then build. Warnings are errors in every build
# this script makes (FFIJIT_WERROR; a plain CMake configure leaves it off for users). Ninja unless
# FFIJIT_GENERATOR names another CMake generator; FFIJIT_GENERATOR=default leaves the choice to
# CMake (Unix Makefiles), as a user's plain configure does. A build folder keeps the generator it
# was made with. With FFIJIT_TARGETS_FILE (a file the configure writes into DIR), only the targets
# it lists, one a line, are built.
build() {
  local dir=$1 generator=() targets=() launcher=()
  shift
  case "${FFIJIT_GENERATOR:-Ninja}" in
    default) ;;
    *) generator=(-G "${FFIJIT_GENERATOR:-Ninja}") ;;
  esac
  # ccache, when installed (deps installs it): builds of one checkout share what they compiled
  # alike (the test build and the add-on build compile everything above the runtime the same
  # way). Its cache is build/ccache unless CCACHE_DIR says otherwise (CI points every lane at one);
  # paths are hashed relative to the checkout, so copies of it share too.
  if command -v ccache >/dev/null; then
    export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" -DFFIJIT_WERROR=ON "$@"
  if [ -n "${FFIJIT_TARGETS_FILE:-}" ]; then
    mapfile -t targets < "$dir/$FFIJIT_TARGETS_FILE"
    targets=(--target "${targets[@]}")
  fi
  cmake --build "$dir" -j "$JOBS" "${targets[@]}"
}

# run_tests DIR [ctest args...]
run_tests() {
  local dir=$1
  shift
  ctest --test-dir "$dir" -j "$JOBS" --output-on-failure --timeout 900 "$@"
}

# The AArch64 lane: Debian's cross compiler and qemu on the host, and the arm64 packages of the
# dependencies unpacked (never installed) into a sysroot under build/. Debian ships LLVM's static
# archives with llvm-19-dev and its CMake package checks that they exist, so they stay.
AARCH64_HOST_PACKAGES=(g++-aarch64-linux-gnu qemu-user-static)
AARCH64_SYSROOT_PACKAGES=(libllvm19 llvm-19-dev llvm-19-linker-tools libedit2 libffi8 libz3-4 libxml2
                          libicu72 zlib1g libzstd1 liblzma5 libtinfo6 libbsd0 libmd0 libffi-dev
                          libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
                          libdlpack-dev libclang-rt-19-dev)
AARCH64_SYSROOT=$PWD/build/aarch64-sysroot

aarch64_sysroot() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  local missing=()
  for p in "${AARCH64_HOST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  local want="${AARCH64_SYSROOT_PACKAGES[*]}"
  if ((${#missing[@]})) || [ "$(cat "$AARCH64_SYSROOT/.packages" 2>/dev/null)" != "$want" ]; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      $sudo dpkg --add-architecture arm64
    fi
    $sudo apt-get update
    if ((${#missing[@]})); then
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
    fi
  fi
  if [ "$(cat "$AARCH64_SYSROOT/.packages" 2>/dev/null)" != "$want" ]; then
    rm -rf "$AARCH64_SYSROOT"
    local debs="$AARCH64_SYSROOT.debs"
    rm -rf "$debs" && mkdir -p "$debs" "$AARCH64_SYSROOT"
    (cd "$debs" && apt-get download "${AARCH64_SYSROOT_PACKAGES[@]/%/:arm64}" nlohmann-json3-dev)
    for f in "$debs"/*.deb; do dpkg -x "$f" "$AARCH64_SYSROOT"; done
    rm -rf "$debs"
    echo "$want" > "$AARCH64_SYSROOT/.packages"
  fi
}

# wheel_lane BUILD_DIR: the Python package as users install it, made from BUILD_DIR's compiled
# code (FFIJIT_CMAKE_BUILD_DIR: setup.py builds nothing twice) with Debian's setuptools, offline.
wheel_lane() {
  local build_dir=$PWD/$1 python=/usr/bin/python3 work
  work=$(mktemp -d /tmp/ffijit-wheel.XXXXXX)
  rm -rf build/dist
  FFIJIT_CMAKE_BUILD_DIR=$build_dir $python -m build --wheel --no-isolation --outdir build/dist \
    >"$work/build.log" || { cat "$work/build.log"; rm -rf "$work"; return 1; }
  local wheel
  wheel=$(ls build/dist/ffijit-*.whl)
  echo "build.sh: built $wheel"
  # numpy and pytest come from Debian's packages: the venv sees the system's site-packages, and
  # its own ffijit (the wheel) shadows nothing else, as there is no other.
  $python -m venv --system-site-packages "$work/venv"
  "$work/venv/bin/python" -m pip install --quiet --no-index --no-deps "$wheel"
  local status=0
  (
    cd "$work"  # outside the checkout: nothing but the installed package can be imported
    "$work/venv/bin/python" -c 'import ffijit, sys
assert ffijit.__file__.startswith(sys.prefix + "/"), ffijit.__file__
print("build.sh: ffijit", ffijit.__version__, "installed at", ffijit.__file__)'
    # shellcheck disable=SC2046
    env $(cat "$build_dir/tests/python/fixtures.env") PYTHONDONTWRITEBYTECODE=1 FFIJIT_JIT_LOG=0 \
      "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python"
    for example in "$OLDPWD"/examples/python/*.py; do
      echo "build.sh: example $(basename "$example")"
      FFIJIT_JIT_LOG=0 "$work/venv/bin/python" "$example" >"$work/example.log" ||
        { cat "$work/example.log"; exit 1; }
    done
  ) || status=$?
  if [ $status = 0 ]; then
    # The other way users install: pip building from the checkout (reusing the same build).
    $python -m venv --system-site-packages "$work/venv-pip"
    FFIJIT_CMAKE_BUILD_DIR=$build_dir "$work/venv-pip/bin/python" -m pip install --quiet \
      --no-build-isolation "$PWD" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; status=1; }
    [ $status = 0 ] && (cd "$work" && "$work/venv-pip/bin/python" -c \
      'import ffijit, sys; assert ffijit.__file__.startswith(sys.prefix + "/"); print("build.sh: pip install . gave ffijit", ffijit.__version__)') ||
      status=1
  fi
  rm -rf "$work"
  return $status
}

# The table of TVM FFI revisions: revision_names all|others (others: all but the default);
# revision_column NAME N prints column N (0-based) of NAME's row, failing when there is none.
REVISIONS=cmake/tvm_ffi_revisions.txt
revision_names() {
  awk -v which="$1" '!/^#/ && NF { if (which == "all" || $10 != "yes") print $1 }' "$REVISIONS" |
    paste -sd' '
}
revision_column() {
  awk -v name="$1" -v col="$2" '!/^#/ && $1 == name { print $(col + 1); found = 1 }
    END { exit !found }' "$REVISIONS"
}

# fuzz_target BINARY: one libFuzzer target on its seeds and its corpus under build/fuzz/.
fuzz_target() {
  local f=$1 name work limit
  name=$(basename "$f")
  work=build/fuzz/corpus/$name
  mkdir -p "$work"
  # Every target mutates for FUZZ_SECONDS. FUZZ_OBJECTS=0 makes the object loader only replay
  # its seeds (every input that crashed LLVM 19's JITLink so far, and valid objects): the way
  # out if an LLVM crashes on objects that jit/orc/llvm_patches/object_check.cc does not refuse yet.
  limit=(-max_total_time="$FUZZ_SECONDS")
  [ "$name" = fuzz_object ] && [ "${FUZZ_OBJECTS:-1}" = 0 ] && limit=(-runs=0)
  # FUZZ_SEED pins libFuzzer's random seed (CI; unset: a new seed each run, to explore). The
  # coverage fed back is not reproducible (pointer-keyed hash tables under ASLR, timing), so
  # runs with one seed diverge after a few thousand inputs: see docs/fuzzing.md.
  [ -n "${FUZZ_SEED:-}" ] && limit+=(-seed="$FUZZ_SEED")
  # FUZZ_OBJECT_RUNS bounds the object fuzzer by a count instead of time (CI's count:
  # docs/fuzzing.md).
  [ "$name" = fuzz_object ] && [ -n "${FUZZ_OBJECT_RUNS:-}" ] && [ "${FUZZ_OBJECTS:-1}" != 0 ] &&
    limit=(-runs="$FUZZ_OBJECT_RUNS" -seed="${FUZZ_SEED:-1}")
  echo "== $name (${limit[*]})"
  FFIJIT_JIT_LOG=0 "$f" "${limit[@]}" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix=build/fuzz/artifacts/"$name"- \
    -print_final_stats=1 "$work" "tests/fuzz/seeds/${name#fuzz_}"
}

cmd=${1:-test}
case "$cmd" in
  deps) deps ;;
  demo)
    deps
    build build/release -DCMAKE_BUILD_TYPE=Release -DFFIJIT_BUILD_TESTS=OFF -DFFIJIT_BUILD_BENCH=OFF \
      "${LLVM[@]}"
    ./build/release/bin/example_demo
    ;;
  test)
    deps
    build build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LLVM[@]}"
    run_tests build/test
    ;;
  wheel)
    deps
    build build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LLVM[@]}"
    wheel_lane build/test
    ;;
  asan)
    deps
    build build/asan -DCMAKE_BUILD_TYPE=Debug -DFFIJIT_SANITIZE=ON -DFFIJIT_BUILD_BENCH=OFF \
      "${ASAN_LLVM[@]}"
    # intercept_tls_get_addr=0: GCC 12's LeakSanitizer records the dynamic TLS blocks of a
    # dlopen'ed library (the LLVM plugin, libffijit_orc.so, and libLLVM with it) with wrong bounds
    # under bookworm's glibc 2.36, and its tracer crashes reading them at exit ("Tracer caught
    # signal 11"). glibc allocates those blocks on the heap, reachable from the thread's DTV, so
    # leak checking still sees what they hold.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
      run_tests build/asan
    ;;
  tsan)
    deps
    # Only the suites that start threads, or test a library folder that does, are built and run:
    # CMake labels them `threads` and lists them in threaded_suites.txt.
    FFIJIT_TARGETS_FILE=threaded_suites.txt build build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFFIJIT_SANITIZE=thread -DFFIJIT_BUILD_BENCH=OFF -DFFIJIT_BUILD_EXAMPLES=OFF "${LLVM[@]}"
    [ "${2:-}" = build ] && exit 0
    TSAN_OPTIONS=halt_on_error=1 run_tests build/tsan -L '^threads$'
    ;;
  nojit)
    deps
    build build/nojit -DCMAKE_BUILD_TYPE=Debug -DFFIJIT_ENABLE_JIT=OFF -DFFIJIT_BUILD_BENCH=OFF
    run_tests build/nojit
    ;;
  revision)
    name=${2:-}
    lane=$(revision_column "$name" 8) ||
      { echo "build.sh: revision '$name' is not one of: $(revision_names all)" >&2; exit 2; }
    deps
    jit=(-DFFIJIT_ENABLE_JIT=ON "${LLVM[@]}")
    [ "$lane" = nojit ] && jit=(-DFFIJIT_ENABLE_JIT=OFF)
    build "build/revision-$name" -DCMAKE_BUILD_TYPE=Debug "-DFFIJIT_TVM_FFI_ABI=$name" \
      "${jit[@]}" -DFFIJIT_BUILD_BENCH=OFF
    run_tests "build/revision-$name"
    ;;
  revisions) revision_names others ;;
  addon)
    prefix=${2:?usage: $0 addon PREFIX (a TVM FFI install: PREFIX/include/tvm/ffi, PREFIX/lib/libtvm_ffi.so)}
    deps
    # As the test build is configured (RelWithDebInfo, with examples), so that the two share
    # every object above the runtime through ccache.
    build build/addon -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DFFIJIT_TVM_FFI_RUNTIME=$prefix" "${LLVM[@]}"
    run_tests build/addon
    ;;
  fuzz)
    deps
    # One JIT-enabled build holds every target: the parsers, the DLPack imports, the JIT module
    # loaders and hostile call values (both tiers must answer alike).
    CC=clang-$LLVM_MAJOR CXX=clang++-$LLVM_MAJOR build build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFFIJIT_BUILD_FUZZERS=ON -DFFIJIT_BUILD_TESTS=OFF -DFFIJIT_BUILD_BENCH=OFF \
      -DFFIJIT_BUILD_EXAMPLES=OFF -DFFIJIT_ENABLE_JIT=ON "${LLVM[@]}"
    # The targets run JOBS at a time: each is one process on one core, so its budget buys what it
    # would alone, and a 2-core machine spends half the wall time. Each target's output is printed
    # once all have ended, in name order.
    mkdir -p build/fuzz/artifacts build/fuzz/logs  # crash inputs stay out of the work tree
    running=0 failed=0
    for f in build/fuzz/bin/fuzz_*; do
      fuzz_target "$f" >"build/fuzz/logs/$(basename "$f").log" 2>&1 &
      if ((++running >= JOBS)); then
        wait -n || failed=1
        running=$((running - 1))
      fi
    done
    while ((running > 0)); do
      wait -n || failed=1
      running=$((running - 1))
    done
    for f in build/fuzz/bin/fuzz_*; do cat "build/fuzz/logs/$(basename "$f").log"; done
    exit $failed
    ;;
  aarch64)
    deps
    aarch64_sysroot
    build build/aarch64 -DCMAKE_BUILD_TYPE=Release -DFFIJIT_BUILD_BENCH=OFF -DFFIJIT_LLVM_VERSION=19 \
      -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DFFIJIT_AARCH64_SYSROOT="$AARCH64_SYSROOT"
    run_tests build/aarch64
    ;;
  bench)
    deps
    build build/release -DCMAKE_BUILD_TYPE=Release -DFFIJIT_BUILD_TESTS=OFF -DFFIJIT_BUILD_BENCH=ON \
      "${LLVM[@]}"
    # FFIJIT_BENCH_FIXED_LAYOUT=1 runs with address-space randomization off (bench/report does):
    # the random layout moves single rows by up to 0.6 ns from one process to the next
    # (handwritten/tensor: 3.65 ns in one, 4.27 ns in another), so two reports would disagree.
    if [ "${FFIJIT_BENCH_FIXED_LAYOUT:-0}" = 1 ] && setarch "$(uname -m)" -R true 2>/dev/null; then
      setarch "$(uname -m)" -R ./build/release/bin/ffijit_bench "${@:2}"
    else
      ./build/release/bin/ffijit_bench "${@:2}"
    fi
    ;;
  report)
    deps
    bench/report "${@:2}"
    ;;
  *)
    echo "usage: $0 demo|test|wheel|asan|tsan|nojit|revision NAME|revisions|addon PREFIX|fuzz|aarch64|bench|report|deps" >&2
    exit 2
    ;;
esac
