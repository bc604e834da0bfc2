"""Eight Python threads calling Functions at once, holding or releasing the GIL; natives whose own
threads call Python back."""
import ctypes
import json
import os
import re
import subprocess
import sys
import threading

import pytest

import ffijit
from conftest import TIERS, address, needs_jit


@pytest.mark.parametrize("release_gil", [False, True])
@pytest.mark.parametrize("entry", [False, True], ids=["policy", "entry_first"])
def test_concurrent_calls(natives, release_gil, entry):
    """Generated entries either compiled up front or, by the policy, while the threads run."""
    if entry and not ffijit.jit_available():
        pytest.skip("no generated entries in a build without LLVM")
    add3 = ffijit.function(address(natives, "py_add3"), {"a": ["i64"] * 3, "r": ["i64"]},
                           release_gil=release_gil)
    assert add3.__self__.releases_gil is release_gil
    echo = ffijit.function(address(natives, "py_echo"), {"a": ["str"], "r": ["str"]},
                           release_gil=release_gil)
    if entry:
        for func in (add3, echo):
            func.__self__.compile_entry()
            assert func.__self__.has_entry
    callback = ffijit.function(lambda x: x + 1)
    errors = []

    def worker(t):
        try:
            for i in range(3000):
                assert add3(t, i, 1) == t + 2 * i + 3
                assert echo(f"thread {t} call {i}") == f"thread {t} call {i}"
                assert callback(i) == i + 1
                if i % 500 == 0:
                    with pytest.raises(TypeError, match="Expected 3 but got 2 arguments"):
                        add3(t, i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_release_gil_is_kept_by_the_registered_name(natives):
    name = "pytest.threads.released"
    ffijit.register(name, address(natives, "py_add3"), {"a": ["i64"] * 3, "r": ["i64"]},
                    release_gil=True)
    try:
        assert ffijit.get_global_func(name).__self__.releases_gil
    finally:
        ffijit.remove_global_func(name)


ON_THREAD = {"a": ["ptr", "i64"], "r": ["i64"]}


@pytest.mark.parametrize("release_gil", [False, True])
def test_a_callback_from_a_thread_the_native_waits_for(natives, tier, release_gil):
    # The native starts a thread that calls Python back, and joins it. Holding the GIL
    # (release_gil=False) that would wait forever: the callback gives up once that same call has
    # held the GIL for FFIJIT_CALLBACK_GIL_WAIT_MS, with an error naming the function and the fix.
    if not ffijit.jit_available():
        pytest.skip("native callbacks need the JIT (LLVM)")
    from conftest import make
    on_thread = make(tier, address(natives, "py_call_pointer_on_thread"), ON_THREAD,
                     status_convention=True, release_gil=release_gil, name="on_thread")
    calls = []
    double = ffijit.callback(lambda x: calls.append(x) or 2 * x, {"a": ["i64"], "r": ["i64"]},
                             status_convention=True)
    pointer = ctypes.c_void_p(double.address)
    if release_gil:
        assert on_thread(pointer, 21) == 42
        assert calls == [21]
        return
    with pytest.raises(RuntimeError, match=r"the GIL is held by a call of `on_thread`, which does "
                       r"not release it \(release_gil=False\).*must be registered with "
                       r"release_gil=True"):
        on_thread(pointer, 21)
    assert calls == []
    # The function works as ever when nothing calls back from another thread.
    assert ffijit.function(lambda x: x)(5) == 5


# Run with FFIJIT_CALLBACK_GIL_WAIT_MS=0: the caller holds the GIL until the native returns, so
# the wait fails whatever its length; 0 only spares the test its seconds.
_JOINED_THREAD_PROBE = """
import ctypes, json, sys
sys.path.insert(0, sys.argv[2])
import ffijit
from conftest import TIERS, make
lib, status = ctypes.CDLL(sys.argv[1]), sys.argv[3] == "status"
def address(symbol):
    return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
take = ffijit.function(address("py_take_raised"), {"a": [], "r": []}, status_convention=True)
calls = []
bodies = [lambda x, k=k: calls.append(k) or x + k for k in range(3)]
callbacks = [ffijit.callback(body, {"a": ["i64"], "r": ["i64"]}, status_convention=status)
             for body in bodies]
pointers = (ctypes.c_void_p * 3)(*[callback.address for callback in callbacks])
reports = []
sys.unraisablehook = reports.append
outcomes = {}
for tier in TIERS:
    for release_gil in (False, True):
        run = make(tier, address("py_callbacks_on_thread"),
                   {"a": ["ptr", "i64", "i64", "i64"], "r": ["i64", "i64"]},
                   release_gil=release_gil, name="on_thread")
        reports.clear()
        calls.clear()
        result = list(run(pointers, 3, int(status), 10))
        seen = [[r.err_msg, type(r.exc_value).__name__, str(r.exc_value),
                 [i for i, body in enumerate(bodies) if r.object is body]] for r in reports]
        try:
            take()
            raised = None
        except RuntimeError as e:
            raised = str(e)
        outcomes[f"{tier} release_gil={release_gil}"] = {
            "result": result, "calls": list(calls), "reports": seen, "raised": raised}
print(json.dumps(outcomes))
"""

GAVE_UP = (r"^a Python callback called from a thread without the GIL cannot run: the GIL is held "
           r"by a call of `on_thread`, which does not release it \(release_gil=False\) and has "
           r"not returned in 0 ms; a native that calls Python back from threads of its own, and "
           r"waits for them, must be registered with release_gil=True$")


@needs_jit
@pytest.mark.parametrize("convention", ["plain", "status"])
def test_callbacks_from_a_thread_the_native_joins(natives_path, convention):
    """The native starts a thread that calls three callbacks and joins it, on every tier. With the
    GIL held by the caller (release_gil=False) each callback gives up; none may hang. The native
    gets what the convention says: a zero result and the error left raised in the thread (plain),
    or -1 with the error (status). A plain callback's error also reaches sys.unraisablehook once
    the call returns; a status callback's is the native's to pass on."""
    env = dict(os.environ, FFIJIT_CALLBACK_GIL_WAIT_MS="0")
    try:
        done = subprocess.run([sys.executable, "-c", _JOINED_THREAD_PROBE, natives_path,
                               os.path.dirname(__file__), convention],
                              env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"the callbacks hung: {hung.stderr}")
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(outcomes) == 2 * len(TIERS)
    for key, got in outcomes.items():
        if key.endswith("release_gil=True"):
            assert got == {"result": [33, 0], "calls": [0, 1, 2], "reports": [],
                           "raised": None}, key
            continue
        assert got["result"] == [0, 3] and got["calls"] == [], (key, got)
        assert re.match(GAVE_UP, got["raised"]), (key, got["raised"])
        if convention == "status":
            assert got["reports"] == [], (key, got["reports"])
            continue
        assert [index for *_, index in got["reports"]] == [[0], [1], [2]], (key, got["reports"])
        for err_msg, kind, message, _ in got["reports"]:
            assert err_msg == "Exception ignored on calling ffijit callback `callback(i64) -> i64`"
            assert kind == "RuntimeError" and re.match(GAVE_UP, message), (key, message)
