/* A shared library with no `__tvm_ffi_` symbol at all. */
__attribute__((visibility("default"))) int ffijit_test_plain_function(int x) {
  return x * 2;
}
