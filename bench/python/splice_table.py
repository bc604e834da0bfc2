"""Puts one Python benchmark run (bench_calls.py --markdown/--summary) into the performance docs.

    splice_table.py TABLE.md SUMMARY.md PERFORMANCE.md README.md

Appends the full table to PERFORMANCE.md as its own section (bench/report rewrites that file
first) and puts the targets' summary between the README's `<!-- python-perf:begin -->` and
`<!-- python-perf:end -->` markers.
"""
import sys

BEGIN, END = "<!-- python-perf:begin -->", "<!-- python-perf:end -->"


def main(table_path, summary_path, performance_path, readme_path):
    with open(table_path) as f:
        table = f.read().strip()
    with open(summary_path) as f:
        summary = f.read().strip()
    with open(performance_path, "a") as f:
        f.write("\n## Python call paths\n\n" + table + "\n\n"
                "![Python call paths, ratio to the hand-written extension](python_calls.svg)\n")
    with open(readme_path) as f:
        readme = f.read()
    start, stop = readme.find(BEGIN), readme.find(END)
    if start < 0 or stop < start:
        sys.exit(f"{readme_path} has no {BEGIN} ... {END} markers")
    readme = readme[:start + len(BEGIN)] + "\n" + summary + "\n" + readme[stop:]
    with open(readme_path, "w") as f:
        f.write(readme)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
