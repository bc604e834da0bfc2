"""Modules loaded from a shared library and from an object file; a C++ object whose thread-locals
live in section groups, used from several threads and unloaded; numpy arrays and DLPack producers
passed to module functions (Tensor objects they may keep)."""
import gc
import os
import sys
import threading
import time
import weakref

import numpy as np
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


# ---- Arrays passed to module functions ----
# A module function has no metadata, so it may keep whatever it gets: an array reaches it as a
# Tensor object (type index 70) holding the array, as TVM FFI's own Python package passes one.

class NumpyProducer:
    """numpy's own DLPack export (a capsule), without the buffer protocol: an independent route."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__()  # numpy 1.x: no max_version, so ffijit retries without

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def expected_fields(array):
    """Shape, strides in elements as the buffer protocol reports them (numpy gives a contiguous
    array's extent-1 axes the compact stride there), and the data address."""
    itemsize = array.dtype.itemsize
    strides = memoryview(array).strides
    return (array.shape, tuple(s // itemsize for s in strides), array.ctypes.data)


def fields(tensor):
    return (tensor.shape, tensor.strides, tensor.data_ptr)


def layout(tensor):
    """What any two descriptions of an array agree on: a stride matters only where extent > 1."""
    strides = tuple(s if n > 1 else None for s, n in zip(tensor.strides, tensor.shape))
    return (tensor.shape, strides, tensor.data_ptr)


DTYPES = ["float64", "float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128"]
SUMMED = {"float64", "float32", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64"}


def arrays_of(dtype):
    base = (np.arange(24) % 7).astype(dtype)
    yield "1-d", base
    yield "0-d", np.array(base[3])
    yield "empty", base[:0].reshape(0, 4)
    yield "2-d", base.reshape(4, 6)
    yield "3-d", base.reshape(2, 3, 4)
    yield "every other", base[::2]
    yield "transposed", base.reshape(4, 6).T
    yield "column slice", base.reshape(4, 6)[:, 1:4]
    yield "fortran order", np.asfortranarray(base.reshape(4, 6))
    yield "reversed", base[::-1]
    # An extent-1 axis with a stride that is not the compact one (numpy calls it contiguous).
    yield "odd unit stride", np.lib.stride_tricks.as_strided(
        base, shape=(6, 1), strides=(base.itemsize, 3 * base.itemsize))


@pytest.mark.parametrize("dtype", DTYPES)
def test_arrays_reach_a_module_function_as_tensors(module, dtype):
    for what, array in arrays_of(dtype):
        assert module.arg_kind(array) == 70, what
        tensor = module.identity(array)
        assert isinstance(tensor, ffijit.Tensor), what
        assert tensor.dtype == ffijit.DataType(dtype), what
        assert fields(tensor) == expected_fields(array), what
        # The same tensor DLPack's own route gives, and ffijit.from_dlpack.
        if dtype != "bool":  # numpy's DLPack export has no bool
            assert layout(tensor) == layout(ffijit.from_dlpack(NumpyProducer(array))), what
        assert fields(tensor) == fields(ffijit.from_dlpack(array)), what
        if dtype in SUMMED:
            assert module.element_sum(array) == float(array.sum(dtype=np.float64)), what
        if array.size and dtype != "bool":  # numpy 1.x imports no bool tensor
            assert np.shares_memory(np.from_dlpack(tensor), array), what


def test_a_module_function_writes_through_the_tensor(module):
    # identity's Tensor is the array's memory: numpy reads back what ffijit.Tensor exports.
    array = np.zeros(4)
    tensor = module.identity(array)
    array[2] = 5.0
    assert np.from_dlpack(tensor)[2] == 5.0


def test_dlpack_producers_reach_a_module_function_as_tensors(module):
    array = np.arange(10, dtype=np.float64).reshape(2, 5)[:, ::2]
    producer = NumpyProducer(array)
    assert module.arg_kind(producer) == 70
    assert module.element_sum(producer) == array.sum()
    assert fields(module.identity(producer)) == expected_fields(array)
    tensor = ffijit.from_dlpack(array)
    assert module.arg_kind(tensor) == 70
    assert module.identity(tensor).same_as(tensor)  # an ffijit.Tensor passes as itself


def test_a_module_function_reading_an_array_holds_nothing_after_the_call(module):
    array = np.arange(100, dtype=np.float64)
    before = sys.getrefcount(array)
    for _ in range(1000):
        assert module.element_sum(array) == 4950.0
    assert sys.getrefcount(array) == before
    array.resize(200, refcheck=True)  # nobody else refers to it any more


def test_a_module_function_may_keep_the_tensor_it_gets(module):
    try:
        array = np.arange(1000, dtype=np.float64)
        alive = weakref.ref(array)
        module.keep(array)
        with pytest.raises(ValueError):  # pinned: numpy refuses to resize what others refer to
            array.resize(2000, refcheck=True)
        del array
        gc.collect()
        assert alive() is not None  # the kept tensor holds the array
        # Other calls, with other arrays (their tensors come and go), leave the kept one intact.
        for i in range(100):
            other = np.full(7, float(i))
            assert module.element_sum(other) == 7.0 * i
            assert module.element_sum(other.reshape(7, 1)[::2]) == 4.0 * i
        assert module.kept_sum() == 499500.0
        kept = module.kept()
        assert kept.shape == (1000,) and kept.strides == (1,)
        assert np.from_dlpack(kept)[999] == 999.0
        del kept
        module.drop_kept()
        gc.collect()
        assert alive() is None  # the last reference went with the tensor
    finally:
        module.drop_kept()


def test_keeping_a_strided_array_keeps_its_layout(module):
    try:
        array = np.arange(24, dtype=np.int32).reshape(4, 6)[1:, ::3]
        expected = float(array.sum())
        module.keep(array)
        del array
        gc.collect()
        assert module.kept_sum() == expected
        assert module.kept().strides == (6, 3)
    finally:
        module.drop_kept()


def test_a_tensor_kept_by_a_module_function_outlives_python_threads(module):
    # Kept on one thread, released on another: the release takes the GIL itself.
    try:
        array = np.arange(10, dtype=np.float64)
        alive = weakref.ref(array)
        worker = threading.Thread(target=module.keep, args=(array,))
        worker.start()
        worker.join()
        del array
        assert module.kept_sum() == 45.0
        worker = threading.Thread(target=module.drop_kept)
        worker.start()
        worker.join()
        gc.collect()
        assert alive() is None
    finally:
        module.drop_kept()


def test_bad_arrays_for_a_module_function_are_clear_errors(module):
    read_only = np.arange(4, dtype=np.float64)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        module.arg_kind(read_only)
    with pytest.raises(TypeError, match="byte order|no DLPack data type"):
        module.arg_kind(np.arange(4, dtype=">f8"))
    with pytest.raises(TypeError, match="no DLPack data type"):
        module.arg_kind(np.array(["a", "b"]))
    capsule = np.arange(3.0).__dlpack__()
    with pytest.raises(TypeError, match="cannot pass a Python `PyCapsule` to a packed call"):
        module.arg_kind(capsule)
    with pytest.raises(TypeError, match="element_sum expects one tensor"):
        module.element_sum([1.0, 2.0])
    with pytest.raises(TypeError, match="keep expects one Tensor object"):
        module.keep(3)
