#!/usr/bin/env python3
# The house rules as a test: no include cycle between folders, no library source over 1,000 lines,
# no function over 150 lines (the entries of ALLOWED excepted, each with its reason), and every
# repository path a user doc names exists. Usage, from anywhere:
#   house_rules.py [--root DIR] [-v]   check the tree (exit 1 naming each breach; -v: the metrics)
#   house_rules.py --self-test         check the checker on small trees made for it
#
# Folders are the directories of the libraries' sources (runtime, reflect, every folder of jit,
# python, tools); a public header belongs to the library that defines it (include/ffijit/ the
# runtime's, include/ffijit/reflect/ reflect's, include/ffijit/jit/ jit's), and a header that only
# forwards an old path stands for the header it forwards to. Function lengths come from a brace
# scanner (comments and literals blanked), not a compiler: a function is a brace block opened at
# namespace or class level after a closing parenthesis, lambdas inside it included.
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 150
# Exceptions, each with the reason it is one: "path" for a file, "path:function" for a function.
ALLOWED = {}

LIBRARY_FOLDERS = ("runtime", "reflect", "jit", "python", "tools", "include")
# A folder's quoted includes resolve against these roots (each library's own root is added).
INCLUDE_ROOTS = ("include", "jit", "python/src")
PUBLIC_HEADER_OWNERS = (("include/ffijit/reflect/", "reflect"), ("include/ffijit/jit/", "jit"),
                        ("include/ffijit/", "runtime"))
C_SUFFIXES = (".cc", ".h", ".c", ".cpp", ".hpp")
SOURCE_SUFFIXES = C_SUFFIXES + (".py", ".S")
INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]', re.M)
USER_DOCS = ("README.md", "docs", "examples")


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
        elif text.startswith('R"', i) and re.match(r'R"([^(\s]*)\(', text[i:]):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def c_functions(text):
    # (name, first line, line count) of every function body in C or C++ source text.
    code = strip_code(text)
    found, stack = [], []
    head_start, line, func_start = 0, 1, None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            if "func" in stack:
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
                found.append((name, start, line - start + 1))
            head_start = i + 1
        elif c == ";" and "func" not in stack:
            head_start = i + 1
    return found


