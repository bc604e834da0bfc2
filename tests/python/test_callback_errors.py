"""Exceptions raised in Python callbacks: the same object back to the Python caller across any
number of native frames, sys.unraisablehook where the native caller cannot be told (stderr once
Python is shutting down), and a traceback formatted once per frame however deep the nesting."""
import ctypes
import re
import subprocess
import sys
import traceback

import pytest

import ffijit
from conftest import address, needs_jit

pytestmark = needs_jit

CB = {"a": ["i64"], "r": ["i64"]}


class CustomError(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def exceptions():
    return [CustomError("deep", 42), SystemExit(3), KeyboardInterrupt("stop")]


class Nest:
    """callback -> native -> callback ... `depth` levels, the innermost callback raising `exc`."""

    def __init__(self, natives, route, exc):
        self.exc = exc
        self.calls = 0
        if route == "status":  # C function pointers, status convention on both sides
            self.native = ffijit.function(address(natives, "py_nest_status"),
                                          {"a": ["ptr", "i64"], "r": ["i64"]},
                                          status_convention=True)
            self.callback = ffijit.callback(self.body, CB, status_convention=True)
            self.handle = ctypes.c_void_p(self.callback.address)
        elif route == "plain":  # C function pointers, plain convention on both sides
            self.native = ffijit.function(address(natives, "py_nest_plain"),
                                          {"a": ["ptr", "i64"], "r": ["i64"]})
            self.callback = ffijit.callback(self.body, CB)
            self.handle = ctypes.c_void_p(self.callback.address)
        else:  # packed Functions, through a status-convention native
            self.native = ffijit.function(address(natives, "py_nest_packed"),
                                          {"a": ["object", "i64"], "r": ["i64"]},
                                          status_convention=True)
            self.handle = ffijit.function(self.body)

    def body(self, x):
        self.calls += 1
        if x == 0:
            raise self.exc
        return self.native(self.handle, x - 1) + 1

    def run(self, depth):
        return self.native(self.handle, depth - 1)


@pytest.mark.parametrize("route", ["status", "packed"])
@pytest.mark.parametrize("depth", [1, 100])
@pytest.mark.parametrize("which", [0, 1, 2], ids=["custom", "SystemExit", "KeyboardInterrupt"])
def test_the_same_exception_comes_back(natives, route, depth, which):
    exc = exceptions()[which]
    nest = Nest(natives, route, exc)
    with pytest.raises(type(exc)) as info:
        nest.run(depth)
    assert info.value is exc
    assert nest.calls == depth
    if isinstance(exc, CustomError):
        assert info.value.code == 42 and str(info.value) == "deep"
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert frames.count("body") == depth  # every Python level, in one traceback


@pytest.mark.parametrize("depth", [1, 100])
@pytest.mark.parametrize("which", [0, 1, 2], ids=["custom", "SystemExit", "KeyboardInterrupt"])
def test_plain_convention_reports_to_unraisablehook(natives, monkeypatch, depth, which):
    exc = exceptions()[which]
    nest = Nest(natives, "plain", exc)
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    # The native caller cannot be told: the innermost pointer returns 0 and each level adds 1.
    assert nest.run(depth) == depth - 1
    assert len(seen) == 1, seen
    report = seen[0]
    assert report.exc_value is exc
    assert report.exc_type is type(exc)
    assert "body" in [frame.name for frame in traceback.extract_tb(report.exc_traceback)]
    assert report.err_msg.startswith("Exception ignored on calling ffijit callback `callback(")
    assert report.object == nest.body


def test_unraisable_report_is_printed_with_the_traceback(natives, monkeypatch, capfd):
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)  # Python's own printer
    nest = Nest(natives, "plain", CustomError("printed", 1))
    assert nest.run(1) == 0
    err = capfd.readouterr().err
    assert "Exception ignored on calling ffijit callback `callback(i64) -> i64`" in err
    assert "Traceback (most recent call last)" in err and "in body" in err
    assert "CustomError: printed" in err


def test_plain_convention_error_stays_raised_for_a_native_caller(natives, monkeypatch):
    # After the report the error is still the thread's raised error, as a C caller would find
    # it with TVMFFIErrorMoveFromRaised; a C function taking it gives the failure back.
    monkeypatch.setattr(sys, "unraisablehook", lambda report: None)
    exc = CustomError("kept", 5)
    nest = Nest(natives, "plain", exc)
    assert nest.run(1) == 0
    take = ffijit.function(address(natives, "py_take_raised"), {"a": [], "r": []},
                           status_convention=True)
    with pytest.raises(CustomError) as info:
        take()
    assert info.value is exc


def test_conversion_error_of_a_plain_callback_is_reported(natives, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    native = ffijit.function(address(natives, "py_nest_plain"),
                             {"a": ["ptr", "i64"], "r": ["i64"]})
    bad = ffijit.callback(lambda x: "not an int", CB)
    assert native(ctypes.c_void_p(bad.address), 1) == 0
    assert len(seen) == 1 and isinstance(seen[0].exc_value, TypeError), seen


def test_propagation_formats_each_frame_once(natives, monkeypatch):
    # Crossing into native code formats the traceback for native callers. An exception raised
    # through N levels crosses N times; each crossing formats only the frames added since the
    # last, so the frames formatted grow linearly with the depth (before: the whole traceback
    # at every crossing, N^2 / 2 frames).
    formatted = []
    real = traceback.format_tb

    def counting(tb, limit=None):
        lines = real(tb, limit)
        formatted.append(len(lines))
        return lines

    monkeypatch.setattr(traceback, "format_tb", counting)
    for depth in (80, 800):
        formatted.clear()
        exc = CustomError("deep", depth)
        nest = Nest(natives, "status", exc)
        with pytest.raises(CustomError) as info:
            nest.run(depth)
        assert info.value is exc
        frames = len(traceback.extract_tb(info.value.__traceback__))
        assert len(formatted) == depth
        assert sum(formatted) <= frames, (depth, sum(formatted), frames)


_SHUTDOWN_PROBE = """
import ctypes, sys
import ffijit
lib = ctypes.CDLL(sys.argv[1])
nest = ffijit.function(ctypes.cast(lib.py_nest_plain, ctypes.c_void_p).value,
                       {"a": ["ptr", "i64"], "r": ["i64"]})


def increment(x):
    return x + 1


class Late:
    # Calls a plain callback as the interpreter tears its modules down: nothing of Python can
    # report the error then.
    def __init__(self):
        self.nest = nest
        self.callback = ffijit.callback(increment, {"a": ["i64"], "r": ["i64"]})
        self.pointer = ctypes.c_void_p(self.callback.address)
        assert self.nest(self.pointer, 1) == 2

    def __del__(self):
        self.nest(self.pointer, 1)


late = Late()
"""


def test_a_plain_callback_error_during_shutdown_goes_to_stderr(natives_path):
    done = subprocess.run([sys.executable, "-c", _SHUTDOWN_PROBE, natives_path],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^Exception ignored on calling ffijit callback `callback\(i64\) -> i64`: "
                     r"<ffijit\.NativeCallback increment\(i64\) -> i64 at 0x[0-9a-f]+>\n"
                     r"RuntimeError: a Python callback was called while Python is shutting down$",
                     done.stderr, re.M), done.stderr
