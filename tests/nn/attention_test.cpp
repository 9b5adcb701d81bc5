// MultiHeadAttention against PyTorch 1.13's nn.MultiheadAttention (tests/fixtures/nn/mha.*): outputs,
// per-head and averaged weights, and the gradients of (output·R).sum() w.r.t. the inputs and every
// parameter, in f64 (1e-10) and f32 (1e-5), for every fixture case.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/gradcheck.h"
#include "nn/attention.h"
#include "nn/init.h"
#include "nn/pytorch_case.h"

using namespace tg;
using namespace tg::nn;
using tg::test::check_close;
using tg::test::fixture_tensor;

namespace {

const char* const kCases[] = {"self_no_mask",          "self_key_padding_mask",
                              "self_causal_bool_mask", "self_float_additive_mask",
                              "self_causal_and_key_padding_mask", "cross_no_mask"};

// One fixture case in one dtype: the layer with PyTorch's weights, the case's masks and tolerance.
struct MhaCase {
  nlohmann::json file, c;
  DType dtype;
  double tol;
  MultiHeadAttention m;
  MhaCall call;

  MhaCase(const std::string& dt, const std::string& name)
      : file(test::load_fixture("nn/mha." + dt + ".json")),
        c(test::find_case(file, name)),
        dtype(test::fixture_dtype(file)),
        tol(test::fixture_tolerance(dtype)),
        m({.d_model = 8, .num_heads = 2, .dtype = dtype}) {
    m.load_state_dict(test::fixture_weights(file));
    call.key_padding_mask = test::fixture_mask(c, "key_padding_mask", dtype);
    call.attn_mask = test::fixture_mask(c, "attn_mask", dtype);
  }
  bool self() const { return c["inputs"].contains("x"); }
  Tensor input(const char* key) const { return fixture_tensor(c["inputs"][key], dtype); }
  Tensor query() const { return input(self() ? "x" : "query"); }
  Tensor kv() const { return input(self() ? "x" : "kv"); }
  void check(const Tensor& actual, const char* group, const char* key) const {
    check_close(actual, fixture_tensor(c[group][key], dtype), tol, std::string(group) + "." + key);
  }
};

// Runs `body` for every fixture case in f64 and f32.
template <class Body>
void for_each_case(Body body) {
  for (const char* dt : {"f64", "f32"}) {
    for (const char* name : kCases) {
      CAPTURE(dt);
      CAPTURE(name);
      MhaCase k(dt, name);
      body(k);
    }
  }
}

}  // namespace

TEST_CASE("MultiHeadAttention output and parameter gradients match PyTorch with one tensor as key and value") {
  for_each_case([](MhaCase& k) {
    Variable q(k.query(), true);
    Variable kv = k.self() ? q : Variable(k.kv(), true);  // the same tensor object, as PyTorch's call 1
    MhaCall call = k.call;
    call.need_weights = false;
    AttentionOutput out = k.m.forward(q, kv, kv, call);
    CHECK_FALSE(out.weights.defined());
    k.check(out.output.value(), "outputs", "output");
    test::backward_with_R(out.output, k.c, k.dtype);
    k.check(q.grad(), "input_grads", k.self() ? "x" : "query");
    if (!k.self()) k.check(kv.grad(), "input_grads", "kv");
    test::check_param_grads(k.m, k.c, k.dtype);
  });
}

TEST_CASE("MultiHeadAttention input gradients match PyTorch with distinct query, key and value") {
  for_each_case([](MhaCase& k) {
    Variable q(k.query(), true), key(k.kv(), true), value(k.kv(), true);
    test::backward_with_R(k.m.forward(q, key, value, k.call).output, k.c, k.dtype);
    k.check(q.grad(), "input_grads", "query");
    k.check(key.grad(), "input_grads", "key");
    k.check(value.grad(), "input_grads", "value");
  });
}

