// Library modules, the modules over a symbol source: a dlopen'ed shared library, the
// system-library table or a source another library provides (the JIT's modules). Loading wires a
// library's TVM FFI variables (the context symbols, __tvm_ffi__library_ctx) and builds the module
// tree its __tvm_ffi__library_bin describes; its functions are the `__tvm_ffi_<name>` safe_calls.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../internal.h"
#include "../string_internal.h"
#include "ffijit/c_env_api.h"
#include "ffijit/registry.h"
#include "module_internal.h"

namespace tvm {
namespace ffi {
namespace {

using ffijit::Error;
using ffijit::internal::AsModuleObj;
using ffijit::internal::kLibraryCtxSymbol;
using ffijit::internal::ModuleList;
using ffijit::internal::NewArray;
using ffijit::internal::NewMap;
using ffijit::internal::ToModulePtr;
using ffijit::internal::WithFfijitErrors;
using ffijit::internal::WithTvmErrors;

constexpr const char* kFunctionPrefix = "__tvm_ffi_";
constexpr const char* kLibraryBin = "__tvm_ffi__library_bin";

// ---- Where a library module's symbols come from ----

class Library {
 public:
  virtual ~Library() = default;
  // The address of the data symbol `name`, or null. Unless `extent` is null, *extent is its size
  // in bytes when the symbol table records one, else 0 (a shared library pays a dladdr1 for it).
  virtual void* FindData(const std::string& name, size_t* extent) = 0;
  // The safe_call exported as `__tvm_ffi_<name>`, or null.
  virtual TVMFFISafeCallType FindFunction(const std::string& name) = 0;
  // For messages: the file, or "the system library".
  virtual std::string Describe() const = 0;
};

// A dlopen'ed shared library, closed when the last module or function using it dies.
class SharedLibrary final : public Library {
 public:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedLibrary() override;

  void* FindData(const std::string& name, size_t* extent) override {
    void* address = dlsym(handle_, name.c_str());
    if (extent != nullptr) {
      *extent = 0;
      if (address != nullptr) {
        if (const ElfW(Sym)* sym = SymbolEntry(address)) *extent = sym->st_size;
      }
    }
    return address;
  }

  TVMFFISafeCallType FindFunction(const std::string& name) override {
    const std::string symbol = kFunctionPrefix + name;
    void* address = dlsym(handle_, symbol.c_str());
    if (address == nullptr) return nullptr;
    // The dynamic symbol table says whether the symbol is code; a function's prototype cannot be
    // checked, so a function of the wrong type is still called as a safe_call.
    if (const ElfW(Sym)* sym = SymbolEntry(address)) {
      const int type = ELF64_ST_TYPE(sym->st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) {
        throw Error("TypeError", "symbol `" + symbol + "` in " + path_ +
                                     " is not a function (it is a data object), so it cannot be "
                                     "called as a TVM FFI safe_call");
      }
    }
    return reinterpret_cast<TVMFFISafeCallType>(address);
  }

  std::string Describe() const override { return path_; }

 private:
  static const ElfW(Sym) * SymbolEntry(void* address) {
    Dl_info info;
    void* sym = nullptr;
    if (dladdr1(address, &info, &sym, RTLD_DL_SYMENT) == 0) return nullptr;
    return static_cast<const ElfW(Sym)*>(sym);
  }

