"""What Python tooling and Python's conventions expect of ffijit's functions: signatures for
inspect and help, recognising an ffijit function, keyword errors, the cycle collector, and the
values scalar and pointer parameters take (as ctypes takes them), alike on every tier."""
import array
import ctypes
import gc
import inspect
import weakref

import numpy as np
import pytest

import ffijit
from conftest import address, make, needs_jit

ADD3_RAW = "I16!S3!t7S3!t7S3!t7R6!S3!t7"
DISTANCE_SIP = {"f": "I21!S3!t2S3!t2S3!t2S3!t2R6!S3!t2",
                "sip": "I29!D25!K2!a_0K2!b_1K2!c_2K2!d_3R3!_0"}


def kinds(func):
    return [(p.name, p.kind) for p in inspect.signature(func).parameters.values()]


POK = inspect.Parameter.POSITIONAL_OR_KEYWORD
PO = inspect.Parameter.POSITIONAL_ONLY


def test_signature_of_json_metadata(natives):
    sig = {"a": [["named", "a", "i64"], ["named", "b", "i64"], ["named", "c", "i64"]],
           "r": ["i64"]}
    add3 = ffijit.function(address(natives, "py_add3"), sig, name="add3")
    assert kinds(add3) == [("a", POK), ("b", POK), ("c", POK)]
    assert add3.__name__ == "add3"
    assert add3.__doc__.startswith("add3(a: i64, b: i64, c: i64) -> i64")
    assert add3.__text_signature__ == "(a, b, c)"
    assert "add3(a, b, c)" in _help(add3)
    bound = inspect.signature(add3).bind(1, c=3, b=2)
    assert add3(*bound.args, **bound.kwargs) == 14


def test_signature_of_raw_metadata(natives):
    add3 = ffijit.register("pytest.semantics.add3", address(natives, "py_add3"), ADD3_RAW,
                           override=True)
    try:
        # No names in raw metadata: positional-only parameters.
        assert kinds(add3) == [("arg0", PO), ("arg1", PO), ("arg2", PO)]
        assert add3.__name__ == "pytest.semantics.add3"
        assert add3.__doc__.startswith("pytest.semantics.add3(i64, i64, i64) -> i64")
        found = ffijit.get_global_func("pytest.semantics.add3")
        assert kinds(found) == kinds(add3)
    finally:
        ffijit.remove_global_func("pytest.semantics.add3")


def test_signature_of_sip_metadata(natives):
    distance2 = ffijit.function(address(natives, "py_distance2"), DISTANCE_SIP,
                                name="py_distance2")
    assert kinds(distance2) == [("a", POK), ("b", POK), ("c", POK), ("d", POK)]
    assert distance2.__doc__.startswith("py_distance2(a: f64, b: f64, c: f64, d: f64) -> f64")


def test_signature_mixing_keywords_and_positions(natives):
    # A positional-only argument after a keyword one: Python lists every parameter up to it as
    # positional-only (the keyword still binds in a call); names Python cannot take are argN.
    sig = {"a": [["named", "a", "i64"], "i64", ["named", "class", "i64"]], "r": ["i64"]}
    add3 = ffijit.function(address(natives, "py_add3"), sig, name="mixed")
    assert kinds(add3) == [("a", PO), ("arg1", PO), ("arg2", PO)]
    assert add3.__doc__.startswith("mixed(a: i64, i64, class: i64) -> i64")
    assert add3(1, 2, 3) == 14
    assert add3(1, 2, **{"class": 3}) == 14


def test_doc_of_no_result_and_of_the_status_convention(natives):
    fill = ffijit.function(address(natives, "py_fill"), {"a": ["ptr", "i64", "i64"], "r": []})
    # Without a name (an int address has none) the builtin is called `function`.
    assert fill.__doc__.startswith("function(ptr, i64, i64) -> None")
    assert fill.__name__ == "function" and kinds(fill)[0] == ("arg0", PO)
    nest = ffijit.function(("%s" % natives._name, "py_nest_status"),
                           {"a": ["ptr", "i64"], "r": ["i64"]}, status_convention=True)
    assert nest.__doc__.startswith("py_nest_status(ptr, i64) -> i64 [status]")


