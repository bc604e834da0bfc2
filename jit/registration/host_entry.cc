// The host-entry C API (ffijit/jit/host_entry.h): argument checks and ownership; the compile itself
// is the build's (details::CompileHostEntry), or the stencil tier's (kFFIJITHostEntryStencil).
#include <memory>
#include <string>

#include "ffijit/error.h"
#include "interpreter/bound_function.h"
#include "plan/host_entry_internal.h"
#include "stencils/entries/host_stencil_entry.h"

using ffijit::details::RequireNonNull;

namespace {

// Every address the generated code may call or compare with must be set: the entry would jump to
// or read through a NULL one. The offsets must lie inside an object's first page.
void RequireCompleteModel(const FFIJITHostModel& m) {
  const struct {
    const void* address;
    const char* field;
  } required[] = {
      {m.int_type, "int_type"},
      {m.float_type, "float_type"},
      {m.str_type, "str_type"},
      {m.device_type, "device_type"},
      {m.dtype_type, "dtype_type"},
      {m.none, "none"},
      {m.true_value, "true_value"},
      {m.false_value, "false_value"},
      {reinterpret_cast<const void*>(m.int_value), "int_value"},
      {reinterpret_cast<const void*>(m.error_occurred), "error_occurred"},
      {reinterpret_cast<const void*>(m.clear_error), "clear_error"},
      {reinterpret_cast<const void*>(m.str_data), "str_data"},
      {reinterpret_cast<const void*>(m.pointer_to_any), "pointer_to_any"},
      {reinterpret_cast<const void*>(m.borrow_tensor), "borrow_tensor"},
      {reinterpret_cast<const void*>(m.release_tensor), "release_tensor"},
      {reinterpret_cast<const void*>(m.new_int), "new_int"},
      {reinterpret_cast<const void*>(m.new_float), "new_float"},
      {reinterpret_cast<const void*>(m.new_ref), "new_ref"},
      {reinterpret_cast<const void*>(m.box_result), "box_result"},
      {reinterpret_cast<const void*>(m.raise_error), "raise_error"},
      {reinterpret_cast<const void*>(m.release_lock), "release_lock"},
      {reinterpret_cast<const void*>(m.acquire_lock), "acquire_lock"},
      {reinterpret_cast<const void*>(m.fallback), "fallback"},
  };
  for (const auto& r : required) {
    if (r.address == nullptr) {
      throw ffijit::ValueError(std::string("FFIJITHostEntryCompile: the host model's ") + r.field +
                               " is NULL");
    }
  }
  const struct {
    int32_t offset;
    const char* field;
  } offsets[] = {{m.type_offset, "type_offset"},
                 {m.float_value_offset, "float_value_offset"},
                 {m.device_value_offset, "device_value_offset"},
                 {m.dtype_value_offset, "dtype_value_offset"}};
  auto require_offset = [](int32_t offset, const char* field, bool may_be_absent) {
    if (may_be_absent && offset == -1) return;
    if (offset < 0 || offset > 4096 - 8) {
      throw ffijit::ValueError(std::string("FFIJITHostEntryCompile: the host model's ") + field +
                               " " + std::to_string(offset) + " is outside 0..4088" +
                               (may_be_absent ? " and not -1" : ""));
    }
  };
  for (const auto& o : offsets) require_offset(o.offset, o.field, false);
  require_offset(m.self_function_offset, "self_function_offset", true);
  if (m.lock_holder != nullptr) {
    if (m.lock_calls == nullptr) {
      throw ffijit::ValueError(
          "FFIJITHostEntryCompile: the host model's lock_calls is NULL while "
          "lock_holder is given");
    }
    require_offset(m.self_name_offset, "self_name_offset", false);
  }
  if (m.held_work != nullptr) {
    if (m.lock_holder == nullptr || m.run_held_work == nullptr) {
      throw ffijit::ValueError(std::string("FFIJITHostEntryCompile: the host model's ") +
                               (m.lock_holder == nullptr ? "lock_holder" : "run_held_work") +
                               " is NULL while held_work is given");
    }
  }
  if (m.count_reached != nullptr) require_offset(m.self_count_offset, "self_count_offset", false);
  if (m.int_layout != kFFIJITHostIntOpaque) {
    if (m.int_layout != kFFIJITHostIntSizedDigits && m.int_layout != kFFIJITHostIntTaggedDigits) {
      throw ffijit::ValueError("FFIJITHostEntryCompile: the host model's int_layout " +
                               std::to_string(m.int_layout) + " is not an FFIJITHostIntLayout");
    }
    require_offset(m.int_size_offset, "int_size_offset", false);
    require_offset(m.int_digits_offset, "int_digits_offset", false);
  }
  require_offset(m.str_flags_offset, "str_flags_offset", true);
  if (m.str_flags_offset != -1) {
    require_offset(m.str_length_offset, "str_length_offset", false);
    require_offset(m.str_inline_data_offset, "str_inline_data_offset", false);
    if (m.str_inline_mask == 0) {
      throw ffijit::ValueError(
          "FFIJITHostEntryCompile: the host model's str_inline_mask is 0 (every str would read "
          "as inline)");
    }
  }
  if (m.tensor_slot_size < 0 || m.tensor_slot_size % 8 != 0 || m.tensor_slot_size > 65536) {
    throw ffijit::ValueError("FFIJITHostEntryCompile: the host model's tensor_slot_size " +
                             std::to_string(m.tensor_slot_size) +
                             " is not a multiple of 8 in 0..65536");
  }
}

}  // namespace

int FFIJITHostEntryCompile(TVMFFIObjectHandle func, const FFIJITHostModel* model, int flags,
                           FFIJITHostEntry** out) {
  return ffijit::GuardCBoundary([&] {
    RequireNonNull(func, "FFIJITHostEntryCompile", "func");
    RequireNonNull(model, "FFIJITHostEntryCompile", "model");
    RequireNonNull(out, "FFIJITHostEntryCompile", "out");
    *out = nullptr;
    if ((flags & ~(kFFIJITHostEntryReleaseLock | kFFIJITHostEntryStencil)) != 0) {
      throw ffijit::ValueError("FFIJITHostEntryCompile: unknown flags " + std::to_string(flags));
    }
    auto* obj = static_cast<TVMFFIObject*>(func);
    if (!ffijit::IsBoundFunction(obj)) {
      throw ffijit::RuntimeError(
          "FFIJITHostEntryCompile: no host entry: the function was not made from metadata");
    }
    RequireCompleteModel(*model);
    const auto* bound = reinterpret_cast<const ffijit::BoundFunction*>(obj);
    if ((bound->flags & ffijit::kBoundInterpretOnly) != 0) {
      throw ffijit::RuntimeError("FFIJITHostEntryCompile: no host entry for `" +
                                 bound->plan->declaration +
                                 "`: it was made interpret-only (kept off the JIT)");
    }
    FFIJITHostEntry* entry = (flags & kFFIJITHostEntryStencil) != 0
                                 ? ffijit::stencils::MakeStencilHostEntry(bound, *model, flags)
                                 : ffijit::details::CompileHostEntry(bound, *model, flags);
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
