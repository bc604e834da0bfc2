"""The package as users install it: version, ABI revision, headers, stub, the message another
interpreter gets, file errors and unload(). Runs against the build tree's package under ctest and
against the installed wheel in CI's wheel lane (./build.sh wheel)."""
import ast
import errno
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

import ffijit
from conftest import needs_jit

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE_DIR = os.path.dirname(os.path.abspath(ffijit.__file__))


def compiler_env():
    # The compiler is not the Python process: a sanitizer runtime preloaded into the interpreter
    # (the sanitizer lanes) stays out of it.
    return {key: value for key, value in os.environ.items() if key != "LD_PRELOAD"}


def python_env(**extra):
    # A Python process that imports ffijit gets the environment as it is (a sanitizer lane's
    # preloaded runtime must come first in it too).
    return dict(os.environ, **extra)


def test_version_is_the_cmake_project_version():
    with open(os.path.join(SOURCE_ROOT, "CMakeLists.txt")) as cmake_lists:
        version = re.search(r"^project\(ffijit VERSION ([0-9.]+)", cmake_lists.read(), re.M)
    assert ffijit.__version__ == version.group(1)


def test_tvm_ffi_abi_is_the_revision_of_the_headers_it_ships():
    abi = ffijit.tvm_ffi_abi
    assert isinstance(abi, ffijit.TvmFfiAbi)
    # One row of the table of revisions: name, C id, tag, commit, version, ...
    table = os.path.join(os.path.dirname(__file__), "..", "..", "cmake", "tvm_ffi_revisions.txt")
    with open(table) as rows:
        revisions = {
            fields[0]: fields
            for fields in (line.split() for line in rows)
            if fields and not fields[0].startswith("#")
        }
    assert abi.name in revisions, (abi.name, sorted(revisions))
    row = revisions[abi.name]
    assert (abi.commit, abi.version) == (row[3], row[4])
    assert re.fullmatch(r"[0-9a-f]{40}", abi.commit), abi.commit
    # The generated configuration header the package ships names the same revision.
    config = os.path.join(ffijit.include_dirs()[0], "ffijit", "tvm_ffi_abi_config.h")
    with open(config) as header:
        macro = re.search(r"#define FFIJIT_TVM_FFI_ABI (FFIJIT_TVM_FFI_ABI_\w+)", header.read())
    assert macro.group(1) == "FFIJIT_TVM_FFI_ABI_" + row[1]


MODULE_C = r"""
#include <ffijit/c_api.h>
int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one(int)");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}
"""


def test_include_dirs_compile_a_module(tmp_path):
    # A shared library: loading one needs no JIT, so every build checks its headers this way.
    source = tmp_path / "add_one.c"
    source.write_text(MODULE_C)
    library = tmp_path / "add_one.so"
    command = [os.environ.get("CC", "cc"), "-shared", "-fPIC", "-std=c99", "-Wall", "-Werror",
               *(f"-I{folder}" for folder in ffijit.include_dirs()), str(source), "-o",
               str(library)]
    done = subprocess.run(command, capture_output=True, text=True, env=compiler_env())
    assert done.returncode == 0, done.stderr
    module = ffijit.load_module(library)
    assert module.add_one(41) == 42


def test_package_is_typed():
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "py.typed"))
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "__init__.pyi"))


def _stub():
    with open(os.path.join(PACKAGE_DIR, "__init__.pyi")) as stub:
        tree = ast.parse(stub.read())
    names, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    members.add(item.target.id)
            classes[node.name] = (members, [base.id for base in node.bases
                                            if isinstance(base, ast.Name)])
    return {name for name in names if not name.startswith("_") or name == "__version__"}, classes


def test_stub_names_exactly_what_the_package_exports():
    names, _ = _stub()
    exported = set(ffijit.__all__)
    assert names == exported, (f"add to python/ffijit/__init__.pyi: {exported - names}; "
                               f"not exported: {names - exported}")
    public = {name for name in dir(ffijit) if not name.startswith("_")}
    assert public == exported - {"__version__"}, f"not in __all__: {public - exported}"


# Attributes set on instances, which a class's dir() does not list (test_errors.py checks kind).
INSTANCE_ATTRIBUTES = {("Error", "kind")}


