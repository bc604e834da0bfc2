// FFIJITGetTvmFfiAbi: which TVM FFI revision's layouts this build was made for (in the add-on
// build, the revision of the TVM FFI it runs over).
#include "ffijit/c_ext.h"

namespace {

#define FFIJIT_FUNCTION_NAME(name) #name,
const char* const kFunctionNames[] = {FFIJIT_TVM_FFI_C_API_FUNCTIONS(FFIJIT_FUNCTION_NAME)};
#undef FFIJIT_FUNCTION_NAME

static_assert(sizeof(kFunctionNames) / sizeof(kFunctionNames[0]) ==
                  FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS,
              "the function list and its count disagree");

const FFIJITTvmFfiAbi kAbi = {FFIJIT_TVM_FFI_ABI_NAME,
                              FFIJIT_TVM_FFI_ABI_COMMIT,
                              FFIJIT_TVM_FFI_ABI_VERSION_TEXT,
                              static_cast<int32_t>(sizeof(TVMFFIObject)),
                              static_cast<int32_t>(sizeof(TVMFFIErrorCell)),
                              static_cast<int32_t>(sizeof(TVMFFITypeInfo)),
                              FFIJIT_TVM_FFI_NUM_C_API_FUNCTIONS,
                              kFunctionNames};

}  // namespace

extern "C" const FFIJITTvmFfiAbi* FFIJITGetTvmFfiAbi(void) {
  return &kAbi;
}