  void* handle_;
  std::string path_;
};

// The shared libraries this runtime holds open, by the path they were loaded from: loading one of
// them again shares its handle (the library stays loaded while any of its modules lives) instead
// of looking for it through the process's libraries and dlopen'ing it again.
class OpenLibraries {
 public:
  static OpenLibraries& Get() {
    static OpenLibraries* libraries = new OpenLibraries();  // never destroyed: used at exit
    return *libraries;
  }
  std::shared_ptr<SharedLibrary> Find(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto it = libraries_.find(path);
    return it == libraries_.end() ? nullptr : it->second.lock();
  }
  void Add(const std::string& path, const std::shared_ptr<SharedLibrary>& lib) {
    std::lock_guard lock(mutex_);
    libraries_[path] = lib;
  }
  // From the library's destructor: the entry goes unless a newer load of the path replaced it.
  void Remove(const std::string& path) {
    std::lock_guard lock(mutex_);
    auto it = libraries_.find(path);
    if (it != libraries_.end() && it->second.expired()) libraries_.erase(it);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<SharedLibrary>> libraries_;
};

SharedLibrary::~SharedLibrary() {
  OpenLibraries::Get().Remove(path_);
  dlclose(handle_);
}

// A symbol source another library provides (FFIJITLibraryModuleCreate): the JIT's object and
// bitcode modules. Released through the source's callback when the last module using it dies.
class SourceLibrary final : public Library {
 public:
  explicit SourceLibrary(const FFIJITSymbolSource& source)
      : source_(source),
        description_(source.description != nullptr ? source.description : "a symbol source") {}
  ~SourceLibrary() override {
    if (source_.release != nullptr) source_.release(source_.self);
  }

  void* FindData(const std::string& name, size_t* extent) override {
    size_t unused = 0;
    int is_code = -1;
    return Find(name, extent != nullptr ? extent : &unused, &is_code);
  }

  TVMFFISafeCallType FindFunction(const std::string& name) override {
    const std::string symbol = kFunctionPrefix + name;
    size_t extent = 0;
    int is_code = -1;
    void* address = Find(symbol, &extent, &is_code);
    if (address != nullptr && is_code == 0) {
      throw Error("TypeError", "symbol `" + symbol + "` in " + description_ +
                                   " is not a function (it is a data object), so it cannot be "
                                   "called as a TVM FFI safe_call");
    }
    return reinterpret_cast<TVMFFISafeCallType>(address);
  }

  std::string Describe() const override { return description_; }

 private:
  void* Find(const std::string& name, size_t* extent, int* is_code) {
    void* address = nullptr;
    *extent = 0;
    ffijit::CheckCall(source_.find(source_.self, name.c_str(), &address, extent, is_code));
    return address;
  }

  FFIJITSymbolSource source_;
  std::string description_;
};

// The system-library symbol table (TVMFFIEnvModRegisterSystemLibSymbol).
class SystemLibTable {
 public:
  static SystemLibTable& Get() {
    static SystemLibTable* table = new SystemLibTable();  // never destroyed: used by static ctors
    return *table;
  }
  void Register(const std::string& name, void* symbol) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = symbols_.try_emplace(name, symbol);
    if (!inserted && it->second != symbol) {
      std::fprintf(stderr,
                   "ffijit: warning: system-library symbol `%s` registered again with a "
                   "different address; the new one replaces it\n",
                   name.c_str());
      it->second = symbol;
    }
  }
  void* Find(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = symbols_.find(name);
    return it == symbols_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, void*> symbols_;
};

// The system library seen under a prefix: `prefix + name` first, then `name`. Looked up at each
// call, so symbols registered after the module was made are found too.
class SystemLibrary final : public Library {
 public:
  explicit SystemLibrary(std::string prefix) : prefix_(std::move(prefix)) {}
  void* FindData(const std::string& name, size_t* extent) override {
    if (extent != nullptr) *extent = 0;  // the table records no sizes
    return Find(name);
  }
  TVMFFISafeCallType FindFunction(const std::string& name) override {
    // The table records no types: any registered address is taken to be a safe_call.
    void* address = SystemLibTable::Get().Find(kFunctionPrefix + prefix_ + name);
    if (address == nullptr) address = SystemLibTable::Get().Find(kFunctionPrefix + name);
    return reinterpret_cast<TVMFFISafeCallType>(address);
  }
  std::string Describe() const override {
    return prefix_.empty() ? "the system library" : "the system library (prefix `" + prefix_ + "`)";
  }