def test_stub_classes_name_exactly_their_public_members():
    _, classes = _stub()
    for name, (members, bases) in classes.items():
        cls = getattr(ffijit, name)
        stubbed = set(members)
        for base in bases:
            stubbed |= classes.get(base, (set(), []))[0]
        stubbed = {m for m in stubbed if not m.startswith("_")}
        foreign = set()  # what builtin bases (object, RuntimeError, tuple) bring
        for base in cls.__mro__[1:]:
            if base.__module__ == "builtins":
                foreign |= set(dir(base))
        actual = {m for m in dir(cls) if not m.startswith("_") and m not in foreign}
        actual |= {m for (c, m) in INSTANCE_ATTRIBUTES if c == name}
        assert stubbed == actual, (f"ffijit.{name}: add to the stub {actual - stubbed}; "
                                   f"the stub names {stubbed - actual}, which it lacks")


def _copy_package(tmp_path):
    """A copy of the imported package, whose extension claims another interpreter."""
    copy = tmp_path / "site" / "ffijit"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    other_suffix = ".cpython-39-x86_64-linux-gnu.so"
    os.rename(copy / ("_core" + suffix), copy / ("_core" + other_suffix))
    info = (copy / "_build_info.py").read_text()
    info = re.sub(r'PYTHON_VERSION = ".*"', 'PYTHON_VERSION = "3.9.2"', info)
    info = re.sub(r'PYTHON_EXECUTABLE = ".*"', 'PYTHON_EXECUTABLE = "/usr/bin/python3.9"', info)
    info = re.sub(r'EXTENSION_SUFFIX = ".*"', f'EXTENSION_SUFFIX = "{other_suffix}"', info)
    (copy / "_build_info.py").write_text(info)
    return copy.parent


def test_another_interpreter_is_told_which_one_the_package_was_built_for(tmp_path):
    site = _copy_package(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "-c", "import ffijit"], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ffijit "), done.stderr
    assert "was built for Python 3.9.2 (/usr/bin/python3.9" in last
    assert f"this is Python {sys.version.split()[0]} at {sys.executable}" in last
    assert "No module named" not in last


def test_build_info_names_this_interpreter():
    from ffijit import _build_info
    assert _build_info.EXTENSION_SUFFIX == sysconfig.get_config_var("EXT_SUFFIX")
    assert _build_info.PYTHON_VERSION.split(".")[:2] == [str(v) for v in sys.version_info[:2]]
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "_core" + _build_info.EXTENSION_SUFFIX))


# ---- file errors ----

@pytest.mark.parametrize("name", ["missing.so", "missing.o", "missing.bc", "missing.ll"])
def test_load_module_of_a_missing_file_is_file_not_found(tmp_path, name):
    path = tmp_path / name
    with pytest.raises(FileNotFoundError) as info:
        ffijit.load_module(path)
    assert info.value.filename == os.fspath(path)
    assert info.value.errno == errno.ENOENT


def test_load_module_of_a_folder_is_an_os_error(tmp_path):
    folder = tmp_path / "kernels.o"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        ffijit.load_module(folder)
    assert info.value.filename == os.fspath(folder)


def test_library_pair_errors_are_os_errors(tmp_path):
    sig = {"a": [], "r": []}
    missing = os.fspath(tmp_path / "libmissing.so")
    with pytest.raises(FileNotFoundError) as info:
        ffijit.register("test.package.missing", (missing, "f"), sig)
    assert info.value.filename == missing
    # A name dlopen searches the library path for, found nowhere.
    with pytest.raises(FileNotFoundError) as info:
        ffijit.function(("libffijit_no_such_library.so", "f"), sig)
    assert info.value.filename == "libffijit_no_such_library.so"
    assert "cannot open shared object file" in str(info.value)
    # A file that is not a shared library: an OSError, not a FileNotFoundError.
    junk = tmp_path / "libjunk.so"
    junk.write_bytes(b"not an ELF file" * 8)
    with pytest.raises(OSError) as info:
        ffijit.function((os.fspath(junk), "f"), sig)
    assert not isinstance(info.value, FileNotFoundError)
    assert info.value.filename == os.fspath(junk)
    assert info.value.errno == errno.ELIBBAD


def test_library_pair_symbol_missing_is_attribute_error(natives_path):
    with pytest.raises(AttributeError, match="has no symbol 'no_such_symbol'"):
        ffijit.function((natives_path, "no_such_symbol"), {"a": [], "r": []})


# ---- unload ----

def test_unload_of_a_shared_library_module_says_it_cannot(module_so):
    module = ffijit.load_module(module_so)
    with pytest.raises(NotImplementedError, match=r"only JIT modules .* unload on request; a "
                                                  r"shared-library module closes its library"):
        module.unload()
    assert module.add_one(1) == 2  # untouched


@needs_jit
def test_unload_of_a_jit_module_frees_it(module_o):
    module = ffijit.load_module(module_o)
    assert module.add_one(1) == 2
    module.unload()
    with pytest.raises(RuntimeError, match="was unloaded"):
        module.add_one



