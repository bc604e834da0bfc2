/* The C ABI from strict C99: values, errors, functions and the registry; nonzero exit on failure.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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
  TVMFFIObjectHandle taken = NULL;
#if FFIJIT_TVM_FFI_HAS_ERROR_CAUSE_CHAIN
  TVMFFIObjectHandle error = NULL;
  CHECK(TVMFFIErrorCreate(&kind, &message, &traceback, &error) == 0);
#else
  TVMFFIObjectHandle error = TVMFFIErrorCreate(&kind, &message, &traceback);
#endif
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
  CHECK(RaisedErrorIs("RuntimeError", "Global Function `c_api_test.sum` is already registered"));
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
  TVMFFIByteArray bad = {"float-3", 7};
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
  CHECK(RaisedErrorIs("ValueError", "\"float-3\""));
  CHECK(FFIJITDeviceFromString(&cuda, &device) == 0);
  CHECK(device.device_type == kDLCUDA && device.device_id == 1);
  CHECK(FFIJITObjectIsInstance(kTVMFFIArray, kTVMFFIObject) == 1);
}

/* ---- A module-like user of the type table, as TVM FFI's headers would drive it from C. ---- */
typedef struct {
  TVMFFIObject header;
  int64_t value;
} Counter;

static int32_t counter_index = -1;

static void CounterDeleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int CreateCounter(TVMFFIObjectHandle* out) {
  Counter* counter = (Counter*)calloc(1, sizeof(Counter));
  if (counter == NULL) return -1;
  counter->header.type_index = counter_index;
  FFIJITHeaderSetCounts(&counter->header, 1, 1);
  counter->header.deleter = CounterDeleter;
  *out = counter;
  return 0;
}

static int GetI64(void* field, TVMFFIAny* result) {
  memset(result, 0, sizeof(*result));
  result->type_index = kTVMFFIInt;
  result->v_int64 = *(int64_t*)field;
  return 0;
}

static int SetI64(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "value must be an int");
    return -1;
  }
  *(int64_t*)field = value->v_int64;
  return 0;
}

static TVMFFIByteArray Text(const char* text) {
  TVMFFIByteArray bytes;
  bytes.data = text;
  bytes.size = strlen(text);
  return bytes;
}

