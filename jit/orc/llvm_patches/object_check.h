// Validation of ELF relocatable objects before LLVM's JITLink links them.
//
// Workaround for JITLink of LLVM 19 and 22 (both compiled: jit/CMakeLists.txt's
// FFIJIT_LLVM_PATCHES). Trigger: a malformed or crafted ELF relocatable object given to
// a JIT module (JitModule::AddObject, `ffi.Module.load_from_file.o`). Symptom: JITLink trusts what
// it reads (section addresses, relocation records, .eh_frame records, symbol extents) and crashes
// the process, or reads and writes outside a block. CheckObject refuses each such object first
// with a ValueError that names the file and what is wrong. A check can go when JITLink rejects
// that input with an error of its own: each check in object_check.cc names what JITLink does, and
// tests/fuzz's fuzz_object (docs/fuzzing.md) replays the inputs that found them. Still needed on
// LLVM 22, measured: with CheckObject off, the object-check suites of tests/jit/orc crash
// (SEGFAULT in ObjectCheckTest.RefusesASectionThatReachesTheTopOfTheAddressSpace,
// ObjectModuleTest.RejectsAnEHFrameFDEWhoseCIEPointerMissesTheCIE and six more).
#ifndef FFIJIT_JIT_ORC_LLVM_PATCHES_OBJECT_CHECK_H_
#define FFIJIT_JIT_ORC_LLVM_PATCHES_OBJECT_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ffijit/error.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/TargetParser/Triple.h"

namespace ffijit {
namespace orc {

// The most zero-filled memory (.bss sections and common symbols) one object may reserve: JITLink
// allocates and clears all of it up front.
constexpr uint64_t kMaxZeroFillBytes = uint64_t{256} << 20;

// Throws ffijit::ValueError, naming `file` and the section, symbol or relocation at fault, unless
// `buffer` is a 64-bit little-endian ELF relocatable object for `host`'s architecture that
// JITLink can link without reading or writing outside what the object describes.
void CheckObject(llvm::MemoryBufferRef buffer, const std::string& file, const llvm::Triple& host);

// CheckObject's check of an .eh_frame section's contents (eh_frame_check.cc): a ValueError
// naming `file` and the record at fault.
void CheckEHFrame(llvm::StringRef contents, const std::string& file);

}  // namespace orc
}  // namespace ffijit

#endif  // FFIJIT_JIT_ORC_LLVM_PATCHES_OBJECT_CHECK_H_
