"""The README's Python snippet and the guide's callback snippet (14.7) run exactly as written,
read from README.md and docs/guide/ at test time."""
import os
import re
import shutil
import stat
import subprocess
import sys

from conftest import needs_jit

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def snippet(document, heading):
    """The first Python block after `heading` in `document` (relative to the repository)."""
    with open(os.path.join(ROOT, document)) as text:
        text = text.read()
    section = text[text.index(f"\n{heading}\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def expected_output(snippet):
    """What the snippet's print lines say they print, from their trailing comments."""
    return [re.search(r"# (.*)$", line).group(1).strip()
            for line in snippet.splitlines() if line.startswith("print(")]


@needs_jit  # its module is an object file, linked by the JIT
def test_readme_python_snippet_runs_as_written(tmp_path):
    code = snippet("README.md", "### Python")
    assert "ffijit.load_module" in code and "include_dirs()" in code
    env = dict(os.environ)
    if "LD_PRELOAD" in env:
        # A sanitizer runtime preloaded into the interpreter (the sanitizer lanes) stays out of
        # the compiler the snippet runs: `cc` on PATH is a wrapper dropping it.
        wrapper = tmp_path / "bin" / "cc"
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\nunset LD_PRELOAD\nexec {shutil.which("cc")} "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        env["PATH"] = f"{wrapper.parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected_output(code) == ["5.0 13.0", "42"]


@needs_jit  # a native callback is JIT-compiled
def test_guide_callback_snippet_runs_as_written(tmp_path):
    code = snippet("docs/guide/14-python.md", "### 14.7 Callbacks")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected_output(code) == ["12.0", "[1, 2, 3, 4]"]
