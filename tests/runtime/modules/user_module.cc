// A user module that subclasses tvm::ffi::ModuleObj, as C++ code built with TVM FFI's headers
// does: its vtable and typeinfo derive from the ones the runtime exports (declared here through
// ffijit's layout-compatible runtime/cxx_abi/module_obj.h), and it catches the
// tvm::ffi::Error those exported members throw.
#include "user_module.h"

#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cxx_abi/module_obj.h"

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
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  tvm::ffi::OptionalString GetFunctionDoc(const tvm::ffi::String& name) override {
    if (name.view() != "greet") return tvm::ffi::OptionalString();
    return tvm::ffi::String::From(kUserGreetDoc);
  }
#endif
  tvm::ffi::OptionalString GetFunctionMetadata(const tvm::ffi::String& name) override {
    if (name.view() != "greet") return tvm::ffi::OptionalString();
    return tvm::ffi::String::From(kUserGreetMetadata);
  }
  tvm::ffi::String InspectSource(const tvm::ffi::String& format) const override {
    return tvm::ffi::String::From("user source as " + std::string(format.view()));
  }
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
    result.what = error.what();
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

namespace {
// A vtable of twelve `Cell f(const String&)` slots, never instantiated: calling slot k of another
// object through it makes the compiler use the platform's C++ convention for that shape (the
// result's address in the first argument register on x86-64, in x8 on AArch64).
struct StringSlots {
  virtual tvm::ffi::BytesCell S0(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S1(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S2(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S3(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S4(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S5(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S6(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S7(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S8(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S9(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S10(const tvm::ffi::String&) = 0;
  virtual tvm::ffi::BytesCell S11(const tvm::ffi::String&) = 0;

 protected:
  ~StringSlots() = default;
};
}  // namespace

std::optional<std::string> CallStringSlot(const ffijit::Module& mod, int slot,
                                          const std::string& argument) {
  using SlotFunction = tvm::ffi::BytesCell (StringSlots::*)(const tvm::ffi::String&);
  static constexpr SlotFunction kSlots[] = {&StringSlots::S0, &StringSlots::S1,  &StringSlots::S2,
                                            &StringSlots::S3, &StringSlots::S4,  &StringSlots::S5,
                                            &StringSlots::S6, &StringSlots::S7,  &StringSlots::S8,
                                            &StringSlots::S9, &StringSlots::S10, &StringSlots::S11};
  if (slot < 0 || slot >= static_cast<int>(std::size(kSlots))) return std::nullopt;
  auto* self = static_cast<StringSlots*>(CppObjectOf(mod));
  const tvm::ffi::String text = tvm::ffi::String::From(argument);
  const tvm::ffi::BytesCell result = (self->*kSlots[slot])(text);
  std::optional<std::string> answer;
  if (!result.is_none()) answer = std::string(result.view());
  return answer;
}

#if FFIJIT_TVM_FFI_HAS_DATACLASS_API
namespace {
tvm::ffi::Any CopyForCpp(const ffijit::Any& value) {
  tvm::ffi::Any held;
  held.data_ = ffijit::Any(value).release();
  return held;
}
}  // namespace

std::string ReprPrintFromCpp(const ffijit::Any& value) {
  return std::string(tvm::ffi::ReprPrint(CopyForCpp(value)).view());
}

int64_t RecursiveHashFromCpp(const ffijit::Any& value) {
  return tvm::ffi::RecursiveHash(CopyForCpp(value));
}

bool RecursiveEqFromCpp(const ffijit::Any& lhs, const ffijit::Any& rhs) {
  return tvm::ffi::RecursiveEq(CopyForCpp(lhs), CopyForCpp(rhs));
}

ffijit::Any DeepCopyFromCpp(const ffijit::Any& value) {
  tvm::ffi::Any copy = tvm::ffi::DeepCopy(CopyForCpp(value));
  return ffijit::Any::Adopt(std::exchange(copy.data_, TVMFFIAny{}));
}

CaughtTvmError RecursiveLtErrorFromCpp(const ffijit::Any& lhs, const ffijit::Any& rhs) {
  return CatchTvmError([&] { tvm::ffi::RecursiveLt(CopyForCpp(lhs), CopyForCpp(rhs)); });
}
#endif