TEST_CASE("MultiHeadAttention per-head and averaged weights match PyTorch") {
  for_each_case([](MhaCase& k) {
    NoGradGuard no_grad;
    Variable q(k.query()), kv(k.kv());
    MhaCall call = k.call;
    call.average_attn_weights = false;
    AttentionOutput per_head = k.m.forward(q, kv, kv, call);
    AttentionOutput averaged = k.m.forward(q, kv, kv, k.call);
    CHECK(per_head.weights.shape() == Shape{2, 2, q.size(1), kv.size(1)});
    k.check(per_head.weights.value(), "outputs", "attn_weights_per_head");
    k.check(averaged.weights.value(), "outputs", "attn_weights_avg");
    k.check(averaged.output.value(), "outputs", "output");
  });
}

TEST_CASE("MultiHeadAttention is_causal is the same as the bool causal attn_mask") {
  MhaCase k("f64", "self_causal_bool_mask");
  Variable x(k.query());
  k.check(k.m.forward(x, x, x, {.is_causal = true}).output.value(), "outputs", "output");
}

TEST_CASE("MultiHeadAttention with batch_first = false takes and returns (S, B, E)") {
  MhaCase k("f64", "cross_no_mask");
  MultiHeadAttention seq_first({.d_model = 8, .num_heads = 2, .batch_first = false, .dtype = f64});
  seq_first.load_state_dict(test::fixture_weights(k.file));
  Variable q(k.query().transpose(0, 1)), kv(k.kv().transpose(0, 1));  // (3, 2, 8) and (5, 2, 8)
  AttentionOutput out = seq_first.forward(q, kv, kv, {.average_attn_weights = false});
  CHECK(out.output.shape() == Shape{3, 2, 8});
  k.check(out.output.value().transpose(0, 1), "outputs", "output");
  k.check(out.weights.value(), "outputs", "attn_weights_per_head");  // weights stay (B, H, S_q, S_k)
}

TEST_CASE("MultiHeadAttention has PyTorch's parameter names, shapes and initialisation") {
  manual_seed(0);
  MultiHeadAttention m({.d_model = 8, .num_heads = 2});
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  const TensorMap sd = m.state_dict();
  CHECK(sd.at("in_proj_weight").shape() == Shape{24, 8});
  CHECK(amax(abs(sd.at("in_proj_weight"))).item() <= std::sqrt(6.0 / 32));  // xavier, fans 8 and 24
  CHECK(amax(abs(sd.at("out_proj.weight"))).item() <= 1 / std::sqrt(8.0));  // Linear
  CHECK(amax(abs(sd.at("in_proj_bias"))).item() == 0);
  CHECK(amax(abs(sd.at("out_proj.bias"))).item() == 0);
  MultiHeadAttention no_bias({.d_model = 8, .num_heads = 2, .bias = false});
  CHECK(no_bias.named_parameters().size() == 2);
}

// The accessors are the state_dict's tensors (the same storage), and copy_ through them sets the weights: with an
// identity V block and out_proj, zero biases, and one key, the output is the value itself.
TEST_CASE("MultiHeadAttention's accessors are its named parameters, and copy_ through them sets the weights") {
  MultiHeadAttention m({.d_model = 2, .num_heads = 1, .dtype = f64});
  const TensorMap sd = m.state_dict();
  CHECK(m.in_proj_weight().value().storage() == sd.at("in_proj_weight").storage());
  CHECK(m.in_proj_bias().value().storage() == sd.at("in_proj_bias").storage());
  CHECK(m.out_proj().weight().value().storage() == sd.at("out_proj.weight").storage());
  CHECK_FALSE(m.q_proj_weight());
  m.in_proj_weight().copy_(tensor({0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}, {6, 2}, f64));  // q, k zero; v identity
  m.out_proj().weight().copy_(eye(2, f64));
  m.out_proj().bias().copy_(zeros({2}, f64));
  const Variable x(tensor({3, -4}, {1, 1, 2}, f64));
  CHECK(m.forward(x, x, x).output.value().to_vector<double>() == std::vector<double>{3, -4});
  MultiHeadAttention separate({.d_model = 4, .num_heads = 2, .kdim = 3});
  CHECK_FALSE(separate.in_proj_weight());
  CHECK(separate.k_proj_weight().shape() == Shape{4, 3});
}

