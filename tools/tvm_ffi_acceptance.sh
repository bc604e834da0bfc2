#!/usr/bin/env bash
# TVM FFI acceptance harness: builds TVM FFI's own C++ test suite and examples from a TVM FFI
# checkout the user supplies (never from this repository: TVM FFI's sources stay outside it),
# links them against ffijit's drop-in libtvm_ffi.so, runs them and prints the results.
#
# Usage:
#   tools/tvm_ffi_acceptance.sh <tvm-ffi-source-dir> <revision: v0.1.13|e98b94e1> \
#       <ffijit drop-in dir containing libtvm_ffi.so> [dlpack-include-dir]
#
#   tvm-ffi-source-dir  a checkout (or `git archive` extract) of apache/tvm-ffi at <revision>
#   revision            v0.1.13 or e98b94e1; chooses the test list, the examples and the DLPack shim
#   drop-in dir         e.g. build/lib/ffijit/tvm-ffi (the directory, not the file)
#   dlpack-include-dir  the directory holding dlpack/dlpack.h; defaults to the checkout's
#                       3rdparty/dlpack/include (empty in a `git archive` extract)
#
# Environment:
#   TVM_FFI_ACCEPTANCE_WORK_DIR  work dir (default /tmp/tvmffi-work-<revision>); object files are
#                                cached there, so a re-run after changing ffijit only relinks
#   TVM_FFI_ACCEPTANCE_JOBS      parallel compile jobs (default 2)
#   TVM_FFI_ACCEPTANCE_GTEST_FILTER  passed to the test program as --gtest_filter
#
# What it does, per revision:
#   v0.1.13:  tests/cpp/test*.cc + tests/cpp/extra/test*.cc as ONE program (as upstream's CMake
#             builds it with TVM_FFI_USE_EXTRA_CXX_API=ON), linked with libtvm_ffi_testing.so
#             (built here from src/ffi/testing/*.cc with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1)
#             and the drop-in; examples/quickstart (C++ module + C++ loader) and
#             examples/stable_c_abi (C module + C loader).
#   e98b94e1: tests/cpp/test*.cc + tests/cpp/extra/test*.cc as one program (the testing globals
#             are the drop-in's own at this revision); examples/quick_start (C++ module + C++ loader,
#             and the C module compiled and linked).
# The tag's CMake is not used (v0.1.13 asks for CMake 3.26); the script writes its own Makefile.
# The test program crashing in a test is survived: the crashing test is recorded and the program
# is re-run without it (at most 20 times).
#
# Exit status: 0 when everything built, every test passed and every example printed the expected
# result; 1 otherwise; 2 for bad usage; 3 when the drop-in is missing (only the objects, which do
# not depend on ffijit, were compiled).

set -uo pipefail

usage() {
  sed -n '6,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "tvm_ffi_acceptance: $*" >&2
  exit 2
}

