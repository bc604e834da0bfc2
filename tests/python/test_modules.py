"""Modules loaded from a shared library and from an object file."""
import gc

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


def test_system_lib():
    lib = ffijit.system_lib()
    assert isinstance(lib, ffijit.Module)
    assert lib.get_function("surely_not_linked_in") is None
