"""numpy arrays and ffijit tensors through DLPack, without a copy.

A numpy array passed to an ffijit.Function arrives as a TVM FFI Tensor over the array's own
memory; a tensor coming back is an ffijit.Tensor (shape, dtype, device, __dlpack__) that
numpy.from_dlpack takes without a copy. The natives here are Python functions made into
ffijit.Functions, so the tensors cross the packed calling convention both ways.
Exits non-zero when a result is wrong.
"""

import sys

import numpy as np

import ffijit


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)


def main():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)

    # Straight conversion: an ffijit.Tensor sharing the array's memory.
    tensor = ffijit.from_dlpack(array)
    print(f"from_dlpack(array) = {tensor!r}")
    check(tensor.shape == (3, 4), "shape")
    check(tensor.dtype == "float32", "dtype")
    check(tensor.device.to_tuple() == (1, 0), "device is cpu:0")
    check(tensor.data_ptr == array.ctypes.data, "the tensor points at the array's data")

    # And back: numpy reads the tensor through its DLPack capsule.
    view = np.from_dlpack(tensor)
    check(np.shares_memory(view, array), "numpy.from_dlpack(tensor) shares the array's memory")
    array[0, 0] = 100.0  # seen through the view: one buffer, no copy
    check(view[0, 0] == 100.0, "a write to the array is visible through the view")
    print("numpy.from_dlpack(tensor) shares memory with the array: True")

    # A Function receives the array as a Tensor; a tensor argument can be returned as is.
    def describe(t):
        return f"{type(t).__name__} {t.shape} {t.dtype}"

    def total(t):
        return float(np.from_dlpack(t).sum())

    def identity(t):
        return t

    print("the Function sees:", ffijit.function(describe)(array))
    check(ffijit.function(describe)(array) == "Tensor (3, 4) float32", "the argument's type")
    check(ffijit.function(total)(array) == float(array.sum()), "sum through a Function")
    returned = ffijit.function(identity)(array)
    check(isinstance(returned, ffijit.Tensor), "a returned tensor is an ffijit.Tensor")
    check(np.shares_memory(np.from_dlpack(returned), array), "the round trip kept the memory")
    print(f"round trip through a Function: {returned!r}, same memory: True")

    # Strided views pass as they are (strides in elements); numpy scalars pass as numbers.
    strided = ffijit.from_dlpack(array[:, ::2])
    check(strided.shape == (3, 2) and strided.strides == (4, 2), "a strided view")
    check(ffijit.function(identity)(np.int64(7)) == 7, "a numpy integer scalar")
    print(f"array[:, ::2] -> shape {strided.shape}, strides {strided.strides}")
    print("OK")


if __name__ == "__main__":
    main()
