"""ffijit: register native functions at run time and call them from Python.

A native function plus its signature (IREE function-ABI metadata: the ``iree.abi`` JSON, the raw
``I..R..`` string or a SIP signature) becomes an :class:`ffijit.Function`: a Python callable that
packs its arguments into TVM FFI values and calls the native through ffijit's JIT thunk or its
interpreter. Python callables go the other way: as Functions native code can call, and as plain C
function pointers (:func:`callback`). Modules (``.so``, ``.o``, ``.bc``, ``.ll``) load with
:func:`load_module`; tensors travel through DLPack without a copy.
"""

# Only what importing needs: json, typing and ctypes (several milliseconds each) load on first use
# (_metadata_text, the module __getattr__ below, _address_of), so that `import ffijit` stays cheap.
import _collections_abc as _abc  # what collections.abc re-exports, already loaded by os
import os as _os
import sys as _sys

from . import _build_info


def _built_for_another_python():
    """The ImportError an interpreter the extension was not built for gets, or None."""
    import sysconfig
    here = _os.path.dirname(_os.path.abspath(__file__))
    built = "_core" + _build_info.EXTENSION_SUFFIX
    wanted = sysconfig.get_config_var("EXT_SUFFIX")
    if wanted == _build_info.EXTENSION_SUFFIX or not _os.path.exists(_os.path.join(here, built)):
        return None
    return ImportError(
        f"ffijit {_build_info.VERSION} was built for Python {_build_info.PYTHON_VERSION} "
        f"({_build_info.PYTHON_EXECUTABLE}; its extension is {built}), but this is Python "
        f"{_sys.version.split()[0]} at {_sys.executable}, which loads only extensions named "
        f"*{wanted}. Run it with {_build_info.PYTHON_EXECUTABLE}, or build ffijit for this "
        "interpreter: `python -m pip install --no-build-isolation <ffijit checkout>` with it, "
        "or CMake -DFFIJIT_PYTHON=<interpreter>.", name="ffijit._core", path=here)


try:
    from . import _core
except ImportError as _failure:
    _other = _built_for_another_python()
    if _other is None:
        raise
    raise _other from _failure

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
    load,
    load_module,
    remove_global_func,
    store,
    system_lib,
)

__all__ = [
    "Array", "DataType", "Device", "Error", "Function", "Map", "Module", "NativeCallback",
    "Object", "Tensor", "TvmFfiAbi", "__version__", "callback", "from_dlpack", "function",
    "get_global_func", "include_dirs", "jit_available", "list_global_funcs", "load",
    "load_module", "register", "register_func", "remove_global_func", "store", "system_lib",
    "tvm_ffi_abi",
]

#: The package's version (the project version of ffijit's CMakeLists.txt).
__version__ = _build_info.VERSION


def _make_tvm_ffi_abi():
    """Defines TvmFfiAbi and tvm_ffi_abi on first use (typing costs milliseconds to import)."""
    from typing import NamedTuple

    class TvmFfiAbi(NamedTuple):
        """The TVM FFI ABI revision this build implements (CMake FFIJIT_TVM_FFI_ABI)."""

        name: str
        """The revision's short name, e.g. "v0.1.13" (a name of the repository's
        cmake/tvm_ffi_revisions.txt)."""
        commit: str
        """The apache/tvm-ffi commit of that revision."""
        version: str
        """The TVM FFI package version at that commit."""

    TvmFfiAbi.__module__ = __name__
    TvmFfiAbi.__qualname__ = "TvmFfiAbi"
    globals()["TvmFfiAbi"] = TvmFfiAbi
    #: The TVM FFI ABI revision the runtime was built for, as the runtime reports it: modules and
    #: programs compiled against another revision lay out every object differently.
    globals()["tvm_ffi_abi"] = TvmFfiAbi(*_core._tvm_ffi_abi)


_LAZY = ("TvmFfiAbi", "tvm_ffi_abi")


def __getattr__(name):
    if name in _LAZY:
        _make_tvm_ffi_abi()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def include_dirs():
    """The folders to compile C or C++ against ffijit's headers with (``-I``), as a list.

    They hold ``ffijit/c_api.h`` (the TVM FFI C ABI of this build's revision), ffijit's C++
    headers and ``dlpack/dlpack.h``: what a TVM FFI module loaded with :func:`load_module` is compiled
    against.
    """
    return [_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include")]


_abc.Sequence.register(Array)
_abc.Mapping.register(Map)
# The mixin methods the abstract classes promise, for the C types that do not define them.
for _name in ("index", "count", "__contains__", "__reversed__"):
    setattr(Array, _name, getattr(_abc.Sequence, _name))
del _name

# Flags of FFIJITMakeFunction (ffijit/jit/bridge.h), as the extension was compiled with them.
_STATUS_CONVENTION = _core._STATUS_CONVENTION
_ALLOW_OVERRIDE = _core._ALLOW_OVERRIDE
_INTERPRET_ONLY = _core._INTERPRET_ONLY

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
    # A ctypes object exists only once ctypes is imported: never import it here.
    ctypes = _sys.modules.get("ctypes")
    if ctypes is not None and isinstance(target, ctypes._CFuncPtr):
        address = ctypes.cast(target, ctypes.c_void_p).value
        if not address:
            raise ValueError("the ctypes function pointer is NULL")
        _kept_targets[address] = target
        return address
    if ctypes is not None and isinstance(target, ctypes.c_void_p):
        if not target.value:
            raise ValueError("the native target address is NULL")
        return target.value
    raise TypeError("a native target must be an int address, a ctypes function pointer or "
                    f"(library_path, symbol), not {type(target).__name__}")


def _metadata_text(sig):
    if isinstance(sig, (dict, list)):
        import json
        return json.dumps(sig, separators=(",", ":"))
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
    or a dict, or ``{"iree.abi": "<that JSON as text>"}``), the raw mangled ``I..R..`` string or
    ``{"fv":"1","f":"..."}``, a SIP signature ``{"sip":"...","f":"..."}``, or an
    ``iree.abi.declaration`` (``sync func @f(%input0: tensor<?xf32>) -> (%output0: f32)``);
    ``format`` is "auto" (detected), "json", "raw", "sip" or "declaration".

    ``release_gil=True`` releases the GIL around the native (for long-running natives; it costs
    more than a short call). ``override=True`` replaces an existing global of that name (else
    an error naming it). ``interpret_only=True`` keeps the function off the JIT. ``status_convention=True``
    says the native returns int (0 = success), writes results through out-pointers and raises
    errors through the TVM FFI C API.

    Bad metadata is a ValueError naming what is wrong; a library that does not exist a
    FileNotFoundError and one dlopen refuses an OSError (``filename`` is the library); a
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
    converted from C to Python values (a ``ptr`` as an int address, NULL as None), the result
    back per ``sig``. With the default plain
    convention the native caller cannot be told of an exception: the pointer returns a zero
    value, the exception goes to ``sys.unraisablehook`` (with its traceback, as ctypes does) and
    stays raised in the thread's TVM FFI error slot; with ``status_convention=True`` the pointer
    returns 0 or -1, and the exception reaches a Python caller as the same object.
    """
    return NativeCallback(func, _metadata_text(sig), format, status_convention)
