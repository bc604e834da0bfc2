// Modules: ModuleObj's exported C++ members, the library module over a shared library, the
// system-library table or a symbol source another library provides (the JIT's modules), loading
// (context symbols, __tvm_ffi__library_ctx, __tvm_ffi__library_bin), imports with cycle
// detection, TVMFFIEnvModLookupFromImports, and the ffi.Module* globals.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ffijit/c_env_api.h"
#include "ffijit/module.h"
#include "internal.h"
#include "tvm_ffi_cxx.h"

namespace tvm {
namespace ffi {
namespace {

using ffijit::Error;
using ffijit::internal::WithFfijitErrors;
using ffijit::internal::WithTvmErrors;

constexpr const char* kFunctionPrefix = "__tvm_ffi_";
constexpr const char* kLibraryCtx = "__tvm_ffi__library_ctx";
constexpr const char* kLibraryBin = "__tvm_ffi__library_bin";

// ---- Where a library module's symbols come from ----

class Library {
 public:
  virtual ~Library() = default;
  // The address of the data symbol `name`, or null. *extent is its size in bytes when the symbol
  // table records one, else 0.
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
  ~SharedLibrary() override { dlclose(handle_); }

  void* FindData(const std::string& name, size_t* extent) override {
    void* address = dlsym(handle_, name.c_str());
    *extent = 0;
    if (address != nullptr) {
      if (const ElfW(Sym)* sym = SymbolEntry(address)) *extent = sym->st_size;
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
    int is_code = -1;
    return Find(name, extent, &is_code);
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
    *extent = 0;  // the table records no sizes
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

void DeleteLibraryFunction(void* self) {
  auto* func = static_cast<LibraryFunction*>(self);
  TVMFFIObjectDecRef(func->module);
  delete func;
}

ObjectRef NewArray(const std::vector<TVMFFIAny>& items) {
  TVMFFIObjectHandle handle = nullptr;
  ffijit::CheckCall(FFIJITArrayCreate(items.data(), static_cast<int64_t>(items.size()), &handle));
  return ObjectRef::Adopt(static_cast<TVMFFIObject*>(handle));
}

ObjectRef NewMap(const std::vector<TVMFFIAny>& keys, const std::vector<TVMFFIAny>& values) {
  TVMFFIObjectHandle handle = nullptr;
  ffijit::CheckCall(
      FFIJITMapCreate(keys.data(), values.data(), static_cast<int64_t>(keys.size()), &handle));
  return ObjectRef::Adopt(static_cast<TVMFFIObject*>(handle));
}

TVMFFIAny ObjectView(TVMFFIObject* obj) {
  TVMFFIAny view{};
  view.type_index = obj->type_index;
  view.v_obj = obj;
  return view;
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

  explicit LibraryModuleObj(std::shared_ptr<Library> lib) : lib_(std::move(lib)) {
    imports_ = NewArray({});
    lookup_cache() = NewMap({}, {});
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

// ---- Imports ----

// Imports are replaced (copy on write), never edited in place; this lock orders the swaps and
// the snapshots taken by readers.
std::mutex& ImportsMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

// Standard containers hold ffijit references, never the tvm::ffi classes: their instantiations
// would be exported under names that header-compiled user code instantiates too.
using ModuleList = std::vector<ffijit::ObjectPtr<>>;

ModuleObj* Deref(const ffijit::ObjectPtr<>& mod) {
  return ModuleObj::FromHandle(mod.get());
}

ffijit::ObjectPtr<> ToPtr(Module mod) {
  return ffijit::ObjectPtr<>::Adopt(mod.release());
}

// The modules `mod` imports, each with its own reference.
ModuleList ImportsOf(ModuleObj* mod) {
  std::lock_guard lock(ImportsMutex());
  ModuleList result;
  TVMFFIObject* array = mod->imports().get();
  if (array == nullptr) return result;
  const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(array + 1);
  for (int64_t i = 0; i < cell->size; ++i) {
    const TVMFFIAny& item = cell->data[i];
    if (item.type_index == kTVMFFIModule) result.push_back(ffijit::ObjectPtr<>::Borrow(item.v_obj));
  }
  return result;
}

// True when `target` is `from` or reachable from it through imports.
bool Reaches(TVMFFIObject* from, TVMFFIObject* target, std::unordered_set<TVMFFIObject*>* seen) {
  if (from == target) return true;
  if (!seen->insert(from).second) return false;
  for (const auto& next : ImportsOf(ModuleObj::FromHandle(from))) {
    if (Reaches(next.get(), target, seen)) return true;
  }
  return false;
}

ModuleObj* CheckedModule(const Module& mod, const char* what) {
  if (!mod.defined()) throw Error("ValueError", std::string(what) + ": the module is None");
  if (mod.get()->type_index != kTVMFFIModule) {
    throw Error("TypeError", std::string(what) + ": expected an ffi.Module");
  }
  return mod.operator->();
}

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
      modules.push_back(ToPtr(LibraryModuleObj::Create(lib)));
      if (ctx_slot != nullptr) *ctx_slot = Deref(modules.back());
    } else {
      const std::string payload = reader.Str("a module payload");
      modules.push_back(ToPtr(LoadFromBytes(kind, payload)));
    }
  }
  for (size_t i = 0; i < num_modules; ++i) {
    for (uint64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
      try {
        WithFfijitErrors([&] {
          Deref(modules[i])->ImportModule(Module(ObjectRef::Borrow(modules[children[j]].get())));
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
  size_t ctx_extent = 0;
  void** ctx_slot = static_cast<void**>(lib->FindData(kLibraryCtx, &ctx_extent));
  for (const auto& [name, value] : ContextSymbols::Get().Snapshot()) {
    size_t unused = 0;
    if (void** slot = static_cast<void**>(lib->FindData(name, &unused))) *slot = value;
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
    size_t unused = 0;
    if (void* slot = lib.FindData(name, &unused)) StorePointer(slot, value);
  }
  size_t ctx_extent = 0;
  if (void* ctx_slot = lib.FindData(kLibraryCtx, &ctx_extent)) StorePointer(ctx_slot, mod);
}

Module LoadSharedLibrary(const std::string& path) {
  // Before dlopen: with lazy binding a module of the other revision would load and then fail at
  // its first object or error, not here.
  ffijit::CheckCall(FFIJITCheckModuleAbiFile(path.c_str()));
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error("InternalError", "Failed to load dynamic shared library " + path + ": " +
                                     (reason != nullptr ? reason : "unknown dlopen error"));
  }
  return CreateLibraryModule(std::make_shared<SharedLibrary>(handle, path));
}

Module LoadModuleFromFile(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    throw Error("RuntimeError",
                "Failed to get file format of `" + path + "`: the name has no extension");
  }
  std::string format = path.substr(dot + 1);
  if (format == "dll" || format == "dylib" || format == "dso") format = "so";
  const std::string loader = "ffi.Module.load_from_file." + format;
  std::optional<ffijit::Function> load = ffijit::GetGlobalFunction(loader);
  if (!load) {
    throw Error("RuntimeError", "Loader for `." + format +
                                    "` files is not registered, resolved to (" + loader +
                                    ") (loading `" + path + "`)");
  }
  ffijit::Any result = (*load)(path, format);
  if (result.type_index() != kTVMFFIModule) {
    throw Error("TypeError", loader + " returned `" + result.type_name() + "`, not a Module");
  }
  return Module(ObjectRef::Borrow(result.raw().v_obj));
}

Module SystemLib(const std::string& prefix) {
  static std::mutex* mutex = new std::mutex();
  // One module per prefix, kept for the life of the process.
  static auto* cache = new std::map<std::string, ffijit::ObjectPtr<>>();
  std::lock_guard lock(*mutex);
  auto it = cache->find(prefix);
  if (it == cache->end()) {
    it = cache->emplace(prefix, ToPtr(CreateLibraryModule(std::make_shared<SystemLibrary>(prefix))))
             .first;
  }
  return Module(ObjectRef::Borrow(it->second.get()));
}

// TVMFFIEnvModLookupFromImports: the cache, the imports, the globals. The returned function is
// borrowed from the cache.
TVMFFIObject* LookupFromImports(ModuleObj* mod, const char* name) {
  static std::mutex* cache_mutex = new std::mutex();
  {
    // The hit path allocates nothing: map keys compare by content, so a RawStr view finds the
    // String stored at insertion.
    TVMFFIAny view{};
    view.type_index = kTVMFFIRawStr;
    view.v_c_str = name;
    std::lock_guard lock(*cache_mutex);
    const TVMFFIAny* found = nullptr;
    if (mod->lookup_cache().defined()) {
      ffijit::CheckCall(FFIJITMapGet(mod->lookup_cache().get(), &view, &found));
    }
    if (found != nullptr) return found->v_obj;
  }
  const String key = String::From(name);
  OptionalFunction func;
  for (const auto& import : ImportsOf(mod)) {
    func = WithFfijitErrors([&] { return Deref(import)->GetFunction(key, true); });
    if (func.defined()) break;
  }
  if (!func.defined()) {
    if (std::optional<ffijit::Function> global = ffijit::GetGlobalFunction(name)) {
      func = OptionalFunction(ObjectRef::Borrow(global->get()));
    }
  }
  if (!func.defined()) {
    throw Error("RuntimeError", std::string("Cannot find function ") + ffijit::Excerpt(name) +
                                    " in the imported modules or global registry.");
  }
  std::lock_guard lock(*cache_mutex);
  // Copy on insert: the cache is an immutable Map; another thread may have added `name` meanwhile.
  std::vector<TVMFFIAny> keys, values;
  if (TVMFFIObject* cache = mod->lookup_cache().get()) {
    const TVMFFIAny* found = nullptr;
    ffijit::CheckCall(FFIJITMapGet(cache, &key.raw(), &found));
    if (found != nullptr) return found->v_obj;
    int64_t size = 0;
    ffijit::CheckCall(FFIJITMapSize(cache, &size));
    for (int64_t i = 0; i < size; ++i) {
      const TVMFFIAny* k = nullptr;
      const TVMFFIAny* v = nullptr;
      ffijit::CheckCall(FFIJITMapItemAt(cache, i, &k, &v));
      keys.push_back(*k);
      values.push_back(*v);
    }
  }
  keys.push_back(key.raw());
  values.push_back(ObjectView(func.get()));
  mod->lookup_cache() = NewMap(keys, values);
  return func.get();  // the new cache holds it
}

}  // namespace

// ---- ModuleObj's out-of-line members (exported: header-compiled code calls them) ----

void ModuleObj::ImportModule(const Module& other) {
  WithTvmErrors([&] {
    TVMFFIObject* other_handle = CheckedModule(other, "ImportModule")->handle();
    // One import at a time, so two concurrent imports cannot together close a cycle that each
    // check alone missed.
    static std::mutex* graph_mutex = new std::mutex();
    std::lock_guard graph_lock(*graph_mutex);
    std::unordered_set<TVMFFIObject*> seen;
    if (Reaches(other_handle, handle(), &seen)) {
      throw ffijit::RuntimeError("Cyclic dependency detected during import");
    }
    std::lock_guard lock(ImportsMutex());
    std::vector<TVMFFIAny> items;
    if (TVMFFIObject* array = imports_.get()) {
      const auto* cell = reinterpret_cast<const FFIJITArrayCell*>(array + 1);
      items.assign(cell->data, cell->data + cell->size);
    }
    items.push_back(ObjectView(other_handle));
    imports_ = NewArray(items);
  });
}

void ModuleObj::ClearImports() {
  WithTvmErrors([&] {
    ObjectRef empty = NewArray({});
    std::lock_guard lock(ImportsMutex());
    std::swap(imports_, empty);
  });
}

OptionalFunction ModuleObj::GetFunction(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalFunction func = GetFunction(name);
    if (func.defined() || !query_imports) return func;
    for (const auto& import : ImportsOf(this)) {
      func = Deref(import)->GetFunction(name, true);
      if (func.defined()) return func;
    }
    return OptionalFunction();
  });
}

bool ModuleObj::ImplementsFunction(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    if (ImplementsFunction(name)) return true;
    if (!query_imports) return false;
    for (const auto& import : ImportsOf(this)) {
      if (Deref(import)->ImplementsFunction(name, true)) return true;
    }
    return false;
  });
}

OptionalString ModuleObj::GetFunctionMetadata(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalString metadata = GetFunctionMetadata(name);
    if (!metadata.is_none() || !query_imports) return metadata;
    for (const auto& import : ImportsOf(this)) {
      metadata = Deref(import)->GetFunctionMetadata(name, true);
      if (!metadata.is_none()) return metadata;
    }
    return OptionalString();
  });
}

#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
OptionalString ModuleObj::GetFunctionDoc(const String& name, bool query_imports) {
  return WithTvmErrors([&] {
    OptionalString doc = GetFunctionDoc(name);
    if (!doc.is_none() || !query_imports) return doc;
    for (const auto& import : ImportsOf(this)) {
      doc = Deref(import)->GetFunctionDoc(name, true);
      if (!doc.is_none()) return doc;
    }
    return OptionalString();
  });
}
#endif

Module Module::LoadFromFile(const String& file_name) {
  return WithTvmErrors([&] { return LoadModuleFromFile(std::string(file_name.view())); });
}

void Module::VisitContextSymbols(const TypedFunction<void(String, void*)>& callback) {
  WithTvmErrors([&] {
    for (const auto& [name, value] : ContextSymbols::Get().Snapshot()) {
      String text = String::From(name);
      TVMFFIAny args[2] = {text.raw(), TVMFFIAny{}};
      args[1].type_index = kTVMFFIOpaquePtr;
      args[1].v_ptr = value;
      TVMFFIAny result{};
      ffijit::CheckCall(TVMFFIFunctionCall(callback.packed.get(), args, 2, &result));
      ffijit::internal::ReleaseAny(&result);
    }
  });
}

}  // namespace ffi
}  // namespace tvm