[[ $# -ge 3 && $# -le 4 ]] || usage
[[ -d "$1" ]] || die "TVM FFI source dir '$1' does not exist"
tvm_ffi_src=$(cd "$1" && pwd)
revision=$2
dropin_arg=$3
# The revision names ffijit knows: the rows of its table of revisions.
revisions=$(awk '!/^#/ && NF { print $1 }' "$(dirname "$0")/../cmake/tvm_ffi_revisions.txt" |
  paste -sd' ')
[[ " $revisions " == *" $revision "* ]] ||
  die "revision '$revision' is not one of: $revisions (cmake/tvm_ffi_revisions.txt)"
[[ -f "$tvm_ffi_src/include/tvm/ffi/c_api.h" ]] ||
  die "'$tvm_ffi_src' is not a TVM FFI checkout (no include/tvm/ffi/c_api.h)"

# The checkout must be the revision asked for: the two differ in c_api.h's version macros.
if grep -q '#define TVM_FFI_VERSION_PATCH' "$tvm_ffi_src/include/tvm/ffi/c_api.h"; then
  checkout_kind=v0.1
else
  checkout_kind=seed
fi
if [[ $revision == v0.1.13 ]]; then
  [[ $checkout_kind == v0.1 ]] || die "'$tvm_ffi_src' looks like the seed revision, not v0.1.13"
  patch=$(sed -n 's/^#define TVM_FFI_VERSION_PATCH \([0-9]*\).*/\1/p' \
    "$tvm_ffi_src/include/tvm/ffi/c_api.h")
  [[ $patch == 13 ]] || echo "tvm_ffi_acceptance: warning: checkout reports version 0.1.$patch" >&2
else
  [[ $checkout_kind == seed ]] || die "'$tvm_ffi_src' has version macros: it is not e98b94e1"
fi

dlpack_inc=${4:-$tvm_ffi_src/3rdparty/dlpack/include}
[[ -f "$dlpack_inc/dlpack/dlpack.h" ]] ||
  die "no dlpack/dlpack.h under '$dlpack_inc' (give the DLPack include dir as the 4th argument)"
dlpack_inc=$(cd "$dlpack_inc" && pwd)

dropin_dir=""
if [[ -f "$dropin_arg/libtvm_ffi.so" ]]; then
  dropin_dir=$(cd "$dropin_arg" && pwd)
fi

work=${TVM_FFI_ACCEPTANCE_WORK_DIR:-/tmp/tvmffi-work-$revision}
jobs=${TVM_FFI_ACCEPTANCE_JOBS:-2}
mkdir -p "$work"/{obj,lib,bin,logs} || die "cannot create work dir '$work'"
work=$(cd "$work" && pwd)

step_start=$SECONDS
step() {
  echo
  echo "=== $* ==="
  step_start=$SECONDS
}
step_done() { echo "--- ($((SECONDS - step_start)) s)"; }

failures=0

# ---------------------------------------------------------------------------------------------
# DLPack. v0.1.13's headers need DLPack 1.3; 1.2 and 1.3 add declarations but change no layout,
# so a 1.1 header (plus kDLTrn) completed with those declarations is enough. The shim wraps the
# given header and adds only what is missing.
# ---------------------------------------------------------------------------------------------
if [[ $revision == v0.1.13 ]]; then
  mkdir -p "$work/dlpack-shim/dlpack"
  shim="$work/dlpack-shim/dlpack/dlpack.h"
  cat >"$shim.tmp" <<EOF
/* Generated by tools/tvm_ffi_acceptance.sh: the DLPack header at
 * $dlpack_inc
 * completed to the DLPack 1.3 declarations TVM FFI v0.1.13 relies on. Layouts are unchanged
 * between 1.1 and 1.3; only names are added. */
#ifndef TVM_FFI_ACCEPTANCE_DLPACK_SHIM_H_
#define TVM_FFI_ACCEPTANCE_DLPACK_SHIM_H_
#include "$dlpack_inc/dlpack/dlpack.h"
#if DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2
#ifdef __cplusplus
extern "C" {
#endif
/* 1.2 names the versioned managed tensor as a typedef (a repeated typedef is allowed). */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
/* 1.2: the producer-side allocator a framework installs for tensors made on its behalf. */
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));
#ifdef __cplusplus
}
#endif
#endif
#if DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 3
/* Stamped into exported tensors: producer and consumer must agree on 1.3. */
#undef DLPACK_MINOR_VERSION
#define DLPACK_MINOR_VERSION 3
#endif
#endif /* TVM_FFI_ACCEPTANCE_DLPACK_SHIM_H_ */
EOF
  # Rewrite only when it changed, so cached objects stay valid.
  if cmp -s "$shim.tmp" "$shim"; then rm -f "$shim.tmp"; else mv "$shim.tmp" "$shim"; fi
  dlpack_flag="-I$work/dlpack-shim"