def _help(func):
    import pydoc
    return pydoc.render_doc(func, renderer=pydoc.plaintext)


def test_function_of_recognises_ffijit_functions(natives):
    add3 = ffijit.function(address(natives, "py_add3"), ADD3_RAW)
    function = ffijit.Function.of(add3)
    assert isinstance(function, ffijit.Function)
    assert ffijit.Function.of(function) is function
    callback = ffijit.function(lambda: 1)
    assert ffijit.Function.of(callback) is callback.__self__
    assert ffijit.Function.of(len) is None
    assert ffijit.Function.of(lambda: 1) is None
    assert ffijit.Function.of(function.describe) is None  # a method of a Function, not one
    assert ffijit.Function.of(3) is None


def test_unknown_keyword_is_a_type_error(natives, tier):
    sig = {"a": [["named", "a", "i64"], ["named", "b", "i64"], ["named", "c", "i64"]],
           "r": ["i64"]}
    add3 = make(tier, address(natives, "py_add3"), sig, name="add3")
    with pytest.raises(TypeError, match=r"^add3\(\) got an unexpected keyword argument 'd'$"):
        add3(1, 2, d=3)
    plain = make(tier, address(natives, "py_add3"), ADD3_RAW, name="plain3")
    with pytest.raises(TypeError, match=r"^plain3\(\) got an unexpected keyword argument 'a'$"):
        plain(a=1, b=2, c=3)


# ---- the cycle collector ----

class Owner:
    def __init__(self, make_callback):
        self.cb = make_callback(self.on_event)

    def on_event(self, x):
        return x + 1


@needs_jit
def test_an_object_owning_its_native_callback_is_collected():
    owner = Owner(lambda f: ffijit.callback(f, {"a": ["i64"], "r": ["i64"]}))
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(owner.cb.address)(1) == 2
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is None


def test_an_object_owning_its_function_is_collected():
    owner = Owner(ffijit.function)
    assert owner.cb(1) == 2
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is None


def test_an_object_owning_an_array_of_its_callbacks_is_collected():
    identity = ffijit.function(lambda array: array)

    class Handlers:
        def __init__(self):
            # A list becomes an Array of Functions calling the bound methods.
            self.handlers = identity([self.on_a, self.on_b])

        def on_a(self):
            return "a"

        def on_b(self):
            return "b"

    owner = Handlers()
    assert isinstance(owner.handlers, ffijit.Array)
    assert [f() for f in owner.handlers] == ["a", "b"]
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is None


class Holder:
    """Keeps, in `self.held`, what `build` makes of its own bound methods (converted to ffijit
    containers of Functions by a call)."""
    identity = staticmethod(ffijit.function(lambda value: value))

    def __init__(self, build):
        self.held = Holder.identity(build(self))

    def on_a(self):
        return "a"

    def on_b(self):
        return "b"


def collected(alive):
    gc.collect()
    return alive() is None


def test_an_object_owning_a_map_of_its_callbacks_is_collected():
    owner = Holder(lambda h: {"a": h.on_a, "b": h.on_b})
    assert isinstance(owner.held, ffijit.Map)
    assert owner.held["a"]() == "a"
    alive = weakref.ref(owner)
    del owner
    assert collected(alive)
    # More than four entries: the map's other (hashed) layout.
    owner = Holder(lambda h: {str(i): (h.on_a if i % 2 else h.on_b) for i in range(9)})
    assert owner.held["3"]() == "a"
    alive = weakref.ref(owner)
    del owner
    assert collected(alive)


def test_an_object_owning_a_map_keyed_by_its_callbacks_is_collected():
    owner = Holder(lambda h: {h.on_a: 1, h.on_b: 2})
    assert isinstance(owner.held, ffijit.Map)
    assert sorted(key() for key in owner.held.keys()) == ["a", "b"]
    alive = weakref.ref(owner)
    del owner
    assert collected(alive)


