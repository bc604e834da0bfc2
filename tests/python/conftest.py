"""Shared fixtures of the Python suites: the natives library and module paths from ctest."""
import ctypes
import os
import re
import types

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


TIERS = ("interpreted", "compiled", "entry", "stencil")


@pytest.fixture(params=TIERS)
def tier(request):
    """Every executor: the interpreter (interpret_only=True), the JIT thunk (compile_now()) called
    through the generic Python entry, the JIT thunk called through its generated (LLVM) entry, and
    the stencil thunk called through the stencil entry."""
    import ffijit
    if request.param != "interpreted" and not ffijit.jit_available():
        pytest.skip("this build has no JIT (LLVM)")
    return request.param


def function_of(func):
    """The ffijit.Function behind what ffijit hands Python (a builtin whose __self__ it is)."""
    import ffijit
    assert type(func) is types.BuiltinFunctionType, type(func)  # exactly: CPython specialises it
    assert isinstance(func.__self__, ffijit.Function), func.__self__
    return func.__self__


def make(tier, target, sig, **options):
    """An unregistered Function on `tier`: interpreted; compiled now (asserted) and called through
    the generic entry (pinned: the JIT policy would give it a stencil entry on its first call);
    compiled now with its generated entry too (asserted); or on its stencil thunk (when the stencil
    thunks cover it, else the interpreter) with its stencil entry (asserted). A signature that can
    have no such entry takes the generic one."""
    import ffijit
    if tier == "interpreted":
        func = ffijit.function(target, sig, interpret_only=True, **options)
        assert not function_of(func).has_entry
        return func
    func = ffijit.function(target, sig, **options)
    function = function_of(func)
    if tier == "stencil":
        try:
            function.use_entry("stencil")
        except RuntimeError as refused:
            assert ENTRY_REFUSAL.search(str(refused)), refused
            function.use_entry("generic")
        else:
            assert function.entry == "stencil"
        return func
    function.compile_now()
    assert function.is_jit_compiled
    if tier == "entry":
        try:
            function.compile_entry()
        except RuntimeError as refused:
            # Only an argument the entry never converts inline may refuse it; the calls then
            # run the generic path, and the test checks that tier once more.
            assert ENTRY_REFUSAL.search(str(refused)), refused
            assert not function.has_entry
        else:
            assert function.entry == "llvm"
    else:
        function.use_entry("generic")
        assert not function.has_entry
    return func


# What compile_entry() says about a parameter the generated entry does not convert: a structure,
# bytes, any, an object parameter (object, object<key>, list<...>, dict<...>), or arguments whose
# leaves a SIP put out of native order.
ENTRY_REFUSAL = re.compile(
    r"argument #\d+ `[^`]+` is a structure \(host entries convert flat arguments only\)"
    r"|argument #\d+ `(bytes|any|object\??|object<[^`]*>\??|list<[^`]*>|dict<[^`]*>)`"
    r" has no inline conversion in a host entry"
    r"|its arguments' leaves are out of native order"
    r"|a result is written into argument #\d+'s output storage \(host entries box native results"
    r" only\)"
    # stencil entries only: what they do not cover
    r"|more than 16 arguments|a build without the stencil tier")


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
