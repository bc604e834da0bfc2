"""Bad input from Python: a Python exception naming the problem, never a crash."""
import ctypes
import os
import re

import numpy as np
import pytest

import ffijit
from conftest import address, make, outcome

ADD3 = {"a": [["named", "a", "i64"], ["named", "b", "i64"], ["named", "c", "i64"]], "r": ["i64"]}
SUM_MATRIX = {"a": [["ndarray", "f32", 2, None, 3]], "r": ["f64"]}


@pytest.fixture
def add3(natives, tier):
    return make(tier, address(natives, "py_add3"), ADD3)


@pytest.fixture
def sum_matrix(natives, tier):
    return make(tier, address(natives, "py_sum_f32"), SUM_MATRIX)


def test_wrong_counts(add3):
    with pytest.raises(TypeError, match="Expected 3 but got 1 arguments"):
        add3(1)
    with pytest.raises(TypeError, match="Expected 3 but got 4 arguments"):
        add3(1, 2, 3, 4)


def test_wrong_types_name_the_argument(add3):
    with pytest.raises(TypeError, match=r"argument #1 .*Expected `i64` but got `float`"):
        add3(1, 2.0, 3)
    with pytest.raises(TypeError, match=r"argument #2 .*Expected `i64` but got `str`"):
        add3(1, 2, "3")
    with pytest.raises(TypeError, match="cannot pass a Python `object`"):
        add3(1, 2, object())


@pytest.mark.parametrize("value", [2**64, 2**63, -2**63 - 1, 10**30])
def test_ints_beyond_64_bits(add3, value):
    with pytest.raises(ValueError, match=f"{value} does not fit in 64 bits"):
        add3(value, 0, 0)


@pytest.mark.parametrize("args,kind", [((300, 0, 0, 0), "i8"), ((-129, 0, 0, 0), "i8"),
                                       ((0, 256, 0, 0), "u8"), ((0, -1, 0, 0), "u8"),
                                       ((0, 0, 40000, 0), "i16"), ((0, 0, 0, -1), "u32")])
def test_narrow_ints_out_of_range(natives, tier, args, kind):
    narrow = make(tier, address(natives, "py_narrow"), {"a": ["i8", "u8", "i16", "u32"],
                                                         "r": ["i32"]})
    with pytest.raises(ValueError, match=f"Out of range value on argument .* does not fit `{kind}`"):
        narrow(*args)


def test_keyword_problems(add3):
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'd'"):
        add3(1, 2, d=3)
    with pytest.raises(TypeError, match="Duplicate value for argument #0"):
        add3(1, 2, 3, a=1)
    with pytest.raises(TypeError, match="Missing argument #1"):
        add3(1, c=3)


def test_keywords_on_a_function_without_names(natives, tier):
    plain = make(tier, address(natives, "py_add3"), {"a": ["i64"] * 3, "r": ["i64"]})
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'a'"):
        plain(a=1, b=2, c=3)


def test_tensor_dtype_rank_and_dims(sum_matrix):
    assert sum_matrix(np.ones((2, 3), np.float32)) == 6.0
    with pytest.raises(ValueError, match="got an ndarray of float64 with shape \\(2, 3\\)"):
        sum_matrix(np.ones((2, 3), np.float64))
    with pytest.raises(ValueError, match="got an ndarray of float32 with ndim 1"):
        sum_matrix(np.ones(6, np.float32))
    with pytest.raises(ValueError, match="with shape \\(3, 2\\)"):
        sum_matrix(np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="Expected `ndarray"):
        sum_matrix([[1.0, 2.0, 3.0]])


def test_unsupported_buffer_formats_are_type_errors(sum_matrix):
    with pytest.raises(TypeError, match="no DLPack data type"):
        sum_matrix(np.array([[b"ab", b"cd", b"ef"]]))


def test_non_contiguous_arrays_keep_their_strides(sum_matrix):
    # ffijit's contract (guide 5.1) does not check strides: the native receives them and a
    # stride-aware native (py_sum_f32) reads the right elements.
    data = np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]
    assert not data.flags.c_contiguous
    assert sum_matrix(data) == float(data.sum())