@pytest.mark.parametrize("build", [
    lambda h: [[h.on_a], [h.on_b]],           # an Array in an Array
    lambda h: [{"a": h.on_a}],                 # a Map in an Array
    lambda h: {"a": [h.on_a]},                 # an Array as a Map value
    lambda h: {"a": {"b": h.on_b}},            # a Map in a Map
    lambda h: [[[[[[[[h.on_a]]]]]]]],          # eight levels
], ids=["array-in-array", "map-in-array", "array-in-map", "map-in-map", "deep"])
def test_an_object_owning_nested_containers_of_its_callbacks_is_collected(build):
    alive = weakref.ref(Holder(build))
    assert collected(alive)


@pytest.mark.skipif("ffi.List" not in ffijit.list_global_funcs(),
                    reason="ffi.List and ffi.Dict exist from TVM FFI v0.1 on")
def test_an_object_owning_a_list_or_dict_in_an_array_is_collected():
    make_list = ffijit.get_global_func("ffi.List")
    make_dict = ffijit.get_global_func("ffi.Dict")
    owner = Holder(lambda h: [make_list(h.on_a, h.on_b)])
    assert owner.held[0].type_key == "ffi.List"
    alive = weakref.ref(owner)
    del owner
    assert collected(alive)
    owner = Holder(lambda h: [make_dict("a", h.on_a)])
    assert owner.held[0].type_key == "ffi.Dict"
    alive = weakref.ref(owner)
    del owner
    assert collected(alive)


def test_a_container_held_elsewhere_keeps_its_callables():
    # The Map is held by another wrapper too: whoever holds that can still call the callables.
    owner = Holder(lambda h: {"a": h.on_a})
    other = Holder.identity([owner.held])
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is not None
    assert other[0]["a"]() == "a"
    # Once the Array is all that holds the Map, the Map is its own and the cycle is found.
    other = None
    gc.collect()
    assert alive() is None


def test_a_nested_container_held_elsewhere_keeps_its_callables():
    owner = Holder(lambda h: {"inner": Holder.identity([h.on_a])})
    inner = owner.held["inner"]  # a second reference to the nested Array
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is not None
    assert inner[0]() == "a"
    del inner
    gc.collect()
    assert alive() is None


def test_a_callback_registered_from_a_container_is_not_collected():
    # The Function inside the Map is also a global: the registry keeps its callable.
    owner = Holder(lambda h: {"a": h.on_a})
    ffijit.register_func("pytest.semantics.held", owner.held["a"], override=True)
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    try:
        assert alive() is not None
        assert ffijit.get_global_func("pytest.semantics.held")() == "a"
    finally:
        ffijit.remove_global_func("pytest.semantics.held")
    gc.collect()
    assert alive() is None


def test_a_map_is_traversed_up_to_1024_entries():
    # Larger maps are skipped: the runtime reaches their entries one by one from the first.
    def build(size):
        return lambda h: {i: (h.on_a if i == size - 1 else i) for i in range(size)}
    alive = weakref.ref(Holder(build(1024)))
    assert collected(alive)
    owner = Holder(build(1025))
    alive = weakref.ref(owner)
    del owner
    assert not collected(alive)
    alive().held = None
    assert collected(alive)


def nested_holder(levels):
    """A Holder of [on_a] inside `levels` more Arrays."""
    owner = Holder(lambda h: [h.on_a])
    for _ in range(levels):
        owner.held = Holder.identity([owner.held])
    return owner


def test_deep_nesting_is_traversed_to_a_bound():
    # A native can nest containers without limit: the walk follows 64 containers inside the
    # wrapped one (a cycle through a deeper one is not found) and never overflows the C stack.
    alive = weakref.ref(nested_holder(64))
    assert collected(alive)
    owner = nested_holder(65)
    alive = weakref.ref(owner)
    del owner
    assert not collected(alive)
    alive().held = alive().held[0]  # 64 levels again
    assert collected(alive)
    nested = Holder.identity([])
    for _ in range(20000):
        nested = Holder.identity([nested])
    gc.collect()


def test_a_registered_callback_is_not_collected():
    # The global registry holds the Function: the owner stays as long as its name.
    owner = Owner(lambda f: ffijit.register_func("pytest.semantics.owner", f, override=True))
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    try:
        assert alive() is not None
        assert ffijit.get_global_func("pytest.semantics.owner")(4) == 5
    finally:
        ffijit.remove_global_func("pytest.semantics.owner")
    gc.collect()
    assert alive() is None