// ---- The C entry points and the ffi.Module* globals ----

namespace ffijit {
namespace {

namespace tf = tvm::ffi;

tf::ModuleObj* Deref(const Module& mod, const char* global) {
  if (!mod.defined()) {
    throw Error("TypeError", std::string(global) + ": expected an ffi.Module, got None");
  }
  return tf::ModuleObj::FromHandle(mod.get());
}

tf::String ToString(const std::string& text) {
  return tf::String::From(text);
}

Any FromOptionalString(const tf::OptionalString& value) {
  if (value.is_none()) return Any();
  return Any(std::string(value.view()));
}

Module ToModule(tf::Module mod) {
  return Module(ObjectPtr<>::Adopt(mod.release()));
}

void Register(const char* name, Function func) {
  SetGlobalFunction(name, func, true);
}

// The module members a global calls fail with tvm::ffi::Error (header-compiled code catches that);
// the global's caller gets the same kind and message through the C convention.
template <typename F, typename... A>
auto ReportingTvmErrors(F body, std::tuple<A...>*) {
  return [body = std::move(body)](A... args) {
    return internal::WithFfijitErrors([&] { return body(std::move(args)...); });
  };
}

template <typename F>
void RegisterTyped(const char* name, F body) {
  using Args = typename details::FunctionTraits<F>::Args;
  Register(name, Function::FromTyped(
                     ReportingTvmErrors(std::move(body), static_cast<Args*>(nullptr)), name));
}

bool RegisterModuleGlobals() {
  RegisterTyped("ffi.ModuleLoadFromFile",
                [](std::string path) { return ToModule(tf::LoadModuleFromFile(path)); });
  RegisterTyped("ffi.Module.load_from_file.so", [](std::string path, std::string) {
    return ToModule(tf::LoadSharedLibrary(path));
  });
  RegisterTyped(
      "ffi.ModuleGetFunction",
      [](Module mod, std::string name, bool query_imports) -> std::optional<Function> {
        tf::OptionalFunction func =
            Deref(mod, "ffi.ModuleGetFunction")->GetFunction(ToString(name), query_imports);
        if (!func.defined()) return std::nullopt;
        return Function(ObjectPtr<>::Adopt(func.release()));
      });
  RegisterTyped("ffi.ModuleImplementsFunction",
                [](Module mod, std::string name, bool query_imports) {
                  return Deref(mod, "ffi.ModuleImplementsFunction")
                      ->ImplementsFunction(ToString(name), query_imports);
                });
  RegisterTyped(
      "ffi.ModuleGetFunctionMetadata", [](Module mod, std::string name, bool query_imports) {
        return FromOptionalString(Deref(mod, "ffi.ModuleGetFunctionMetadata")
                                      ->GetFunctionMetadata(ToString(name), query_imports));
      });
#if FFIJIT_TVM_FFI_MODULE_HAS_FUNCTION_DOC
  RegisterTyped("ffi.ModuleGetFunctionDoc", [](Module mod, std::string name, bool query_imports) {
    return FromOptionalString(
        Deref(mod, "ffi.ModuleGetFunctionDoc")->GetFunctionDoc(ToString(name), query_imports));
  });
#endif
  RegisterTyped("ffi.ModuleGetPropertyMask", [](Module mod) {
    return static_cast<int64_t>(Deref(mod, "ffi.ModuleGetPropertyMask")->GetPropertyMask());
  });
  RegisterTyped("ffi.ModuleGetKind",
                [](Module mod) { return std::string(Deref(mod, "ffi.ModuleGetKind")->kind()); });
  RegisterTyped("ffi.ModuleInspectSource", [](Module mod, std::string format) {
    return std::string(
        Deref(mod, "ffi.ModuleInspectSource")->InspectSource(ToString(format)).view());
  });
  RegisterTyped("ffi.ModuleGetWriteFormats", [](Module mod) {
    tf::ArrayRef formats = Deref(mod, "ffi.ModuleGetWriteFormats")->GetWriteFormats();
    return Array(ObjectPtr<>::Adopt(formats.release()));
  });
  RegisterTyped("ffi.ModuleWriteToFile", [](Module mod, std::string file, std::string format) {
    Deref(mod, "ffi.ModuleWriteToFile")->WriteToFile(ToString(file), ToString(format));
  });
  RegisterTyped("ffi.ModuleImportModule", [](Module mod, Module other) {
    tf::ModuleObj* self = Deref(mod, "ffi.ModuleImportModule");
    Deref(other, "ffi.ModuleImportModule");
    self->ImportModule(tf::Module(tf::ObjectRef::Borrow(other.get())));
  });
  RegisterTyped("ffi.ModuleClearImports",
                [](Module mod) { Deref(mod, "ffi.ModuleClearImports")->ClearImports(); });
  Register("ffi.SystemLib",
           Function::FromPacked([](const AnyView* args, int32_t num_args, Any* result) {
             if (num_args > 1) {
               throw Error("TypeError",
                           "ffi.SystemLib takes at most one argument (the prefix), "
                           "got " +
                               std::to_string(num_args));
             }
             std::string prefix;
             if (num_args == 1) {
               try {
                 prefix = args[0].cast<std::string>();
               } catch (const Error& e) {
                 throw Error(e.kind(),
                             "Mismatched type on argument #0 when calling "
                             "`ffi.SystemLib`: " +
                                 e.message());
               }
             }
             *result = ToModule(tf::SystemLib(prefix));
           }));
  return true;
}

__attribute__((constructor)) void RegisterModuleGlobalsAtLoad() {
  RegisterAtLoad("the ffi.Module* globals", RegisterModuleGlobals);
}

}  // namespace
}  // namespace ffijit

using namespace ffijit;

extern "C" {

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  return internal::GuardCBoundary([&] {
    internal::RequireNonNull(library_ctx, "TVMFFIEnvModLookupFromImports", "library_ctx");
    internal::RequireNonNull(func_name, "TVMFFIEnvModLookupFromImports", "func_name");
    internal::RequireNonNull(out, "TVMFFIEnvModLookupFromImports", "out");
    // The loader stored the C++ ModuleObj* (header - 8), as TVM FFI does.
    auto* mod = static_cast<tvm::ffi::ModuleObj*>(library_ctx);
    if (mod->header()->type_index != kTVMFFIModule) {
      throw Error("ValueError",
                  "TVMFFIEnvModLookupFromImports: `library_ctx` is not a module "
                  "context (pass the value the loader stored in " +
                      std::string(tvm::ffi::kLibraryCtx) + ")");
    }
    *out = tvm::ffi::LookupFromImports(mod, func_name);
  });
}

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
