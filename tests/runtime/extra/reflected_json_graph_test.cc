// JSON-graph serialization of reflected object types (registered through the C API in
// reflected_types.h): fields become node indices or inline values by their static type, custom
// __data_to_json__/__data_from_json__ attributes replace the field walk, deserialization uses the
// creator, the setters and the defaults, and every way a graph can be wrong is a clear error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ffijit/ffijit.h"
#include "runtime/reflected_types.h"
#include "runtime/tvm_header_style.h"

namespace ffijit {
namespace {

using reflected_test::MakeSlotObj;
using reflected_test::RegisterSlotType;

TVMFFIAny FloatDefault() {
  TVMFFIAny value{};
  value.type_index = kTVMFFIFloat;
  value.v_float64 = 0.5;
  return value;
}

struct Types {
  int32_t var, func, scaled, custom, no_creator, no_meta;
  Types() {
    static const TVMFFIAny kScaleDefault = FloatDefault();
    var = RegisterSlotType("rj.Var", kTVMFFISEqHashKindFreeVar,
                           {{"name", kTVMFFIFieldFlagBitMaskSEqHashIgnore}});
    func = RegisterSlotType("rj.Func", kTVMFFISEqHashKindTreeNode,
                            {{"params", kTVMFFIFieldFlagBitMaskSEqHashDef},
                             {"body"},
                             {"comment", kTVMFFIFieldFlagBitMaskSEqHashIgnore}});
    scaled = RegisterSlotType("rj.Scaled", kTVMFFISEqHashKindTreeNode,
                              {{"count", 0, kTVMFFIInt},
                               {"scale", 0, kTVMFFIFloat, &kScaleDefault},
                               {"flag", 0, kTVMFFIBool}});
    custom = RegisterSlotType("rj.Custom", kTVMFFISEqHashKindTreeNode, {{"value", 0, kTVMFFIInt}});
    no_creator = RegisterSlotType("rj.NoCreator", kTVMFFISEqHashKindTreeNode, {{"v"}},
                                  kTVMFFIObject, /*with_creator=*/false);
    no_meta = RegisterSlotType("rj.NoMeta", -1, {{"v"}});
    // rj.Custom is written as {"v": value} and read back through its own function.
    int32_t custom_index = custom;
    reflected_test::SetTypeAttr(
        custom, "__data_to_json__",
        Any(Function::FromPacked([](const AnyView* args, int32_t, Any* result) {
          const auto* self = reinterpret_cast<const reflected_test::SlotObj*>(args[0].raw().v_obj);
          *result = Map{{"v", AnyView(self->slots[0]).ToOwned()}};
        })));
    reflected_test::SetTypeAttr(
        custom, "__data_from_json__",
        Any(Function::FromPacked([custom_index](const AnyView* args, int32_t, Any* result) {
          *result = MakeSlotObj(custom_index, {args[0].cast<Map>().at(Any("v")).ToOwned()});
        })));
  }
};

const Types& T() {
  static const Types types;
  return types;
}

std::string ToText(const Any& value) {
  return GetGlobalFunctionOrThrow("ffi.ToJSONGraphString")(value).cast<std::string>();
}
Any FromText(const std::string& text) {
  return GetGlobalFunctionOrThrow("ffi.FromJSONGraphString")(text);
}
tvm::ffi::Any Hold(const Any& value) {
  TVMFFIAny owned{};
  TVMFFIAnyViewToOwnedAny(&value.raw(), &owned);
  return tvm::ffi::Any(owned);
}
bool Equal(const Any& a, const Any& b, bool map_free_vars) {
  return tvm::ffi::StructuralEqual::Equal(Hold(a), Hold(b), map_free_vars, false);
}

TEST(ReflectedJsonGraph, ObjectsWriteTheirFieldsAsNodesAfterTheirValues) {
  Any x = MakeSlotObj(T().var, {Any("x")});
  Any fa = MakeSlotObj(T().func, {Any(Array{x}), Any(Array{x, x}), Any("comment a")});
  const std::string text = ToText(fa);
  EXPECT_EQ(text, R"({"root_index":5,"nodes":[{"type":"ffi.String","data":"x"},)"
                  R"({"type":"rj.Var","data":{"name":0}},{"type":"ffi.Array","data":[1]},)"
                  R"({"type":"ffi.Array","data":[1,1]},{"type":"ffi.String","data":"comment a"},)"
                  R"({"type":"rj.Func","data":{"params":2,"body":3,"comment":4}}]})");
  Any back = FromText(text);
  EXPECT_EQ(back.type_index(), T().func);
  EXPECT_TRUE(Equal(back, fa, /*map_free_vars=*/true));
  // The shared variable decodes once: params[0] and both body items are one object.
  const auto* obj = reinterpret_cast<const reflected_test::SlotObj*>(back.raw().v_obj);
  Array params = AnyView(obj->slots[0]).cast<Array>(), body = AnyView(obj->slots[1]).cast<Array>();
  EXPECT_EQ(params[0].raw().v_obj, body[0].raw().v_obj);
  EXPECT_EQ(body[0].raw().v_obj, body[1].raw().v_obj);
  EXPECT_EQ(AnyView(obj->slots[2]).cast<std::string>(), "comment a");
  // Empty arrays are distinct objects, so distinct nodes (Array{} is a null reference, so they
  // are made from an empty vector); None is a node too.
  EXPECT_EQ(ToText(MakeSlotObj(
                T().func, {Any(Array(std::vector<Any>{})), Any(Array(std::vector<Any>{})), Any()})),
            R"({"root_index":3,"nodes":[{"type":"ffi.Array","data":[]},)"
            R"({"type":"ffi.Array","data":[]},{"type":"None"},)"
            R"({"type":"rj.Func","data":{"params":0,"body":1,"comment":2}}]})");
}

TEST(ReflectedJsonGraph, PodFieldsAreInlineAndAbsentFieldsTakeTheirDefaults) {
  Any s = MakeSlotObj(T().scaled, {Any(int64_t{3}), Any(2.5), Any(true)});
  EXPECT_EQ(ToText(s), R"({"root_index":0,"nodes":[{"type":"rj.Scaled",)"
                       R"("data":{"count":3,"scale":2.5,"flag":true}}]})");
  Any back = FromText(R"({"root_index":0,"nodes":[{"type":"rj.Scaled",)"
                      R"("data":{"count":7,"flag":false}}]})");
  const auto* obj = reinterpret_cast<const reflected_test::SlotObj*>(back.raw().v_obj);
  EXPECT_EQ(AnyView(obj->slots[0]).cast<int64_t>(), 7);
  EXPECT_EQ(AnyView(obj->slots[1]).cast<double>(), 0.5);  // the default
  EXPECT_EQ(obj->slots[2].type_index, kTVMFFIBool);
  // An integer is accepted for a float field.
  Any whole = FromText(R"({"root_index":0,"nodes":[{"type":"rj.Scaled",)"
                       R"("data":{"count":1,"scale":2,"flag":true}}]})");
  EXPECT_EQ(AnyView(reinterpret_cast<const reflected_test::SlotObj*>(whole.raw().v_obj)->slots[1])
                .cast<double>(),
            2.0);
}

TEST(ReflectedJsonGraph, CustomToAndFromJsonReplaceTheFields) {
  Any c = MakeSlotObj(T().custom, {Any(int64_t{42})});
  const std::string text = ToText(c);
  EXPECT_EQ(text, R"({"root_index":0,"nodes":[{"type":"rj.Custom","data":{"v":42}}]})");
  Any back = FromText(text);
  EXPECT_EQ(back.type_index(), T().custom);
  EXPECT_TRUE(Equal(back, c, false));
  // The C++ entry points (mangled names, as header code calls them) agree.
  tvm::ffi::Any none;
  tvm::ffi::Any graph = tvm::ffi::ToJSONGraph(Hold(c), none);
  tvm::ffi::Any decoded = tvm::ffi::FromJSONGraph(graph);
  EXPECT_EQ(decoded.data_.type_index, T().custom);
}

TEST(ReflectedJsonGraph, BadObjectsAndGraphsAreClearErrors) {
  T();  // the types are registered on first use; ctest runs each case in a process of its own
  struct Case {
    std::string graph;
    const char* kind;
    const char* text;
  };
  const std::string scaled = R"({"root_index":0,"nodes":[{"type":"rj.Scaled","data":)";
  const Case cases[] = {
      {R"({"root_index":0,"nodes":[{"type":"rj.Nope","data":{}}]})", "ValueError",
       "`rj.Nope`, which is not registered"},
      {R"({"root_index":0,"nodes":[{"type":"rj.NoCreator","data":{"v":0}}]})", "RuntimeError",
       "`rj.NoCreator` does not support default construction"},
      {scaled + R"({"flag":true}}]})", "TypeError", "Required field `count` not set"},
      {scaled + R"({"count":"three","flag":true}}]})", "ValueError", "field `count`"},
      {scaled + R"([1,2]}]})", "ValueError", "must be an object"},
      {R"({"root_index":1,"nodes":[{"type":"int","data":1},)"
       R"({"type":"rj.Func","data":{"params":9,"body":0,"comment":0}}]})",
       "ValueError", "node index 9 out of range"},
      {R"({"root_index":0,"nodes":[{"type":"rj.Func","data":{"params":0,"body":0,"comment":0}}]})",
       "ValueError", "refers to itself"},
      {R"({"root_index":0,"nodes":[{"type":"rj.Func","data":{"params":0.5,"body":0}}]})",
       "ValueError", "field `params`"},
      {R"({"root_index":0,"nodes":[{"type":"int","data":1},)"
       R"({"type":"rj.Func","data":{"params":0,"body":0,"comment":0}}]})",
       "", ""},  // valid graph (root is the int): no error
  };
  for (const Case& c : cases) {
    try {
      FromText(c.graph);
      EXPECT_EQ(std::string(c.kind), "") << "no error for " << c.graph;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind) << e.message();
      EXPECT_NE(e.message().find(c.text), std::string::npos) << e.message();
    }
  }
  // Serializing a type without metadata.
  try {
    ToText(Any(Array{MakeSlotObj(T().no_meta, {Any(int64_t{1})})}));
    ADD_FAILURE() << "rj.NoMeta was serialized";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(e.message().find("Type metadata is not set for type `rj.NoMeta`"), std::string::npos)
        << e.message();
  }
}

}  // namespace
}  // namespace ffijit
