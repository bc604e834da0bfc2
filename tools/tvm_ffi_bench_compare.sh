#!/usr/bin/env bash
# Side-by-side benchmark: builds TVM FFI's own libtvm_ffi.so from a TVM FFI checkout the user
# supplies (its sources never enter this repository), compiles bench/tvm_ffi/compare.cc once
# against that checkout's headers, and runs the one program on TVM FFI's library and on ffijit's
# drop-in in interleaved rounds (LD_LIBRARY_PATH picks the library). Prints, per case, the median
# CPU time on each and the median of the per-round ratios ffijit / TVM FFI, against the targets.
#
# Usage:
#   tools/tvm_ffi_bench_compare.sh <tvm-ffi-source-dir> <revision> \
#       <ffijit drop-in dir containing libtvm_ffi.so> [dlpack-include-dir]
#
#   tvm-ffi-source-dir  a checkout (or `git archive` extract) of apache/tvm-ffi at <revision>
#   revision            a revision of the v0.1 layout (v0.1.13, v0.1.13-post2); the drop-in must
#                       implement the same one
#   drop-in dir         e.g. build/test/lib/ffijit/tvm-ffi (the directory, not the file)
#   dlpack-include-dir  the directory holding dlpack/dlpack.h (1.1 or later); defaults to the
#                       checkout's 3rdparty/dlpack/include (empty in a `git archive` extract)
#
# Environment:
#   TVM_FFI_BENCH_WORK_DIR  work dir (default /tmp/tvmffi-bench-<revision>); TVM FFI's objects
#                           are cached there
#   TVM_FFI_BENCH_ROUNDS    rounds (default 11); each runs the program once on each library, the
#                           order alternating from round to round
#   TVM_FFI_BENCH_MIN_TIME  seconds per case per run (default 0.05)
#   TVM_FFI_BENCH_FILTER    Google Benchmark --benchmark_filter (default: every case)
#   TVM_FFI_BENCH_JOBS      parallel compile jobs (default 2)
#   TVM_FFI_BENCH_UPDATE_DOCS  1: put the table into docs/performance.md ("Against TVM FFI itself")
#
# Needs g++, gcc, make, Google Benchmark (libbenchmark-dev) and python3 (for the statistics).
# Exit status: 0 when every case met its target, 1 when one did not, 2 for bad usage or a failed
# build or run.

set -uo pipefail

usage() {
  sed -n '8,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "tvm_ffi_bench_compare: $*" >&2
  exit 2
}