// ---- beyond the fixtures: an oracle, fully masked rows, finite differences, errors ----
namespace {

// Textbook attention with one 2-D product per (batch, head): the oracle for kdim/vdim and (B·H) masks.
// q (B, S_q, E), k (B, S_k, kdim), v (B, S_k, vdim); mask (B·H, S_q, S_k) bool or undefined.
Tensor reference_attention(const MultiHeadAttention& m, const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& mask) {
  const TensorMap sd = m.state_dict();
  const int64_t E = m.options().d_model, H = m.options().num_heads, d = E / H;
  auto weight = [&](int i, const char* name) {
    return sd.count("in_proj_weight") ? sd.at("in_proj_weight").slice(0, i * E, (i + 1) * E) : sd.at(name);
  };
  auto project = [&](const Tensor& x, int i, const char* name) {
    return matmul(x, weight(i, name).mT()) + sd.at("in_proj_bias").slice(0, i * E, (i + 1) * E);
  };
  std::vector<Tensor> rows;
  for (int64_t b = 0; b < q.size(0); ++b) {
    Tensor Q = project(q.select(0, b), 0, "q_proj_weight"), K = project(k.select(0, b), 1, "k_proj_weight"),
           V = project(v.select(0, b), 2, "v_proj_weight");
    std::vector<Tensor> heads;
    for (int64_t h = 0; h < H; ++h) {
      Tensor scores = matmul(Q.narrow(1, h * d, d), K.narrow(1, h * d, d).mT()) / std::sqrt(double(d));
      if (mask.defined()) scores = masked_fill(scores, mask.select(0, b * H + h), -INFINITY);
      heads.push_back(matmul(softmax(scores, -1), V.narrow(1, h * d, d)));
    }
    rows.push_back(matmul(cat(heads, 1), sd.at("out_proj.weight").mT()) + sd.at("out_proj.bias"));
  }
  return stack(rows, 0);
}

// Every value and every gradient finite.
void check_all_finite(const AttentionOutput& out, const std::vector<Variable>& leaves) {
  CHECK(all_finite(out.output.value()));
  CHECK(all_finite(out.weights.value()));
  for (const Variable& x : leaves) {
    REQUIRE(x.grad().defined());
    CHECK(all_finite(x.grad()));
  }
}

}  // namespace

TEST_CASE("MultiHeadAttention with kdim and vdim uses q/k/v_proj_weight and matches the oracle") {
  manual_seed(1);
  MultiHeadAttention m({.d_model = 4, .num_heads = 2, .kdim = 3, .vdim = 5, .dtype = f64});
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(fmt::format("{} {}", name, p.shape()));
  CHECK(names == std::vector<std::string>{"q_proj_weight (4, 4)", "k_proj_weight (4, 3)", "v_proj_weight (4, 5)",
                                          "in_proj_bias (12,)", "out_proj.weight (4, 4)", "out_proj.bias (4,)"});
  init::normal(m.state_dict().at("in_proj_bias"));  // nonzero biases, so the oracle sees them
  Tensor q = randn({2, 3, 4}, f64), k = randn({2, 6, 3}, f64), v = randn({2, 6, 5}, f64);
  Tensor out = m.forward(Variable(q), Variable(k), Variable(v)).output.value();
  CHECK(test::max_abs_diff(out, reference_attention(m, q, k, v, {})) < 1e-12);
}

