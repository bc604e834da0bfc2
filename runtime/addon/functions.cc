// ffijit's function and global-registry functions (c_ext.h) over TVM FFI's own library,
// through its C++ headers and global functions (ffi.FunctionListGlobalNamesFunctor,
// ffi.FunctionRemoveGlobal). No ffijit header here: both declare the same C types.
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
  if (out == nullptr) TVM_FFI_THROW(ValueError) << "FFIJITFunctionListGlobals: `out` is NULL";
  std::vector<ffi::String> names = ffi::Function::ListGlobalNames();
  std::sort(names.begin(), names.end(), [](const ffi::String& a, const ffi::String& b) {
    return std::string_view(a.data(), a.size()) < std::string_view(b.data(), b.size());
  });
  ffi::Array<ffi::String> sorted(names.begin(), names.end());
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(std::move(sorted));
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITFunctionRemoveGlobal(const TVMFFIByteArray* name) {
  TVM_FFI_SAFE_CALL_BEGIN();
  if (name == nullptr || (name->data == nullptr && name->size != 0)) {
    TVM_FFI_THROW(ValueError) << "FFIJITFunctionRemoveGlobal: `name` is NULL";
  }
  static const ffi::Function remove = ffi::Function::GetGlobalRequired("ffi.FunctionRemoveGlobal");
  ffi::String key(name->data, name->size);
  if (!remove(key).cast<bool>()) {
    TVM_FFI_THROW(KeyError) << "no global function `" << std::string_view(name->data, name->size)
                            << "` to remove";
  }
  TVM_FFI_SAFE_CALL_END();
}

}  // extern "C"
