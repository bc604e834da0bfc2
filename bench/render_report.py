#!/usr/bin/env python3
"""Turns one ffijit_bench JSON run into docs/performance.md, a gnuplot data file, and the README's
summary of the targets (between its `perf:begin` and `perf:end` markers).

    render_report.py RESULTS.json OUT.md OUT.dat [README.md]

The environment may say how the run was made: FFIJIT_REPORT_BUILD (the ffijit build type).
"""
import json
import os
import platform
import re
import sys

# Every BM_Call/<path>; CHART_PATHS are the bars of the chart (the columns of the .dat file).
PATHS = ["direct", "handwritten", "stencil", "jit", "hot", "handwritten_inlined", "hot_inlined",
         "typed_direct", "typed", "operator", "interp", "libffi"]
CHART_PATHS = ["direct", "handwritten", "jit", "hot", "handwritten_inlined", "hot_inlined",
               "typed_direct", "typed", "interp", "libffi"]
SIGNATURES = ["i64_i64_i64", "i64_f64_i32_f32_ptr", "dev_dtype_i64", "tensor", "str"]
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load(path):
    """Run name -> the benchmark entry to quote: the median when repeated, else the single run."""
    with open(path) as f:
        data = json.load(f)
    runs, medians, repetitions = {}, {}, 0
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b
                repetitions = max(repetitions, int(b.get("repetitions", 0)))
        elif "error_occurred" not in b:
            runs.setdefault(name, b)
    runs.update(medians)
    return data.get("context", {}), runs, repetitions


def ns(entry):
    return entry["real_time"] * UNIT_NS[entry["time_unit"]]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt_ns(value):
    return "—" if value is None else f"{value:.1f}"


def fmt_ratio(num, den):
    return "—" if num is None or den is None or den == 0 else f"{num / den:.2f}×"


def times(runs, sig):
    return {p: (ns(runs[f"BM_Call/{p}/{sig}"]) if f"BM_Call/{p}/{sig}" in runs else None)
            for p in PATHS}


def ratio_table(runs, shown, ratios):
    """One row per signature: the ns of each path in `shown`, then each (numerator, denominator)
    path ratio of `ratios`, both medians of the same run."""
    rows = [
        "| signature | " + " | ".join(f"{p} ns" for p in shown) + " | " +
        " | ".join(f"{num} / {den}" for num, den in ratios) + " |",
        "|---|" + "---:|" * (len(shown) + len(ratios)),
    ]
    for sig in SIGNATURES:
        t = times(runs, sig)
        rows.append(f"| `{sig}` | " + " | ".join(fmt_ns(t[p]) for p in shown) + " | " +
                    " | ".join(fmt_ratio(t[num], t[den]) for num, den in ratios) + " |")
    return rows


def call_table(runs):
    """The packed paths: the yardstick (handwritten), the three compiled tiers, the interpreter,
    libffi; and the chart's data file."""
    rows = ratio_table(runs, ["direct", "handwritten", "stencil", "jit", "hot", "interp", "libffi"],
                       [("stencil", "handwritten"), ("jit", "handwritten"), ("hot", "handwritten"),
                        ("jit", "direct"), ("interp", "libffi")])
    dat = []
    for sig in SIGNATURES:
        t = times(runs, sig)
        dat.append(sig + " " + " ".join("NaN" if t[p] is None else f"{t[p]:.3f}"
                                        for p in CHART_PATHS))
    return rows, dat


def inlined_table(runs):
    """The natives inlined: the hot tier of a bitcode native against hand-written code with the
    native's body in the same translation unit."""
    return ratio_table(runs, ["handwritten", "hot", "handwritten_inlined", "hot_inlined"],
                       [("hot_inlined", "handwritten_inlined"),
                        ("handwritten_inlined", "handwritten"), ("hot_inlined", "hot")])


def typed_table(runs):
    """The C++ paths: TypedFunction direct and packed, next to the direct call and operator()."""
    return ratio_table(runs, ["direct", "typed_direct", "typed", "operator"],
                       [("typed_direct", "direct"), ("typed", "operator")])


# The targets the README summarises: (label, numerator path, denominator path, target ratio).
TARGETS = [
    ("hot-tier thunk / hand-written C", "hot", "handwritten", 1.0),
    ("cold-tier thunk / hand-written C", "jit", "handwritten", 1.1),
    ("stencil-tier thunk / hand-written C", "stencil", "handwritten", 1.2),
    ("hot tier, native inlined / hand-written C, native inlined", "hot_inlined",
     "handwritten_inlined", 1.0),
    ("interpreter / libffi", "interp", "libffi", 0.5),
    ("`TypedFunction`, direct / a direct call", "typed_direct", "direct", 1.1),
    ("`TypedFunction`, packed / `Function::operator()`", "typed", "operator", 1.0),
]