 private:
  void* Find(const std::string& name) const {
    void* address = SystemLibTable::Get().Find(prefix_ + name);
    return address != nullptr ? address : SystemLibTable::Get().Find(name);
  }
  std::string prefix_;
};

// ---- The library module ----

// A function of a library module: calls the exported safe_call with handle NULL (as TVM FFI
// does) and keeps the module, hence the library, alive.
struct LibraryFunction {
  TVMFFISafeCallType target;
  TVMFFIObject* module;  // one strong reference
};

int CallLibraryFunction(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return static_cast<LibraryFunction*>(self)->target(nullptr, args, num_args, result);
}

// The same, installed as the Function object's safe_call (handle: the object), which saves the
// creation trampoline's hop on every call.
int CallLibraryFunctionObject(void* handle, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  const auto* cell =
      reinterpret_cast<const FFIJITFunctionCell*>(static_cast<TVMFFIObject*>(handle) + 1);
  return CallLibraryFunction(cell->self, args, num_args, result);
}

void DeleteLibraryFunction(void* self) {
  auto* func = static_cast<LibraryFunction*>(self);
  TVMFFIObjectDecRef(func->module);
  delete func;
}

class LibraryModuleObj final : public ModuleObj {
 public:
  // A new library module, one strong reference owned by the result.
  static Module Create(std::shared_ptr<Library> lib) {
    auto* obj = new LibraryModuleObj(std::move(lib));
    TVMFFIObject* header = obj->header();
    FFIJITHeaderInit(header, kTVMFFIModule, &LibraryModuleObj::Deleter);
    return Module(ObjectRef::Adopt(header));
  }

  const char* kind() const override { return "library"; }
  int GetPropertyMask() const override { return 1 | 2; }  // binary-serializable | runnable

  // Header-compiled code calls this slot directly, so it fails with tvm::ffi::Error.
  OptionalFunction GetFunction(const String& name) override {
    return WithTvmErrors([&]() -> OptionalFunction {
      TVMFFISafeCallType target = lib_->FindFunction(std::string(name.view()));
      if (target == nullptr) return OptionalFunction();
      TVMFFIObject* self = handle();
      TVMFFIObjectIncRef(self);
      auto* func = new LibraryFunction{target, self};
      TVMFFIObjectHandle out = nullptr;
      // TVMFFIFunctionCreate releases `func` through the deleter if it fails.
      ffijit::CheckCall(
          TVMFFIFunctionCreate(func, CallLibraryFunction, DeleteLibraryFunction, &out));
      auto* cell = reinterpret_cast<FFIJITFunctionCell*>(static_cast<TVMFFIObject*>(out) + 1);
      __atomic_store_n(&cell->cell.safe_call, &CallLibraryFunctionObject, __ATOMIC_RELAXED);
      return Function(ObjectRef::Adopt(static_cast<TVMFFIObject*>(out)));
    });
  }

#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  // v0.1.13's library module answers these through the safe-calls the export macros emit
  // (`__tvm_ffi__metadata_<name>`, `__tvm_ffi__doc_<name>`), called with no arguments.
  OptionalString GetFunctionMetadata(const String& name) override {
    return WithTvmErrors([&] { return CallStringGetter("_metadata_", name); });
  }
  OptionalString GetFunctionDoc(const String& name) override {
    return WithTvmErrors([&] { return CallStringGetter("_doc_", name); });
  }
#endif

  Library& library() {
    return *lib_;
  }

 private:
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  // The String `__tvm_ffi_<infix><name>()` returns, or None when the library has no such symbol.
  OptionalString CallStringGetter(const char* infix, const String& name) {
    const std::string symbol_name = std::string(infix) + std::string(name.view());
    TVMFFISafeCallType getter = lib_->FindFunction(symbol_name);
    if (getter == nullptr) return OptionalString();
    TVMFFIAny result{};
    ffijit::CheckCall(getter(nullptr, nullptr, 0, &result));
    ffijit::Any owned = ffijit::Any::Adopt(result);
    std::string_view text;
    if (!ffijit::details::IsStrForm(result.type_index) ||
        !ffijit::internal::ViewBytes(result, &text)) {
      throw Error("TypeError", "`" + std::string(kFunctionPrefix) + symbol_name + "` in " +
                                   lib_->Describe() + " returned `" + owned.type_name() +
                                   "`, not a str");
    }
    return OptionalString(String::From(text));
  }
#endif

