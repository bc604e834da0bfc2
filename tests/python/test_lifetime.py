"""Functions keep what they need alive and release it; repeated calls do not grow memory."""
import gc
import sys
import tracemalloc

import ffijit
from conftest import address


def test_callable_refcount_returns_after_functions_are_dropped():
    def target(x):
        return x

    before = sys.getrefcount(target)
    made = [ffijit.function(target) for _ in range(100)]
    assert sys.getrefcount(target) >= before + 100
    assert made[0](5) == 5
    del made
    gc.collect()
    assert sys.getrefcount(target) == before


def test_registered_global_keeps_the_callable_until_removed():
    def target():
        return 1

    before = sys.getrefcount(target)
    ffijit.register_func("pytest.lifetime.kept", target)
    assert sys.getrefcount(target) == before + 1
    ffijit.remove_global_func("pytest.lifetime.kept")
    gc.collect()
    assert sys.getrefcount(target) == before


def test_many_calls_do_not_grow_memory(natives):
    add3 = ffijit.function(address(natives, "py_add3"), {"a": ["i64"] * 3, "r": ["i64"]})
    echo = ffijit.function(address(natives, "py_echo"), {"a": ["str"], "r": ["str"]})
    same = ffijit.function(address(natives, "py_same_object"), {"a": ["object"], "r": ["object"]})
    text = "a string longer than seven bytes"

    def batch(n):
        for i in range(n):
            add3(i, 1, 2)
            echo(text)
            same([i, "x" * 10])

    batch(1000)  # warm caches
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    batch(70000)
    end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert end - start < 5 * 1024 * 1024


def test_callback_exceptions_do_not_accumulate(module_so):
    module = ffijit.load_module(module_so)

    class Tracked(Exception):
        pass

    def fail(x):
        raise Tracked()

    for _ in range(500):
        try:
            module.call_twice(fail, 1)
        except Tracked:
            pass
    gc.collect()
    assert sum(isinstance(o, Tracked) for o in gc.get_objects()) < 100
