"""Python callables called from native code: modules, C globals, C function pointers, threads."""
import ctypes
import re
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
    """A Python callable called through a packed call gets values as 14.5 says: a pointer stays a
    ctypes.c_void_p (TVM FFI's convention), so one it passes on or returns is still a pointer;
    only a C function pointer's callback (ffijit.callback) gets int addresses."""
    got = []
    func = ffijit.function(lambda *args: got.append(args))
    func(ctypes.c_void_p(64), 3, 2.5, True, None, "text", ffijit.Device("cpu", 0))
    assert [type(v) for v in got[0][:5]] == [ctypes.c_void_p, int, float, bool, type(None)]
    assert got[0][0].value == 64
    assert got[0][1:] == (3, 2.5, True, None, "text", ffijit.Device("cpu", 0))
    echo = ffijit.function(lambda p: p)
    result = echo(ctypes.c_void_p(96))
    assert isinstance(result, ctypes.c_void_p) and result.value == 96


SCALARS = [  # (dtype name, ctypes type, values including both ends of the range)
    ("int8", ctypes.c_int8, [-128, 127, 0]),
    ("int16", ctypes.c_int16, [-32768, 32767, -1]),
    ("int32", ctypes.c_int32, [-2**31, 2**31 - 1, 5]),
    ("int64", ctypes.c_int64, [-2**63, 2**63 - 1, 7]),
    ("uint8", ctypes.c_uint8, [0, 255, 1]),
    ("uint16", ctypes.c_uint16, [0, 65535, 2]),
    ("uint32", ctypes.c_uint32, [0, 2**32 - 1, 3]),
    ("uint64", ctypes.c_uint64, [0, 2**64 - 1, 4]),
    ("float32", ctypes.c_float, [1.5, -0.25, 3.0]),
    ("float64", ctypes.c_double, [1e300, -2.5, 0.1]),
    ("bool", ctypes.c_bool, [True, False, True]),
]


@pytest.mark.parametrize("name, ctype, values", SCALARS, ids=[s[0] for s in SCALARS])
def test_load_and_store_read_and_write_in_place(name, ctype, values):
    array = (ctype * len(values))(*values)
    base = ctypes.addressof(array)
    dtype = ffijit.DataType(name)
    for spec in (dtype, name):
        got = [ffijit.load(base, spec, i) for i in range(len(values))]
        assert got == list(array) and [type(v) for v in got] == [type(v) for v in array]
        assert ffijit.load(base, spec) == array[0]
        assert ffijit.load(base + ctypes.sizeof(ctype), spec, -1) == array[0]
    for i, value in enumerate(reversed(values)):
        ffijit.store(base, dtype if i % 2 else name, value, i)
    assert list(array) == list(reversed(values))
    ffijit.store(base + ctypes.sizeof(ctype), name, values[0])
    assert array[1] == values[0]


def test_load_names_alternating():
    """The last dtype name is remembered: another name must not read with the previous type."""
    array = (ctypes.c_int32 * 2)(-1, 7)
    base = ctypes.addressof(array)
    for _ in range(3):
        assert ffijit.load(base, "int32") == -1
        assert ffijit.load(base, "uint32") == 2**32 - 1
        assert ffijit.load(base, "int8", 4) == 7


@pytest.mark.parametrize("name, value", [("int8", 128), ("int8", -129), ("uint8", 256),
                                         ("uint8", -1), ("int32", 2**31), ("uint64", 2**64),
                                         ("int64", -2**63 - 1), ("uint32", -5),
                                         ("float32", 1e39), ("float32", -1e300)])
def test_store_out_of_range_writes_nothing(name, value):
    array = (ctypes.c_uint64 * 1)(0x0102030405060708)
    with pytest.raises(OverflowError, match=re.escape(f"store(): {value!r} does not fit {name}")):
        ffijit.store(ctypes.addressof(array), name, value)
    assert array[0] == 0x0102030405060708


def test_load_and_store_bad_input():
    array = (ctypes.c_int32 * 1)(9)
    base = ctypes.addressof(array)
    with pytest.raises(ValueError, match=r"load\(\): the address is NULL"):
        ffijit.load(0, "int32")
    with pytest.raises(ValueError, match=r"store\(\): the address is NULL"):
        ffijit.store(0, "int32", 1)
    with pytest.raises(TypeError, match=r"load\(\): address must be an int, not c_void_p"):
        ffijit.load(ctypes.c_void_p(base), "int32")
    with pytest.raises(TypeError, match=r"load\(\): dtype must be an ffijit.DataType or its "
                                        r"name, not int"):
        ffijit.load(base, 32)
    for bad in ("float16", "bfloat16", "int32x4", "handle", "int1"):
        with pytest.raises(ValueError, match=rf"load\(\): dtype {bad} is not a scalar it reads"):
            ffijit.load(base, bad)
    with pytest.raises(ValueError):
        ffijit.load(base, "not a type")
    with pytest.raises(TypeError, match=r"load\(\) takes 2 or 3 arguments \(1 given\)"):
        ffijit.load(base)
    with pytest.raises(TypeError, match=r"store\(\) takes 3 or 4 arguments \(2 given\)"):
        ffijit.store(base, "int32")
    with pytest.raises(TypeError):
        ffijit.store(base, "int32", 1.5)
    with pytest.raises(TypeError):
        ffijit.store(base, "float64", "x")
    with pytest.raises(TypeError):
        ffijit.load(base, "int32", "0")
    with pytest.raises(OverflowError):
        ffijit.load(base, "int32", 2**64)
    with pytest.raises(OverflowError, match=r"load\(\): index 4611686018427387904 is too far "
                                            r"for a 4-byte element"):
        ffijit.load(base, "int32", 2**62)
    with pytest.raises(OverflowError, match=r"store\(\): index -4611686018427387904 is too far"):
        ffijit.store(base, "int64", 1, -2**62)
    assert array[0] == 9


@needs_jit
def test_a_comparator_reading_with_load():
    """The guide's comparator: libc's qsort with ffijit.load reading both pointers."""
    qsort = ffijit.function(("libc.so.6", "qsort"), QSORT)
    int32 = ffijit.DataType("int32")

    def compare(a, b):
        x, y = ffijit.load(a, int32), ffijit.load(b, int32)
        return (x > y) - (x < y)

    comparator = ffijit.callback(compare, COMPARE)
    values = list(range(50, -50, -3))
    array = (ctypes.c_int32 * len(values))(*values)
    qsort(ctypes.c_void_p(ctypes.addressof(array)), len(array), 4,
          ctypes.c_void_p(comparator.address))
    assert list(array) == sorted(values)


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