static void TestReflection(void) {
  TVMFFIByteArray base_key = Text("c.Base");
  TVMFFIByteArray counter_key = Text("c.Counter");
  TVMFFIByteArray sibling_key = Text("c.Sibling");
  TVMFFIByteArray unknown_key = Text("c.NeverRegistered");
  TVMFFIByteArray attr = Text("c.attr");
  TVMFFIByteArray make_name = Text("ffi.MakeObjectFromPackedArgs");
  TVMFFIFieldInfo field;
  TVMFFITypeMetadata metadata;
  TVMFFIAny value, args[3], result;
  TVMFFIObjectHandle make = NULL;
  const TVMFFITypeInfo* info;
  const TVMFFITypeAttrColumn* column;
  int32_t base, sibling;

  base = TVMFFITypeGetOrAllocIndex(&base_key, -1, 1, 2, 1, kTVMFFIObject);
  CHECK(base >= kTVMFFIDynObjectBegin);
  counter_index = TVMFFITypeGetOrAllocIndex(&counter_key, -1, 2, 0, 1, base);
  sibling = TVMFFITypeGetOrAllocIndex(&sibling_key, -1, 2, 0, 1, base);
  CHECK(counter_index == base + 1 && sibling == base + 2); /* the child slots */
  CHECK(FFIJITObjectIsInstance(counter_index, base) == 1);
  CHECK(FFIJITObjectIsInstance(counter_index, sibling) == 0);
  CHECK(FFIJITObjectIsInstance(base, counter_index) == 0);

  memset(&field, 0, sizeof(field));
  field.name = Text("value");
  field.flags = kTVMFFIFieldFlagBitMaskWritable | kTVMFFIFieldFlagBitMaskHasDefault;
  field.size = 8;
  field.alignment = 8;
  field.offset = (int64_t)offsetof(Counter, value);
  field.getter = GetI64;
  field.setter = SetI64;
  field.FFIJIT_FIELD_DEFAULT.type_index = kTVMFFIInt;
  field.FFIJIT_FIELD_DEFAULT.v_int64 = 41;
  field.field_static_type_index = kTVMFFIInt;
  CHECK(TVMFFITypeRegisterField(counter_index, &field) == 0);
  memset(&metadata, 0, sizeof(metadata));
  metadata.creator = CreateCounter;
  metadata.total_size = (int32_t)sizeof(Counter);
  CHECK(TVMFFITypeRegisterMetadata(counter_index, &metadata) == 0);
  CHECK(TVMFFITypeRegisterMetadata(counter_index, &metadata) == -1);
  CHECK(RaisedErrorIs("RuntimeError", "Overriding c.Counter"));

  info = TVMFFIGetTypeInfo(counter_index);
  CHECK(info->type_index == counter_index && info->type_depth == 2);
  CHECK(info->type_key.size == 9 && strcmp(info->type_key.data, "c.Counter") == 0);
  CHECK(info->FFIJIT_TYPE_ANCESTORS[0]->type_index == kTVMFFIObject);
  CHECK(info->FFIJIT_TYPE_ANCESTORS[1]->type_index == base);
  CHECK(info->num_fields == 1 && strcmp(info->fields[0].name.data, "value") == 0);
  CHECK(info->metadata != NULL && info->metadata->creator == CreateCounter);
  CHECK(TVMFFIGetTypeInfo(4444)->type_index == -1); /* placeholder, not a crash */

  memset(&value, 0, sizeof(value));
  value.type_index = kTVMFFIBool;
  value.v_int64 = 1;
  CHECK(TVMFFITypeRegisterAttr(counter_index, &attr, &value) == 0);
  CHECK(TVMFFITypeRegisterAttr(counter_index, &attr, &value) == -1);
  CHECK(RaisedErrorIs("RuntimeError", "already set for type `c.Counter`"));
  column = TVMFFIGetTypeAttrColumn(&attr);
  CHECK(column != NULL && (int64_t)column->size == (int64_t)counter_index + 1);
  /* Read the way the revision's header code reads it (v0.1.13: data[t - begin_index]). */
  CHECK(FFIJITTypeAttrColumnEntry(column, counter_index) == &column->data[counter_index]);
  CHECK(FFIJITTypeAttrColumnEntry(column, counter_index)->type_index == kTVMFFIBool);
  CHECK(FFIJITTypeAttrColumnEntry(column, counter_index + 1) == NULL);
  CHECK(FFIJITTypeAttrColumnEntry(column, -1) == NULL);
  CHECK(TVMFFITypeRegisterField(9999, &field) == -1);
  CHECK(RaisedErrorIs("InternalError", "9999"));
  if (FFIJIT_TVM_FFI_REJECTS_DUPLICATE_FIELDS) {
    CHECK(TVMFFITypeRegisterField(counter_index, &field) == -1);
    CHECK(RaisedErrorIs("ValueError", "duplicate field name `value` in type `c.Counter`"));
  } else {
    CHECK(TVMFFITypeRegisterField(counter_index, &field) == 0); /* replaces the first */
  }
  CHECK(TVMFFIGetTypeInfo(counter_index)->num_fields == 1);
  field.name.data = NULL;
  CHECK(TVMFFITypeRegisterField(counter_index, &field) == -1);
  CHECK(RaisedErrorIs("ValueError", "NULL data"));

  /* Parent index -2: a query at v0.1.13 (-2 for an unknown key, nothing registered). */
  CHECK(TVMFFITypeGetOrAllocIndex(&counter_key, -1, 2, 0, 1, -2) == counter_index);
  if (FFIJIT_TVM_FFI_HAS_TYPE_INDEX_QUERY) {
    int32_t out = -7;
    CHECK(TVMFFITypeGetOrAllocIndex(&unknown_key, -1, 1, 0, 1, -2) == -2);
    CHECK(TVMFFITypeKeyToIndex(&unknown_key, &out) == -1 && out == -7);
    CHECK(RaisedErrorIs("InternalError", "c.NeverRegistered"));
  } else {
    CHECK(TVMFFITypeGetOrAllocIndex(&unknown_key, -1, 1, 0, 1, -2) == -1);
    CHECK(RaisedErrorIs("ValueError", "negative parent index"));
  }

  CHECK(TVMFFIFunctionGetGlobal(&make_name, &make) == 0 && make != NULL);
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIInt;
  args[0].v_int64 = counter_index;
  memset(&result, 0, sizeof(result));
  CHECK(TVMFFIFunctionCall(make, args, 1, &result) == 0);
  CHECK(result.type_index == counter_index && ((Counter*)result.v_obj)->value == 41);
  TVMFFIObjectDecRef(result.v_obj);
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = "value";
  args[2].type_index = kTVMFFIInt;
  args[2].v_int64 = 5;
  memset(&result, 0, sizeof(result));
  CHECK(TVMFFIFunctionCall(make, args, 3, &result) == 0);
  CHECK(result.type_index == counter_index && ((Counter*)result.v_obj)->value == 5);
  TVMFFIObjectDecRef(result.v_obj);
  TVMFFIObjectDecRef(make);
}

int main(void) {
  TestStrings();
  TestErrors();
  TestFunctionsAndRegistry();
  TestContainersAndTypes();
  TestReflection();
  if (failures) {
    fprintf(stderr, "c_api_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