def targets_table(runs):
    """One row per target: the range of the ratio over the signatures that have both paths."""
    rows = ["| packed path | measured, over the signatures | target | met |",
            "|---|---:|---:|:---:|"]
    for label, num, den, target in TARGETS:
        ratios = []
        for sig in SIGNATURES:
            t = times(runs, sig)
            if t[num] is not None and t[den]:
                ratios.append(t[num] / t[den])
        if ratios:
            rows.append(f"| {label} | {min(ratios):.2f}–{max(ratios):.2f}× | ≤ {target}× | "
                        f"{'yes' if max(ratios) <= target else 'no'} |")
    cold = runs.get("BM_Compile/cold")
    if cold is not None:
        rows.append(f"| a cold thunk's compile | {ns(cold) / 1e3:.0f} µs | ≤ 1000 µs | "
                    f"{'yes' if ns(cold) <= 1e6 else 'no'} |")
    stencil, interpreted = runs.get("BM_Compile/stencil"), runs.get("BM_Register/interpreted")
    if stencil is not None and interpreted is not None:
        cost = ns(stencil) - ns(interpreted)  # the registration itself is not the thunk's cost
        rows.append(f"| a stencil thunk (registration with it, less one without) | "
                    f"{cost / 1e3:.1f} µs | ≤ 20 µs | {'yes' if cost <= 20e3 else 'no'} |")
    return rows


def compile_table(runs):
    rows = ["| measure | value | target |", "|---|---:|---:|"]

    def add(label, value, target):
        rows.append(f"| {label} | {value} | {target} |")

    if "BM_Compile/stencil" in runs and "BM_Register/interpreted" in runs:
        cost = ns(runs["BM_Compile/stencil"]) - ns(runs["BM_Register/interpreted"])
        add("one stencil thunk (registration with it, less one without)", f"{cost / 1e3:.1f} µs",
            "≤ 20 µs")
    if "BM_Compile/cold" in runs:
        add("one cold thunk", f"{ns(runs['BM_Compile/cold']) / 1e3:.0f} µs", "≤ 1000 µs")
    batch = runs.get("BM_Compile/batch100")
    if batch is not None:
        if "per_thunk" in batch:
            add("per thunk, batch of 100", f"{batch['per_thunk'] * 1e6:.0f} µs", "≤ 150 µs")
        if "object_bytes_per_thunk" in batch:
            add("object code per thunk", f"{batch['object_bytes_per_thunk']:.0f} B", "")
        if "rss_bytes_per_thunk" in batch:
            add("resident memory per thunk", f"{batch['rss_bytes_per_thunk'] / 1024:.1f} KiB", "")
    hot = runs.get("BM_Compile/hot")
    if hot is not None:
        add("one hot-tier thunk (O2, one function)", f"{ns(hot) / 1e3:.0f} µs", "reported")
        if "object_bytes_per_thunk" in hot:
            add("object code per hot-tier thunk", f"{hot['object_bytes_per_thunk']:.0f} B", "")
        if "rss_bytes_per_thunk" in hot:
            add("resident memory per hot-tier thunk",
                f"{hot['rss_bytes_per_thunk'] / 1024:.1f} KiB", "")
    if "BM_Compile/cached" in runs:
        add("make a function and attach its cached thunk", f"{ns(runs['BM_Compile/cached']):.0f} ns", "")
    if "BM_Register/cached" in runs:
        add("register a function, signature cached", f"{ns(runs['BM_Register/cached']):.0f} ns",
            "≤ 1000 ns")
    return rows


def runtime_table(runs):
    rows = ["| benchmark | ns |", "|---|---:|"]
    if "BM_RefCount/incdec" in runs:
        rows.append(f"| one refcount operation (half of `BM_RefCount/incdec`; target ≤ 2 ns) | "
                    f"{ns(runs['BM_RefCount/incdec']) / 2:.1f} |")
    for name in ["BM_RefCount/incdec", "BM_RefCount/incdec_c_api", "BM_AnyFrom/int",
                 "BM_AnyFrom/small_str", "BM_AnyFrom/long_str", "BM_TypedCall/direct",
                 "BM_TypedCall/packed"]:
        if name in runs:
            rows.append(f"| `{name}` | {ns(runs[name]):.1f} |")
    return rows


