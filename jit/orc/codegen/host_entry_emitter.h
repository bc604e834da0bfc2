// HostEntryEmitter, the host entry code generator's private class: its state, the small IR
// helpers every part uses, and the parts' declarations (host_entry_codegen.cc: the arity check,
// the tensors, the call, the result and the fallback; host_entry_arguments.cc: each argument's
// check and inline conversion).
#ifndef FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_EMITTER_H_
#define FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_EMITTER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ffijit/c_api.h"
#include "ffijit/jit/host_entry.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "plan/call_plan.h"
#include "plan/host_forms.h"

namespace ffijit::orc {

// TVMFFIAny's layout, as c_api.h declares it for both revisions.
inline constexpr int64_t kAnySize = sizeof(TVMFFIAny);
inline constexpr int64_t kPaddingOffset = offsetof(TVMFFIAny, zero_padding);
inline constexpr int64_t kValueOffset = offsetof(TVMFFIAny, v_int64);

// One host entry's code generator, in the shape of ThunkEmitter: the state every part shares,
// the small IR helpers, and one member per part, emitted in the entry's block order: the arity
// and keyword check, each argument's check and conversion, the tensors borrowed last, the call,
// the result boxed, and the fallback every miss branches to.
class HostEntryEmitter {
 public:
  HostEntryEmitter(const CallPlan& plan, const void* function, const FFIJITHostModel& model,
                   int flags, llvm::Function* thunk, llvm::Module& module)
      : plan_(plan),
        function_(function),
        model_(model),
        flags_(flags),
        thunk_(thunk),
        module_(module),
        ctx_(module.getContext()),
        b_(ctx_),
        i8_(b_.getInt8Ty()),
        i32_(b_.getInt32Ty()),
        i64_(b_.getInt64Ty()),
        f64_(b_.getDoubleTy()),
        ptr_(b_.getPtrTy()),
        num_args_(plan.args.size()),
        pending_(num_args_),
        any_values_(num_args_, {nullptr, nullptr}) {}

  // Emits the entry as `symbol`; "" on success, else why not (and no trace of it is left).
  std::string Emit(const std::string& symbol);

 private:
  // An Any's incoming value from one block, merged at the head of the next argument's block.
  struct AnyIncoming {
    llvm::BasicBlock* from;
    llvm::Value* type_index;
    llvm::Value* payload;
  };