else
  dlpack_flag="-I$dlpack_inc"
fi

# ---------------------------------------------------------------------------------------------
# The Makefile: every TU of the tag compiled once into $work/obj (these depend only on the tag,
# the DLPack header and the flags, never on ffijit), then the links, which depend on the drop-in.
# ---------------------------------------------------------------------------------------------
shopt -s nullglob
test_sources=("$tvm_ffi_src"/tests/cpp/test*.cc "$tvm_ffi_src"/tests/cpp/extra/test*.cc)
testing_sources=()
if [[ $revision == v0.1.13 ]]; then
  testing_sources=("$tvm_ffi_src"/src/ffi/testing/*.cc)
  [[ ${#testing_sources[@]} -gt 0 ]] || die "no src/ffi/testing/*.cc in '$tvm_ffi_src'"
fi
shopt -u nullglob
[[ ${#test_sources[@]} -gt 0 ]] || die "no tests/cpp/test*.cc in '$tvm_ffi_src'"

obj_name() { # a source path -> its object file, unique per path inside the checkout
  local rel=${1#"$tvm_ffi_src"/}
  echo "obj/${rel//\//__}.o"
}

mk="$work/Makefile"
{
  echo "# Generated by tools/tvm_ffi_acceptance.sh for $revision; re-generated on every run."
  echo "SRC := $tvm_ffi_src"
  echo "DROPIN := ${dropin_dir:-/nonexistent-dropin}"
  echo "CXX := g++"
  echo "CC := gcc"
  echo "COMMON := -O1 -g0 -fPIC -pthread -I\$(SRC)/include $dlpack_flag -MMD -MP"
  echo "CXXFLAGS := -std=c++17 \$(COMMON)"
  echo "CFLAGS := -std=c11 \$(COMMON)"
  echo "MODFLAGS := -fvisibility=hidden"
  echo "LINK_FFI := -L\$(DROPIN) -ltvm_ffi"
  echo
  test_objs=()
  for s in "${test_sources[@]}"; do
    o=$(obj_name "$s")
    test_objs+=("$o")
    echo "$o: $s"
    echo "	\$(CXX) \$(CXXFLAGS) -c \$< -o \$@"
  done
  echo "TEST_OBJS := ${test_objs[*]}"
  testing_objs=()
  for s in "${testing_sources[@]}"; do
    o=$(obj_name "$s")
    testing_objs+=("$o")
    echo "$o: $s"
    echo "	\$(CXX) \$(CXXFLAGS) -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 -c \$< -o \$@"
  done
  echo "TESTING_OBJS := ${testing_objs[*]}"
  echo
  if [[ $revision == v0.1.13 ]]; then
    cat <<'EOF'
EX_OBJS := obj/quickstart__add_one_cpu.o obj/quickstart__load_cpp.o \
           obj/stable_c_abi__add_one_cpu.o obj/stable_c_abi__load.o
obj/quickstart__add_one_cpu.o: $(SRC)/examples/quickstart/compile/add_one_cpu.cc
	$(CXX) $(CXXFLAGS) $(MODFLAGS) -c $< -o $@
obj/quickstart__load_cpp.o: $(SRC)/examples/quickstart/load/load_cpp.cc
	$(CXX) $(CXXFLAGS) $(MODFLAGS) -c $< -o $@
obj/stable_c_abi__add_one_cpu.o: $(SRC)/examples/stable_c_abi/src/add_one_cpu.c
	$(CC) $(CFLAGS) $(MODFLAGS) -c $< -o $@
obj/stable_c_abi__load.o: $(SRC)/examples/stable_c_abi/src/load.c
	$(CC) $(CFLAGS) $(MODFLAGS) -c $< -o $@

lib/libtvm_ffi_testing.so: $(TESTING_OBJS) $(DROPIN)/libtvm_ffi.so
	$(CXX) -shared -pthread -Wl,--no-undefined $(TESTING_OBJS) $(LINK_FFI) -o $@
bin/tvm_ffi_tests: $(TEST_OBJS) lib/libtvm_ffi_testing.so $(DROPIN)/libtvm_ffi.so
	$(CXX) -pthread $(TEST_OBJS) -Llib -Wl,--no-as-needed -ltvm_ffi_testing -Wl,--as-needed $(LINK_FFI) -lgtest_main -lgtest -ldl -o $@
quickstart/build/add_one_cpu.so: obj/quickstart__add_one_cpu.o $(DROPIN)/libtvm_ffi.so
	mkdir -p quickstart/build
	$(CXX) -shared -Wl,--no-undefined $< $(LINK_FFI) -o $@
quickstart/build/load_cpp: obj/quickstart__load_cpp.o $(DROPIN)/libtvm_ffi.so
	mkdir -p quickstart/build
	$(CXX) $< $(LINK_FFI) -o $@
stable_c_abi/build/add_one_cpu.so: obj/stable_c_abi__add_one_cpu.o $(DROPIN)/libtvm_ffi.so
	mkdir -p stable_c_abi/build
	$(CC) -shared -Wl,--no-undefined $< $(LINK_FFI) -o $@
stable_c_abi/build/load: obj/stable_c_abi__load.o $(DROPIN)/libtvm_ffi.so
	mkdir -p stable_c_abi/build
	$(CC) $< $(LINK_FFI) -o $@

TESTS_BIN := bin/tvm_ffi_tests
EXAMPLES := quickstart/build/add_one_cpu.so quickstart/build/load_cpp \
            stable_c_abi/build/add_one_cpu.so stable_c_abi/build/load
EOF
  else
    cat <<'EOF'
EX_OBJS := obj/quick_start__add_one_cpu.o obj/quick_start__add_one_c.o obj/quick_start__run_example.o
obj/quick_start__add_one_cpu.o: $(SRC)/examples/quick_start/src/add_one_cpu.cc
	$(CXX) $(CXXFLAGS) $(MODFLAGS) -c $< -o $@
obj/quick_start__add_one_c.o: $(SRC)/examples/quick_start/src/add_one_c.c
	$(CC) $(CFLAGS) $(MODFLAGS) -c $< -o $@
obj/quick_start__run_example.o: $(SRC)/examples/quick_start/src/run_example.cc
	$(CXX) $(CXXFLAGS) -c $< -o $@

bin/tvm_ffi_tests: $(TEST_OBJS) $(DROPIN)/libtvm_ffi.so
	$(CXX) -pthread $(TEST_OBJS) $(LINK_FFI) -lgtest_main -lgtest -ldl -o $@
quick_start/build/add_one_cpu.so: obj/quick_start__add_one_cpu.o $(DROPIN)/libtvm_ffi.so
	mkdir -p quick_start/build
	$(CXX) -shared -Wl,--no-undefined $< $(LINK_FFI) -o $@
quick_start/build/add_one_c.so: obj/quick_start__add_one_c.o $(DROPIN)/libtvm_ffi.so
	mkdir -p quick_start/build
	$(CC) -shared -Wl,--no-undefined $< $(LINK_FFI) -o $@
quick_start/build/run_example: obj/quick_start__run_example.o $(DROPIN)/libtvm_ffi.so
	mkdir -p quick_start/build
	$(CXX) $< $(LINK_FFI) -o $@

TESTS_BIN := bin/tvm_ffi_tests
EXAMPLES := quick_start/build/add_one_cpu.so quick_start/build/add_one_c.so \
            quick_start/build/run_example
EOF
  fi
  cat <<'EOF'

objects: $(TEST_OBJS) $(TESTING_OBJS) $(EX_OBJS)
tests: $(TESTS_BIN)
examples: $(EXAMPLES)
.PHONY: objects tests examples
-include $(wildcard obj/*.d)
EOF
} >"$mk"

run_make() { # target, log file
  (cd "$work" && nice make -k -j"$jobs" "$1") >"$2" 2>&1
}

# Link errors, once per symbol (ld reports each call site), demangled by ld already.
print_link_errors() { # log file
  local n
  n=$(grep -c "undefined reference to" "$1")
  if [[ $n -gt 0 ]]; then
    echo "undefined symbols ($(grep -o "undefined reference to \`.*'" "$1" | sort -u | wc -l)" \
      "distinct, $n references):"
    grep -o "undefined reference to \`.*'" "$1" | sed "s/undefined reference to \`\(.*\)'/  \1/" |
      sort | uniq -c | sort -rn | awk '{c=$1; $1=""; printf "  %s   (%d refs)\n", $0, c}'
  fi
  grep -E "error:|Error [0-9]|cannot find" "$1" | grep -v "undefined reference" | head -40
}

# ---------------------------------------------------------------------------------------------
step "compile $revision's test and example sources (${#test_sources[@]} test TUs," \
  "${#testing_sources[@]} testing-library TUs; cached in $work/obj)"
if ! run_make objects "$work/logs/compile.log"; then
  grep -E "error:|\*\*\*" "$work/logs/compile.log" | head -60
  echo "COMPILE FAILED (full log: $work/logs/compile.log)"
  failures=$((failures + 1))
fi
step_done

if [[ -z $dropin_dir ]]; then
  echo
  echo "no libtvm_ffi.so in '$dropin_arg': compiled the objects only (re-run when it exists)"
  exit 3
fi
echo "drop-in: $dropin_dir/libtvm_ffi.so -> $(readlink -f "$dropin_dir/libtvm_ffi.so")"

# ---------------------------------------------------------------------------------------------
step "link the test program against the drop-in"
tests_linked=0
tests_bin=bin/tvm_ffi_tests
if run_make tests "$work/logs/link_tests.log"; then
  tests_linked=1
  echo "linked $work/bin/tvm_ffi_tests"
else
  print_link_errors "$work/logs/link_tests.log"
  echo "LINK FAILED (full log: $work/logs/link_tests.log)"
  failures=$((failures + 1))
  # Still get numbers: when only symbols are missing, link again with a stub for each that
  # reports its name and aborts, so every test that needs one shows up below as CRASHED.
  if [[ ${TVM_FFI_ACCEPTANCE_STUB_MISSING:-1} == 1 ]] &&
    ! grep -E "error:|cannot find" "$work/logs/link_tests.log" | grep -qv "ld returned"; then
    (cd "$work" && make -s -n tests | tail -1 | sed 's/$/ -Wl,--no-demangle/' | sh) \
      >"$work/logs/link_tests_mangled.log" 2>&1
    mapfile -t missing < <(grep -o "undefined reference to \`[^']*'" \
      "$work/logs/link_tests_mangled.log" | sed "s/.*\`\(.*\)'/\1/" | sort -u)
    {
      echo "/* Generated: stubs for the symbols the drop-in lacks; each aborts when called. */"
      echo "#include <stdio.h>"
      echo "#include <stdlib.h>"
      for m in "${missing[@]}"; do
        echo "void $m(void) { fprintf(stderr, \"MISSING IN DROP-IN: $m\\n\"); abort(); }"
      done
    } >"$work/missing_stubs.c"
    if gcc -shared -fPIC -O1 "$work/missing_stubs.c" -o "$work/lib/libmissing_stubs.so" &&
      (cd "$work" && make -s -n tests | tail -1 |
        sed 's| -o bin/tvm_ffi_tests$| -Llib -lmissing_stubs -o bin/tvm_ffi_tests_stubbed|' | sh) \
        >>"$work/logs/link_tests_mangled.log" 2>&1; then
      echo "linked bin/tvm_ffi_tests_stubbed with ${#missing[@]} stub(s) (each aborts when called)"
      tests_bin=bin/tvm_ffi_tests_stubbed
      tests_linked=1
    fi
  fi
