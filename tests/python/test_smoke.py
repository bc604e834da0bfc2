"""The package imports, a native registered from metadata is called on both tiers."""
import ffijit
from conftest import address

ADD3 = '{"a":["i64","i64","i64"],"r":["i64"],"v":1}'


def test_call_interpreted_and_compiled(natives):
    interp = ffijit.function(address(natives, "py_add3"), ADD3, interpret_only=True)
    assert interp(1, 2, 3) == 14
    jit = ffijit.function(address(natives, "py_add3"), ADD3)
    if ffijit.jit_available():
        jit.__self__.compile_now()
        assert jit.__self__.is_jit_compiled
    assert jit(1, 2, 3) == 14
