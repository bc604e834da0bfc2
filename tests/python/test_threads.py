"""Eight Python threads calling Functions at once, holding or releasing the GIL."""
import ctypes
import threading

import pytest

import ffijit
from conftest import address


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