fi
step_done

# ---------------------------------------------------------------------------------------------
if [[ $tests_linked == 1 ]]; then
  step "run $tests_bin (LD_LIBRARY_PATH=$dropin_dir:$work/lib)"
  crashed=()
  filter=${TVM_FFI_ACCEPTANCE_GTEST_FILTER:-*}
  for attempt in $(seq 1 21); do
    negative=""
    if [[ ${#crashed[@]} -gt 0 ]]; then negative="-$(IFS=:; echo "${crashed[*]}")"; fi
    if [[ $filter == *-* ]]; then full_filter="$filter${negative:+:${negative#-}}"; else
      full_filter="$filter$negative"
    fi
    log="$work/logs/tests_run$attempt.log"
    (cd "$work" && LD_LIBRARY_PATH="$dropin_dir:$work/lib" timeout 900 \
      "$tests_bin" --gtest_color=no --gtest_filter="$full_filter") >"$log" 2>&1
    rc=$?
    if grep -q "^\[==========\] .* ran\." "$log"; then break; fi
    # No summary: the program died. Find the test that was running.
    last=$(grep -o "^\[ RUN      \] .*" "$log" | tail -1 | sed 's/^\[ RUN      \] //')
    if [[ -z $last || $attempt == 21 ]]; then
      echo "test program died (exit $rc) outside any test; last lines:"
      tail -20 "$log"
      break
    fi
    echo "CRASH (exit $rc) in $last; last lines of its output:"
    sed -n "/^\[ RUN      \] ${last//\//\\/}\$/,\$p" "$log" | tail -8 | sed 's/^/    /'
    crashed+=("$last")
  done
  echo
  sed -n '/^\[==========\] .* ran\./,$p' "$log"
  [[ $rc == 0 ]] || failures=$((failures + 1))
  if [[ ${#crashed[@]} -gt 0 ]]; then
    echo "CRASHED (excluded from the run above): ${#crashed[@]}"
    printf '  %s\n' "${crashed[@]}"
    failures=$((failures + 1))
  fi
  echo "(full output: $log)"
  step_done
fi

# ---------------------------------------------------------------------------------------------
run_example() { # name, dir, command, expected output
  local out rc
  out=$(cd "$work/$2" && LD_LIBRARY_PATH="$dropin_dir" timeout 60 "$3" 2>&1)
  rc=$?
  echo "$1 (exit $rc):"
  echo "$out" | sed 's/^/    /'
  if [[ $rc == 0 && $(echo "$out" | tr -s ' \n' ' ' | sed 's/ *$//') == *"$4"* ]]; then
    echo "  -> OK"
  else
    echo "  -> FAILED (expected output containing '$4')"
    failures=$((failures + 1))
  fi
}

step "build and run the examples"
if run_make examples "$work/logs/examples.log"; then
  if [[ $revision == v0.1.13 ]]; then
    run_example "quickstart: load_cpp + add_one_cpu.so" quickstart build/load_cpp "[ 2 3 4 5 6 ]"
    run_example "stable_c_abi: load + add_one_cpu.so" stable_c_abi build/load \
      "[ 2.000000 3.000000 4.000000 5.000000 6.000000 ]"
  else
    run_example "quick_start: run_example + add_one_cpu.so" quick_start build/run_example \
      "x after add_one_cpu(x, x) 1 2 3 4 5"
  fi
else
  print_link_errors "$work/logs/examples.log"
  echo "EXAMPLES BUILD FAILED (full log: $work/logs/examples.log)"
  failures=$((failures + 1))
fi
step_done

echo
if [[ $failures == 0 ]]; then
  echo "ACCEPTANCE $revision: PASS"
  exit 0
fi
echo "ACCEPTANCE $revision: FAIL ($failures failed step(s))"
exit 1
