"""numpy arrays and DLPack producers as tensor arguments without a copy; ffijit.Tensor results."""
import ctypes
import gc
import weakref

import numpy as np
import pytest

import ffijit
from conftest import address, make

SCALE = {"a": [["ndarray", "f64", 1, None], "f64"], "r": []}


class Producer:
    """Offers only __dlpack__ and __dlpack_device__ (no buffer protocol)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **kwargs):
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_numpy_array_is_scaled_in_place(natives, tier):
    scale = make(tier, address(natives, "py_scale_f64"), SCALE)
    data = np.arange(4, dtype=np.float64)
    scale(data, 2.0)
    assert data.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_from_dlpack_shares_memory_both_ways():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = ffijit.from_dlpack(data)
    assert isinstance(tensor, ffijit.Tensor)
    assert tensor.shape == (2, 3) and tensor.ndim == 2
    assert tensor.dtype == ffijit.DataType("float32") and tensor.dtype == "float32"
    assert tensor.device == ffijit.Device("cpu") and tensor.__dlpack_device__() == (1, 0)
    assert tensor.strides == (3, 1)
    assert tensor.data_ptr == data.ctypes.data
    back = np.from_dlpack(tensor)
    assert np.shares_memory(back, data)
    data[1, 2] = 42.0  # numpy's from_dlpack views are read-only: write through the source
    assert back[1, 2] == 42.0


def test_strided_array_keeps_its_strides():
    data = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    tensor = ffijit.from_dlpack(data)
    assert tensor.shape == (3, 2) and tensor.strides == (4, 2)


def test_returned_tensor_shares_the_argument_memory():
    data = np.ones(5, dtype=np.float64)
    echo = ffijit.function(lambda t: t)  # a numpy result converts to a Tensor, no copy
    tensor = echo(data)
    assert isinstance(tensor, ffijit.Tensor) and tensor.shape == (5,)
    assert tensor.dtype == "float64"
    assert np.shares_memory(np.from_dlpack(tensor), data)


# IREE's output storage (iree.abi.output): the native writes result 0 into argument 0, and the
# result is that storage, as the caller passed it.
SCALE_INTO = ("sync func @scale(%input0: !hal.buffer {iree.abi.output = 0 : index}, %input1: f64)"
              " -> (%output0: tensor<?xf64>)")


def test_output_storage_comes_back_as_the_result(natives, tier):
    scale = make(tier, address(natives, "py_scale_f64"), SCALE_INTO)
    data = np.arange(4, dtype=np.float64)
    result = scale(data, 3.0)
    assert data.tolist() == [0.0, 3.0, 6.0, 9.0]
    assert isinstance(result, ffijit.Tensor) and result.data_ptr == data.ctypes.data
    tensor = ffijit.from_dlpack(data)
    again = scale(tensor, 2.0)
    assert again.data_ptr == tensor.data_ptr and again.shape == (4,)
    assert data.tolist() == [0.0, 6.0, 12.0, 18.0]
    with pytest.raises(ValueError, match=r"Mismatched tensor on argument #0 .* Expected "
                                         r"`ndarray<f64,1>` but got an ndarray of int64"):
        scale(np.zeros(2, dtype=np.int64), 1.0)


def test_legacy_and_versioned_capsules():
    tensor = ffijit.from_dlpack(np.zeros(3))
    assert "dltensor" in repr(tensor.__dlpack__()) and "versioned" not in repr(tensor.__dlpack__())
    assert '"dltensor_versioned"' in repr(tensor.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(tensor.__dlpack__(max_version=(0, 8)))
    with pytest.raises(BufferError):
        tensor.__dlpack__(copy=True)


def test_producer_with_only_dlpack_methods(natives, tier):
    scale = make(tier, address(natives, "py_scale_f64"), SCALE)
    data = np.arange(3, dtype=np.float64)
    producer = Producer(ffijit.from_dlpack(data))
    scale(producer, 10.0)
    assert data.tolist() == [0.0, 10.0, 20.0]
    tensor = ffijit.from_dlpack(producer)
    assert np.shares_memory(np.from_dlpack(tensor), data)


def test_tensor_keeps_its_producer_alive():
    tensor = ffijit.from_dlpack(np.full(1000, 7.0))
    view = np.from_dlpack(tensor)
    del tensor
    assert view.sum() == 7000.0


def test_from_dlpack_of_a_non_tensor():
    with pytest.raises(TypeError, match="neither __dlpack__ nor the buffer protocol"):
        ffijit.from_dlpack(3)


def test_tensor_object_reaches_an_object_parameter(natives):
    same = ffijit.function(address(natives, "py_same_object"),
                           {"a": ["object"], "r": [["ndarray", "f64", 1, None]]})
    data = np.ones(5, dtype=np.float64)
    tensor = same(ffijit.from_dlpack(data))
    assert isinstance(tensor, ffijit.Tensor) and tensor.shape == (5,)
    assert np.shares_memory(np.from_dlpack(tensor), data)


def test_numpy_array_reaches_an_object_parameter(natives):
    type_index = ffijit.function(address(natives, "py_object_type_index"),
                                 {"a": ["object"], "r": ["i64"]})
    assert type_index(np.ones(2)) == ffijit.from_dlpack(np.ones(2)).type_index


# ---- Hand-made DLPack capsules: the producer's word is checked, never trusted ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}  # alive as long as the capsules


class HandMade:
    """A producer whose __dlpack__ returns a capsule over a hand-made struct (kept alive here,
    with the arrays it points at); `deletes` counts the deleter's calls."""

    def __init__(self, versioned=False, ndim=2, shape=(2, 4), strides=None, data=True,
                 dtype=(2, 32, 1), flags=0, major=1, name=None):
        self.deletes = 0
        self.buffer = (ctypes.c_float * 8)()
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.deleter = DELETER(self._delete)
        self.struct = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            self.struct.major, self.struct.minor, self.struct.flags = major, 0, flags
        self.struct.deleter = self.deleter
        t = self.struct.dl_tensor
        t.data = ctypes.addressof(self.buffer) if data else None
        t.device = DLDevice(1, 0)
        t.ndim = ndim
        t.dtype = DLDataType(*dtype)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)) if shape else None
        t.strides = (ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
                     if strides is not None else None)
        self.name = name if name is not None else _NAMES[versioned]
        self.capsule = _capsule_new(ctypes.addressof(self.struct), self.name, None)

    def _delete(self, _):
        self.deletes += 1

    def __dlpack__(self, **kwargs):
        return self.capsule