@pytest.mark.parametrize("sig,form,message", [
    ('{"a":["f65"],"r":[]}', "auto", 'json: at offset 6: unknown type name "f65"'),
    ('{"a":["i64"],"r":[],"q":1}', "json", "json"),
    ("{not json", "json", "json"),
    ("I9!S3!t6R1!", "raw", "raw signature: at offset"),
    ("I6!S3!t99R1!", "raw", "raw signature"),
    ('{"sip":"I5!_0","f":"I6!S3!t6R1!"}', "sip", "sip: at offset"),
    ('{"sip":"I3!_0"}', "sip", 'missing "f"'),
    ("some.python.thing(types_are_overrated)", "declaration",
     "declaration: at offset 0: expected `sync func @NAME(...) -> (...)`"),
    ("sync func @f(%input0: i4) -> ()", "auto", "unsupported integer width 4"),
    ('{"a":["i64"],"r":["i64"]}', "nonsense", "unknown metadata format"),
])
def test_malformed_metadata(natives, sig, form, message):
    with pytest.raises(ValueError) as info:
        ffijit.function(address(natives, "py_add3"), sig, format=form)
    assert message in str(info.value)


def test_metadata_of_the_wrong_python_type(natives):
    with pytest.raises(TypeError, match="sig must be"):
        ffijit.function(address(natives, "py_add3"), 42)


def test_missing_library_and_symbol(natives_path):
    sig = {"a": [], "r": []}
    with pytest.raises(FileNotFoundError) as info:
        ffijit.function(("/nonexistent/libx.so", "f"), sig)
    assert info.value.filename == "/nonexistent/libx.so"
    with pytest.raises(AttributeError, match="has no symbol 'no_such_symbol'"):
        ffijit.function((natives_path, "no_such_symbol"), sig)


def test_null_and_bad_targets():
    sig = {"a": [], "r": []}
    with pytest.raises(ValueError, match="address is 0"):
        ffijit.function(0, sig)
    with pytest.raises(ValueError, match="NULL"):
        ffijit.function(ctypes.c_void_p(None), sig)
    with pytest.raises(TypeError, match="not bool"):
        ffijit.function(True, sig)
    with pytest.raises(TypeError, match="not float"):
        ffijit.function(1.5, sig)
    with pytest.raises(TypeError, match="needs its signature"):
        ffijit.function(1234)


def test_structure_result_with_a_repeated_key_is_refused(natives):
    with pytest.raises(ValueError, match='duplicate key "x" in sdict'):
        ffijit.function(address(natives, "py_add3"),
                        {"a": ["i64"], "r": [["sdict", ["x", "i32"], ["x", "i32"]]]})


def test_register_twice_without_override_fails_and_keeps_the_first(natives):
    name = "pytest.bad.twice"
    first = ffijit.register(name, address(natives, "py_add3"), ADD3)
    try:
        with pytest.raises(Exception, match="already registered") as info:
            ffijit.register(name, address(natives, "py_add3"), ADD3)
        assert isinstance(info.value, RuntimeError)
        with pytest.raises(Exception, match="already registered"):
            ffijit.register_func(name, lambda: None)
        assert ffijit.get_global_func(name).__self__.same_as(first.__self__)
    finally:
        ffijit.remove_global_func(name)


def nul_message(label, text):
    """The executors' message for `text` (with a NUL inside) at a `str` parameter."""
    data = text.encode()
    return (rf"^Invalid value on argument {re.escape(label)} when calling: `[^`]*`\. The str "
            rf"contains a NUL character \(at byte {data.index(0)} of {len(data)}\), which a `str` "
            r"parameter \(a C string\) would cut short; pass bytes to a `bytes` parameter instead$")


# Long, small, first and last byte, seven bytes, non-ASCII, longer than the entry's short scan.
NUL_TEXTS = ("ab\0cdefghij", "a\0b", "\0", "abcdef\0", "\u00e9\0x", "x" * 40 + "\0y")


def test_a_str_with_a_nul_is_refused_by_a_str_parameter(natives, tier):
    strlen = make(tier, address(natives, "py_strlen"), {"a": ["str"], "r": ["i64"], "v": 1})
    for text in NUL_TEXTS:
        with pytest.raises(ValueError, match=nul_message("#0", text)):
            strlen(text)
    assert strlen("abcdefghij") == 10
    mix = make(tier, address(natives, "py_mix_void"), {"a": ["i64", "str"], "r": [], "v": 1})
    with pytest.raises(ValueError, match=nul_message("#1", "abc\0")):
        mix(0, "abc\0")