def main():
    results, out_md, out_dat = sys.argv[1:4]
    readme = sys.argv[4] if len(sys.argv) > 4 else None
    context, runs, repeated = load(results)
    calls, dat = call_table(runs)
    how = (f"medians of {repeated} repetitions" if repeated else "single runs")
    # How bench/report ran the suite, when it did (not for --from).
    if os.environ.get("FFIJIT_REPORT_RUN"):
        how += f" ({os.environ['FFIJIT_REPORT_RUN']})"
    machine = (f"{cpu_model()}, {context.get('num_cpus', os.cpu_count())} cores, "
               f"{context.get('date', 'date unknown')[:10]}, {how}, ffijit "
               f"{os.environ.get('FFIJIT_REPORT_BUILD', 'unknown')} build")
    floor = runs.get("BM_Call/floor/noop")
    floor_note = (f" The packed floor -- `TVMFFIFunctionCall` of a safe_call that returns at once "
                  f"(`BM_Call/floor/noop`) -- is {ns(floor):.1f} ns: no packed path can go below "
                  f"it, and each packed column minus it is what that safe_call adds." if floor
                  else "")
    summary = [
        f"Measured on {machine}. Ratios compare numbers from the same run.",
        "",
        *calls,
        "",
        "`handwritten` is the yardstick: a hand-written C safe_call per signature with the same "
        "conversion contract (gcc -O2), installed as the function's entry point. `jit` is the "
        "shared cold-tier thunk, `hot` the function's own hot-tier thunk, `stencil` its "
        "copy-and-patch thunk (made at registration). Targets: hot ≤ 1.0× "
        "handwritten; stencil ≤ 1.2× "
        "handwritten; jit ≤ 1.1× handwritten; interp ≤ 0.5× libffi." + floor_note,
        "",
        *inlined_table(runs),
        "",
        "`handwritten_inlined` is the same hand-written safe_call with the native's body in its "
        "translation unit (gcc -O2 inlines it); `hot_inlined` the hot-tier thunk of the native "
        "loaded as LLVM bitcode (the same C source, the build LLVM's clang -O2) into a JIT module, "
        "its body inlined into the thunk. Target: hot_inlined ≤ 1.0× handwritten_inlined.",
        "",
        *typed_table(runs),
        "",
        "`typed_direct` is an `ffijit::TypedFunction` bound to the registered native (a direct "
        "call; none for `tensor` and `str`, whose conversions can fail), `typed` one over a "
        "`Function::FromTyped` wrapper (its packed fallback), `operator` that wrapper's "
        "`Function::operator()`. Targets: typed_direct ≤ 1.1× direct; typed ≤ 1.0× operator.",
    ]
    lines = [
        "# ffijit performance",
        "",
        "Generated by `bench/report` from one `ffijit_bench` run; do not edit by hand.",
        "",
        "![ns per call for each path and signature](performance.svg)",
        "",
        "## Packed calls (ns per call)",
        "",
        *summary,
        "",
        "## JIT compile latency and memory",
        "",
        *compile_table(runs),
        "",
        "## Runtime",
        "",
        *runtime_table(runs),
        "",
    ]
    # The side-by-side table tools/tvm_ffi_bench_compare.sh wrote (it needs a TVM FFI checkout,
    # which this run does not have) stays as it was.
    if os.path.exists(out_md):
        with open(out_md) as f:
            kept = re.search(r"^## Against TVM FFI itself\n.*?(?=^## |\Z)", f.read(), re.S | re.M)
        if kept:
            lines += [kept.group(0).rstrip("\n"), ""]
    with open(out_md, "w") as f:
        f.write("\n".join(lines))
    with open(out_dat, "w") as f:
        f.write("signature " + " ".join(CHART_PATHS) + "\n" + "\n".join(dat) + "\n")
    if readme:
        with open(readme) as f:
            text = f.read()
        block = ("<!-- perf:begin -->\n" + f"Measured on {machine}.\n\n" +
                 "\n".join(targets_table(runs)) + "\n<!-- perf:end -->")
        new, count = re.subn(r"<!-- perf:begin -->.*?<!-- perf:end -->", lambda _: block, text,
                             flags=re.S)
        if count != 1:
            sys.exit(f"render_report.py: {readme} needs one perf:begin/perf:end marker pair")
        with open(readme, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