  // Every new library module starts with the same empty imports Array and lookup-cache Map: ffijit
  // replaces these containers rather than changing them, and header code copies a shared one
  // before changing it, so sharing saves two allocations per load.
  explicit LibraryModuleObj(std::shared_ptr<Library> lib) : lib_(std::move(lib)) {
    static const ObjectRef* const empty_imports = new ObjectRef(NewArray({}));  // never freed
    static const ObjectRef* const empty_cache = new ObjectRef(NewMap({}, {}));
    imports_ = *empty_imports;
    lookup_cache() = *empty_cache;
  }

  static void Deleter(void* self, int flags) {
    auto* obj =
        static_cast<LibraryModuleObj*>(ModuleObj::FromHandle(static_cast<TVMFFIObject*>(self)));
    if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
      // Drop the contents but keep the memory: a weak reference may still read the header.
      obj->imports_ = ObjectRef();
      obj->lookup_cache() = ObjectRef();
      obj->lib_.reset();
    }
    if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) delete obj;
  }

  std::shared_ptr<Library> lib_;
};

// ---- Context symbols ----

class ContextSymbols {
 public:
  static ContextSymbols& Get() {
    static ContextSymbols* symbols = new ContextSymbols();  // never destroyed
    return *symbols;
  }
  void Register(std::string name, void* value) {
    std::lock_guard lock(mutex_);
    symbols_.emplace_back(std::move(name), value);
  }
  std::vector<std::pair<std::string, void*>> Snapshot() const {
    std::lock_guard lock(mutex_);
    return symbols_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, void*>> symbols_;
};

// ---- __tvm_ffi__library_bin ----

// Reads the blob's little-endian fields, never past its end.
class BlobReader {
 public:
  BlobReader(const char* data, size_t size, std::string where)
      : data_(data), size_(size), where_(std::move(where)) {}

