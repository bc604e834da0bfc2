"""Shared fixtures of the Python suites: the natives library and module paths from ctest."""
import ctypes
import os

import pytest


def _path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suites through ctest (./build.sh test)")
    return value


@pytest.fixture(scope="session")
def natives_path():
    return _path("FFIJIT_TEST_NATIVES")


@pytest.fixture(scope="session")
def natives(natives_path):
    return ctypes.CDLL(natives_path)


@pytest.fixture(scope="session")
def module_so():
    return _path("FFIJIT_TEST_MODULE_SO")


@pytest.fixture(scope="session")
def module_o():
    return _path("FFIJIT_TEST_MODULE_O")


def address(lib, symbol):
    """The address of `symbol` in the ctypes library `lib`."""
    return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