[[ $# -ge 3 && $# -le 4 ]] || usage
[[ -d "$1" ]] || die "TVM FFI source dir '$1' does not exist"
tvm_ffi_src=$(cd "$1" && pwd)
revision=$2
[[ -f "$3/libtvm_ffi.so" ]] || die "no libtvm_ffi.so in '$3'"
dropin_dir=$(cd "$3" && pwd)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/tvm_ffi_common.sh
source "$repo/tools/tvm_ffi_common.sh"
tvm_ffi_check_checkout "$tvm_ffi_src" "$revision"
[[ $rev_layout == v0.1 ]] || die "revision $revision: the benchmark program needs the v0.1 headers"

dlpack_inc=${4:-$tvm_ffi_src/3rdparty/dlpack/include}
[[ -f "$dlpack_inc/dlpack/dlpack.h" ]] ||
  die "no dlpack/dlpack.h under '$dlpack_inc' (give the DLPack include dir as the 4th argument)"
dlpack_inc=$(cd "$dlpack_inc" && pwd)

work=${TVM_FFI_BENCH_WORK_DIR:-/tmp/tvmffi-bench-$revision}
rounds=${TVM_FFI_BENCH_ROUNDS:-11}
min_time=${TVM_FFI_BENCH_MIN_TIME:-0.05}
filter=${TVM_FFI_BENCH_FILTER:-.}
jobs=${TVM_FFI_BENCH_JOBS:-2}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "TVM_FFI_BENCH_ROUNDS must be a positive integer"
mkdir -p "$work"/{tvm-ffi,rounds} || die "cannot create work dir '$work'"
work=$(cd "$work" && pwd)
rm -f "$work"/rounds/*.json

tvm_ffi_dlpack_flag "$dlpack_inc" "$work"

echo "=== TVM FFI $revision's library from $tvm_ffi_src (objects cached in $work/tvm-ffi) ==="
start=$SECONDS
if ! tvm_ffi_build_reference_library "$tvm_ffi_src" "$work/tvm-ffi" "$jobs"; then
  grep -E "error|\*\*\*" "$work/tvm-ffi/build.log" | head -30
  die "building TVM FFI's library failed (log: $work/tvm-ffi/build.log)"
fi
echo "--- ($((SECONDS - start)) s)"

echo "=== the benchmark program and its module, against $revision's headers ==="
start=$SECONDS
flags=(-O2 -DNDEBUG -Wall -Wextra -fPIC -pthread "-I$tvm_ffi_src/include" "$dlpack_flag")
g++ -std=c++17 "${flags[@]}" "$repo/bench/tvm_ffi/compare.cc" -o "$work/compare" \
  "-L$work/tvm-ffi" -ltvm_ffi -lbenchmark -lpthread >"$work/compile.log" 2>&1 ||
  { head -40 "$work/compile.log"; die "compiling bench/tvm_ffi/compare.cc failed"; }
# Linked with nothing: its TVM FFI symbols resolve against the library in the process.
gcc -std=c11 "${flags[@]}" -DFFIJIT_BENCH_TVM_FFI_HEADERS -shared -fvisibility=hidden \
  "$repo/bench/load_module.c" \
  -o "$work/compare_module.so" >>"$work/compile.log" 2>&1 ||
  { head -40 "$work/compile.log"; die "compiling bench/load_module.c failed"; }
echo "--- ($((SECONDS - start)) s)"

# Each library, and a check that the program really loads it.
libs=(tvm_ffi ffijit)
declare -A lib_dir=([tvm_ffi]="$work/tvm-ffi" [ffijit]="$dropin_dir")
for lib in "${libs[@]}"; do
  resolved=$(LD_LIBRARY_PATH="${lib_dir[$lib]}" ldd "$work/compare" | awk '$1 == "libtvm_ffi.so" {print $3}')
  [[ $(readlink -f "$resolved") == $(readlink -f "${lib_dir[$lib]}/libtvm_ffi.so") ]] ||
    die "with LD_LIBRARY_PATH=${lib_dir[$lib]} the program loads '$resolved'"
  echo "$lib: ${lib_dir[$lib]}/libtvm_ffi.so -> $(readlink -f "${lib_dir[$lib]}/libtvm_ffi.so")"
done

echo "=== $rounds interleaved rounds, ${min_time} s per case per run ==="
start=$SECONDS
for round in $(seq 1 "$rounds"); do
  order=("${libs[@]}")
  ((round % 2 == 0)) && order=(ffijit tvm_ffi)
  for lib in "${order[@]}"; do
    out="$work/rounds/$round-$lib.json"
    if ! (cd "$work" && LD_LIBRARY_PATH="${lib_dir[$lib]}" \
      TVM_FFI_BENCH_MODULE="$work/compare_module.so" timeout 600 ./compare \
      --benchmark_format=json --benchmark_min_time="$min_time" \
      --benchmark_filter="$filter") >"$out" 2>"$work/rounds/$round-$lib.err"; then
      tail -20 "$work/rounds/$round-$lib.err"
      die "round $round on $lib failed (output: $out)"
    fi
  done
  printf '.'
done
echo
echo "--- ($((SECONDS - start)) s)"

# The ffijit build type, when the drop-in sits in a CMake build tree.
build_type=unknown
dir=$dropin_dir
while [[ $dir != / ]]; do
  if [[ -f $dir/CMakeCache.txt ]]; then
    build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$dir/CMakeCache.txt")
    break
  fi
  dir=$(dirname "$dir")
done

echo
python3 - "$work/rounds" "$rounds" "$revision" "$build_type" "$min_time" "$work/compare.md" <<'EOF'
# Per case: median CPU ns on each library, median of the per-round ratios, the target; printed
# and written as a docs/performance.md section.
import datetime, json, os, statistics, sys
from pathlib import Path

rounds_dir, rounds, revision, build_type, min_time, out_md = sys.argv[1:7]
rounds_dir, rounds = Path(rounds_dir), int(rounds)

def read(path):
    rows = {}
    with open(path) as f:
        for run in json.load(f)['benchmarks']:
            if run.get('error_occurred'):
                print(f'{path}: {run["name"]}: {run.get("error_message")}', file=sys.stderr)
                sys.exit(2)
            scale = {'ns': 1.0, 'us': 1e3, 'ms': 1e6, 's': 1e9}[run['time_unit']]
            rows[run['name']] = (run['cpu_time'] * scale, run.get('names'))
    return rows

def fmt(ns):
    return f'{ns / 1000:.2f} µs' if ns >= 10000 else f'{ns:.1f} ns'

runs = {lib: [read(rounds_dir / f'{r}-{lib}.json') for r in range(1, rounds + 1)]
        for lib in ('tvm_ffi', 'ffijit')}
def target(name):
    return 1.2 if name.startswith('module/') or name == 'global/list_names' else 1.1

table = [f'| case | TVM FFI {revision} | ffijit | ffijit / TVM FFI | target |',
         '|---|---:|---:|---:|---:|']
missed = []
for name in runs['tvm_ffi'][0]:
    ref = [run[name][0] for run in runs['tvm_ffi']]
    ours = [run[name][0] for run in runs['ffijit']]
    ratio = statistics.median(o / r for o, r in zip(ours, ref))
    if ratio > target(name):
        missed.append(name)
    label = f'`{name}`'
    counts = (runs['tvm_ffi'][0][name][1], runs['ffijit'][0][name][1])
    if counts[0] is not None:
        label += f' ({counts[0]:.0f} / {counts[1]:.0f} names)'
    table.append(f'| {label} | {fmt(statistics.median(ref))} | {fmt(statistics.median(ours))} | '
                 f'{ratio:.2f}× | ≤ {target(name)}×{"" if ratio <= target(name) else " (missed)"} |')

with open('/proc/loadavg') as f:
    load = f.read().split()[:3]
with open('/proc/cpuinfo') as f:
    cpu = next((line.split(':', 1)[1].strip() for line in f if line.startswith('model name')),
               'unknown CPU')
section = [
    '## Against TVM FFI itself',
    '',
    f'`tools/tvm_ffi_bench_compare.sh <tvm-ffi checkout> {revision} <drop-in dir>` compiles '
    f'`bench/tvm_ffi/compare.cc` once against TVM FFI {revision}\'s headers and runs that one '
    'program on TVM FFI\'s own `libtvm_ffi.so` (built from the tag: -O2, the tag\'s default '
    'options without libbacktrace) and on ffijit\'s drop-in, in interleaved rounds. Times are '
    'medians of the rounds\' CPU time per iteration; the ratio is the median of the per-round '
    'ratios ffijit / TVM FFI. Targets: module load+lookup and the global listing ≤ 1.2×, every '
    'other case ≤ 1.1×.',
    '',
    f'Measured on {cpu}, {os.cpu_count()} cores, {datetime.date.today()}, {rounds} rounds of '
    f'{min_time} s per case, ffijit {build_type} build; load average {" / ".join(load)} '
    '(1 / 5 / 15 min) at the end of the run.',
    '',
    *table,
    '',
]
Path(out_md).write_text('\n'.join(section))
print('\n'.join(table))
print()
print(f'{rounds} rounds; load average {" ".join(load)}; cases above target: '
      f'{", ".join(missed) if missed else "none"}')
sys.exit(1 if missed else 0)
EOF
status=$?
echo "(section for docs/performance.md: $work/compare.md)"
if [[ ${TVM_FFI_BENCH_UPDATE_DOCS:-0} == 1 && $status != 2 ]]; then
  python3 - "$work/compare.md" "$repo/docs/performance.md" <<'EOF'
# Replaces the "Against TVM FFI itself" section of docs/performance.md, or puts it before the
# Python section (bench/report keeps it when it rewrites the file).
import re, sys
section, path = open(sys.argv[1]).read().rstrip('\n') + '\n\n', sys.argv[2]
text = open(path).read()
pattern = re.compile(r'## Against TVM FFI itself\n.*?(?=^## |\Z)', re.S | re.M)
if pattern.search(text):
    text = pattern.sub(lambda _: section, text, count=1)
elif '\n## Python call paths' in text:
    text = text.replace('\n## Python call paths', '\n' + section + '## Python call paths', 1)
else:
    text = text.rstrip('\n') + '\n\n' + section
open(path, 'w').write(text.rstrip('\n') + '\n')
print(f'updated {path}')
EOF
fi
exit $status
