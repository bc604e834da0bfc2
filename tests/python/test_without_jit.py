"""A build without LLVM refuses the JIT's features with a clear error (and a JIT build has them)."""
import pytest

import ffijit

pytestmark = pytest.mark.skipif(ffijit.jit_available(), reason="this build has the JIT")


def test_native_callbacks_are_refused():
    with pytest.raises(RuntimeError, match="built without LLVM"):
        ffijit.callback(lambda i: i, {"a": ["i64"], "r": ["i64"]})


def test_object_modules_are_refused(module_o):
    with pytest.raises(RuntimeError, match="Loader for `.o` files is not registered"):
        ffijit.load_module(module_o)


def test_compile_now_says_why(natives_path):
    f = ffijit.function((natives_path, "py_add3"), {"a": ["i64", "i64", "i64"], "r": ["i64"]})
    with pytest.raises(RuntimeError, match="built without LLVM"):
        f.__self__.compile_now()
    assert not f.__self__.is_jit_compiled
    assert f(1, 2, 3) == 14


def test_compile_entry_says_why(natives_path):
    f = ffijit.function((natives_path, "py_add3"), {"a": ["i64", "i64", "i64"], "r": ["i64"]})
    with pytest.raises(RuntimeError, match="built without LLVM"):
        f.__self__.compile_entry()
    assert not f.__self__.has_entry
    assert f.__self__.entry_compile_us is None
    assert f(1, 2, 3) == 14
