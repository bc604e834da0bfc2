/* The C ABI from strict C99: values, errors, functions and the registry; nonzero exit on failure.
 */
#include <stdio.h>
#include <string.h>

#include "ffijit/c_api.h"
#include "ffijit/c_ext.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* The raised error's kind and message, compared then released. */
static int RaisedErrorIs(const char* kind, const char* message_part) {
  TVMFFIObjectHandle error = NULL;
  const TVMFFIErrorCell* cell;
  int matches;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) return 0;
  cell = (const TVMFFIErrorCell*)((const TVMFFIObject*)error + 1);
  matches = cell->kind.size == strlen(kind) &&
            memcmp(cell->kind.data, kind, cell->kind.size) == 0 &&
            strstr(cell->message.data, message_part) != NULL;
  if (!matches)
    fprintf(stderr, "raised: %.*s: %s\n", (int)cell->kind.size, cell->kind.data,
            cell->message.data);
  TVMFFIObjectDecRef(error);
  return matches;
}

static int deleted = 0;
static void DeleteCounter(void* self) {
  deleted += *(int*)self;
}

/* Sums its Int arguments; anything else is a TypeError. */
static int SumInts(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  int64_t sum = 0;
  int32_t i;
  (void)self;
  for (i = 0; i < num_args; ++i) {
    if (args[i].type_index != kTVMFFIInt) {
      TVMFFIErrorSetRaisedFromCStr("TypeError", "sum_ints takes integers");
      return -1;
    }
    sum += args[i].v_int64;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = sum;
  return 0;
}

static void TestStrings(void) {
  TVMFFIByteArray small = {"seven77", 7};
  TVMFFIByteArray large = {"eight888", 8};
  TVMFFIAny out;
  CHECK(TVMFFIStringFromByteArray(&small, &out) == 0);
  CHECK(out.type_index == kTVMFFISmallStr && out.small_str_len == 7);
  CHECK(memcmp(out.v_bytes, "seven77", 7) == 0);
  CHECK(TVMFFIStringFromByteArray(&large, &out) == 0);
  CHECK(out.type_index == kTVMFFIStr);
  {
    const FFIJITBytesCell* cell = (const FFIJITBytesCell*)(out.v_obj + 1);
    CHECK(cell->size == 8 && strcmp(cell->data, "eight888") == 0);
  }
  CHECK(TVMFFIObjectDecRef(out.v_obj) == 0);
  CHECK(TVMFFIStringFromByteArray(NULL, &out) == -1);
  CHECK(RaisedErrorIs("ValueError", "input"));
}

static void TestErrors(void) {
  TVMFFIByteArray kind = {"KeyError", 8};
  TVMFFIByteArray message = {"no such key", 11};
  TVMFFIByteArray traceback = {"tb", 2};
  TVMFFIObjectHandle error = TVMFFIErrorCreate(&kind, &message, &traceback);
  TVMFFIObjectHandle taken = NULL;
  CHECK(error != NULL);
  TVMFFIErrorSetRaised(error);
  TVMFFIObjectDecRef(error); /* the raised slot holds its own reference */
  TVMFFIErrorMoveFromRaised(&taken);
  CHECK(taken == error);
  CHECK(((TVMFFIObject*)taken)->type_index == kTVMFFIError);
  TVMFFIObjectDecRef(taken);
  TVMFFIErrorMoveFromRaised(&taken);
  CHECK(taken == NULL); /* nothing raised any more */
}

static void TestFunctionsAndRegistry(void) {
  static int weight = 1;
  TVMFFIObjectHandle func = NULL, found = NULL;
  TVMFFIByteArray name = {"c_api_test.sum", 14};
  TVMFFIByteArray missing = {"c_api_test.missing", 18};
  TVMFFIAny args[3];
  TVMFFIAny result;
  int i;
  CHECK(TVMFFIFunctionCreate(&weight, SumInts, DeleteCounter, &func) == 0);
  CHECK(TVMFFIFunctionSetGlobal(&name, func, 0) == 0);
  CHECK(TVMFFIFunctionSetGlobal(&name, func, 0) == -1);
  CHECK(RaisedErrorIs("KeyError", "c_api_test.sum"));
  CHECK(TVMFFIObjectDecRef(func) == 0);
  CHECK(deleted == 0); /* the registry still holds it */

  CHECK(TVMFFIFunctionGetGlobal(&name, &found) == 0);
  CHECK(found == func);
  for (i = 0; i < 3; ++i) {
    memset(&args[i], 0, sizeof(args[i]));
    args[i].type_index = kTVMFFIInt;
    args[i].v_int64 = 10 * (i + 1);
  }
  memset(&result, 0, sizeof(result));
  result.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(found, args, 3, &result) == 0);
  CHECK(result.type_index == kTVMFFIInt && result.v_int64 == 60);
  CHECK(TVMFFIFunctionCall(found, args, -1, &result) == -1);
  CHECK(RaisedErrorIs("ValueError", "num_args"));
  CHECK(TVMFFIFunctionCall(NULL, args, 3, &result) == -1);
  CHECK(RaisedErrorIs("ValueError", "func"));
  args[1].type_index = kTVMFFIFloat;
  CHECK(TVMFFIFunctionCall(found, args, 3, &result) == -1);
  CHECK(RaisedErrorIs("TypeError", "sum_ints takes integers"));
  CHECK(TVMFFIObjectDecRef(found) == 0);

  CHECK(TVMFFIFunctionGetGlobal(&missing, &found) == 0);
  CHECK(found == NULL);
  CHECK(FFIJITFunctionRemoveGlobal(&name) == 0);
  CHECK(deleted == 1); /* the last reference went with the registry entry */
  CHECK(FFIJITFunctionRemoveGlobal(&name) == -1);
  CHECK(RaisedErrorIs("KeyError", "c_api_test.sum"));
}