HOSTILE = {
    # 2**30 dimensions over a 2-entry shape array: copying them would read gigabytes past it.
    "huge_ndim": (dict(ndim=2 ** 30), "ndim 1073741824 is more than the 64 dimensions"),
    "ndim_100": (dict(ndim=100, shape=(1,) * 100, strides=(1,) * 100), "ndim 100 is more than"),
    "negative_ndim": (dict(ndim=-3), "negative ndim -3"),
    "null_shape": (dict(shape=()), "shape is NULL but ndim is 2"),
    "null_data": (dict(data=False), "data is NULL but the tensor has 8 elements"),
    "negative_dim": (dict(shape=(2, -4)), "negative dimension -4"),
    "huge_strides": (dict(strides=(2 ** 62, 1)), "byte extent overflows"),
    "huge_shape": (dict(shape=(2 ** 40, 2 ** 40)), "element count overflows"),
    "huge_empty_shape": (dict(ndim=3, shape=(2 ** 40, 2 ** 40, 0)), "element count overflows"),
    "no_bits": (dict(dtype=(2, 0, 1)), "data type with no storage"),
    "no_lanes": (dict(dtype=(2, 32, 0)), "data type with no storage"),
}


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_capsules_are_value_errors(case, versioned):
    kwargs, message = HOSTILE[case]
    producer = HandMade(versioned=versioned, **kwargs)
    with pytest.raises(ValueError, match=message):
        ffijit.from_dlpack(producer)
    # The capsule stays unconsumed and its struct the producer's.
    assert producer.deletes == 0
    assert _NAMES[versioned].decode() in repr(producer.capsule)
    assert "used_" not in repr(producer.capsule)