def py_functions(text):
    return [
        (node.name, node.lineno, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def tracked_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=False)
    if out.returncode == 0 and out.stdout:
        return [p for p in out.stdout.decode().split("\0") if p]
    # Not a git checkout (an unpacked archive): every file under the root.
    paths = []
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        paths += [os.path.relpath(os.path.join(base, f), root) for f in files]
    return paths


def library_sources(files):
    return sorted(
        p for p in files if p.split("/")[0] in LIBRARY_FOLDERS and p.endswith(SOURCE_SUFFIXES)
    )


def forwarded(root, path):
    # The header a forwarding header names, if all it does is include one other header.
    code = strip_includes_only(open(os.path.join(root, path), encoding="utf-8").read())
    lines = [l.strip() for l in code.splitlines() if l.strip()]
    includes = [l for l in lines if l.startswith("#include")]
    others = [l for l in lines if not re.match(r"#\s*(ifndef|define|endif|include)\b", l)]
    if len(includes) == 1 and not others and path.count("/") == 2:
        target = INCLUDE.findall(includes[0])[0]
        # An old path forwards into a library's folder of public headers, never sideways.
        if target.count("/") == 2 and target.startswith("ffijit/"):
            return target
    return None


def folder_of(root, path):
    # The folder a file counts for: its directory, or for a public header "LIBRARY:public", the
    # library's interface (which its own folders include without closing a cycle).
    for prefix, owner in PUBLIC_HEADER_OWNERS:
        if path.startswith(prefix):
            target = forwarded(root, path)
            if target:
                return folder_of(root, "include/" + target)
            return owner + ":public"
    return os.path.dirname(path)


def library_of(folder):
    return folder.split(":")[0].split("/")[0]


def resolve_include(root, path, header, tracked):
    bases = [os.path.dirname(path)] + [r for r in INCLUDE_ROOTS if path.startswith(r + "/")]
    bases += [r for r in INCLUDE_ROOTS if r not in bases]
    for base in bases:
        target = os.path.normpath(os.path.join(base, header))
        if target in tracked:
            return target
    return None


def include_edges(root, sources, tracked):
    # (including folder, included folder, file, header) for every include between two folders.
    edges = []
    for path in sources:
        if not path.endswith(C_SUFFIXES):
            continue
        text = open(os.path.join(root, path), encoding="utf-8").read()
        for header in INCLUDE.findall(strip_includes_only(text)):
            target = resolve_include(root, path, header, tracked)
            if target:
                a, b = folder_of(root, path), folder_of(root, target)
                if a != b:
                    edges.append((a, b, path, header))
    return edges


def strip_includes_only(text):
    # Comments blanked (an include in a comment is none), literals kept (they hold the names).
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def cyclic_edges(edges):
    # Includes that close a cycle: between two libraries (runtime <- reflect <- jit <- python,
    # tools), or between two folders of one library, where including the library's own public
    # headers never counts (they include nothing of its folders).
    between_libraries = [(library_of(a), library_of(b), p, h) for a, b, p, h in edges]
    between_libraries = [e for e in between_libraries if e[0] != e[1]]
    within = [e for e in edges if library_of(e[0]) == library_of(e[1]) and ":" not in e[1]]
    found = {(e[2], e[3]): e for e in closing_cycles(between_libraries) + closing_cycles(within)}
    return sorted(found.values(), key=lambda e: (e[2], e[3]))


def closing_cycles(edges):
    # The edges a -> b where b reaches a back: dependencies between a and b do not point one way.
    graph = {}
    for a, b, _, _ in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            x = todo.pop()
            if x == goal:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(graph.get(x, ()))
        return False

    return [e for e in edges if reaches(e[1], e[0])]


def long_files_and_functions(root, sources):
    files, functions = [], []
    for path in sources:
        text = open(os.path.join(root, path), encoding="utf-8").read()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            files.append((path, lines))
        if path.endswith(".py"):
            found = py_functions(text)
        elif path.endswith(C_SUFFIXES):
            found = c_functions(text)
        else:
            found = []
        for name, start, length in found:
            if length > MAX_FUNCTION_LINES:
                functions.append(("%s:%s" % (path, name), start, length))
    return files, functions


# Paths the docs name that are not this repository's: other projects' files, each with whose, and
# files the build writes.
NOT_IN_REPOSITORY = {
    "tests/cpp": "TVM FFI's C++ suite at each tag",
    "tests/cpp/extra": "TVM FFI's suite of its extra C++ API",
    "examples/quickstart": "TVM FFI's quick-start example",
    "examples/stable_c_abi": "TVM FFI's C ABI example",
    "include/tvm/ffi/function.h": "TVM FFI's header",
    "include/tvm/ffi": "a TVM FFI install's header folder",
    "include/dlpack": "a TVM FFI install's DLPack folder",
    "ffijit/tvm_ffi_abi_config.h": "generated by the build into its include folder",
}
PATH_IN_CODE = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./+-]*/[A-Za-z0-9_./+-]*)`")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def doc_paths(root, files):
    # (doc, named path, exists) for every repository path a user doc names: relative links, and
    # code spans whose first part is a top-level entry of the repository or a public header.
    tops = {p.split("/")[0] for p in files}
    dirs = {os.path.dirname(p) for p in files}
    while True:
        more = {os.path.dirname(d) for d in dirs} - dirs
        if not more:
            break
        dirs |= more
    known = set(files) | dirs

    def exists(p):
        return os.path.normpath(p).rstrip("/") in known

    found = []
    docs = [p for p in files if p.endswith(".md") and p.split("/")[0] in USER_DOCS or p in USER_DOCS]
    for doc in docs:
        text = open(os.path.join(root, doc), encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        here = os.path.dirname(doc)
        for link in MARKDOWN_LINK.findall(text):
            if re.match(r"[a-z]+:", link) or link.startswith("#"):
                continue
            target = link.split("#")[0]
            if target:
                found.append((doc, target, exists(os.path.join(here, target))))
        for span in PATH_IN_CODE.findall(text):
            path = re.sub(r":\d+(-\d+)?$", "", span.split("#")[0])
            first = path.split("/")[0]
            if any(ch in path for ch in "*{}<>") or "..." in path or path in NOT_IN_REPOSITORY:
                continue
            if first in tops:
                found.append((doc, path, exists(path)))
            elif first == "ffijit" and path.endswith(".h"):
                found.append((doc, path, exists("include/" + path)))
    return found


def check(root, verbose):
    files = tracked_files(root)
    tracked = set(files)
    sources = library_sources(files)
    problems = []
    cycles = cyclic_edges(include_edges(root, sources, tracked))
    for a, b, path, header in cycles:
        problems.append("include cycle: %s includes %s (folder %s -> %s)" % (path, header, a, b))
    big_files, big_functions = long_files_and_functions(root, sources)
    for path, lines in big_files:
        if path not in ALLOWED:
            problems.append("file over %d lines: %s (%d)" % (MAX_FILE_LINES, path, lines))
    for key, start, length in big_functions:
        if key not in ALLOWED:
            problems.append(
                "function over %d lines: %s at line %d (%d)" % (MAX_FUNCTION_LINES, key, start, length)
            )
    used = {p for p, _ in big_files} | {k for k, _, _ in big_functions}
    for key in sorted(set(ALLOWED) - used):
        problems.append("allow-list entry no longer needed: %s" % key)
    for doc, path, ok in doc_paths(root, files):
        if not ok:
            problems.append("%s names %s, which does not exist" % (doc, path))
    if verbose:
        print("library sources: %d; include edges between folders checked" % len(sources))
        print("files over %d lines: %d allowed" % (MAX_FILE_LINES, len(big_files)))
        print("functions over %d lines: %d allowed" % (MAX_FUNCTION_LINES, len(big_functions)))
    for p in problems:
        print("house rule broken: " + p)
    print("house rules: %d problem(s) in %d library sources" % (len(problems), len(sources)))
    return 1 if problems else 0


def self_test():
    # Each case is a small tree and the problem the checker must name in it; a clean tree passes.
    long_body = "int f() {\n" + "  x();\n" * (MAX_FUNCTION_LINES + 1) + "}\n"
    cases = [
        ("clean", {"jit/a/a.h": '#include "b/b.h"\n', "jit/b/b.h": "int b();\n"}, None),
        ("cycle", {"jit/a/a.h": '#include "b/b.h"\n', "jit/b/b.h": '#include "a/a.h"\n'},
         "include cycle"),
        ("cycle through a public header",
         {"include/ffijit/jit/x.h": '#include "ffijit/y.h"\n',
          "include/ffijit/y.h": '#include "ffijit/jit/x.h"\nint y();\n'}, "include cycle"),
        # The old path include/ffijit/x.h forwards to jit's header: counted as jit's, it closes
        # no cycle with the runtime, which jit's header includes.
        ("forwarding header",
         {"include/ffijit/x.h": '#include "ffijit/jit/x.h"\n',
          "include/ffijit/jit/x.h": '#include "ffijit/c.h"\n', "include/ffijit/c.h": "\n",
          "jit/j.cc": '#include "ffijit/x.h"\n'}, None),
        ("long function in C", {"jit/s/s.c": long_body}, "function over"),
        ("long file", {"reflect/r.cc": "\n" * (MAX_FILE_LINES + 1)}, "file over"),
        ("missing doc path", {"README.md": "see `jit/nowhere.cc`\n", "jit/a.cc": "\n"},
         "does not exist"),
        ("broken doc link", {"docs/x.md": "[y](../jit/gone.md)\n"}, "does not exist"),
    ]
    failures = 0
    for name, tree, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in tree.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                    f.write(text)
            import contextlib
            import io

            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = check(root, False)
            text = out.getvalue()
            ok = status == 0 if expected is None else (status == 1 and expected in text)
            print("%s: %s" % ("ok" if ok else "FAILED", name))
            if not ok:
                print(text)
                failures += 1
    print("self-test: %d passed, %d failed" % (len(cases) - failures, failures))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return check(os.path.abspath(args.root), args.verbose)


if __name__ == "__main__":
    sys.exit(main())