TEST_CASE("MultiHeadAttention takes a (B·H, S_q, S_k) attn_mask batch-major, one mask per head") {
  manual_seed(2);
  MultiHeadAttention m({.d_model = 4, .num_heads = 2, .dtype = f64});
  Tensor x = randn({2, 3, 4}, f64);
  Tensor mask = lt(rand({4, 3, 3}, f64), 0.4);  // (B·H, S, S); rows may be fully masked
  AttentionOutput out = m.forward(Variable(x), Variable(x), Variable(x), {.attn_mask = mask});
  CHECK(test::max_abs_diff(out.output.value(), reference_attention(m, x, x, x, mask)) < 1e-12);
}

TEST_CASE("MultiHeadAttention gives a query whose keys are all masked zero weights, no NaN, finite gradients") {
  // Batch 1 pads every key; in batch 0 the first key is padding and the causal mask leaves query 0 only it.
  const Tensor kpm = tensor({1, 0, 0, 1, 1, 1}, {2, 3}, boolean);
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    MultiHeadAttention m({.d_model = 4, .num_heads = 2, .dtype = dt});
    Variable q(randn({2, 3, 4}, dt), true), k(randn({2, 3, 4}, dt), true), v(randn({2, 3, 4}, dt), true);
    AttentionOutput out = m.forward(q, k, v, {.key_padding_mask = kpm, .is_causal = true,
                                              .average_attn_weights = false});
    sum(out.output * out.output).backward();
    std::vector<Variable> leaves = m.parameters();
    leaves.insert(leaves.end(), {q, k, v});
    check_all_finite(out, leaves);
    CHECK(amax(abs(out.weights.value().select(0, 1))).item() == 0);            // batch 1: no key at all
    CHECK(amax(abs(out.weights.value().select(0, 0).select(1, 0))).item() == 0);  // batch 0, query 0
    // Attention adds nothing there: the output is out_proj applied to zeros, its bias (zero at init).
    CHECK(amax(abs(out.output.value().select(0, 1))).item() == 0);
    CHECK(amax(abs(q.grad().select(0, 1))).item() == 0);
    CHECK(amax(abs(v.grad().select(0, 1))).item() == 0);
  }
}

TEST_CASE("MultiHeadAttention: an additive mask with an all -inf row gives zeros and finite gradients") {
  MultiHeadAttention m({.d_model = 4, .num_heads = 2});
  Tensor mask = tensor({-INFINITY, -INFINITY, -INFINITY, 0, -1, -INFINITY, 0, 0, 0}, {3, 3});
  Variable x(randn({2, 3, 4}), true);
  AttentionOutput out = m.forward(x, x, x, {.attn_mask = mask});
  sum(out.output * out.output).backward();
  std::vector<Variable> leaves = m.parameters();
  leaves.push_back(x);
  check_all_finite(out, leaves);
  CHECK(amax(abs(out.weights.value().select(1, 0))).item() == 0);  // query 0 of every batch
}

TEST_CASE("MultiHeadAttention masks are no anomaly: their -inf passes AnomalyGuard, a NaN input does not") {
  // The masks fill scores with -inf on purpose; AnomalyGuard (sentiment train --detect-anomaly) must not
  // stop there, yet still name the first op that turns a real NaN into its output.
  MultiHeadAttention m({.d_model = 4, .num_heads = 2});
  const Tensor kpm = tensor({1, 0, 0, 1, 1, 1}, {2, 3}, boolean);
  const Tensor additive = tensor({-INFINITY, -INFINITY, -INFINITY, 0, -1, -INFINITY, 0, 0, 0}, {3, 3});
  Variable x(randn({2, 3, 4}), true);
  AnomalyGuard anomaly;
  CHECK_NOTHROW(sum(m.forward(x, x, x, {.key_padding_mask = kpm, .is_causal = true}).output).backward());
  CHECK_NOTHROW(sum(m.forward(x, x, x, {.attn_mask = additive}).output).backward());
  CHECK(anomaly_mode_enabled());  // the masks' exemption ends with them
  Variable bad(tensor({NAN, 0, 0, 0}, {1, 1, 4}));
  CHECK_THROWS_WITH_AS(m.forward(bad, bad, bad), doctest::Contains("anomaly: forward of linear"), ValueError);
}