def _mapped(path):
    real = os.path.realpath(path)
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(real) for line in maps)


def test_a_shared_library_module_closes_when_it_and_its_functions_are_gone(tmp_path, module_so):
    # A copy of its own, so that no other test's module keeps the library open.
    path = tmp_path / "closing_module.so"
    shutil.copy(module_so, path)
    module = ffijit.load_module(path)
    add_one = module.add_one
    del module
    assert _mapped(path)  # the function holds it
    assert add_one(1) == 2
    del add_one
    assert not _mapped(path)


# ---- dir() and repr() ----

@pytest.fixture(params=["so", "o"])
def module_path(request, module_so, module_o):
    if request.param == "o" and not ffijit.jit_available():
        pytest.skip("object files need the JIT (LLVM)")
    return module_so if request.param == "so" else module_o


FIXTURE_FUNCTIONS = ["add_one", "arg_kind", "call_twice", "drop_kept", "element_sum", "fail",
                     "identity", "keep", "kept", "kept_sum", "raise"]  # py_module.c's


def test_dir_of_a_module_lists_its_functions(module_path):
    module = ffijit.load_module(module_path)
    listed = dir(module)
    assert set(FIXTURE_FUNCTIONS) <= set(listed)
    assert "unload" in listed and "get_function" in listed
    assert not [name for name in listed if name.startswith("_tvm_ffi") or "library_ctx" in name]
    for name in FIXTURE_FUNCTIONS:
        assert callable(getattr(module, name))


def test_repr_of_a_module_names_its_file_and_functions(module_path):
    module = ffijit.load_module(module_path)
    text = repr(module)
    # The first ten names, then an ellipsis.
    assert text.startswith(f"<ffijit.Module {module_path!r}, {len(FIXTURE_FUNCTIONS)} functions: "
                           f"{', '.join(FIXTURE_FUNCTIONS[:10])}, ... at 0x"), text
    assert repr(ffijit.system_lib()).startswith("<ffijit.Module at 0x")


def test_dir_of_a_module_without_a_file_lists_its_attributes():
    listed = dir(ffijit.system_lib())
    assert "get_function" in listed and "kind" in listed


@needs_jit
def test_repr_of_a_native_callback_names_what_it_calls():
    def compare(a, b):
        return 0

    callback = ffijit.callback(compare, {"a": ["ptr", "ptr"], "r": ["i32"], "v": 1})
    assert repr(callback) == (f"<ffijit.NativeCallback test_repr_of_a_native_callback_names_what_"
                              f"it_calls.<locals>.compare(ptr, ptr) -> i32 at "
                              f"{hex(callback.address)}>")
    status = ffijit.callback(len, {"a": ["i64"], "r": ["i32"], "v": 1}, status_convention=True)
    assert repr(status).startswith("<ffijit.NativeCallback len(i64) -> i32 [status] at 0x")


# What `import ffijit` must not import: each costs milliseconds, and each is imported where it is
# first used instead (the ABI record's typing, a dict signature's json, a ctypes target's ctypes).
_DEFERRED_IMPORTS = ("json", "typing", "ctypes", "re", "inspect", "collections")
_IMPORT_PROBE = """
import sys
import ffijit
print(" ".join(m for m in sys.argv[1:] if m in sys.modules))
abi = ffijit.tvm_ffi_abi
assert isinstance(abi, ffijit.TvmFfiAbi) and abi.name, abi
assert "TvmFfiAbi" in dir(ffijit) and "tvm_ffi_abi" in dir(ffijit)
print(ffijit.TvmFfiAbi.__module__, ffijit.TvmFfiAbi.__qualname__, "typing" in sys.modules)
try:
    ffijit.no_such_name
except AttributeError as e:
    print(e)
"""


