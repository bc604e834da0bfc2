"""Generated Python entries (Function.compile_entry, use_entry): the generic path's results and
errors, faster.

A seeded random differential suite calls flat natives (natives.c's py_mix_* and friends) through
four Functions of one signature: interpreted, the JIT thunk through the generic entry, the JIT
thunk through its LLVM entry, and the stencil thunk through its stencil entry, with valid and
invalid Python arguments, and requires the same outcome from all four. Targeted tests cover when a function has an entry, the JIT policy's
automatic entry, the GIL, numpy arrays, Functions passed to natives, and lifetime.
"""
import collections
import ctypes
import enum
import functools
import gc
import json
import os
import random
import subprocess
import sys
import threading

import numpy as np
import pytest

import ffijit
from conftest import TIERS, address, function_of, make, needs_jit, outcome

pytestmark = needs_jit

# ---- the random differential suite ----

SUM_MATRIX = ["ndarray", "f32", 2, None, 3]
ANY_TENSOR = ["ndarray", None, None]
F32_TENSOR = ["ndarray", "f32", None]
I8_VECTOR = ["ndarray", "i8", 1, None]

# (symbol, the metadata kinds each parameter may be declared as, results). Alternatives share
# the C parameter's width (a 32- or 64-bit integer read either signed or unsigned).
NATIVES = [
    ("py_mix_ints", [("i8",), ("i16",), ("i32", "u32"), ("i64", "u64"), ("u8",), ("u16",),
                     ("u32", "i32"), ("u64", "i64"), ("i1",)], ["i64"]),
    ("py_mix_floats", [("f32",), ("f64",), ("i64", "u64"), ("i1",), ("i32", "u32")], ["f64"]),
    ("py_mix_text", [("str",), ("Device",), ("DataType",), ("ptr",), ("u32", "i32")], ["i64"]),
    ("py_mix_tensor", [(SUM_MATRIX, ANY_TENSOR, F32_TENSOR, I8_VECTOR), ("f64",), ("i16",),
                       ("DataType",)], ["f64"]),
    ("py_mix_u64", [("u64",), ("u8",)], ["u64"]),
    ("py_mix_bool", [("i1",), ("i64", "u64"), ("u32", "i32")], ["i1"]),
    ("py_mix_f32", [("f32",), ("u32", "i32"), ("i8",)], ["f32"]),
    ("py_mix_nothing", [], ["i64"]),
    ("py_mix_void", [("i64", "u64"), ("str",)], []),
    ("py_mix_str", [("str",), ("i8",)], ["str"]),
    ("py_dev_dtype", [("Device",), ("DataType",)], ["i64"]),
    ("py_sum_f32", [(SUM_MATRIX, F32_TENSOR)], ["f64"]),
    ("py_narrow", [("i8",), ("u8",), ("i16",), ("u32", "i32")], ["i32"]),
    # Structure results: the native's leaves, reassembled (one leaf: returned by value).
    ("py_split", [("i64",), ("f64",)], [["slist", "i64", "f64"]]),
    ("py_split", [("i64",), ("f64",)], [["sdict", ["q", "i64"], ["h", "f64"]]]),
    ("py_split", [("i64",), ("f64",)], ["i64", ["stuple", None, ["slist", "f64"]]]),
    ("py_split", [("i64",), ("f64",)], ["i64", "f64"]),
    ("py_mix_f32", [("f32",), ("u32", "i32"), ("i8",)], [["stuple", "f32", None]]),
]
NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
INT_RANGES = {"i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
              "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1),
              "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}


class SubInt(int):
    pass


class Color(enum.IntEnum):
    RED = 1
    BLUE = 200


class Index:
    """Not an int, but has __index__."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value

    def __repr__(self):
        return f"Index({self.value})"


class FloatLike:
    def __float__(self):
        return 2.5

    def __repr__(self):
        return "FloatLike()"


def _arrays(rng):
    """A numpy array: usually what SUM_MATRIX accepts, sometimes not."""
    pick = rng.randrange(12)
    if pick < 4:
        return (np.arange(6, dtype=np.float32).reshape(2, 3) * rng.randint(1, 9)).copy()
    return [
        lambda: np.ones((5, 3), np.float32),
        lambda: np.ones((2, 3), np.float64),  # wrong dtype
        lambda: np.ones(6, np.float32),  # wrong ndim
        lambda: np.ones((3, 2), np.float32),  # wrong dim
        lambda: np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2],  # non-contiguous
        lambda: np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        lambda: np.arange(4, dtype=np.int8),
        lambda: np.zeros((0, 3), np.float32),
    ][pick - 4]()


def _read_only_matrix():
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    matrix.flags.writeable = False
    return matrix


def valid_value(kind, rng):
    """A value the parameter kind accepts (mostly; the generic path is the judge)."""
    if isinstance(kind, list):  # an ndarray
        return _arrays(rng)
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        return rng.choice([low, high, 0, 1, rng.randint(low, high), rng.randint(low, high),
                           rng.randint(max(low, -1000), min(high, 1000)), True, False])
    if kind == "i1":
        return rng.choice([True, False, 0, 1, 7, -1])
    if kind in ("f32", "f64"):
        return rng.choice([rng.uniform(-1e6, 1e6), 0.5, -0.0, 3, True, 2**53 + 1, 1e300,
                           rng.randint(-2**63, 2**63 - 1)])
    if kind == "str":
        return rng.choice(["", "abc", "seven77", "eight888", "x" * rng.randint(0, 40),
                           "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(1, 20)))])
    if kind == "Device":
        return rng.choice([ffijit.Device("cpu"), ffijit.Device("cuda", 1), "cpu", "cuda:2"])
    if kind == "DataType":
        return rng.choice([ffijit.DataType("float32"), ffijit.DataType("int8"), "float16", "bool",
                           "int8x4", "uint1"])
    if kind == "ptr":
        return rng.choice([None, ctypes.c_void_p(8), ctypes.c_void_p(None),
                           ctypes.c_void_p(0x1000)])
    raise AssertionError(kind)


def edge_value(rng):
    """Any value: boundaries, other types, subclasses, numpy scalars, what no parameter takes."""
    return rng.choice([
        lambda: 2**63, lambda: 2**63 - 1, lambda: -2**63, lambda: -2**63 - 1, lambda: 2**64,
        lambda: 2**64 - 1, lambda: -1, lambda: 10**30, lambda: 128, lambda: -129, lambda: 256,
        lambda: 65536, lambda: 2**31, lambda: 2**32, lambda: True, lambda: False,
        lambda: 1.5, lambda: -0.0, lambda: float("nan"), lambda: float("inf"),
        lambda: SubInt(3), lambda: SubInt(2**70), lambda: Color.BLUE, lambda: np.int64(5),
        lambda: np.int8(-3), lambda: np.uint64(2**64 - 1), lambda: np.float32(1.5),
        lambda: np.float64(2.5), lambda: np.bool_(True), lambda: Index(7), lambda: Index(2**64),
        lambda: FloatLike(), lambda: None, lambda: "abc", lambda: "héllo", lambda: "日本語",
        lambda: "a\0b", lambda: "abcdefgh\0ij", lambda: "", lambda: "float32", lambda: "cpu",
        lambda: b"abc", lambda: bytearray(b"xy"), lambda: [1, 2], lambda: (3,),
        lambda: {"a": 1}, lambda: object(), lambda: ffijit.Device("cpu"),
        lambda: ffijit.DataType("int8"), lambda: ctypes.c_void_p(16), lambda: _arrays(rng),
        lambda: _read_only_matrix(), lambda: ffijit.from_dlpack(np.ones((2, 3), np.float32)),
    ])()


def random_case(rng):
    """(symbol, sig, args, kwargs): a random signature of a native and a random call of it."""
    symbol, params, results = rng.choice(NATIVES)
    kinds = [rng.choice(alternatives) for alternatives in params]
    named = rng.random() < 0.5
    sig = {"a": [["named", NAMES[i], k] if named else k for i, k in enumerate(kinds)],
           "r": results}
    if rng.random() < 0.5:
        sig["v"] = 1
    args = [valid_value(k, rng) if rng.random() < 0.8 else edge_value(rng) for k in kinds]
    roll = rng.random()
    if roll < 0.07 and args:
        del args[rng.randrange(len(args))]
    elif roll < 0.14:
        args.append(valid_value(rng.choice(kinds), rng) if kinds else edge_value(rng))
    kwargs = {}
    if rng.random() < 0.3 and args:
        # A suffix by keyword (by the metadata's names, or made-up ones when it has none), in
        # any order.
        split = rng.randrange(len(args))
        moved = list(zip(NAMES[split:len(args)], args[split:]))
        rng.shuffle(moved)
        kwargs = dict(moved)
        args = args[:split]
    if rng.random() < 0.06:
        kwargs[rng.choice(["zz", NAMES[0], NAMES[1]])] = valid_value(rng.choice(kinds), rng) \
            if kinds else 1  # unknown, or a duplicate of a positional one
    return symbol, sig, args, kwargs


def normalized(result):
    """An outcome compared by type and repr (NaN equals NaN; True does not equal 1)."""
    kind, value = result
    if kind == "ok":
        return ("ok", type(value).__name__, repr(value))
    return (kind, value)


# numpy warns that its bool scalars will stop being indexes: the call is compared all the same.
@pytest.mark.filterwarnings("ignore:In future, it will be an error for 'np.bool_'")
def test_random_calls_agree_on_every_tier(natives):
    rng = random.Random(0x25E)
    entries = {}
    seen = collections.Counter()
    unexpected_keywords = 0
    stencil_entries = 0
    for case in range(600):
        symbol, sig, args, kwargs = random_case(rng)
        target = address(natives, symbol)
        key = (symbol, json.dumps(sig))
        if key not in entries:
            entries[key] = (make("entry", target, sig), make("stencil", target, sig))
        entry, stencil = entries[key]
        interpreted = make("interpreted", target, sig)
        compiled = make("compiled", target, sig)
        got = [normalized(outcome(lambda f=f: f(*args, **kwargs)))
               for f in (interpreted, compiled, entry, stencil)]
        detail = f"case {case}: {symbol} {sig} args={args!r} kwargs={kwargs!r}"
        assert got[0] == got[1], f"{detail}\ninterpreted {got[0]}\ncompiled {got[1]}"
        assert got[0] == got[2], f"{detail}\ninterpreted {got[0]}\nentry {got[2]}"
        assert got[0] == got[3], f"{detail}\ninterpreted {got[0]}\nstencil {got[3]}"
        assert function_of(compiled).entry == "generic", detail
        assert function_of(entry).entry == "llvm", detail
        stencil_entries += function_of(stencil).entry == "stencil"
        seen[got[0][0] if got[0][0] == "ok" else got[0][0].__name__] += 1
        unexpected_keywords += "unexpected keyword argument" in str(got[0][1])
    # Both results and each kind of error were compared.
    assert seen["ok"] > 200 and seen["TypeError"] > 20 and seen["ValueError"] > 20, seen
    assert unexpected_keywords > 0
    assert len(entries) > 30
    # Most calls ran a stencil entry (the others' signatures have none: the generic path).
    assert stencil_entries > 400, stencil_entries


def test_structure_results_on_every_tier(natives):
    """A structure result is an ffijit.Array / ffijit.Map, as any Array or Map result is."""
    sig = {"a": ["i64", "f64"], "r": ["i64", ["sdict", ["a", ["stuple", "f64", None]],
                                                    ["b", ["slist"]]]]}
    for tier in TIERS:
        f = make(tier, address(natives, "py_split"), sig)
        result = f(5, 3.0)
        assert isinstance(result, ffijit.Array), (tier, type(result))
        assert len(result) == 2 and result[0] == 15
        inner = result[1]
        assert isinstance(inner, ffijit.Map), (tier, type(inner))
        assert list(inner.keys()) == ["a", "b"]
        assert list(inner["a"]) == [1.5, None] and len(inner["b"]) == 0
        with pytest.raises(ValueError, match=r"Out of range result #0 of"):
            make(tier, address(natives, "py_split"),
                 {"a": ["i64", "f64"], "r": ["u64", ["slist", "f64"]]})(-1, 0.0)
        # From a raw signature and a SIP: a result dict, and a result list with holes (None), as
        # IREE's runtime returns them.
        raw = "I11!S3!t7S3!t2R11!S3!t7S3!t2"
        sip_dict = make(tier, address(natives, "py_split"),
                        {"f": raw, "sip": "I12!S9!k0_0k1_1R17!D13!K2!q_0K2!h_1"})
        assert dict(sip_dict(2, 1.0).items()) == {"q": 6, "h": 0.5}
        sip_holes = make(tier, address(natives, "py_split"),
                         {"f": raw, "sip": "I12!S9!k0_0k1_1R12!S9!k1_0k2_1"})
        assert list(sip_holes(2, 1.0)) == [None, 6, 0.5]
        # Leaves out of raw order, mapped by index as IREE maps them: the arguments are (raw 1,
        # raw 0), the results [raw 1, raw 0]; an error names the packed argument.
        swapped = make(tier, address(natives, "py_split"),
                       {"f": raw, "sip": "I12!S9!k0_1k1_0R12!S9!k0_1k1_0"})
        assert list(swapped(1.0, 2)) == [0.5, 6]
        with pytest.raises(TypeError, match=r"argument #0"):
            swapped("x", 2)


# ---- when a function has an entry ----

ADD3 = {"a": [["named", "a", "i64"], ["named", "b", "i64"], ["named", "c", "i64"]], "r": ["i64"]}
POINT = ["sdict", ["x", "f64"], ["y", "f64"]]


def test_compile_entry_switches_calls_to_it(natives):
    add3 = ffijit.function(address(natives, "py_add3"), ADD3)
    function = function_of(add3)
    assert not function.has_entry
    assert function.entry_compile_us is None
    assert add3(1, 2, 3) == 14
    function.compile_entry()
    assert function.has_entry
    took = function.entry_compile_us
    assert isinstance(took, float) and took > 0
    assert add3(1, 2, 3) == 14
    assert add3(1, c=3, b=2) == 14  # keywords: the generic path
    function.compile_entry()  # again: nothing changes
    assert function.has_entry and function.entry_compile_us == took
    # The Function object itself calls through the same entry.
    assert function(4, 0, 0) == 4


def test_use_entry_switches_between_every_entry(natives):
    add3 = ffijit.function(address(natives, "py_add3"), ADD3)
    function = function_of(add3)
    assert function.entry == "generic" and function.entry_compile_us is None
    for kind in ("stencil", "llvm", "generic", "stencil"):
        function.use_entry(kind)
        assert function.entry == kind
        assert function.has_entry is (kind != "generic")
        assert add3(1, 2, 3) == 14
        assert add3(1, c=3, b=2) == 14  # keywords: the generic path, whatever the entry
        with pytest.raises(TypeError, match="Expected 3 but got 2 arguments"):
            add3(1, 2)
    assert function.entry_compile_us > 0
    # "generic" stays: calls do not make an entry later.
    function.use_entry("generic")
    for i in range(200):
        assert add3(i, 0, 0) == i
    assert function.entry == "generic"
    takes = r"use_entry\(\) takes 'generic', 'stencil' or 'llvm', not "
    with pytest.raises(ValueError, match=takes + "'fast'"):
        function.use_entry("fast")
    with pytest.raises(TypeError, match=takes + "int"):
        function.use_entry(1)
    square = function_of(ffijit.function(lambda x: x * x))
    with pytest.raises(RuntimeError, match="not made from metadata"):
        square.use_entry("stencil")
    kept = function_of(ffijit.function(address(natives, "py_add3"), ADD3, interpret_only=True))
    with pytest.raises(RuntimeError, match="interpret-only"):
        kept.use_entry("stencil")
    assert kept.entry == "generic"


def test_functions_of_one_signature_share_the_entry_code(natives):
    # The entry's code reads the function from its self: each call reaches its own native, while
    # functions of the signature come and go.
    add3 = ffijit.function(address(natives, "py_add3"), ADD3)
    sub3 = ffijit.function(address(natives, "py_sub3"), ADD3)
    for f in (add3, sub3):
        function_of(f).compile_entry()
        assert function_of(f).has_entry
    assert (add3(100, 20, 3), sub3(100, 20, 3)) == (149, 77)
    del add3
    gc.collect()
    assert sub3(1, 2, 3) == -4
    again = ffijit.function(address(natives, "py_add3"), ADD3)
    function_of(again).compile_entry()
    assert (again(1, 1, 1), sub3(1, 1, 1)) == (6, -1)


@pytest.mark.parametrize("text", ["", "abc", "x" * 1000, "a\0b", "\0", "é", "snow ☃", "a" * 7 + "\0"])
def test_str_entries_agree_with_the_generic_path(natives, text):
    # ASCII strs are read in the object by the entry; a NUL inside, or non-ASCII, is the generic
    # path's to decide, as is a str subclass.
    sig = {"a": ["str"], "r": ["i64"], "v": 1}
    generic = ffijit.function(address(natives, "py_strlen"), sig)
    entry = ffijit.function(address(natives, "py_strlen"), sig)
    function_of(entry).compile_entry()

    class Text(str):
        pass

    for value in (text, Text(text)):
        assert outcome(lambda: entry(value)) == outcome(lambda: generic(value))
    if text.isascii() and "\0" not in text:
        assert entry(text) == len(text)


def test_pointer_entries_leave_buffers_and_strs_to_the_generic_path(natives):
    # A `ptr` parameter is taken inline only as None or an exact ctypes.c_void_p: bytes, other
    # buffers and strs go to the generic path, which takes or refuses them for every entry alike,
    # and the entry stays.
    sig = {"a": ["ptr"], "r": ["i64"], "v": 1}
    generic = ffijit.function(address(natives, "py_address"), sig)
    function_of(generic).use_entry("generic")
    entries = {}
    for kind in ("stencil", "llvm"):
        entries[kind] = ffijit.function(address(natives, "py_address"), sig)
        function_of(entries[kind]).use_entry(kind)
    data = b"some bytes"
    values = [data, b"", bytearray(b"abc"), memoryview(data), memoryview(data)[::2],
              np.zeros((3, 3))[:, 0], "text", "", None, 0x1000, ctypes.c_void_p(0x2000)]
    for value in values:
        expected = outcome(lambda: generic(value))
        for kind, entry in entries.items():
            assert outcome(lambda: entry(value)) == expected, (kind, value)
            assert function_of(entry).entry == kind
    assert generic(data) == ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
    assert outcome(lambda: generic("text"))[0] is TypeError


def _odd_arrays():
    """Arrays at the edges of what an entry reads from the array itself (compact, writable, a
    dtype with a buffer format letter) and what only the buffer protocol describes."""
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    read_only = matrix.copy()
    read_only.flags.writeable = False
    unaligned = np.frombuffer(bytearray(4 * 6 + 1), dtype=np.uint8)[1:].view(np.float32)
    return [
        matrix, matrix[:, ::2], matrix.T, np.asfortranarray(matrix), read_only, unaligned,
        np.zeros((0, 3), np.float32), np.ones((3, 1, 2), np.float32)[:, :, :],
        np.lib.stride_tricks.as_strided(np.ones(4, np.float32), shape=(4, 1), strides=(4, 3)),
        np.lib.stride_tricks.as_strided(np.ones(4, np.float32), shape=(4, 1), strides=(4, 8)),
        np.ones(3, ">f4"), np.ones(3, "<f4"), np.ones(3, np.longdouble), np.ones(3, np.float16),
        np.ones(3, np.complex64), np.ones(3, np.complex128), np.ones(3, np.clongdouble),
        np.ones(3, np.bool_), np.ones(3, np.int8), np.ones(3, np.uint64), np.ones(3, np.intc),
        np.ones(3, "datetime64[s]"), np.ones(3, object), np.zeros(3, "i4,f4"), np.ones(3, "S2"),
        np.ones((1,) * 8, np.float32), np.ones((1,) * 9, np.float32), np.float32(1.0),
        np.broadcast_to(np.ones(3, np.float32), (2, 3)), np.matrix([[1.0, 2.0]]),
    ]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_tensor_entries_describe_arrays_as_the_generic_path(natives):
    sig = {"a": [ANY_TENSOR], "r": ["str"], "v": 1}
    generic = ffijit.function(address(natives, "py_describe_tensor"), sig)
    entry = ffijit.function(address(natives, "py_describe_tensor"), sig)
    function_of(entry).compile_entry()
    for array in _odd_arrays():
        got = outcome(lambda: entry(array))
        assert got == outcome(lambda: generic(array)), (array.dtype, array.shape, array.strides)
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert entry(matrix).endswith(" shape 2 3 compact")
    # The array is held for the call alone.
    before = sys.getrefcount(matrix)
    for _ in range(100):
        entry(matrix)
    assert sys.getrefcount(matrix) == before


def test_compile_entry_before_compile_now(natives):
    narrow = ffijit.function(address(natives, "py_narrow"), {"a": ["i8", "u8", "i16", "u32"],
                                                              "r": ["i32"]})
    function_of(narrow).compile_entry()
    assert function_of(narrow).has_entry
    assert narrow(-128, 255, -32768, 7) == -128 + 255 - 32768 + 7
    with pytest.raises(ValueError, match="does not fit `i8`"):
        narrow(300, 0, 0, 0)


@pytest.mark.parametrize("tier", TIERS)
def test_every_python_call_form(natives, tier):
    add3 = make(tier, address(natives, "py_add3"), ADD3)
    function = function_of(add3)
    assert add3(1, 2, 3) == 14
    assert add3(*(1, 2, 3)) == 14
    assert add3(**{"a": 1, "b": 2, "c": 3}) == 14
    assert add3(1, *[2], **{"c": 3}) == 14
    assert add3.__call__(1, 2, 3) == 14
    assert functools.partial(add3, 1, 2)(3) == 14
    assert list(map(add3, [1, 2], [0, 0], [0, 1])) == [1, 5]
    assert function(1, 2, 3) == 14
    assert function.__call__(1, c=3, b=2) == 14
    assert functools.partial(function, c=3)(1, 2) == 14
    with pytest.raises(TypeError, match="Expected 3 but got 2 arguments"):
        functools.partial(add3, 1)(2)
    assert function.has_entry is (tier in ("entry", "stencil"))


@pytest.mark.parametrize("symbol,sig,message", [
    ("py_distance2", {"a": [POINT, POINT], "r": ["f64"]},
     r"argument #0 `sdict<x:f64,y:f64>` is a structure"),
    ("py_weigh4", {"a": [["slist", "i64", "i64"], ["stuple", "i64", None, "i64"]], "r": ["i64"]},
     r"argument #0 `slist<i64,i64>` is a structure"),
    ("py_add3", {"a": ["i64", POINT], "r": ["i64"]},
     r"argument #1 `sdict<x:f64,y:f64>` is a structure"),
    ("py_list_sum", {"a": [["py_homogeneous_list", "i64"]], "r": ["i64"]},
     r"argument #0 `list<i64>` has no inline conversion"),
    ("py_map_size", {"a": [["py_uniform_dict", "str", "i64"]], "r": ["i64"]},
     r"argument #0 `dict<str,i64>` has no inline conversion"),
    ("py_same_object", {"a": ["object"], "r": ["object"]},
     r"argument #0 `object` has no inline conversion"),
    ("py_object_type_index", {"a": [["object", "ffi.Array"]], "r": ["i64"]},
     r"argument #0 `object<ffi.Array>` has no inline conversion"),
    ("py_bytes_sum", {"a": ["bytes"], "r": ["i64"]},
     r"argument #0 `bytes` has no inline conversion"),
])
def test_no_entry_for_structures_bytes_and_objects(natives, symbol, sig, message):
    func = ffijit.function(address(natives, symbol), sig)
    function_of(func).compile_now()
    with pytest.raises(RuntimeError, match=message):
        function_of(func).compile_entry()
    assert not function_of(func).has_entry
    assert function_of(func).entry_compile_us is None
    with pytest.raises(RuntimeError, match=message):  # the reason is remembered
        function_of(func).compile_entry()
    for _ in range(150):  # nor does the JIT policy give it one
        outcome(lambda: func(1))
    assert not function_of(func).has_entry


def test_no_entry_for_a_python_callable():
    square = ffijit.function(lambda x: x * x)
    with pytest.raises(RuntimeError, match="not made from metadata"):
        function_of(square).compile_entry()
    assert not function_of(square).has_entry
    assert square(7) == 49


def _default_policy():
    value = os.environ.get("FFIJIT_JIT")
    if value in (None, ""):
        return 100
    if value.startswith("after:") and value[6:].isdigit() and int(value[6:]) > 0:
        return int(value[6:])
    return None  # eager or never: test_the_jit_policy_decides_when_entries_come covers them


def test_the_policy_gives_a_called_function_its_entry(natives):
    after = _default_policy()
    if after is None or after < 2:
        pytest.skip(f"FFIJIT_JIT={os.environ.get('FFIJIT_JIT')} is not the after:N policy")
    add3 = ffijit.function(address(natives, "py_add3"), ADD3)
    assert function_of(add3).entry == "generic"
    # The first call makes the stencil entry (the LLVM one comes once the function is hot:
    # test_the_jit_policy_decides_when_entries_come).
    assert add3(1, 1, 0) == 3
    assert function_of(add3).entry == "stencil"
    assert 0 < function_of(add3).entry_compile_us
    for i in range(after + 50):
        assert add3(i, 0, 1) == i + 3
    assert add3(c=1, b=1, a=1) == 6


_POLICY_PROBE = """
import json, sys
import ffijit
add3 = ffijit.function((sys.argv[1], "py_add3"), {"a": ["i64"] * 3, "r": ["i64"]})
seen = [add3.__self__.entry]
for i in range(150):
    assert add3(i, 0, 0) == i
    seen.append(add3.__self__.entry)
llvm = any("libLLVM" in line for line in open("/proc/self/maps"))
print(json.dumps([seen[0], seen[1], seen[-1], llvm]))
"""


# With the after:N policy the first call makes the stencil entry, and FFIJIT_JIT_HOT's count of
# calls on it the LLVM one; a policy without stencil entries counts FFIJIT_JIT's calls for the LLVM
# entry (eager: one); `stencils` makes the stencil entry and never an LLVM one. The last item says
# whether libLLVM was loaded.
@pytest.mark.parametrize("policy, hot, expected", [
    ("eager", "after:100", ["generic", "llvm", "llvm", True]),
    ("never", "after:100", ["generic", "generic", "generic", False]),
    ("after:120", "after:100", ["generic", "stencil", "llvm", True]),
    ("after:120", "never", ["generic", "stencil", "stencil", False]),
    ("stencils", "after:100", ["generic", "stencil", "stencil", False])])
def test_the_jit_policy_decides_when_entries_come(natives_path, policy, hot, expected):
    """FFIJIT_JIT is read once per process: each policy runs in a process of its own."""
    env = dict(os.environ, FFIJIT_JIT=policy, FFIJIT_JIT_HOT=hot)
    done = subprocess.run([sys.executable, "-c", _POLICY_PROBE, natives_path], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected


def test_a_wrapper_of_a_function_with_an_entry_uses_it(natives):
    name = "pytest.entries.add3"
    registered = ffijit.register(name, address(natives, "py_add3"), ADD3)
    try:
        function_of(registered).compile_entry()
        found = ffijit.get_global_func(name)
        assert function_of(found).same_as(function_of(registered))
        if _default_policy() is not None:  # not FFIJIT_JIT=never
            assert function_of(found).has_entry
        assert found(1, 2, 3) == 14
    finally:
        ffijit.remove_global_func(name)


ERROR_KINDS = [("TypeError", TypeError), ("ValueError", ValueError), ("KeyError", KeyError),
               ("IndexError", IndexError), ("RuntimeError", RuntimeError),
               ("NotImplementedError", NotImplementedError), ("SomethingElse", ffijit.Error)]


@pytest.mark.parametrize("release_gil", [False, True])
def test_errors_raised_by_the_native_through_an_entry(natives, release_gil):
    funcs = [make(tier, address(natives, "py_raise"), {"a": ["str", "str"], "r": []},
                  status_convention=True, release_gil=release_gil)
             for tier in TIERS]
    assert [function_of(f).entry for f in funcs[2:]] == ["llvm", "stencil"]
    for kind, expected in ERROR_KINDS:
        got = [outcome(lambda f=f: f(kind, f"the {kind} message")) for f in funcs]
        assert got[0] == got[1] == got[2] == got[3]
        assert issubclass(got[2][0], expected) and "the " + kind + " message" in got[2][1], got


def test_entry_calls_keep_reference_counts(natives):
    # Arguments are borrowed and results are new references: a thousand calls leave the
    # counts of what they touched where they were.
    text = "a str argument of some length"
    device = ffijit.Device("cuda", 1)
    matrix = np.ones((2, 3), np.float32)
    mix_text = make("entry", address(natives, "py_mix_text"),
                    {"a": ["str", "Device", "DataType", "ptr", "u32"], "r": ["i64"]})
    sum_matrix = make("entry", address(natives, "py_sum_f32"), {"a": [SUM_MATRIX], "r": ["f64"]})
    flip = make("entry", address(natives, "py_mix_bool"), {"a": ["i1", "i64", "u32"],
                                                             "r": ["i1"]})
    nothing = make("entry", address(natives, "py_mix_void"), {"a": ["i64", "str"], "r": []})
    watched = [text, device, matrix, True, False, None]
    before = [sys.getrefcount(obj) for obj in watched]
    for i in range(1000):
        mix_text(text, device, ffijit.DataType("int8"), None, i)
        sum_matrix(matrix)
        flip(True, i, 0)
        flip(False, i, 1)
        nothing(i, text)
    after = [sys.getrefcount(obj) for obj in watched]
    for obj, b, a in zip(watched, before, after):
        assert abs(a - b) < 20, (obj, b, a)


# ---- the GIL ----

def test_an_entry_releases_the_gil_when_asked(natives):
    # py_gate_wait(v) returns v once py_gate_open(v) ran while it waited: the opener is Python
    # code on another thread, which runs only if the waiting call released the GIL.
    wait = ffijit.function(address(natives, "py_gate_wait"), {"a": ["i64"], "r": ["i64"]},
                           release_gil=True)
    open_gate = ffijit.function(address(natives, "py_gate_open"), {"a": ["i64"], "r": ["i64"]})
    function_of(wait).compile_entry()
    assert function_of(wait).has_entry and function_of(wait).releases_gil
    for value in (7001, 7002):
        done = []

        def opener():
            while not done and not open_gate(value):
                pass

        thread = threading.Thread(target=opener)
        thread.start()
        try:
            assert wait(value) == value
        finally:
            done.append(True)
            thread.join()
    assert function_of(wait).has_entry


# ---- numpy arrays ----

def _tiers(natives, symbol, sig):
    return [make(tier, address(natives, symbol), sig) for tier in TIERS]


@pytest.mark.parametrize("make_array", [
    lambda: np.arange(6, dtype=np.float32).reshape(2, 3),
    lambda: np.ones((7, 3), np.float32),
    lambda: np.zeros((0, 3), np.float32),
    lambda: np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2],
    lambda: np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
    lambda: np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::2],
    _read_only_matrix,
    lambda: np.ones((2, 3), np.float64),
    lambda: np.ones((2, 3), np.int32),
    lambda: np.ones(6, np.float32),
    lambda: np.ones((2, 3, 1), np.float32),
    lambda: np.ones((3, 2), np.float32),
    lambda: np.array([[b"ab", b"cd", b"ef"]]),
    lambda: ffijit.from_dlpack(np.ones((2, 3), np.float32)),
    lambda: [[1.0, 2.0, 3.0]],
    lambda: np.float32(1.0),
], ids=["matrix", "rows", "empty", "strided", "fortran", "strided2d", "read_only", "f64", "i32",
        "ndim1", "ndim3", "dims", "bytes", "tensor", "list", "scalar"])
def test_arrays_at_an_ndarray_parameter(natives, make_array):
    funcs = _tiers(natives, "py_sum_f32", {"a": [SUM_MATRIX], "r": ["f64"]})
    assert [function_of(f).entry for f in funcs[2:]] == ["llvm", "stencil"]
    array = make_array()
    got = [outcome(lambda f=f: f(array)) for f in funcs]
    assert got[0] == got[1] == got[2] == got[3]
    if isinstance(array, np.ndarray) and not array.flags.writeable:
        # ffijit tensors are writable: a read-only array is refused, whatever numpy's version.
        assert got[2][0] is ValueError and "read-only" in got[2][1], got
    elif isinstance(array, np.ndarray) and array.dtype == np.float32 and array.ndim == 2 and \
            array.shape[1] == 3:
        assert got[2] == ("ok", float(array.sum()))
    elif not isinstance(array, ffijit.Tensor):
        assert got[2][0] in (TypeError, ValueError), got
    else:
        assert got[2] == ("ok", 6.0)


def test_arrays_with_other_arguments_and_in_place_writes(natives):
    scale = make("entry", address(natives, "py_scale_f64"),
                 {"a": [["ndarray", "f64", 1, None], "f64"], "r": []})
    assert function_of(scale).has_entry
    data = np.arange(5, dtype=np.float64)
    assert scale(data, 2.0) is None
    assert data.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    # A later argument that fails: the array was borrowed and is released, unchanged.
    with pytest.raises(TypeError, match="argument #1"):
        scale(data, "x")
    assert data.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    mix = make("entry", address(natives, "py_mix_tensor"),
               {"a": [ANY_TENSOR, "f64", "i16", "DataType"], "r": ["f64"]})
    matrix = np.ones((2, 3), np.float32)
    for _ in range(3):
        assert mix(matrix, 1.0, 1, "int8") == 6.0 + (2 * 16 + 3) * 1000 + 200 + 20 + 32 + 1 + 8
        with pytest.raises(ValueError, match="does not fit `i16`"):
            mix(matrix, 1.0, 2**15, "int8")


# ---- Functions as arguments ----

ON_THREADS = {"a": ["object", "i64", "i64"], "r": ["i64"]}


def test_a_function_with_an_entry_passed_to_natives(natives, module_so):
    twice = make("entry", address(natives, "py_twice"), {"a": ["i64"], "r": ["i64"]})
    assert function_of(twice).has_entry and twice(21) == 42
    on_threads = ffijit.function(address(natives, "py_call_on_threads"), ON_THREADS,
                                 status_convention=True, release_gil=True)
    assert on_threads(twice, 4, 10) == 2 * (10 + 11 + 12 + 13)
    assert on_threads(function_of(twice), 2, 1) == 2 * (1 + 2)
    module = ffijit.load_module(module_so)
    assert module.call_twice(twice, 3) == 12
    same = ffijit.function(address(natives, "py_same_object"), {"a": ["object"], "r": ["object"]})
    back = same(twice)
    assert function_of(back).same_as(function_of(twice))
    assert back(5) == 10
    type_index = ffijit.function(address(natives, "py_object_type_index"),
                                 {"a": ["object"], "r": ["i64"]})
    assert type_index(twice) == function_of(twice).type_index
    name = "pytest.entries.twice"
    ffijit.register_func(name, twice)
    try:
        assert function_of(ffijit.get_global_func(name)).same_as(function_of(twice))
        call_global = ffijit.function(address(natives, "py_call_global"),
                                      {"a": ["str", "i64"], "r": ["i64"]})
        assert call_global(name, 8) == 16
    finally:
        ffijit.remove_global_func(name)


def test_other_builtins_are_passed_as_callables(natives):
    same = ffijit.function(address(natives, "py_same_object"), {"a": ["object"], "r": ["object"]})
    add3 = ffijit.function(address(natives, "py_add3"), ADD3)
    # A builtin that is not a Function's own (len, or the Function's describe method) becomes a
    # Function calling it, like any Python callable; the Function's own builtin is the Function.
    describe = same(function_of(add3).describe)
    assert not function_of(describe).same_as(function_of(add3))
    assert describe() == function_of(add3).describe()
    assert same(len)([1, 2, 3]) == 3
    assert function_of(same(add3)).same_as(function_of(add3))


# ---- lifetime ----

def test_functions_with_entries_are_freed(natives):
    target = address(natives, "py_mix_ints")
    sig = {"a": ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "i1"], "r": ["i64"]}
    for i in range(150):  # past the size where the table of functions' traits is swept
        func = ffijit.function(target, sig)
        function_of(func).compile_entry()
        assert function_of(func).has_entry
        assert func(0, 0, 0, 0, 0, 0, 0, i, False) == i * 1000003
        del func
        if i % 50 == 0:
            gc.collect()
    gc.collect()
    # Still working: a new one, and one kept while others come and go.
    kept = make("entry", target, sig)
    for i in range(10):
        made = make("entry", target, sig)
        assert made(0, 0, 0, 0, 0, 0, 0, 1, True) == kept(0, 0, 0, 0, 0, 0, 0, 1, True)
    assert function_of(kept).has_entry


def test_a_function_outlives_the_builtin_it_was_reached_through(natives):
    func = make("entry", address(natives, "py_add3"), ADD3)
    function = function_of(func)
    del func
    gc.collect()
    assert function.has_entry
    assert function(1, 2, 3) == 14
    assert function(a=1, b=2, c=3) == 14
