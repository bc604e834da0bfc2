// A user module that subclasses tvm::ffi::ModuleObj, as C++ code built with TVM FFI's headers
// does: its vtable and typeinfo derive from the ones the runtime exports (declared here through
// ffijit's layout-compatible tvm_ffi_cxx.h), and it catches the tvm::ffi::Error those exported
// members throw.
#include "user_module.h"

#include <new>
#include <string>
#include <utility>
#include <vector>

#include "tvm_ffi_cxx.h"

namespace {

int Greet(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "greet expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 * 100;
  return 0;
}

class UserModuleObj final : public tvm::ffi::ModuleObj {
 public:
  const char* kind() const override { return "user"; }
  tvm::ffi::OptionalFunction GetFunction(const tvm::ffi::String& name) override {
    if (name.view() != "greet") return tvm::ffi::OptionalFunction();
    TVMFFIObjectHandle func = nullptr;
    if (TVMFFIFunctionCreate(nullptr, Greet, nullptr, &func) != 0) throw std::bad_alloc();
    return tvm::ffi::Function(tvm::ffi::ObjectRef::Adopt(static_cast<TVMFFIObject*>(func)));
  }

  static void Deleter(void* self, int flags) {
    auto* obj = static_cast<UserModuleObj*>(
        tvm::ffi::ModuleObj::FromHandle(static_cast<TVMFFIObject*>(self)));
    if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) obj->set_imports(tvm::ffi::ObjectRef());
    if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) delete obj;
  }
};

}  // namespace

ffijit::Module MakeUserModule() {
  auto* obj = new UserModuleObj();
  TVMFFIObject* header = obj->header();
  header->type_index = kTVMFFIModule;
  FFIJITHeaderSetCounts(header, 1, 1);
  header->deleter = &UserModuleObj::Deleter;
  TVMFFIObjectHandle imports = nullptr;
  ffijit::CheckCall(FFIJITArrayCreate(nullptr, 0, &imports));
  obj->set_imports(tvm::ffi::ObjectRef::Adopt(static_cast<TVMFFIObject*>(imports)));
  return ffijit::Module(ffijit::ObjectPtr<>::Adopt(header));
}

std::vector<std::pair<std::string, void*>> VisitContextSymbolsFromCpp() {
  std::vector<std::pair<std::string, void*>> seen;
  ffijit::Function visitor = ffijit::Function::FromTyped(
      [&seen](std::string name, void* value) { seen.emplace_back(std::move(name), value); });
  tvm::ffi::TypedFunction<void(tvm::ffi::String, void*)> callback;
  callback.packed = tvm::ffi::Function(tvm::ffi::ObjectRef::Borrow(visitor.get()));
  tvm::ffi::Module::VisitContextSymbols(callback);
  return seen;
}

ffijit::Module LoadFromFileFromCpp(const std::string& path) {
  tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(tvm::ffi::String::From(path));
  return ffijit::Module(ffijit::ObjectPtr<>::Adopt(mod.release()));
}

namespace {

// Runs `body` the way header-compiled code does: only a tvm::ffi::Error is caught (anything else,
// e.g. an ffijit::Error, escapes and fails the test).
template <typename Body>
CaughtTvmError CatchTvmError(Body&& body) {
  CaughtTvmError result;
  try {
    body();
  } catch (const tvm::ffi::Error& error) {
    const auto* cell = reinterpret_cast<const TVMFFIErrorCell*>(error.get() + 1);
    result.caught = true;
    result.kind.assign(cell->kind.data, cell->kind.size);
    result.message.assign(cell->message.data, cell->message.size);
  }
  return result;
}

tvm::ffi::Module Borrow(const ffijit::Module& mod) {
  return tvm::ffi::Module(tvm::ffi::ObjectRef::Borrow(mod.get()));
}

}  // namespace

CaughtTvmError LoadFromFileErrorFromCpp(const std::string& path) {
  return CatchTvmError([&] { tvm::ffi::Module::LoadFromFile(tvm::ffi::String::From(path)); });
}

CaughtTvmError GetFunctionErrorFromCpp(const ffijit::Module& mod, const std::string& name) {
  return CatchTvmError(
      [&] { Borrow(mod)->GetFunction(tvm::ffi::String::From(name), /*query_imports=*/true); });
}

CaughtTvmError ImportModuleErrorFromCpp(const ffijit::Module& mod, const ffijit::Module& other) {
  return CatchTvmError([&] { Borrow(mod)->ImportModule(Borrow(other)); });
}

void* CppObjectOf(const ffijit::Module& mod) {
  return tvm::ffi::ModuleObj::FromHandle(mod.get());
}
