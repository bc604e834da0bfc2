"""The package built as the add-on (FFIJIT_TVM_FFI_RUNTIME), imported as TVM FFI's users would:
TVM FFI's own library loaded first and global (as `import tvm_ffi` loads it), then ffijit over it.
Functions cross both ways through TVM FFI's one registry."""
import ctypes
import os

# Before ffijit: the process's runtime is TVM FFI's, loaded as its Python package loads it.
TVM_FFI = ctypes.CDLL(os.environ["FFIJIT_TEST_TVM_FFI_LIBRARY"], mode=ctypes.RTLD_GLOBAL)
TVM_FFI_TESTING = ctypes.CDLL(os.environ["FFIJIT_TEST_TVM_FFI_TESTING"], mode=ctypes.RTLD_GLOBAL)

import ffijit  # noqa: E402
import pytest  # noqa: E402


class Any(ctypes.Structure):
    """TVM FFI's 16-byte TVMFFIAny, for calls through TVM FFI's C API."""
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32),
                ("v_int64", ctypes.c_int64)]


K_INT = 1
TVM_FFI.TVMFFIFunctionGetGlobal.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
TVM_FFI.TVMFFIFunctionCall.argtypes = [ctypes.c_void_p, ctypes.POINTER(Any), ctypes.c_int32,
                                       ctypes.POINTER(Any)]
TVM_FFI.TVMFFIObjectDecRef.argtypes = [ctypes.c_void_p]


class ByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]


def call_through_tvm_ffi(name, *ints):
    """Finds `name` in TVM FFI's registry through its C API and calls it with ints."""
    key = name.encode()
    handle = ctypes.c_void_p()
    assert TVM_FFI.TVMFFIFunctionGetGlobal(ctypes.byref(ByteArray(key, len(key))),
                                           ctypes.byref(handle)) == 0
    assert handle.value, f"{name} is not in TVM FFI's registry"
    args = (Any * len(ints))(*[Any(K_INT, 0, v) for v in ints])
    result = Any(0, 0, 0)
    try:
        assert TVM_FFI.TVMFFIFunctionCall(handle, args, len(ints), ctypes.byref(result)) == 0
    finally:
        TVM_FFI.TVMFFIObjectDecRef(handle)
    assert result.type_index == K_INT
    return result.v_int64


def test_one_runtime_is_mapped():
    with open("/proc/self/maps") as maps:
        text = maps.read()
    assert "/libtvm_ffi.so" in text
    assert "libffijit_addon.so" in text
    assert "libffijit_runtime" not in text
    assert ffijit.tvm_ffi_abi.version == "0.1.14"


def test_a_registered_native_is_in_tvm_ffis_registry():
    ffijit.register("addon_py.add3", (os.environ["FFIJIT_TEST_NATIVES"], "py_add3"),
                    {"a": ["i64", "i64", "i64"], "r": ["i64"]}, override=True)
    assert call_through_tvm_ffi("addon_py.add3", 1, 2, 39) == 1 + 2 * 2 + 3 * 39
    assert "addon_py.add3" in ffijit.list_global_funcs()


def test_tvm_ffis_functions_are_callable_from_python():
    add_one = ffijit.get_global_func("testing.add_one")
    assert add_one(41) == 42
    with pytest.raises(TypeError):
        add_one("forty-one")


def test_structure_results_and_errors_over_tvm_ffi():
    add3 = ffijit.function((os.environ["FFIJIT_TEST_NATIVES"], "py_add3"),
                           {"a": ["i64", "i64", "i64"], "r": ["i64"]})
    for i in range(2000):
        assert add3(i, 1, 2) == i + 2 * 1 + 3 * 2
    with pytest.raises(TypeError, match="Expected `i64` but got `str`"):
        add3("x", 1, 2)
