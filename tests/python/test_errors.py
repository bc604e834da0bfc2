"""TVM FFI error kinds raised by natives map to Python exception types."""
import pytest

import ffijit
from conftest import address

KINDS = [("TypeError", TypeError), ("ValueError", ValueError), ("IndexError", IndexError),
         ("KeyError", KeyError), ("AttributeError", AttributeError),
         ("RuntimeError", RuntimeError), ("NotImplementedError", NotImplementedError),
         ("MemoryError", MemoryError)]


@pytest.fixture(scope="module")
def raise_status(natives):
    return ffijit.function(address(natives, "py_raise"), {"a": ["str", "str"], "r": []},
                           status_convention=True)


@pytest.fixture(scope="module")
def module(module_so):
    return ffijit.load_module(module_so)


def message_of(exc):
    return exc.args[0]


@pytest.mark.parametrize("kind,expected", KINDS, ids=[k for k, _ in KINDS])
def test_kinds_from_a_status_native(raise_status, kind, expected):
    with pytest.raises(expected) as info:
        raise_status(kind, f"the {kind} message")
    assert type(info.value) is expected
    assert message_of(info.value) == f"the {kind} message"


@pytest.mark.parametrize("kind,expected", KINDS, ids=[k for k, _ in KINDS])
def test_kinds_from_a_module_function(module, kind, expected):
    with pytest.raises(expected) as info:
        module["raise"](kind, "short")
    assert type(info.value) is expected
    assert message_of(info.value) == "short"


def test_unknown_kind_becomes_an_error_subclass(raise_status, module):
    with pytest.raises(ffijit.Error) as info:
        raise_status("MyKindError", "custom kind")
    exc = info.value
    assert type(exc).__name__ == "MyKindError"
    assert type(exc) is not ffijit.Error and issubclass(type(exc), ffijit.Error)
    assert exc.kind == "MyKindError"
    assert message_of(exc) == "custom kind"
    assert isinstance(exc, RuntimeError)  # ffijit.Error is a RuntimeError
    with pytest.raises(ffijit.Error) as again:
        module["raise"]("MyKindError", "again")
    assert type(again.value) is type(exc)  # one class per kind


def test_odd_kind_names_still_give_a_class(raise_status):
    with pytest.raises(ffijit.Error) as info:
        raise_status("my.odd-kind", "odd")
    assert info.value.kind == "my.odd-kind"
    assert type(info.value).__name__.isidentifier()


def test_call_errors_carry_the_declaration(natives):
    named = ffijit.function(address(natives, "py_add3"),
                            {"a": [["named", "x", "i64"], "i64", "i64"], "r": ["i64"]},
                            name="pytest.errors.add3")
    with pytest.raises(TypeError) as info:
        named("1", 2, 3)
    assert str(info.value) == ("Mismatched type on argument #0 when calling: "
                               "`pytest.errors.add3(x: i64, i64, i64) -> i64`. "
                               "Expected `i64` but got `str`")


def test_python_error_subclass_kind_round_trips(module):
    class Kinded(ffijit.Error):
        pass

    exc = Kinded("mine")
    exc.kind = "KindedKind"
    with pytest.raises(Kinded) as info:
        module.call_twice(lambda x: (_ for _ in ()).throw(exc), 1)
    assert info.value is exc
