"""Modules loaded from a shared library and from an object file; a C++ object whose thread-locals
live in section groups, used from several threads and unloaded."""
import gc
import os
import threading
import time

import pytest

import ffijit
from conftest import needs_jit


@pytest.fixture(params=["so", pytest.param("o", marks=needs_jit)])
def module(request, module_so, module_o):
    return ffijit.load_module(module_so if request.param == "so" else module_o)


def test_attribute_and_item_access(module):
    assert isinstance(module, ffijit.Module)
    assert module.add_one(41) == 42
    assert module["add_one"](1) == 2
    assert module.get_function("add_one")(2) == 3
    assert module.get_function("nothing_here") is None
    assert module.implements_function("add_one")


def test_missing_functions(module):
    with pytest.raises(AttributeError, match="no function 'nothing_here'"):
        module.nothing_here
    with pytest.raises(KeyError, match="nothing_here"):
        module["nothing_here"]


def test_module_function_errors(module):
    with pytest.raises(TypeError, match="add_one expects one int"):
        module.add_one("x")
    with pytest.raises(ValueError, match="bad thing happened"):
        module.fail("bad thing happened")


@needs_jit
def test_function_outlives_the_module_object(module_so, module_o):
    for path in (module_so, module_o):
        func = ffijit.load_module(path).add_one
        gc.collect()
        assert func(9) == 10


@needs_jit
def test_import_module(module_so, module_o):
    outer = ffijit.load_module(module_so)
    inner = ffijit.load_module(module_o)
    assert outer.import_module(inner) is None
    assert outer.get_function("add_one", True)(0) == 1
    with pytest.raises(TypeError, match="expects an ffijit.Module"):
        outer.import_module(3)


def unload_once_threads_have_exited(mod):
    # Python's Thread.join() returns when the thread's Python state is gone, before the thread
    # itself exits and runs its thread_local destructors; until then the unload is refused
    # naming those threads. It is retried until they have exited (bounded: a thread that never
    # exits fails the test rather than hanging it).
    for _ in range(2000):
        try:
            mod.unload()
            return
        except RuntimeError as error:
            if "hold its thread_local objects" not in str(error):
                raise
        time.sleep(0.005)
    pytest.fail("the module's threads never exited: unload stayed refused")


@needs_jit
def test_grouped_thread_locals_on_threads_then_unload():
    # fixtures/grouped_thread_locals.cc of the JIT module tests: what_length(n) is the length of an
    # inline function's thread_local std::string, "x<n>".
    mod = ffijit.load_module(os.environ["FFIJIT_TEST_GROUPED_TLS_O"])
    assert mod.what_length(123) == 4
    lengths = {}

    def use(n):
        lengths[n] = mod.what_length(n)

    threads = [threading.Thread(target=use, args=(10 ** n,)) for n in range(1, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert lengths == {10: 3, 100: 4, 1000: 5}
    # A live thread holding the module's thread_local: the unload is refused, the module stays.
    used, release = threading.Event(), threading.Event()

    def hold():
        mod.what_length(7)
        used.set()
        release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    used.wait()
    # (The workers above may still be running their destructors: join() returned before that.)
    with pytest.raises(RuntimeError, match=r"[1-4] other thread\(s\) hold its thread_local objects"):
        mod.unload()
    assert mod.what_length(12) == 3
    release.set()
    holder.join()
    unload_once_threads_have_exited(mod)
    with pytest.raises(RuntimeError, match="unloaded"):
        mod.what_length(1)


def test_system_lib():
    lib = ffijit.system_lib()
    assert isinstance(lib, ffijit.Module)
    assert lib.get_function("surely_not_linked_in") is None