def test_hand_made_capsules_that_are_sound_are_taken():
    for versioned in (False, True):
        producer = HandMade(versioned=versioned, strides=(4, 1))
        producer.buffer[5] = 3.5
        tensor = ffijit.from_dlpack(producer)
        assert tensor.shape == (2, 4) and tensor.strides == (4, 1)
        assert np.from_dlpack(tensor)[1, 1] == 3.5
        assert "used_" in repr(producer.capsule)
        del tensor
        assert producer.deletes == 1
    # Empty tensors may have NULL data.
    producer = HandMade(shape=(0, 4), data=False)
    assert ffijit.from_dlpack(producer).shape == (0, 4)


def test_versioned_capsules_of_another_major_version_or_read_only_are_refused():
    producer = HandMade(versioned=True, major=2, ndim=2 ** 30, flags=1)
    with pytest.raises(ValueError, match="unsupported DLPack major version 2"):
        ffijit.from_dlpack(producer)
    producer = HandMade(versioned=True, flags=1)  # DLPACK_FLAG_BITMASK_READ_ONLY
    with pytest.raises(ValueError, match="read-only"):
        ffijit.from_dlpack(producer)
    assert producer.deletes == 0
    assert ffijit.from_dlpack(HandMade(versioned=True, flags=2)).shape == (2, 4)  # IS_COPIED


def test_capsules_with_another_name_are_type_errors():
    for name in (b"not_a_tensor", b"used_dltensor", b"used_dltensor_versioned"):
        with pytest.raises(TypeError, match="no unused 'dltensor' or 'dltensor_versioned'"):
            ffijit.from_dlpack(HandMade(name=name))


def test_read_only_numpy_arrays_are_value_errors_on_every_path(natives, tier):
    array = np.arange(6, dtype=np.float64)
    array.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ffijit.from_dlpack(array)
    scale = make(tier, address(natives, "py_scale_f64"), SCALE)
    with pytest.raises(ValueError, match="read-only"):
        scale(array, 2.0)
    assert array.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # A read-only view of a writable array too.
    view = np.arange(3, dtype=np.float64)[:]
    view.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ffijit.from_dlpack(view)


def test_dlpack_keyword_values_of_the_wrong_type_are_type_errors():
    tensor = ffijit.from_dlpack(np.zeros(3))
    for bad in ("cpu", (1,), (1, "0"), [1, 0], 1):
        with pytest.raises(TypeError, match="dl_device must be a"):
            tensor.__dlpack__(dl_device=bad)
    with pytest.raises(TypeError, match="copy must be a bool or None"):
        tensor.__dlpack__(copy="yes")
    with pytest.raises(TypeError):
        tensor.__dlpack__(max_version="1.0")
    with pytest.raises(BufferError, match="is never copied"):
        tensor.__dlpack__(dl_device=(2, 0))
    assert '"dltensor"' in repr(tensor.__dlpack__(dl_device=(1, 0), copy=False))


# ---- Callees that may keep what they get: a Tensor object holding the array ----

def test_a_python_callback_may_keep_the_tensor_of_an_array():
    kept = []
    keep = ffijit.function(kept.append)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    alive = weakref.ref(data)
    keep(data)
    keep(data[:, ::2])  # a strided view (through the buffer protocol) is held the same way
    del data
    gc.collect()
    assert alive() is not None
    assert isinstance(kept[0], ffijit.Tensor) and kept[0].shape == (2, 3)
    assert np.from_dlpack(kept[0]).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert kept[1].strides == (3, 2) and np.from_dlpack(kept[1]).tolist() == [[0.0, 2.0],
                                                                             [3.0, 5.0]]
    kept.clear()
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int8", "uint64", "bool",
                                   "complex128"])
def test_tensors_of_compact_arrays_describe_them_as_the_buffer_protocol_does(dtype):
    for array in (np.zeros((2, 3, 4), dtype=dtype), np.zeros((), dtype=dtype),
                  np.zeros((0, 5), dtype=dtype), np.zeros((5, 1), dtype=dtype)):
        view = memoryview(array)
        tensor = ffijit.from_dlpack(array)
        assert tensor.shape == view.shape and tensor.dtype == dtype
        assert tensor.strides == tuple(s // array.itemsize for s in view.strides)
        assert tensor.data_ptr == array.ctypes.data
