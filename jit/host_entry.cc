// The host-entry C API (ffijit/host_entry.h): argument checks and ownership; the compile itself is
// the build's (details::CompileHostEntry).
#include <memory>

#include "ffijit/error.h"
#include "host_entry_internal.h"

using ffijit::details::RequireNonNull;

int FFIJITHostEntryCompile(TVMFFIObjectHandle func, const FFIJITHostModel* model, int flags,
                           FFIJITHostEntry** out) {
  return ffijit::GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITHostEntryCompile", "func");
    RequireNonNull(model, "FFIJITHostEntryCompile", "model");
    RequireNonNull(out, "FFIJITHostEntryCompile", "out");
    *out = nullptr;
    if ((flags & ~kFFIJITHostEntryReleaseLock) != 0) {
      throw ffijit::ValueError("FFIJITHostEntryCompile: unknown flags " + std::to_string(flags));
    }
    auto* obj = static_cast<TVMFFIObject*>(func);
    if (!ffijit::IsBoundFunction(obj)) {
      throw ffijit::RuntimeError(
          "FFIJITHostEntryCompile: no host entry: the function was not made from metadata");
    }
    const auto* bound = reinterpret_cast<const ffijit::BoundFunction*>(obj);
    if ((bound->flags & ffijit::kBoundInterpretOnly) != 0) {
      throw ffijit::RuntimeError("FFIJITHostEntryCompile: no host entry for `" +
                                 bound->plan->declaration +
                                 "`: it was made interpret-only (kept off the JIT)");
    }
    FFIJITHostEntry* entry = ffijit::details::CompileHostEntry(bound, *model, flags);
    TVMFFIObjectIncRef(obj);
    entry->function = obj;
    *out = entry;
  });
}

void* FFIJITHostEntryAddress(const FFIJITHostEntry* entry) {
  return entry != nullptr ? entry->address : nullptr;
}

int64_t FFIJITHostEntryCompileNanos(const FFIJITHostEntry* entry) {
  return entry != nullptr ? entry->compile_ns : 0;
}

void FFIJITHostEntryRelease(FFIJITHostEntry* entry) {
  if (entry == nullptr) return;
  if (entry->release_code != nullptr) entry->release_code(entry->code);
  if (entry->function != nullptr) TVMFFIObjectDecRef(entry->function);
  delete entry;
}