static void TestContainersAndTypes(void) {
  TVMFFIAny items[2];
  TVMFFIObjectHandle array = NULL, map = NULL;
  const TVMFFIAny* value = NULL;
  TVMFFIAny key;
  DLDataType dtype;
  DLDevice device;
  TVMFFIByteArray text = {"int8x4", 6};
  TVMFFIByteArray bad = {"float", 5};
  TVMFFIByteArray cuda = {"cuda:1", 6};
  memset(items, 0, sizeof(items));
  items[0].type_index = kTVMFFIInt;
  items[0].v_int64 = 7;
  items[1].type_index = kTVMFFIRawStr;
  items[1].v_c_str = "name";
  CHECK(FFIJITArrayCreate(items, 2, &array) == 0);
  {
    const FFIJITArrayCell* cell = (const FFIJITArrayCell*)((TVMFFIObject*)array + 1);
    CHECK(cell->size == 2 && cell->data[0].v_int64 == 7);
    CHECK(cell->data[1].type_index == kTVMFFISmallStr); /* owned: RawStr became a String */
  }
  CHECK(FFIJITMapCreate(&items[1], &items[0], 1, &map) == 0);
  memset(&key, 0, sizeof(key));
  key.type_index = kTVMFFISmallStr;
  key.small_str_len = 4;
  memcpy(key.v_bytes, "name", 4);
  CHECK(FFIJITMapGet(map, &key, &value) == 0);
  CHECK(value != NULL && value->v_int64 == 7);
  CHECK(FFIJITMapGet(array, &key, &value) == -1);
  CHECK(RaisedErrorIs("TypeError", "ffi.Map"));
  TVMFFIObjectDecRef(map);
  TVMFFIObjectDecRef(array);

  CHECK(TVMFFIDataTypeFromString(&text, &dtype) == 0);
  CHECK(dtype.code == kDLInt && dtype.bits == 8 && dtype.lanes == 4);
  CHECK(TVMFFIDataTypeFromString(&bad, &dtype) == -1);
  CHECK(RaisedErrorIs("ValueError", "\"float\""));
  CHECK(FFIJITDeviceFromString(&cuda, &device) == 0);
  CHECK(device.device_type == kDLCUDA && device.device_id == 1);
  CHECK(FFIJITObjectIsInstance(kTVMFFIArray, kTVMFFIObject) == 1);
}

int main(void) {
  TestStrings();
  TestErrors();
  TestFunctionsAndRegistry();
  TestContainersAndTypes();
  if (failures) {
    fprintf(stderr, "c_api_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
