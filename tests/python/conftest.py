"""Shared fixtures of the Python suites: the natives library and module paths from ctest."""
import ctypes
import os

import pytest


def _path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suites through ctest (./build.sh test)")
    return value


@pytest.fixture(scope="session")
def natives_path():
    return _path("FFIJIT_TEST_NATIVES")


@pytest.fixture(scope="session")
def natives(natives_path):
    return ctypes.CDLL(natives_path)


@pytest.fixture(scope="session")
def module_so():
    return _path("FFIJIT_TEST_MODULE_SO")


@pytest.fixture(scope="session")
def module_o():
    return _path("FFIJIT_TEST_MODULE_O")


def address(lib, symbol):
    """The address of `symbol` in the ctypes library `lib`."""
    return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value


TIERS = ("interpreted", "compiled")


@pytest.fixture(params=TIERS)
def tier(request):
    """Both executors: the interpreter (interpret_only=True) and the JIT thunk (compile_now())."""
    import ffijit
    if request.param == "compiled" and not ffijit.jit_available():
        pytest.skip("this build has no JIT (LLVM)")
    return request.param


def make(tier, target, sig, **options):
    """An unregistered Function on `tier`: interpreted, or compiled now (asserted)."""
    import ffijit
    if tier == "interpreted":
        return ffijit.function(target, sig, interpret_only=True, **options)
    func = ffijit.function(target, sig, **options)
    func.compile_now()
    assert func.is_jit_compiled
    return func


def outcome(call):
    """('ok', value) or (exception type, message) of `call()`: compared across tiers."""
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return (type(e), str(e))


# Native callbacks and object files are JIT features: a build without LLVM refuses them, which
# test_without_jit.py asserts; the tests of what they do run where the JIT exists.
needs_jit = pytest.mark.skipif(not __import__("ffijit").jit_available(),
                               reason="native callbacks and object files need the JIT (LLVM)")
