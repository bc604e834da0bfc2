/* A tour of ffijit's C API: strings, an error, a packed function, the global registry. */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"

/* Prints the raised error and returns 1 (for `return Fail("...")`). */
static int Fail(const char* what) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error != NULL) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const TVMFFIObject*)error + 1);
    fprintf(stderr, "%s failed: %.*s: %.*s\n", what, (int)cell->kind.size, cell->kind.data,
            (int)cell->message.size, cell->message.data);
    TVMFFIObjectDecRef(error);
  } else {
    fprintf(stderr, "%s failed\n", what);
  }
  return 1;
}

/* A packed function in plain C: multiplies an Int by the factor its handle points at. */
static int Scale(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  int64_t factor = *(const int64_t*)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "scale(x: int) takes exactly one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 * factor;
  return 0;
}

static void ReleaseFactor(void* self) {
  printf("  deleter ran for factor %lld\n", (long long)*(int64_t*)self);
}

int main(void) {
  static int64_t factor = 3;
  TVMFFIByteArray short_text = {"tour", 4};
  TVMFFIByteArray long_text = {"a string too long to inline", 27};
  TVMFFIByteArray name = {"tour.scale", 10};
  TVMFFIAny small, large, arg, result;
  TVMFFIObjectHandle func = NULL, found = NULL, error = NULL;

  printf("strings:\n");
  if (TVMFFIStringFromByteArray(&short_text, &small) != 0) return Fail("small string");
  if (TVMFFIStringFromByteArray(&long_text, &large) != 0) return Fail("long string");
  printf("  \"%.*s\" is inline (type index %d)\n", (int)small.small_str_len, small.v_bytes,
         small.type_index);
  printf("  \"%s\" is a heap object (type index %d)\n",
         ((const FFIJITBytesCell*)(large.v_obj + 1))->data, large.type_index);
  TVMFFIObjectDecRef(large.v_obj);

  printf("functions:\n");
  if (TVMFFIFunctionCreate(&factor, Scale, ReleaseFactor, &func) != 0) return Fail("create");
  if (TVMFFIFunctionSetGlobal(&name, func, 0) != 0) return Fail("register");
  TVMFFIObjectDecRef(func); /* the registry keeps it alive */
  if (TVMFFIFunctionGetGlobal(&name, &found) != 0 || found == NULL) return Fail("lookup");
  memset(&arg, 0, sizeof(arg));
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 14;
  result.type_index = kTVMFFINone;
  if (TVMFFIFunctionCall(found, &arg, 1, &result) != 0) return Fail("call");
  printf("  tour.scale(14) = %lld\n", (long long)result.v_int64);

  printf("errors:\n");
  arg.type_index = kTVMFFIFloat;
  arg.v_float64 = 1.5;
  if (TVMFFIFunctionCall(found, &arg, 1, &result) != -1) return Fail("expected a TypeError");
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) return Fail("no raised error");
  {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const TVMFFIObject*)error + 1);
    printf("  tour.scale(1.5) raised %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
           (int)cell->message.size, cell->message.data);
  }
  TVMFFIObjectDecRef(error);
  TVMFFIObjectDecRef(found);

  printf("cleanup:\n");
  if (FFIJITFunctionRemoveGlobal(&name) != 0) return Fail("remove");
  printf("tour done\n");
  return 0;
}