TEST_CASE("MultiHeadAttention passes f64 finite differences with a key padding mask, tiny sizes") {
  manual_seed(3);
  MultiHeadAttention m({.d_model = 4, .num_heads = 2, .dtype = f64});  // B = 2, S = 3, E = 4, H = 2
  init::normal(m.state_dict().at("in_proj_bias"), 0, 0.5);
  init::normal(m.state_dict().at("out_proj.bias"), 0, 0.5);
  std::vector<Variable> inputs;
  for (int i = 0; i < 3; ++i) inputs.emplace_back(randn({2, 3, 4}, f64), true);
  for (const Variable& p : m.parameters()) inputs.push_back(p);
  for (Tensor kpm : {tensor({0, 0, 1, 0, 0, 0}, {2, 3}, boolean), tensor({1, 1, 1, 0, 1, 0}, {2, 3}, boolean)}) {
    CAPTURE(kpm);  // the second mask leaves batch 0 without keys
    CHECK(gradcheck([&](const std::vector<Variable>& x) {
      return m.forward(x[0], x[1], x[2], {.key_padding_mask = kpm, .attn_mask = eye(3, boolean)}).output;
    }, inputs));
  }
}

TEST_CASE("MultiHeadAttention applies dropout to the weights in training only") {
  MultiHeadAttention m({.d_model = 8, .num_heads = 2, .dropout = 0.5});
  Variable x(randn({2, 5, 8}));
  m.eval();
  AttentionOutput a = m.forward(x, x, x), b = m.forward(x, x, x);
  CHECK(test::max_abs_diff(a.output.value(), b.output.value()) == 0);
  CHECK(test::max_abs_diff(sum(a.weights.value(), {-1}), ones({2, 5})) < 1e-6);
  m.train();
  CHECK(test::max_abs_diff(m.forward(x, x, x).output.value(), a.output.value()) > 1e-3);
}

