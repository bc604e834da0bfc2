"""ffijit: register native functions at run time and call them from Python.

A native function plus its signature (IREE function-ABI metadata: the ``iree.abi`` JSON, the raw
``I..R..`` string or a SIP signature) becomes an :class:`ffijit.Function`: a Python callable that
packs its arguments into TVM FFI values and calls the native through ffijit's JIT thunk or its
interpreter. Python callables go the other way: as Functions native code can call, and as plain C
function pointers (:func:`callback`). Modules (``.so``, ``.o``, ``.bc``, ``.ll``) load with
:func:`load_module`; tensors travel through DLPack without a copy.
"""

import collections.abc as _abc
import ctypes as _ctypes
import json as _json

from ._core import (  # noqa: F401  (re-exported)
    Array,
    DataType,
    Device,
    Error,
    Function,
    Map,
    Module,
    NativeCallback,
    Object,
    Tensor,
    from_dlpack,
    get_global_func,
    jit_available,
    list_global_funcs,
    load_module,
    remove_global_func,
    system_lib,
)
from . import _core

__all__ = [
    "Array", "DataType", "Device", "Error", "Function", "Map", "Module", "NativeCallback",
    "Object", "Tensor", "callback", "from_dlpack", "function", "get_global_func",
    "jit_available", "list_global_funcs", "load_module", "register", "register_func",
    "remove_global_func", "system_lib",
]

_abc.Sequence.register(Array)
_abc.Mapping.register(Map)
# The mixin methods the abstract classes promise, for the C types that do not define them.
for _name in ("index", "count", "__contains__", "__reversed__"):
    setattr(Array, _name, getattr(_abc.Sequence, _name))
del _name

# Flags of FFIJITMakeFunction (ffijit/bridge.h).
_STATUS_CONVENTION = 1
_ALLOW_OVERRIDE = 2
_INTERPRET_ONLY = 4

# ctypes function pointers handed to register()/function() stay alive as long as the process
# (the Function made from them may be found again by name at any time), one per address.
_kept_targets = {}


def _address_of(target):
    """The native address a registration target names."""
    if isinstance(target, bool):
        raise TypeError("a native target must be an address, a ctypes function pointer or "
                        "(library_path, symbol), not bool")
    if isinstance(target, int):
        if target == 0:
            raise ValueError("the native target address is 0 (NULL)")
        return target
    if isinstance(target, tuple) and len(target) == 2:
        library, symbol = target
        return _core._dlsym(str(library), symbol)
    if isinstance(target, _ctypes._CFuncPtr):
        address = _ctypes.cast(target, _ctypes.c_void_p).value
        if not address:
            raise ValueError("the ctypes function pointer is NULL")
        _kept_targets[address] = target
        return address
    if isinstance(target, _ctypes.c_void_p):
        if not target.value:
            raise ValueError("the native target address is NULL")
        return target.value
    raise TypeError("a native target must be an int address, a ctypes function pointer or "
                    f"(library_path, symbol), not {type(target).__name__}")


def _metadata_text(sig):
    if isinstance(sig, (dict, list)):
        return _json.dumps(sig, separators=(",", ":"))
    if isinstance(sig, bytes):
        return sig.decode()
    if not isinstance(sig, str):
        raise TypeError(f"sig must be metadata text (str) or a JSON dict, not {type(sig).__name__}")
    return sig


def _flags(override, interpret_only, status_convention):
    return ((_ALLOW_OVERRIDE if override else 0) | (_INTERPRET_ONLY if interpret_only else 0) |
            (_STATUS_CONVENTION if status_convention else 0))


def register(name, target, sig, format="auto", *, release_gil=False, override=False,
             interpret_only=False, status_convention=False):
    """Register a native function under the global name ``name`` and return it.

    ``target`` is the native: an int address, a ``ctypes`` function pointer, or a
    ``(library_path, symbol)`` pair (the library is loaded with dlopen and stays loaded).
    ``sig`` describes its signature in one of IREE's function-ABI forms: ``iree.abi`` JSON (text
    or a dict), the raw mangled ``I..R..`` string or ``{"fv":"1","f":"..."}``, or a SIP
    signature ``{"sip":"...","f":"..."}``; ``format`` is "auto" (detected), "json", "raw" or
    "sip".

    ``release_gil=True`` releases the GIL around the native (for long-running natives; it costs
    more than a short call). ``override=True`` replaces an existing global of that name (else
    an error naming it). ``interpret_only=True`` keeps the function off the JIT. ``status_convention=True``
    says the native returns int (0 = success), writes results through out-pointers and raises
    errors through the TVM FFI C API.

    Bad metadata is a ValueError naming what is wrong; a missing library a ValueError, a
    missing symbol an AttributeError. C, C++ and modules find the function by name too.
    """
    return _core._make_function(_address_of(target), _metadata_text(sig), format,
                                _flags(override, interpret_only, status_convention), name, name,
                                release_gil)


def function(target, sig=None, format="auto", *, name=None, release_gil=False,
             interpret_only=False, status_convention=False):
    """Make an unregistered :class:`Function`.

    With a native ``target`` (see :func:`register`) and its ``sig``: a Function calling it.
    With a Python callable and no ``sig``: a Function calling back into Python, which native
    code, C++ and modules can call (it takes the GIL; a Python exception raised inside comes back
    to a Python caller as the same exception object).
    """
    if sig is None:
        if isinstance(target, (int, tuple)) or not callable(target):
            raise TypeError("function(target, sig): a native target needs its signature `sig`")
        return _core._function_from_callable(target)
    if name is None:
        # Errors name the function: the symbol when the target names one.
        if isinstance(target, tuple) and len(target) == 2:
            name = str(target[1])
        else:
            name = getattr(target, "__name__", None)
    return _core._make_function(_address_of(target), _metadata_text(sig), format,
                                _flags(False, interpret_only, status_convention), name, None,
                                release_gil)


def register_func(name, func=None, *, override=False):
    """Register a Python callable as the global function ``name``.

    As a call, ``register_func("my.add", add)``; as a decorator, ``@register_func("my.add")``.
    Returns the :class:`Function` (the decorator returns the Python function unchanged).
    """
    if not isinstance(name, str):
        raise TypeError(f"register_func: the name must be a str, not {type(name).__name__}")
    if func is None:
        def decorate(f):
            _core._register_callable(name, f, override)
            return f
        return decorate
    return _core._register_callable(name, func, override)


def callback(func, sig, format="auto", *, status_convention=False):
    """A native C function pointer with signature ``sig`` that calls ``func``.

    Returns a :class:`NativeCallback`; hand its ``address`` (an int) to C code that takes a
    function pointer, and keep the object alive while the pointer may be called. Arguments are
    converted from C to Python values, the result back per ``sig``. With the default plain
    convention the native caller cannot be told of an exception: the pointer returns a zero
    value, the exception goes to ``sys.unraisablehook`` (with its traceback, as ctypes does) and
    stays raised in the thread's TVM FFI error slot; with ``status_convention=True`` the pointer
    returns 0 or -1, and the exception reaches a Python caller as the same object.
    """
    return NativeCallback(func, _metadata_text(sig), format, status_convention)
