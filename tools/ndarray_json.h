// CPU tensors from and to JSON nested lists, for `ffijit call` arguments and results.
#ifndef FFIJIT_TOOLS_NDARRAY_JSON_H_
#define FFIJIT_TOOLS_NDARRAY_JSON_H_

#include <nlohmann/json.hpp>

#include "ffijit/tensor.h"

namespace ffijit::tool {

// The tensor of {"ndarray": <nested lists or a scalar>, "dtype": <name>}. The shape is the
// nesting (a scalar is rank 0); dtype names are the signature model's (i1 or bool, i8..i64,
// u8..u64, f16, bf16, f32, f64) or DLPack's ("float32", "int64", ...); without "dtype" it is i1
// for all-bool data, i64 for all-integer data and f64 otherwise. Throws ffijit::Error
// ("ValueError") for ragged lists, non-numeric elements, values that do not fit the dtype, an
// unknown dtype or unknown keys.
Tensor JsonToTensor(const nlohmann::ordered_json& spec);

// {"ndarray": <nested lists>, "dtype": <name>, "shape": [...]}, plus "device" for a tensor that
// is not on the CPU (its data is then not read: "ndarray" is null), and "ndarray": null for an
// element type JSON cannot show (dtype then printed the DLPack way, e.g. "float8_e4m3fnx4").
nlohmann::ordered_json TensorToJson(const Tensor& tensor);

}  // namespace ffijit::tool

#endif  // FFIJIT_TOOLS_NDARRAY_JSON_H_