def test_a_str_with_a_nul_gets_one_message_from_every_executor(natives):
    tiers = ("interpreted", "compiled", "entry") if ffijit.jit_available() else ("interpreted",)
    sig = {"a": ["str"], "r": ["i64"], "v": 1}
    funcs = [make(t, address(natives, "py_strlen"), sig) for t in tiers]
    for text in NUL_TEXTS:
        outcomes = {outcome(lambda: f(text)) for f in funcs}
        assert len(outcomes) == 1, outcomes
        kind, message = outcomes.pop()
        assert kind is ValueError and re.match(nul_message("#0", text), message), message


def test_a_str_with_a_nul_inside_a_structure_is_refused(natives, tier):
    # The str reaches the native as an element of an Array (a Str object or a SmallStr).
    strlen = make(tier, address(natives, "py_strlen"), {"a": [["slist", "str"]], "r": ["i64"],
                                                         "v": 1})
    assert strlen(["abcdefghij"]) == 10
    for text in NUL_TEXTS:
        with pytest.raises(ValueError, match=nul_message("#0[0]", text)):
            strlen([text])


def test_lookup_errors():
    with pytest.raises(KeyError, match="no global function named"):
        ffijit.get_global_func("pytest.bad.never_registered")
    with pytest.raises(KeyError, match="not registered"):
        ffijit.remove_global_func("pytest.bad.never_registered")
    with pytest.raises(TypeError):
        ffijit.get_global_func(12)
    with pytest.raises(TypeError, match="not callable"):
        ffijit.register_func("pytest.bad.not_callable", 12)


def test_bad_device_and_dtype_values():
    with pytest.raises(ValueError):
        ffijit.Device("nodevice")
    with pytest.raises(ValueError):
        ffijit.DataType("flaot32")
    with pytest.raises(ValueError, match="given twice"):
        ffijit.Device("cuda:1", 2)


def test_load_module_of_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        ffijit.load_module(os.fspath(tmp_path / "missing.so"))
    assert info.value.filename == os.fspath(tmp_path / "missing.so")


def test_keyword_values_follow_the_parameter_they_name(natives, tier):
    strlen = make(tier, address(natives, "py_strlen"),
                  {"a": [["named", "s", "str"]], "r": ["i64"], "v": 1})
    assert strlen(s="abcdefghij") == 10
    with pytest.raises(ValueError, match=nul_message("#0", "ab\0cdefghij")):
        strlen(s="ab\0cdefghij")
    kind = make(tier, address(natives, "py_object_type_index"),
                {"a": [["named", "o", "object"]], "r": ["i64"], "v": 1})
    assert kind(o=np.ones(3)) == ffijit.from_dlpack(np.ones(3)).type_index


def test_a_bytearray_is_copied_not_borrowed(natives):
    # Converting a later argument runs Python code that empties the bytearray: the call must
    # still see the bytes as they were when converted.
    data = bytearray(b"A" * 64)

    class ClearsIt:
        def __index__(self):
            data.clear()
            [b"B" * 64 for _ in range(1000)]
            return 1

    made = ffijit.get_global_func("ffi.Array")(data, ClearsIt())
    assert made[0] == b"A" * 64 and made[1] == 1


def test_values_that_hash_like_what_they_equal():
    array = ffijit.get_global_func("ffi.Array")(1, 2)
    assert array == [1, 2]
    with pytest.raises(TypeError, match="unhashable"):
        hash(array)
    assert ffijit.DataType("float32") == "float32"
    assert hash(ffijit.DataType("float32")) == hash("float32")


def test_bad_device_index_and_dlpack_device():
    with pytest.raises(ValueError, match="index -3 is out of range"):
        ffijit.Device("cuda", -3)
    with pytest.raises(ValueError, match="index -1 is out of range"):
        ffijit.Device(2, -1)
    assert ffijit.Device("cuda", 2).index == 2
    tensor = ffijit.from_dlpack(np.ones(3))
    with pytest.raises(BufferError, match="never copied"):
        tensor.__dlpack__(dl_device=(2, 0))
    assert tensor.__dlpack__(dl_device=(1, 0)) is not None