// need_weights = false runs scaled_dot_product_attention; true runs the composition it replaces.
TEST_CASE("MultiHeadAttention gives the same output and gradients with and without need_weights, in training") {
  MultiHeadAttention m({.d_model = 8, .num_heads = 2, .dropout = 0.3});
  Variable x(randn({2, 5, 8}), true);
  const MhaCall call{.key_padding_mask = tensor({0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, {2, 5}, boolean), .is_causal = true};
  std::vector<Tensor> outputs, grads;
  for (bool need_weights : {true, false}) {
    manual_seed(17);  // the same dropout draws in both runs
    MhaCall c = call;
    c.need_weights = need_weights;
    Variable y = m.forward(x, x, x, c).output;
    sum(y * y).backward();
    outputs.push_back(y.value());
    grads.push_back(x.grad().clone());
    for (const Variable& p : m.parameters()) grads.push_back(p.grad().clone());
    x.zero_grad();
    m.zero_grad();
  }
  CHECK(test::max_abs_diff(outputs[0], outputs[1]) == 0);
  const size_t n = grads.size() / 2;
  for (size_t i = 0; i < n; ++i) CHECK(test::max_abs_diff(grads[i], grads[n + i]) < 1e-5);
}

// MultiHeadAttention merges the heads (B, H, S, d) -> (B, S, H·d) and splits its projections back, which are
// views only when the per-head tensors are laid out (B, S, H, d); matmul's contiguous results would be copied.
// The layer views its (B, S, H·d) projections as heads; the op lays out its results as its operands are.
TEST_CASE("scaled_dot_product_attention lays out its output and gradients in its operands' memory order") {
  const std::vector<int64_t> heads = {0, 2, 1, 3};
  Variable q(randn({2, 3, 2, 4}), true), k(randn({2, 5, 2, 4}), true), v(randn({2, 5, 2, 3}), true);  // (B, S, H, d)
  const Variable qh = q.permute(heads), kh = k.permute(heads), vh = v.permute(heads);            // (B, H, S, d)
  Variable out = scaled_dot_product_attention(qh, kh, vh);
  CHECK(out.value().permute(heads).is_contiguous());
  const Variable weights = softmax(matmul(qh / 2.0, kh.mT()), -1);  // the composition, √d = 2
  CHECK(test::max_abs_diff(out.value(), matmul(weights, vh).value()) == 0);
  const Tensor dO = randn(out.shape());
  for (const Variable& d : grad({out}, {qh, kh, vh}, {dO})) CHECK(d.value().permute(heads).is_contiguous());
  // The same operands contiguous in (B, H, S, d): contiguous results, the same values.
  const Variable qc(qh.value().contiguous(), true), kc(kh.value().contiguous(), true), vc(vh.value().contiguous(), true);
  Variable outc = scaled_dot_product_attention(qc, kc, vc);
  CHECK(outc.value().is_contiguous());
  CHECK(test::max_abs_diff(outc.value(), out.value()) == 0);
  for (const Variable& d : grad({outc}, {qc, kc, vc}, {dO})) CHECK(d.value().is_contiguous());
}

// Self-attention projects q, k and v in one in_proj product and splits it into views, whose gradients are
// joined into one; the same values as three inputs, which take three products.
TEST_CASE("MultiHeadAttention's self-attention takes one in_proj product, with the values of three") {
  MultiHeadAttention m({.d_model = 8, .num_heads = 2, .dtype = f64});
  std::vector<Variable> wrt = m.parameters();
  init::normal(wrt[1].value(), 0.0, 1.0);  // in_proj_bias, zero at init
  const Variable x(randn({2, 5, 8}, f64), true), x2(x.value().clone(), true), x3(x.value().clone(), true);
  auto ops = [](const Variable& y, const std::string& op) {  // how many nodes of y's graph are `op`
    const std::string dot = to_dot(y), label = "label=\"" + op + "\\n";
    int n = 0;
    for (size_t at = dot.find(label); at != std::string::npos; at = dot.find(label, at + 1)) ++n;
    return n;
  };
  const Variable self = m.forward(x, x, x, {.need_weights = false}).output;
  const Variable three = m.forward(x, x2, x3, {.need_weights = false}).output;
  CHECK(ops(self, "linear") == 2);  // in_proj and out_proj
  CHECK(ops(self, "split") == 1);
  CHECK(ops(three, "linear") == 4);
  MultiHeadAttention seq_first({.d_model = 8, .num_heads = 2, .batch_first = false, .dtype = f64});
  CHECK(ops(seq_first.forward(x, x, x, {.need_weights = false}).output, "linear") == 2);  // transposed once
  CHECK(test::max_abs_diff(self.value(), three.value()) < 1e-12);
  const Tensor dy = randn(self.shape(), f64);
  std::vector<Variable> g1 = grad({self}, {wrt[0], wrt[1], x}, {dy});
  std::vector<Variable> g3 = grad({three}, {wrt[0], wrt[1], x, x2, x3}, {dy});
  CHECK(test::max_abs_diff(g1[0].value(), g3[0].value()) < 1e-12);
  CHECK(test::max_abs_diff(g1[1].value(), g3[1].value()) < 1e-12);
  CHECK(test::max_abs_diff(g1[2].value(), (g3[2].value() + g3[3].value()) + g3[4].value()) < 1e-12);
}

TEST_CASE("scaled_dot_product_attention names the three shapes when they do not fit") {
  const Variable q(randn({2, 3, 4})), k(randn({2, 5, 4})), v(randn({2, 6, 4}));
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, v),
                       doctest::Contains("q (2, 3, 4), k (2, 5, 4) and v (2, 6, 4) do not fit"), ShapeError);
}

