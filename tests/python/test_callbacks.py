"""Python callables called from native code: modules, C globals, C function pointers, threads."""
import ctypes
import traceback

import pytest

import ffijit
from conftest import address, make, needs_jit

APPLY = {"a": ["ptr", "i64"], "r": ["i64"]}
ON_THREADS = {"a": ["object", "i64", "i64"], "r": ["i64"]}


class CustomError(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


@pytest.fixture(scope="module")
def module(module_so):
    return ffijit.load_module(module_so)


def test_python_callable_called_from_a_module(module):
    assert module.call_twice(lambda x: x * 3, 2) == 18
    assert module.call_twice(ffijit.function(lambda s: s + "!"), "hi") == "hi!!"
    seen = []
    assert module.call_twice(lambda x: seen.append(x) or len(seen), 7) == 2
    assert seen == [7, 1]


def test_python_function_as_a_c_visible_global(natives):
    name = "pytest.callbacks.square"
    ffijit.register_func(name, lambda x: x * x)
    try:
        call_global = ffijit.function(address(natives, "py_call_global"),
                                      {"a": ["str", "i64"], "r": ["i64"]})
        assert call_global(name, 7) == 49
        assert ffijit.get_global_func(name)(5) == 25
    finally:
        ffijit.remove_global_func(name)


def test_register_func_decorator():
    name = "pytest.callbacks.decorated"

    @ffijit.register_func(name)
    def add(a, b):
        return a + b

    try:
        assert add(1, 2) == 3  # the decorator returns the Python function itself
        assert ffijit.get_global_func(name)(40, 2) == 42
    finally:
        ffijit.remove_global_func(name)


@needs_jit
def test_native_callback_pointer(natives, tier):
    apply = make(tier, address(natives, "py_apply"), APPLY)
    square = ffijit.callback(lambda i: i * i, {"a": ["i64"], "r": ["i64"]})
    assert isinstance(square, ffijit.NativeCallback)
    assert square.address != 0 and int(square) == square.address
    assert apply(ctypes.c_void_p(square.address), 5) == 0 + 1 + 4 + 9 + 16
    assert square.function(3) == 9


@needs_jit
def test_native_callback_of_a_function_calls_that_function(natives):
    apply = ffijit.function(address(natives, "py_apply"), APPLY)
    triple = ffijit.function(lambda i: 3 * i)
    for func in (triple, triple.__self__):
        pointer = ffijit.callback(func, {"a": ["i64"], "r": ["i64"]})
        held = pointer.function
        held = held if isinstance(held, ffijit.Function) else held.__self__
        assert held.same_as(triple.__self__)
        assert pointer.function(5) == 15
        assert apply(ctypes.c_void_p(pointer.address), 4) == 3 * (0 + 1 + 2 + 3)


@needs_jit
def test_native_callback_works_with_ctypes_call(natives):
    seen = []
    record = ffijit.callback(lambda i: seen.append(i) or 2 * i, {"a": ["i64"], "r": ["i64"]})
    natives.py_apply.restype = ctypes.c_int64
    natives.py_apply.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    assert natives.py_apply(record.address, 3) == 6
    assert seen == [0, 1, 2]


QSORT = {"a": ["ptr", "u64", "u64", "ptr"], "r": []}
COMPARE = {"a": ["ptr", "ptr"], "r": ["i32"]}


@needs_jit
def test_pointer_arguments_arrive_as_ints(tier):
    """A callback's ptr arguments are int addresses, as ctypes passes c_void_p ones: libc's qsort
    on every executor (and from ctypes) sorts through a comparator that reads them."""
    qsort = make(tier, ("libc.so.6", "qsort"), QSORT)
    seen = set()
    read = ctypes.c_int32.from_address

    def compare(a, b):
        seen.add(type(a))
        seen.add(type(b))
        x, y = read(a).value, read(b).value
        return (x > y) - (x < y)

    comparator = ffijit.callback(compare, COMPARE)
    values = [5, -3, 9, 0, 7, 7, -10, 2, 2**31 - 1, -2**31]
    array = (ctypes.c_int32 * len(values))(*values)
    qsort(ctypes.c_void_p(ctypes.addressof(array)), len(array), 4,
          ctypes.c_void_p(comparator.address))
    assert list(array) == sorted(values)
    assert seen == {int}
    libc_qsort = ctypes.CDLL("libc.so.6").qsort
    libc_qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
    descending = ffijit.callback(lambda a, b: -compare(a, b), COMPARE)
    libc_qsort(array, len(array), 4, descending.address)
    assert list(array) == sorted(values, reverse=True)


@needs_jit
def test_pointer_argument_values():
    """The address as given, the full 64 bits, and NULL as None; the same through the plain C
    pointer and through the Function (a packed call from Python with a c_void_p)."""
    seen = []
    pointer = ffijit.callback(lambda a, b: seen.append((a, b)) or 1, COMPARE)
    call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(pointer.address)
    high = 0xFFFF_FFFF_FFFF_FFF0
    assert call(0x1234, high) == 1
    assert call(None, 8) == 1
    assert pointer.function(ctypes.c_void_p(0x1234), None) == 1
    assert seen == [(0x1234, high), (None, 8), (0x1234, None)]
    assert all(v is None or type(v) is int for pair in seen for v in pair)


def test_callback_arguments_of_a_packed_call():
    """A Python callable called through a packed call gets ptr values as ints, other values as
    14.5 says (results of ffijit functions keep ctypes.c_void_p)."""
    got = []
    func = ffijit.function(lambda *args: got.append(args))
    func(ctypes.c_void_p(64), 3, 2.5, True, None, "text", ffijit.Device("cpu", 0))
    assert got == [(64, 3, 2.5, True, None, "text", ffijit.Device("cpu", 0))]
    assert [type(v) for v in got[0][:4]] == [int, int, float, bool]
    echo = ffijit.function(lambda p: ctypes.c_void_p(p))
    result = echo(ctypes.c_void_p(96))
    assert isinstance(result, ctypes.c_void_p) and result.value == 96


def _raise(exc):
    raise exc


def test_exception_from_a_callback_is_the_same_object(module):
    exc = CustomError("boom", 17)

    def callback(x):
        raise exc

    with pytest.raises(CustomError) as info:
        module.call_twice(callback, 1)
    assert info.value is exc
    assert info.value.code == 17
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "test_exception_from_a_callback_is_the_same_object" in frames  # the caller
    assert "callback" in frames  # the callback


def test_exception_through_a_registered_global_and_native_frames(natives):
    exc = ValueError("from python")
    name = "pytest.callbacks.raises"
    ffijit.register_func(name, lambda x: _raise(exc))
    try:
        with pytest.raises(ValueError) as info:
            ffijit.get_global_func(name)(1)
        assert info.value is exc
        frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
        assert "_raise" in frames
    finally:
        ffijit.remove_global_func(name)


def test_builtin_exception_from_a_callback_keeps_its_type(module):
    with pytest.raises(ZeroDivisionError):
        module.call_twice(lambda x: 1 // 0, 1)
    with pytest.raises(KeyError):
        module.call_twice(lambda x: {}["missing"], 1)


def test_callback_result_that_cannot_be_converted(module):
    with pytest.raises(TypeError, match="callback result"):
        module.call_twice(lambda x: object(), 1)


def test_callbacks_from_native_threads(natives):
    on_threads = ffijit.function(address(natives, "py_call_on_threads"), ON_THREADS,
                                 status_convention=True, release_gil=True)
    calls = []

    def double(x):
        calls.append(x)  # touches Python state: needs the GIL
        return 2 * x

    assert on_threads(double, 8, 10) == 2 * sum(range(10, 18))
    assert sorted(calls) == list(range(10, 18))


def test_exception_from_a_native_thread_reaches_the_caller(natives):
    on_threads = ffijit.function(address(natives, "py_call_on_threads"), ON_THREADS,
                                 status_convention=True, release_gil=True)
    exc = CustomError("thread failure", 3)

    def fail(x):
        raise exc

    with pytest.raises(CustomError) as info:
        on_threads(fail, 1, 0)
    assert info.value is exc


def test_function_of_a_function_is_itself():
    made = ffijit.function(lambda: 1)
    # The same Function (Python sees it through a builtin whose __self__ it is), not a callback
    # calling it.
    assert ffijit.function(made).__self__.same_as(made.__self__)
    assert ffijit.function(made.__self__).__self__.same_as(made.__self__)
    with pytest.raises(TypeError, match="not callable"):
        ffijit.NativeCallback(12, '{"a":[],"r":[]}')


@needs_jit
def test_releasing_a_carried_exception_may_raise_through_another_callback():
    # Dropping a carried exception runs a __del__ in its frames, which raises through another
    # callback and so records another carried exception while the first is being dropped.
    raiser = ffijit.function(lambda: (_ for _ in ()).throw(KeyError("inner")))

    class RaisesWhenDropped:
        def __del__(self):
            try:
                raiser()
            except KeyError:
                pass

    def body(x):
        keep = RaisesWhenDropped()  # noqa: F841  (dropped with the traceback's frame)
        raise ValueError(x)

    callback = ffijit.callback(body, {"a": ["i64"], "r": ["i64"]})
    call = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(callback.address)
    for i in range(200):
        assert call(i) == 0  # plain convention: the error stays in the slot, then is dropped