def test_import_loads_none_of_the_deferred_modules():
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, *_DEFERRED_IMPORTS],
                          capture_output=True, text=True, env=python_env())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Modules the interpreter itself imported before ffijit (site, a sanitizer lane's preload)
    # are not ffijit's: only the ones a bare interpreter lacks count.
    preloaded = subprocess.run(
        [sys.executable, "-c",
         "import sys; print(' '.join(m for m in sys.argv[1:] if m in sys.modules))",
         *_DEFERRED_IMPORTS], capture_output=True, text=True, env=python_env()).stdout.split()
    assert [m for m in lines[0].split() if m not in preloaded] == []
    assert lines[1] == "ffijit TvmFfiAbi True"
    assert lines[2] == "module 'ffijit' has no attribute 'no_such_name'"


def test_dict_signature_and_ctypes_target_import_what_they_need(natives_path):
    # json and ctypes arrive with the first registration that needs them, and then work.
    probe = """
import sys, ffijit
lib = sys.argv[1]
f = ffijit.function((lib, "py_add3"), '{"a":["i64","i64","i64"],"r":["i64"]}')
assert "json" not in sys.modules and "ctypes" not in sys.modules, sys.modules.keys()
g = ffijit.function((lib, "py_add3"), {"a": ["i64", "i64", "i64"], "r": ["i64"]})
assert "json" in sys.modules
import ctypes
h = ffijit.function(ctypes.CDLL(lib).py_add3, {"a": ["i64", "i64", "i64"], "r": ["i64"]})
v = ffijit.function(ctypes.cast(ctypes.CDLL(lib).py_add3, ctypes.c_void_p),
                    {"a": ["i64", "i64", "i64"], "r": ["i64"]})
print(f(1, 2, 3), g(3, 4, 5), h(5, 6, 7), v(1, 1, 1))
"""
    done = subprocess.run([sys.executable, "-c", probe, natives_path], capture_output=True,
                          text=True, env=python_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["14", "26", "38", "6"]  # a + 2b + 3c


# libffijit_jit loads its LLVM plugin (and libLLVM) on the first compile, never at import or for
# registering and calling a function on the interpreter.
_MAPS_PROBE = """
import sys
def mapped(name):
    with open("/proc/self/maps") as maps:
        return name in maps.read()
import ffijit
print(mapped("libLLVM"), mapped("libffijit_orc"))
f = ffijit.function((sys.argv[1], "py_add3"), '{"a":["i64","i64","i64"],"r":["i64"]}')
function = f.__self__  # the ffijit.Function behind the builtin (conftest.function_of)
print(f(1, 2, 3), function.tier, function.is_jit_compiled, mapped("libLLVM"),
      mapped("libffijit_orc"))
function.compile_now()
print(f(1, 2, 3), function.tier, function.is_jit_compiled, mapped("libLLVM"),
      mapped("libffijit_orc"))
"""


def _first_tier():
    """The tier of a function made with the default policy whose plan the stencil tier covers."""
    return "stencil True" if os.environ["FFIJIT_TEST_STENCILS"] == "1" else "interpreted False"


@needs_jit
def test_llvm_is_loaded_by_the_first_compile_not_before(natives_path):
    done = subprocess.run([sys.executable, "-c", _MAPS_PROBE, natives_path], capture_output=True,
                          text=True, env=python_env())
    assert done.returncode == 0, done.stderr
    # The stencil thunk, and asking for the tier, load neither.
    assert done.stdout.splitlines() == ["False False", f"14 {_first_tier()} False False",
                                        "14 llvm True True True"]


def _mapped_path(name):
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path) == name:
                return path
    raise AssertionError(f"{name} is not mapped")


_NO_PLUGIN_PROBE = """
import sys
import ffijit
f = ffijit.function((sys.argv[1], "py_add3"), '{"a":["i64","i64","i64"],"r":["i64"]}')
print(ffijit.jit_available())
try:
    f.__self__.compile_now()
except RuntimeError as e:
    print(e)
print(f(1, 2, 3), f.__self__.tier, f.__self__.is_jit_compiled)
"""


@needs_jit
def test_a_missing_llvm_plugin_leaves_functions_interpreted_and_says_why(tmp_path, natives_path):
    # libffijit_jit.so and the libraries below it, copied without the plugin beside them, and
    # loaded from there (LD_LIBRARY_PATH comes before the extension's RUNPATH).
    jit = _mapped_path("libffijit_jit.so")
    # The runtime below them is ffijit's own, or the add-on's helpers over TVM FFI's library.
    below = ("libffijit_jit.so", "libffijit_reflect.so", "libffijit_runtime.so", "libffijit_addon.so")
    for name in below:
        if os.path.exists(os.path.join(os.path.dirname(jit), name)):
            shutil.copy(os.path.join(os.path.dirname(jit), name), tmp_path / name)
    env = python_env(LD_LIBRARY_PATH=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _NO_PLUGIN_PROBE, natives_path],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    available, error, call = done.stdout.splitlines()
    assert available == "False"
    missing = str(tmp_path / "libffijit_orc.so")
    assert error.startswith("FFIJITCompileNow: JitEngine::Default: the JIT is unavailable: "
                            f"cannot load {missing}: {missing}: cannot open shared object file"), error
    assert call == f"14 {_first_tier()}"  # the stencil tier needs no plugin