// The polarity is in the field's name: .allowed as torch's F.scaled_dot_product_attention (true = may attend),
// .blocked as nn.MultiheadAttention (true = may not). With only key 1 allowed, every query returns v's row 1.
TEST_CASE("scaled_dot_product_attention's allowed mask is the negation of its blocked mask") {
  const Variable q(randn({3, 2})), k(randn({4, 2})), v(tensor({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}));
  const Tensor only_key_1 = eq(arange(0, 4, 1, f64), 1.0).unsqueeze(0).expand({3, 4});  // (S_q, S_k)
  const Variable via_allowed = scaled_dot_product_attention(q, k, v, {.allowed = only_key_1});
  const Variable via_blocked = scaled_dot_product_attention(q, k, v, {.blocked = logical_not(only_key_1)});
  CHECK(via_allowed.value().to_vector<float>() == std::vector<float>{3, 4, 3, 4, 3, 4});
  CHECK(test::max_abs_diff(via_allowed.value(), via_blocked.value()) == 0);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, v, {.allowed = only_key_1, .blocked = only_key_1}),
                       doctest::Contains("give allowed or blocked, not both"), ValueError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, v, {.allowed = zeros({3, 4})}),
                       "scaled_dot_product_attention: allowed must be bool, got f32", DTypeError);
}

TEST_CASE("scaled_dot_product_attention refuses a dropout_p outside [0, 1], NaN included") {
  const Variable q(randn({2, 3, 4})), k(randn({2, 5, 4})), v(randn({2, 5, 4}));
  Generator gen(0);
  for (double p : {-0.1, 1.5, std::nan("")})
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, v, {.dropout_p = p, .gen = &gen}),
                         doctest::Contains("dropout_p must be in [0, 1]"), ValueError);
}

TEST_CASE("MultiHeadAttention runs the forward hooks with the query and the output") {
  MultiHeadAttention m({.d_model = 4, .num_heads = 2});
  Shape seen;
  m.register_forward_hook([&](Layer&, const Variable& in, const Variable& out) {
    seen = in.shape();
    seen.push_back(out.size(1));
  });
  Variable q(randn({2, 3, 4})), kv(randn({2, 5, 4}));
  m.forward(q, kv, kv);
  CHECK(seen == Shape{2, 3, 4, 3});
}

TEST_CASE("MultiHeadAttention refuses a d_model that num_heads does not divide, naming both") {
  CHECK_THROWS_WITH_AS(MultiHeadAttention({.d_model = 10, .num_heads = 3}),
                       doctest::Contains("d_model 10 is not divisible by num_heads 3"), ValueError);
}

TEST_CASE("MultiHeadAttention names both shapes when an input or a mask does not fit") {
  MultiHeadAttention m({.d_model = 8, .num_heads = 2});
  Variable q(randn({2, 5, 8})), k(randn({2, 5, 8}));
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, {.key_padding_mask = zeros({2, 4}, boolean)}),
                       doctest::Contains("key_padding_mask (2, 4) for key (2, 5, 8)"), ShapeError);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, {.attn_mask = zeros({4, 4}, boolean)}),
                       doctest::Contains("attn_mask (4, 4) for query (2, 5, 8) and key (2, 5, 8): expected (5, 5) "
                                         "or (4, 5, 5)"), ShapeError);
  CHECK_THROWS_WITH_AS(m.forward(q, Variable(randn({2, 5, 6})), k),
                       doctest::Contains("key must be (B, S, width) with width 8, got (2, 5, 6)"), ShapeError);
  CHECK_THROWS_WITH_AS(m.forward(q, k, Variable(randn({2, 4, 8}))), doctest::Contains("(2, 5, 8) vs (2, 4, 8)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(m.forward(Variable(randn({3, 5, 8})), k, k), doctest::Contains("(3, 5, 8) vs (2, 5, 8)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, {.key_padding_mask = zeros({2, 5}, i64)}),
                       doctest::Contains("key_padding_mask must be bool or float, got i64"), DTypeError);
}