  // ---- IR helpers ----
  llvm::Value* Constant(const void* address) {
    return b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uintptr_t>(address)), ptr_);
  }
  // A host function, called through its address.
  template <typename HostFunction>
  llvm::CallInst* CallHost(HostFunction* host_function, llvm::FunctionType* type,
                           std::initializer_list<llvm::Value*> operands) {
    return b_.CreateCall(type, Constant(reinterpret_cast<const void*>(host_function)), operands);
  }
  llvm::BasicBlock* Block(const char* name) { return llvm::BasicBlock::Create(ctx_, name, fn_); }
  llvm::BasicBlock* Block(const std::string& name) { return Block(name.c_str()); }
  llvm::Value* At(llvm::Value* base, int64_t offset) {
    return b_.CreateConstInBoundsGEP1_64(i8_, base, static_cast<uint64_t>(offset));
  }
  llvm::MDNode* Unlikely() { return llvm::MDBuilder(ctx_).createBranchWeights(1, 1000); }
  // libc's memchr, resolved from the process like every symbol the JIT's code names.
  llvm::FunctionCallee Memchr() {
    return module_.getOrInsertFunction("memchr",
                                       llvm::FunctionType::get(ptr_, {ptr_, i32_, i64_}, false));
  }
  llvm::Value* ArgumentObject(size_t i) {
    return b_.CreateLoad(ptr_, At(args_, static_cast<int64_t>(sizeof(void*) * i)), "obj");
  }
  llvm::Value* TypeOf(llvm::Value* obj) {
    return b_.CreateLoad(ptr_, At(obj, model_.type_offset), "type");
  }
  void RelaxedStore(llvm::Value* value, llvm::Value* where) {
    llvm::StoreInst* store = b_.CreateStore(value, where);
    store->setAtomic(llvm::AtomicOrdering::Monotonic);
    store->setAlignment(llvm::Align(8));
  }

  // ---- the Anys, as SSA values ----
  // Each argument's Any is kept as SSA values (a type index and a 64-bit payload) while the
  // arguments are converted, and stored into the array only after the last host call, right
  // before the inlined thunk reads it: no call in between may touch the array, so the optimizer
  // forwards the stores into the thunk's loads, folds its type checks and drops its fallback.

  // Argument i's Any when the current block branches on to the next argument.
  void SetAnyValue(size_t i, llvm::Value* type_index, llvm::Value* value) {
    llvm::Value* payload = value->getType()->isPointerTy()  ? b_.CreatePtrToInt(value, i64_)
                           : value->getType()->isDoubleTy() ? b_.CreateBitCast(value, i64_)
                                                            : value;
    pending_[i].push_back({b_.GetInsertBlock(), type_index, payload});
  }
  void SetAny(size_t i, int32_t type_index, llvm::Value* value) {
    SetAnyValue(i, b_.getInt32(static_cast<uint32_t>(type_index)), value);
  }
  // At the head of the block the pending Anys' branches meet: their values, merged.
  void MergePending();

  // ---- the parts ----
  // The stack arrays, and the check that the host passed exactly the arguments and no keywords.
  void EmitPrologue();

  // Argument i's check and conversion, in its own block; "" or why it has no inline form.
  std::string EmitArgument(size_t i);

  // An exact int at argument i, already type-checked: its value into the Any, or the generic path
  // when it does not fit int64 (the host error that says so is cleared).
  void EmitInt(size_t i, llvm::Value* obj, llvm::BasicBlock* done);

  void EmitFloat(size_t i, llvm::Value* obj);

  void EmitBool(size_t i, llvm::Value* obj);

  void EmitPointer(size_t i, llvm::Value* obj);

  // Always as a borrowed C string: at a `str` parameter the generic path's small-string form
  // reaches the native as the same bytes.
  void EmitStr(size_t i, llvm::Value* obj);

  // Whether `length` bytes at the 8-aligned `data` (a NUL after them) hold a NUL: a word at a
  // time, the classic has-a-zero-byte test; the last word's bytes past the end are set first.
  // Aligned words that hold a byte of the string never cross a page, so no read can fault.
  void EmitNulScan(llvm::Value* data, llvm::Value* length, llvm::BasicBlock* none,
                   llvm::BasicBlock* found);

  // The host's Device or DataType object: its value read from the object.
  void EmitValueType(size_t i, llvm::Value* obj, bool device);

  llvm::Value* SlotAt(size_t t);
  void ReleaseTensors(size_t count);

  // The tensors, borrowed once every other argument has passed; a miss releases those before it.
  void EmitTensors();

  // The Anys stored, the thunk called, the host's lock and holder bookkeeping around it, then the
  // result: Int, Float, None and Bool boxed here, anything else by the host.
  void EmitCallAndResult();
  void RunHeldWork();

  llvm::Value* NewReference(llvm::Value* obj);

  // The generic path, as a tail call: the host sees its own arguments and this frame is gone.
  void EmitFallback();

  const CallPlan& plan_;
  const void* function_;
  const FFIJITHostModel& model_;
  const int flags_;
  llvm::Function* thunk_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type* i8_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::Type* f64_;
  llvm::Type* ptr_;
  const size_t num_args_;

  llvm::FunctionType* entry_type_ = nullptr;
  llvm::Function* fn_ = nullptr;
  llvm::Argument* self_ = nullptr;
  llvm::Argument* args_ = nullptr;
  llvm::Argument* nargs_ = nullptr;
  llvm::Argument* kwnames_ = nullptr;
  llvm::MDNode* likely_ = nullptr;
  bool little_endian_ = true;
  llvm::Value* anys_ = nullptr;
  llvm::Value* result_ = nullptr;
  llvm::Value* host_any_ = nullptr;
  llvm::Value* slots_ = nullptr;
  std::vector<size_t> tensor_args_;      // the arguments borrowed as tensors, in order
  llvm::BasicBlock* generic_ = nullptr;  // the host's fallback
  llvm::BasicBlock* next_ = nullptr;     // where the next part starts
  std::vector<std::vector<AnyIncoming>> pending_;
  std::vector<std::pair<llvm::Value*, llvm::Value*>> any_values_;
};

}  // namespace ffijit::orc

#endif  // FFIJIT_JIT_ORC_CODEGEN_HOST_ENTRY_EMITTER_H_