def test_a_function_held_elsewhere_keeps_its_callable(natives):
    # The packed Function is held by another wrapper too: the collector must not free the
    # callable's object while that wrapper can still call it.
    owner = Owner(ffijit.function)
    other = ffijit.function(owner.cb)  # the same Function, another reference
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is not None
    assert other(6) == 7


# ---- scalar parameters: Python's numeric protocols ----

class Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class FloatLike:
    def __float__(self):
        return 2.5


MIXED = {"a": ["i64", "f64", "i32", "f32", "ptr"], "r": ["f64"]}


@pytest.mark.parametrize("value, expected", [
    (np.int64(4), 4), (np.int8(-3), -3), (np.array(7), 7), (Index(9), 9), (np.uint16(5), 5),
])
def test_integer_parameters_take_index(natives, tier, value, expected):
    mixed = make(tier, address(natives, "py_mixed"), MIXED)
    assert mixed(value, 0.0, 0, 0.0, None) == expected
    assert mixed(0, 0.0, value, 0.0, None) == expected


@pytest.mark.parametrize("value, expected", [
    (np.float32(1.5), 1.5), (np.array(2.0), 2.0), (np.array(3.5, np.float32), 3.5),
    (np.int64(4), 4.0), (np.array(6), 6.0), (FloatLike(), 2.5), (Index(8), 8.0),
])
def test_float_parameters_take_float(natives, tier, value, expected):
    mixed = make(tier, address(natives, "py_mixed"), MIXED)
    assert mixed(0, value, 0, 0.0, None) == expected
    assert mixed(0, 0.0, 0, value, None) == expected


def test_what_is_not_a_number_is_still_refused(natives, tier):
    mixed = make(tier, address(natives, "py_mixed"), MIXED)
    with pytest.raises(TypeError):
        mixed(np.array([1, 2]), 0.0, 0, 0.0, None)  # several elements: not an index
    with pytest.raises(TypeError):
        mixed(0, np.ones(3), 0, 0.0, None)
    with pytest.raises(TypeError):
        mixed(np.float64(1.5), 0.0, 0, 0.0, None)  # a float at an integer parameter
    with pytest.raises(TypeError):
        mixed(0, "1.5", 0, 0.0, None)


# ---- pointer parameters: what ctypes' c_void_p takes ----

ADDRESS = {"a": ["ptr"], "r": ["i64"]}


class Bytes(bytes):
    pass