  uint64_t U64(const char* what) {
    if (size_ - pos_ < 8) Fail(std::string("truncated while reading ") + what);
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(data_[pos_ + i]);
    pos_ += 8;
    return value;
  }
  std::vector<uint64_t> Vec(const char* what) {
    const uint64_t count = U64(what);
    if (count > (size_ - pos_) / 8) {
      Fail(std::string(what) + " claims " + std::to_string(count) + " entries but only " +
           std::to_string(size_ - pos_) + " bytes remain");
    }
    std::vector<uint64_t> values(count);
    for (auto& value : values) value = U64(what);
    return values;
  }
  std::string Str(const char* what) {
    const uint64_t length = U64(what);
    if (length > size_ - pos_) {
      Fail(std::string(what) + " of " + std::to_string(length) + " bytes overruns the blob (" +
           std::to_string(size_ - pos_) + " bytes remain)");
    }
    std::string value(data_ + pos_, length);
    pos_ += length;
    return value;
  }
  [[noreturn]] void Fail(const std::string& why) const {
    throw Error("InternalError",
                "malformed " + std::string(kLibraryBin) + " in " + where_ + ": " + why);
  }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string where_;
};

Module LoadFromBytes(const std::string& kind, const std::string& payload) {
  const std::string loader = "ffi.Module.load_from_bytes." + kind;
  std::optional<ffijit::Function> load = ffijit::GetGlobalFunction(loader);
  if (!load) {
    throw Error("RuntimeError", "Library binary was created using {" + kind +
                                    "} but a loader of that name is not registered. Make sure "
                                    "to have runtime that registers " +
                                    loader);
  }
  TVMFFIByteArray bytes{payload.data(), payload.size()};
  TVMFFIAny arg{};
  arg.type_index = kTVMFFIByteArrayPtr;
  arg.v_ptr = &bytes;
  ffijit::Any result = load->CallPacked(&arg, 1);
  if (result.type_index() != kTVMFFIModule) {
    throw Error("TypeError", loader + " returned `" + result.type_name() + "`, not a Module");
  }
  return Module(ObjectRef::Borrow(result.raw().v_obj));
}

// Builds the modules a library's blob describes and wires their imports; returns module 0.
Module DecodeLibraryBin(const char* bin, size_t extent, const std::shared_ptr<Library>& lib,
                        void** ctx_slot) {
  const std::string where = lib->Describe();
  BlobReader header(bin, extent != 0 ? extent : 8, where);
  const uint64_t nbytes = header.U64("the byte count");
  if (extent != 0 && nbytes > extent - 8) {
    header.Fail("the byte count " + std::to_string(nbytes) + " exceeds the symbol's " +
                std::to_string(extent - 8) + " bytes");
  }
  BlobReader reader(bin + 8, nbytes, where);
  const std::vector<uint64_t> indptr = reader.Vec("the import tree's indptr");
  const std::vector<uint64_t> children = reader.Vec("the import tree's child indices");
  if (indptr.size() < 2) reader.Fail("the import tree lists no module");
  const size_t num_modules = indptr.size() - 1;
  for (size_t i = 0; i < num_modules; ++i) {
    if (indptr[i] > indptr[i + 1] || indptr[i + 1] > children.size()) {
      reader.Fail("indptr is not a non-decreasing sequence within the " +
                  std::to_string(children.size()) + " child indices");
    }
  }
  for (uint64_t child : children) {
    if (child >= num_modules) {
      reader.Fail("child index " + std::to_string(child) + " is out of range for " +
                  std::to_string(num_modules) + " modules");
    }
  }
  ModuleList modules;
  modules.reserve(num_modules);
  for (size_t i = 0; i < num_modules; ++i) {
    const std::string kind = reader.Str("a module kind");
    if (kind == "_lib") {
      modules.push_back(ToModulePtr(LibraryModuleObj::Create(lib)));
      if (ctx_slot != nullptr) *ctx_slot = AsModuleObj(modules.back());
    } else {
      const std::string payload = reader.Str("a module payload");
      modules.push_back(ToModulePtr(LoadFromBytes(kind, payload)));
    }
  }
  for (size_t i = 0; i < num_modules; ++i) {
    for (uint64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      try {
        WithFfijitErrors([&] {
          AsModuleObj(modules[i])
              ->ImportModule(Module(ObjectRef::Borrow(modules[children[j]].get())));
        });
      } catch (const Error& e) {
        reader.Fail("module " + std::to_string(i) + " cannot import module " +
                    std::to_string(children[j]) + ": " + e.message());
      }
    }
  }
  return Module(ObjectRef::Adopt(modules[0].release()));
}

// §9.1 steps 2-3: context symbols, then the blob or one library module with its ctx.
Module CreateLibraryModule(const std::shared_ptr<Library>& lib) {
  size_t extent = 0;
  const char* bin = static_cast<const char*>(lib->FindData(kLibraryBin, &extent));
  void** ctx_slot = static_cast<void**>(lib->FindData(kLibraryCtxSymbol, nullptr));
  for (const auto& [name, value] : ContextSymbols::Get().Snapshot()) {
    if (void** slot = static_cast<void**>(lib->FindData(name, nullptr))) *slot = value;
  }
  if (bin != nullptr) return DecodeLibraryBin(bin, extent, lib, ctx_slot);
  Module mod = LibraryModuleObj::Create(lib);
  if (ctx_slot != nullptr) *ctx_slot = mod.operator->();
  return mod;
}

// Stores a pointer into a module's variable; byte-wise, because nothing guarantees that a loaded
// file aligned its variable (a fuzzed object placed `__tvm_ffi__library_ctx` at an odd address).
void StorePointer(void* slot, const void* value) {
  std::memcpy(slot, &value, sizeof value);
}

// Writes the context symbols and the library ctx of `mod` again (symbols added since loading).
void BindContext(ModuleObj* mod) {
  auto* library_mod = dynamic_cast<LibraryModuleObj*>(mod);
  if (library_mod == nullptr) {
    throw Error("TypeError", "FFIJITLibraryModuleBindContext: the module is not a library module");
  }
  Library& lib = library_mod->library();
  for (const auto& [name, value] : ContextSymbols::Get().Snapshot()) {
    if (void* slot = lib.FindData(name, nullptr)) StorePointer(slot, value);
  }
  if (void* ctx_slot = lib.FindData(kLibraryCtxSymbol, nullptr)) StorePointer(ctx_slot, mod);
}

}  // namespace
}  // namespace ffi
}  // namespace tvm

