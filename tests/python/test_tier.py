"""Function.tier names the tier a function's calls run on (the C API's FFIJITFunctionTier, named
by ffijit::TierName) on every tier. The hot tiers are forced through the tiers fixture
(tiers_fixture.cc: JitEngine::CompileHotNow), so no test waits on the background compiler."""
import ast
import ctypes
import os

import pytest

import ffijit
from conftest import function_of, needs_jit

ADD3 = {"a": ["i64", "i64", "i64"], "r": ["i64"]}
# A native of LLVM IR, which the hot tier inlines into its thunk.
MUL_IR = """define i64 @tier_mul(i64 %a, i64 %b) {
  %r = mul i64 %a, %b
  ret i64 %r
}
"""


def compile_hot_now(function):
    fixture = ctypes.CDLL(os.environ["FFIJIT_TEST_TIERS"])
    assert fixture.ffijit_test_compile_hot_now(ctypes.c_void_p(function.handle)) == 0


def test_a_function_pinned_to_the_interpreter(natives_path):
    f = ffijit.function((natives_path, "py_add3"), ADD3, interpret_only=True)
    function = function_of(f)
    assert function.tier == "interpreted"
    assert not function.is_jit_compiled
    assert f(1, 2, 3) == 14
    assert function.tier == "interpreted"


@needs_jit
def test_stencil_then_llvm_then_hot(natives_path):
    f = ffijit.function((natives_path, "py_add3"), ADD3)
    function = function_of(f)
    # The stencil tier covers (i64, i64, i64) -> i64: its thunk comes at registration.
    expected = "stencil" if os.environ["FFIJIT_TEST_STENCILS"] == "1" else "interpreted"
    assert function.tier == expected
    assert function.is_jit_compiled == (expected == "stencil")
    assert f(1, 2, 3) == 14
    function.compile_now()
    assert function.tier == "llvm"
    assert function.is_jit_compiled
    compile_hot_now(function)
    assert function.tier == "hot"  # a native of the process: called, not inlined
    assert function.is_jit_compiled
    assert f(1, 2, 3) == 14


@needs_jit
def test_a_native_of_llvm_ir_goes_hot_inlined(tmp_path):
    ir = tmp_path / "tier_mul.ll"
    ir.write_text(MUL_IR)
    module = ffijit.get_global_func("ffijit.JitModuleCreate")("tiers")
    ffijit.get_global_func("ffijit.JitModuleAddFile")(module, str(ir))
    make_native = ffijit.get_global_func("ffijit.JitModuleMakeNative")
    f = make_native(module, "tier_mul", '{"a":["i64","i64"],"r":["i64"]}', "json")
    function = ffijit.Function.of(f)
    assert function.tier in ("stencil", "interpreted")
    compile_hot_now(function)
    assert function.tier == "hot_inlined"
    assert f(6, 7) == 42


def test_a_function_not_made_by_ffijit_has_no_tier():
    @ffijit.register_func("test_tier.python_callable", override=True)
    def twice(x):
        return 2 * x

    try:
        function = ffijit.Function.of(ffijit.get_global_func("test_tier.python_callable"))
        with pytest.raises(TypeError, match="^FFIJITFunctionTier: the function has no tier: not a "
                                            "function made by ffijit's registration$"):
            function.tier
        assert not function.is_jit_compiled
    finally:
        ffijit.remove_global_func("test_tier.python_callable")


def test_the_stub_names_exactly_the_tiers():
    # The names' home is ffijit::TierName; the stub's Literal must list the same ones (every one
    # of which the tests above see).
    with open(os.path.join(os.path.dirname(ffijit.__file__), "__init__.pyi")) as stub:
        tree = ast.parse(stub.read())
    function = next(node for node in tree.body
                    if isinstance(node, ast.ClassDef) and node.name == "Function")
    tier = next(item for item in function.body
                if isinstance(item, ast.FunctionDef) and item.name == "tier")
    names = [element.value for element in tier.returns.slice.elts]
    assert names == ["interpreted", "stencil", "llvm", "hot", "hot_inlined"]
