#!/usr/bin/env python3
# Structure metrics of source folders: files over a line limit, functions over a line limit, and
# includes that point up or across folders against the allowed direction. Usage:
#   tools/house_metrics.py [--file-lines N] [--function-lines N] [-v] FOLDER...
# Run from the repository root. Function lengths come from a brace scanner (comments and literals
# stripped), not a compiler: a function is a brace block opened at namespace or class level after
# a closing parenthesis, lambdas inside it included.
#
# An include is upward when it closes a cycle between folders: the included header's folder
# reaches the including file's folder back through other includes, so dependencies between the
# two do not point one way. Counted per include line.
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cc", ".h", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_code(text):
    # Blank out comments and string/char literals, keeping line breaks, so braces count true.
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path, limit):
    code = strip_code(open(path, encoding="utf-8").read())
    found = []
    # Stack of brace kinds: "scope" (namespace, class, extern, enum) or "func".
    stack = []
    head_start = 0
    line = 1
    func_start = None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            in_func = "func" in stack
            if in_func:
                stack.append("block")
            elif re.search(r"\b(namespace|class|struct|union|enum)\b[^()]*$", head) or re.search(
                r'extern\s*""\s*$', head
            ):
                stack.append("scope")
            elif re.search(r"\)[^;{}()]*$", head) or re.search(r"\)\s*$", head.split(":")[0]):
                stack.append("func")
                name = re.search(r"([~\w:<>]+)\s*\([^;{}]*$", head, re.S)
                func_start = (line, name.group(1) if name else "?")
            else:
                stack.append("scope")
            head_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "func":
                start, name = func_start
                if line - start + 1 > limit:
                    found.append((line - start + 1, start, name))
            head_start = i + 1
        elif c == ";" and "func" not in stack:
            head_start = i + 1
    return found


def source_files(folders):
    for folder in folders:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(root, name)


def include_root(path, roots):
    # The include root a file's quoted includes are relative to: its top folder (jit/, python/src/).
    for root in roots:
        if path.startswith(root + "/"):
            return root
    return os.path.dirname(path)


def same_cycle(edges, a, b):
    # Whether folder b reaches folder a back through the include graph (a -> b is then part of a
    # cycle, against the one-way direction).
    graph = {}
    for x, y, _, _ in edges:
        if x != y:
            graph.setdefault(x, set()).add(y)
    seen, todo = set(), [b]
    while todo:
        x = todo.pop()
        if x == a:
            return True
        if x not in seen:
            seen.add(x)
            todo.extend(graph.get(x, ()))
    return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--file-lines", type=int, default=600)
    parser.add_argument("--function-lines", type=int, default=120)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args()
    roots = [f.rstrip("/") for f in args.folders]

    files = list(source_files(roots))
    big_files = []
    big_functions = []
    edges = []  # (including folder, included folder, file, header)
    for path in files:
        lines = open(path, encoding="utf-8").read().count("\n")
        if lines > args.file_lines:
            big_files.append((lines, path))
        for length, start, name in long_functions(path, args.function_lines):
            big_functions.append((length, "%s:%d" % (path, start), name))
        root = include_root(path, roots)
        for header in INCLUDE.findall(open(path, encoding="utf-8").read()):
            for base in (os.path.dirname(path), root):
                target = os.path.normpath(os.path.join(base, header))
                if os.path.exists(target):
                    edges.append((os.path.dirname(path), os.path.dirname(target), path, header))
                    break

    upward = [e for e in edges if e[0] != e[1] and same_cycle(edges, e[0], e[1])]
    print("files over %d lines: %d" % (args.file_lines, len(big_files)))
    if args.verbose:
        for lines, path in sorted(big_files, reverse=True):
            print("  %5d %s" % (lines, path))
    print("functions over %d lines: %d" % (args.function_lines, len(big_functions)))
    if args.verbose:
        for length, where, name in sorted(big_functions, reverse=True):
            print("  %5d %s %s" % (length, where, name))
    print("upward or cyclic includes between folders: %d" % len(upward))
    if args.verbose:
        for a, b, path, header in upward:
            print("  %s -> %s (folder %s -> %s)" % (path, header, a, b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