namespace ffijit::internal {

std::vector<std::pair<std::string, void*>> ContextSymbolsSnapshot() {
  return tvm::ffi::ContextSymbols::Get().Snapshot();
}

namespace {

// Whether a library loaded under exactly this name is in the process: the first thing dlopen
// compares, without opening any file (as RTLD_NOLOAD does for a name it does not know).
bool LoadedUnderName(const std::string& path) {
  struct Search {
    const char* path;
    bool found;
  } search{path.c_str(), false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        s->found = info->dlpi_name != nullptr && std::strcmp(info->dlpi_name, s->path) == 0;
        return s->found ? 1 : 0;
      },
      &search);
  return search.found;
}

}  // namespace

tvm::ffi::Module LoadSharedLibrary(const std::string& path) {
  if (std::shared_ptr<tvm::ffi::SharedLibrary> open = tvm::ffi::OpenLibraries::Get().Find(path)) {
    return tvm::ffi::CreateLibraryModule(open);
  }
  // A library already in the process under this name is taken as it is: it was checked when it
  // came in (or the program linked it), and reading its file again would cost a thousand times
  // the lookup. One there under another name (a symbolic link) is checked again, harmlessly.
  void* handle =
      LoadedUnderName(path) ? dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD) : nullptr;
  if (handle == nullptr) {
    // Before dlopen: with lazy binding a module of the other revision would load and then fail
    // at its first object or error, not here.
    CheckCall(FFIJITCheckModuleAbiFile(path.c_str()));
    handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error("InternalError", "Failed to load dynamic shared library " + path + ": " +
                                     (reason != nullptr ? reason : "unknown dlopen error"));
  }
  auto lib = std::make_shared<tvm::ffi::SharedLibrary>(handle, path);
  tvm::ffi::OpenLibraries::Get().Add(path, lib);
  return tvm::ffi::CreateLibraryModule(lib);
}

tvm::ffi::Module SystemLib(const std::string& prefix) {
  static std::mutex* mutex = new std::mutex();
  // One module per prefix, kept for the life of the process.
  static auto* cache = new std::map<std::string, ObjectPtr<>>();
  std::lock_guard lock(*mutex);
  auto it = cache->find(prefix);
  if (it == cache->end()) {
    auto lib = std::make_shared<tvm::ffi::SystemLibrary>(prefix);
    it = cache->emplace(prefix, ToModulePtr(tvm::ffi::CreateLibraryModule(lib))).first;
  }
  return tvm::ffi::Module(tvm::ffi::ObjectRef::Borrow(it->second.get()));
}

}  // namespace ffijit::internal

using namespace ffijit;

extern "C" {

int FFIJITLibraryModuleCreate(const FFIJITSymbolSource* source, TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(source, "FFIJITLibraryModuleCreate", "source");
    internal::RequireNonNull(out, "FFIJITLibraryModuleCreate", "out");
    // From here on the library owns the source and releases it, also when loading fails.
    auto lib = std::make_shared<tvm::ffi::SourceLibrary>(*source);
    if (source->find == nullptr) {
      throw Error("ValueError", "FFIJITLibraryModuleCreate: `source->find` is NULL");
    }
    *out = tvm::ffi::CreateLibraryModule(lib).release();
  });
}

int FFIJITLibraryModuleBindContext(TVMFFIObjectHandle module) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(module, "FFIJITLibraryModuleBindContext", "module");
    auto* obj = static_cast<TVMFFIObject*>(module);
    if (obj->type_index != kTVMFFIModule) {
      throw Error("TypeError", "FFIJITLibraryModuleBindContext: expected an ffi.Module");
    }
    tvm::ffi::BindContext(tvm::ffi::ModuleObj::FromHandle(obj));
  });
}

int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(name, "TVMFFIEnvModRegisterContextSymbol", "name");
    tvm::ffi::ContextSymbols::Get().Register(name, symbol);
  });
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(name, "TVMFFIEnvModRegisterSystemLibSymbol", "name");
    tvm::ffi::SystemLibTable::Get().Register(name, symbol);
  });
}

}  // extern "C"
