#pragma once
// Running one case of a PyTorch layer fixture (tests/fixtures/README.md) against a tensorgrad layer: the
// case by name, its masks, the loss (output·R).sum(), and the check of every parameter's gradient.
#include <string>

#include "nn/fixture.h"
#include "nn/layer.h"

namespace tg::test {

/// The case called `name` in a layer fixture; FAILs (and returns null json) when there is none.
inline nlohmann::json find_case(const nlohmann::json& fixture, const std::string& name) {
  for (const nlohmann::json& c : fixture.at("cases"))
    if (c.at("name") == name) return c;
  FAIL("no case " << name << " in the fixture");
  return {};
}

/// inputs[key] as a mask: bool when its data are true/false, else float of `dtype`; undefined when absent.
inline Tensor fixture_mask(const nlohmann::json& c, const std::string& key, DType dtype) {
  if (!c.at("inputs").contains(key)) return {};
  const nlohmann::json& t = c["inputs"][key];
  return fixture_tensor(t, t.at("data").at(0).is_boolean() ? DType::boolean : dtype);
}

/// loss = (output·R).sum() with the case's R, then backward.
inline void backward_with_R(const Variable& output, const nlohmann::json& c, DType dtype) {
  sum(output * Variable(fixture_tensor(c.at("R"), dtype))).backward();
}

/// CHECKs every parameter gradient of `layer` against the case's param_grads (the same names, none missing).
inline void check_param_grads(const nn::Layer& layer, const nlohmann::json& c, DType dtype) {
  const nlohmann::json& want = c.at("param_grads");
  const auto params = layer.named_parameters();
  CHECK(params.size() == want.size());
  for (const auto& entry : params) {  // doctest's messages can't take a structured binding (clang 14)
    const std::string& name = entry.first;
    const Variable& p = entry.second;
    REQUIRE_MESSAGE(want.contains(name), "no PyTorch gradient for " << name);
    REQUIRE_MESSAGE(p.grad().defined(), "no gradient reached " << name);
    check_close(p.grad(), fixture_tensor(want[name], dtype), fixture_tolerance(dtype), "grad of " + name);
  }
}

}  // namespace tg::test