def _address_of_bytes(data):
    """Where a bytes object keeps its bytes, as ctypes' c_char_p (and c_void_p) passes it."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def _pointer_cases():
    ints = (ctypes.c_int32 * 4)(1, 2, 3, 4)
    x = ctypes.c_double(1.0)
    text = ctypes.c_char_p(b"text")
    buf = bytearray(16)
    arr = array.array("i", [1, 2, 3])
    nd = np.zeros(8, np.uint8)
    data = b"read-only bytes"
    subclassed = Bytes(b"bytes of a subclass")
    read_only = np.zeros(4, np.float64)
    read_only.flags.writeable = False
    fortran = np.asfortranarray(np.zeros((3, 4), np.float32))
    return [
        ("bytes", data, _address_of_bytes(data)),
        ("empty bytes", b"", _address_of_bytes(b"")),
        ("bytes subclass", subclassed, _address_of_bytes(subclassed)),
        ("read-only memoryview", memoryview(data), _address_of_bytes(data)),
        ("memoryview slice", memoryview(data)[5:], _address_of_bytes(data) + 5),
        ("read-only numpy", read_only, read_only.ctypes.data),
        ("Fortran-order numpy", fortran, fortran.ctypes.data),
        ("int", 0x1000, 0x1000),
        ("zero", 0, 0),
        ("None", None, 0),
        ("c_void_p", ctypes.c_void_p(0x2000), 0x2000),
        ("ctypes array", ints, ctypes.addressof(ints)),
        ("ctypes pointer", ctypes.pointer(x), ctypes.addressof(x)),
        ("byref", ctypes.byref(x), ctypes.addressof(x)),
        ("byref with offset", ctypes.byref(ints, 8), ctypes.addressof(ints) + 8),
        ("c_char_p", text, ctypes.cast(text, ctypes.c_void_p).value),
        ("bytearray", buf, ctypes.addressof((ctypes.c_char * 16).from_buffer(buf))),
        ("array.array", arr, arr.buffer_info()[0]),
        ("numpy", nd, nd.ctypes.data),
        ("memoryview", memoryview(buf), ctypes.addressof((ctypes.c_char * 16).from_buffer(buf))),
    ]


@pytest.mark.parametrize("case", range(len(_pointer_cases())))
def test_pointer_parameters_take_what_ctypes_takes(natives, tier, case):
    name, value, expected = _pointer_cases()[case]
    take = make(tier, address(natives, "py_address"), ADDRESS)
    assert take(value) == expected, name


def test_native_reads_through_bytes(tier):
    # CPython keeps a NUL after a bytes object's bytes: a C string for a native that wants one.
    strlen = make(tier, ("libc.so.6", "strlen"), {"a": ["ptr"], "r": ["u64"]})
    assert strlen(b"hello") == 5
    assert strlen("héllo".encode()) == 6
    assert strlen(memoryview(b"two\0words")) == 3
    assert strlen(bytearray(b"abc\0")) == 3


def test_native_writes_through_a_buffer(natives, tier):
    fill = make(tier, address(natives, "py_fill"), {"a": ["ptr", "i64", "i64"], "r": []})
    buf = bytearray(8)
    fill(buf, 4, 7)
    assert buf == bytearray([7, 7, 7, 7, 0, 0, 0, 0])
    nd = np.zeros(4, np.uint8)
    fill(nd, 4, 9)
    assert list(nd) == [9, 9, 9, 9]


STRIDED = ("argument #0: a `ptr` parameter takes a contiguous buffer; the `{}` is not contiguous "
           "(its elements are not one block of memory a pointer could reach): pass a contiguous "
           "copy")


@pytest.mark.parametrize("value, message", [
    ("a str", "argument #0: a `ptr` parameter takes no `str`: encode it (s.encode() gives bytes, "
              "which pass as a pointer to their bytes)"),
    ("", "argument #0: a `ptr` parameter takes no `str`: encode it (s.encode() gives bytes, "
         "which pass as a pointer to their bytes)"),
    (memoryview(bytearray(16))[::2], STRIDED.format("memoryview")),
    (memoryview(b"abcdef")[::-1], STRIDED.format("memoryview")),
    (np.zeros((4, 4))[:, 1], STRIDED.format("numpy.ndarray")),
    (1.5, "not `float`"), (object(), "not `object`"), (ctypes.c_int(3), "not `c_int`"),
    (True, "not `bool`"),
], ids=["str", "empty str", "strided memoryview", "reversed memoryview", "numpy column", "float",
        "object", "c_int", "bool"])
def test_pointer_parameters_refuse_the_rest(natives, tier, value, message):
    take = make(tier, address(natives, "py_address"), ADDRESS)
    with pytest.raises(TypeError, match=r"argument #0: a `ptr` parameter takes") as info:
        take(value)
    if message.startswith("argument #0"):
        assert str(info.value) == message
    else:
        assert message in str(info.value)
        assert "or an object with a contiguous buffer (bytes, bytearray, memoryview, array.array, " \
            "a numpy array)" in str(info.value)


def test_a_released_memoryview_is_its_own_error(natives, tier):
    take = make(tier, address(natives, "py_address"), ADDRESS)
    view = memoryview(b"abc")
    view.release()
    with pytest.raises(ValueError, match="released memoryview"):
        take(view)


def test_pointer_keyword_argument(natives, tier):
    take = make(tier, address(natives, "py_address"), {"a": [["named", "p", "ptr"]], "r": ["i64"]})
    buf = bytearray(4)
    assert take(p=buf) == ctypes.addressof((ctypes.c_char * 4).from_buffer(buf))
    assert take(p=0x3000) == 0x3000
    data = b"bytes by keyword"
    assert take(p=data) == _address_of_bytes(data)
    with pytest.raises(TypeError, match=r"^argument #0: a `ptr` parameter takes no `str`"):
        take(p="text")
