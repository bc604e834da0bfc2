// The library modules of ffijit's JIT modules (FFIJITLibraryModuleCreate/BindContext, c_ext.h)
// over TVM FFI's own library: a module of TVM FFI's ModuleObj class (kind "library") whose
// functions are the symbol source's `__tvm_ffi_<name>` safe_calls, with TVM FFI's context symbols
// and `__tvm_ffi__library_ctx` written into the source's variables as TVM FFI does for a shared
// library. Written against TVM FFI's headers alone (no ffijit header: both declare the C types).
#include <tvm/ffi/cast.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstring>
#include <string>
#include <utility>

#include "unchecked.h"

namespace ffi = tvm::ffi;

namespace {

constexpr const char* kLibraryBin = "__tvm_ffi__library_bin";
constexpr const char* kMetadataPrefix = "__tvm_ffi__metadata_";
constexpr const char* kDocPrefix = "__tvm_ffi__doc_";

// Stores a pointer into a module's variable byte-wise: nothing guarantees a loaded object aligned
// it.
void StorePointer(void* slot, const void* value) {
  std::memcpy(slot, &value, sizeof value);
}

class SourceModuleObj final : public ffi::ModuleObj {
 public:
  explicit SourceModuleObj(const AddonSymbolSource& source)
      : source_(source),
        description_(source.description != nullptr ? source.description : "a symbol source") {}
  ~SourceModuleObj() {
    if (source_.release != nullptr) source_.release(source_.self);
  }

  const char* kind() const final { return "library"; }
  int GetPropertyMask() const final { return ffi::Module::kRunnable; }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    const std::string symbol = ffi::symbol::tvm_ffi_symbol_prefix + std::string(name);
    int is_code = -1;
    void* address = Find(symbol, &is_code);
    if (address == nullptr) return std::nullopt;
    if (is_code == 0) {
      TVM_FFI_THROW(TypeError) << "symbol `" << symbol << "` in " << description_
                               << " is not a function (it is a data object), so it cannot be "
                                  "called as a TVM FFI safe_call";
    }
    auto safe_call = reinterpret_cast<TVMFFISafeCallType>(address);
    ffi::Module self = ffi::GetRef<ffi::Module>(this);  // the function keeps its module alive
    return ffi::Function::FromPacked([safe_call, self](ffi::PackedArgs args, ffi::Any* result) {
      TVM_FFI_CHECK_SAFE_CALL(safe_call(nullptr, reinterpret_cast<const TVMFFIAny*>(args.data()),
                                        args.size(), reinterpret_cast<TVMFFIAny*>(result)));
    });
  }

  ffi::Optional<ffi::String> GetFunctionMetadata(const ffi::String& name) final {
    return CallGetter(kMetadataPrefix + std::string(name));
  }
  ffi::Optional<ffi::String> GetFunctionDoc(const ffi::String& name) final {
    return CallGetter(kDocPrefix + std::string(name));
  }

  // The address of `name` in the source, or NULL; `is_code` says whether it is code.
  void* Find(const std::string& name, int* is_code) {
    void* address = nullptr;
    size_t size = 0;
    if (source_.find(source_.self, name.c_str(), &address, &size, is_code) != 0) {
      throw ffi::details::MoveFromSafeCallRaised();
    }
    return address;
  }

  // Writes TVM FFI's context symbols and this module as `__tvm_ffi__library_ctx` into the
  // variables of those names the source defines.
  void BindContext() {
    ffi::Module::VisitContextSymbols([this](ffi::String name, void* value) {
      int is_code = -1;
      if (void* slot = Find(std::string(name), &is_code); slot != nullptr && is_code != 1) {
        StorePointer(slot, value);
      }
    });
    int is_code = -1;
    if (void* slot = Find(ffi::symbol::tvm_ffi_library_ctx, &is_code);
        slot != nullptr && is_code != 1) {
      StorePointer(slot, this);
    }
  }

 private:
  ffi::Optional<ffi::String> CallGetter(const std::string& symbol) {
    int is_code = -1;
    void* address = Find(symbol, &is_code);
    if (address == nullptr || is_code == 0) return std::nullopt;
    return ffi::Function::InvokeExternC(nullptr, reinterpret_cast<TVMFFISafeCallType>(address))
        .cast<ffi::String>();
  }

  AddonSymbolSource source_;
  std::string description_;
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int FFIJITLibraryModuleCreate(
    const AddonSymbolSource* source, TVMFFIObjectHandle* out) {
  if (source == nullptr || out == nullptr || source->find == nullptr) {
    if (source != nullptr && source->release != nullptr) source->release(source->self);
    TVMFFIErrorSetRaisedFromCStr("ValueError",
                                 "FFIJITLibraryModuleCreate: `source`, `source->find` or `out` "
                                 "is NULL");
    return -1;
  }
  ffi::ObjectPtr<SourceModuleObj> module;
  try {
    module = ffi::make_object<SourceModuleObj>(*source);  // from here on it releases the source
  } catch (...) {
    if (source->release != nullptr) source->release(source->self);
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "FFIJITLibraryModuleCreate: out of memory");
    return -1;
  }
  TVM_FFI_SAFE_CALL_BEGIN();
  int is_code = -1;
  if (module->Find(kLibraryBin, &is_code) != nullptr) {
    TVM_FFI_THROW(RuntimeError)
        << "a JIT module that embeds `" << kLibraryBin << "` (modules it imports) cannot be "
        << "loaded in ffijit's add-on build: TVM FFI's library does not offer its decoder";
  }
  module->BindContext();
  *out = ffi::details::ObjectUnsafe::MoveObjectRefToTVMFFIObjectPtr(ffi::Module(std::move(module)));
  TVM_FFI_SAFE_CALL_END();
}

__attribute__((visibility("default"))) int FFIJITLibraryModuleBindContext(
    TVMFFIObjectHandle module) {
  TVM_FFI_SAFE_CALL_BEGIN();
  auto* object = static_cast<ffi::Object*>(module);
  auto* source_module = object != nullptr && object->IsInstance<ffi::ModuleObj>()
                            ? dynamic_cast<SourceModuleObj*>(static_cast<ffi::ModuleObj*>(object))
                            : nullptr;
  if (source_module == nullptr) {
    TVM_FFI_THROW(TypeError) << "FFIJITLibraryModuleBindContext: the module is not a JIT module";
  }
  source_module->BindContext();
  TVM_FFI_SAFE_CALL_END();
}

}  // extern "C"
