// ffijit's function and global-listing functions (c_ext.h) over TVM FFI's own library, through
// its C++ headers and its global ffi.FunctionListGlobalNamesFunctor. No ffijit header here: both
// declare the same C types.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;

namespace {

int NoopSafeCall(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  return 0;
}

// What TVM FFI's TVMFFIFunctionCreate stores at the C++ call entry of the Functions it makes: the
// entry header-compiled code calls, so ffijit's Functions get the library's own.
void* LibraryCppCallEntry() {
  TVMFFIObjectHandle probe = nullptr;
  if (TVMFFIFunctionCreate(nullptr, NoopSafeCall, nullptr, &probe) != 0) {
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    if (error != nullptr) TVMFFIObjectDecRef(error);
    return nullptr;
  }
  void* entry = static_cast<ffi::FunctionObj*>(static_cast<ffi::Object*>(probe))->cpp_call;
  TVMFFIObjectDecRef(probe);
  return entry;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* FFIJITFunctionCppCallEntry(void) {
  static void* const entry = LibraryCppCallEntry();
  return entry;
}

__attribute__((visibility("default"))) int FFIJITFunctionListGlobals(TVMFFIObjectHandle* out) {
  TVM_FFI_SAFE_CALL_BEGIN();
  if (out == nullptr)
    TVM_FFI_THROW(ValueError) << "FFIJITFunctionListGlobals: `out` must not be NULL";
  std::vector<ffi::String> names = ffi::Function::ListGlobalNames();
  std::sort(names.begin(), names.end(), [](const ffi::String& a, const ffi::String& b) {
    return std::string_view(a.data(), a.size()) < std::string_view(b.data(), b.size());
  });
  ffi::Array<ffi::String> sorted(names.begin(), names.end());
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(sorted));
  TVM_FFI_SAFE_CALL_END();
}

}  // extern "C"
