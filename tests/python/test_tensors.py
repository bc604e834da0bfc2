"""numpy arrays and DLPack producers as tensor arguments without a copy; ffijit.Tensor results."""
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
