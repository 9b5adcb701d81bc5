// GRU, LSTM, GRUCell and LSTMCell against PyTorch (fixtures nn/rnn.*, gen_rnn.py): outputs, final states and
// the gradients of inputs, initial states and every parameter, with packed variable lengths; f64 gradchecks
// through two-layer bidirectional layers with variable lengths; padding masks, unbatched inputs, dropout,
// and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

#include "autograd/gradcheck.h"
#include "nn/norms_fixture.h"
#include "nn/pytorch_case.h"
#include "nn/rnn.h"

using namespace tg;

namespace {

const char* const kFiles[] = {"nn/rnn.f64.json", "nn/rnn.f32.json"};

// The tensorgrad layer built as the fixture module `key` (gen_rnn.py's MODULES).
std::unique_ptr<nn::Layer> make_layer(const std::string& key, DType dt) {
  const nn::RNNOptions two{.input_size = 4, .hidden_size = 3, .num_layers = 2, .bidirectional = true, .dtype = dt};
  nn::RNNOptions batch_first = two, proj = two;
  batch_first.batch_first = proj.batch_first = true;
  proj.proj_size = 2;
  if (key == "gru") return std::make_unique<nn::GRU>(batch_first);
  if (key == "gru_seq") return std::make_unique<nn::GRU>(two);
  if (key == "gru_nobias")
    return std::make_unique<nn::GRU>(nn::RNNOptions{.input_size = 4, .hidden_size = 3, .bias = false, .dtype = dt});
  if (key == "lstm") return std::make_unique<nn::LSTM>(batch_first);
  if (key == "lstm_seq") return std::make_unique<nn::LSTM>(two);
  if (key == "lstm_proj") return std::make_unique<nn::LSTM>(proj);
  if (key == "grucell") return std::make_unique<nn::GRUCell>(nn::RNNCellOptions{4, 3, true, dt});
  if (key == "lstmcell") return std::make_unique<nn::LSTMCell>(nn::RNNCellOptions{4, 3, true, dt});
  if (key == "lstmcell_nobias") return std::make_unique<nn::LSTMCell>(nn::RNNCellOptions{4, 3, false, dt});
  throw std::runtime_error("make_layer: no module " + key);
}

// The case's float input `key` as a leaf that requires grad, or undefined when the case has none.
Variable input_of(const nlohmann::json& c, const std::string& key, DType dt) {
  if (!c["inputs"].contains(key)) return {};
  return Variable(test::fixture_tensor(c["inputs"][key], dt), true);
}

// Runs the case on `layer`, named outputs as gen_rnn.py names them; `mask` replaces lengths by the
// equivalent padding mask.
std::map<std::string, Variable> run_case(nn::Layer& layer, const nlohmann::json& c,
                                         std::map<std::string, Variable>& inputs, DType dt, bool mask = false) {
  for (const char* key : {"x", "h0", "c0"}) inputs[key] = input_of(c, key, dt);
  const Variable& x = inputs["x"];
  if (auto* cell = dynamic_cast<nn::GRUCell*>(&layer)) return {{"h", cell->forward(x, inputs["h0"])}};
  if (auto* cell = dynamic_cast<nn::LSTMCell*>(&layer)) {
    const nn::LSTMState s = cell->forward(x, {inputs["h0"], inputs["c0"]});
    return {{"h", s.h}, {"c", s.c}};
  }
  auto& rnn = dynamic_cast<nn::RNNBase&>(layer);
  nn::RNNCall call{.h0 = inputs["h0"], .c0 = inputs["c0"]};
  if (c["inputs"].contains("lengths")) {
    const auto lengths = c["inputs"]["lengths"].get<std::vector<int64_t>>();
    const int64_t T = x.size(rnn.options().batch_first ? 1 : 0), B = int64_t(lengths.size());
    std::vector<double> padded;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) padded.push_back(t >= lengths[b]);
    if (mask) call.padding_mask = tensor(padded, {B, T}, boolean);
    else call.lengths = lengths;
  }
  const nn::RNNOutput out = rnn.forward(x, call);
  std::map<std::string, Variable> named{{"output", out.output}, {"h_n", out.h_n}};
  if (out.c_n) named["c_n"] = out.c_n;
  return named;
}

// Checks one fixture case: every output, then loss = Σ_k (output_k·R_k).sum() and the gradients of every
// input and parameter. Returns how many cases it ran (1).
int check_case(const nlohmann::json& f, const nlohmann::json& c, double tol, bool mask = false) {
  const DType dt = test::fixture_dtype(f);
  const std::string key = c["module"].get<std::string>();
  CAPTURE(c["name"].get<std::string>());
  std::unique_ptr<nn::Layer> layer = make_layer(key, dt);
  layer->load_state_dict(test::state_under(test::fixture_weights(f), key));
  std::map<std::string, Variable> inputs;
  const std::map<std::string, Variable> outputs = run_case(*layer, c, inputs, dt, mask);
  CHECK(outputs.size() == c["outputs"].size());
  Variable loss;
  for (const auto& [name, y] : outputs) {
    test::check_close(y.value(), test::fixture_tensor(c["outputs"][name], dt), tol, name);
    const Variable term = sum(y * Variable(test::fixture_tensor(c["R"][name], dt)));
    loss = loss ? loss + term : term;
  }
  loss.backward();
  for (const auto& item : c["input_grads"].items())
    test::check_close(inputs[item.key()].grad(), test::fixture_tensor(item.value(), dt), tol, "d/d" + item.key());
  test::check_param_grads(*layer, c, dt);
  return 1;
}

double tolerance_of(const char* file) { return std::string(file).find("f64") != std::string::npos ? 1e-10 : 1e-5; }

// Runs every fixture case whose module is one of `keys`, in both dtypes.
void check_modules(const std::vector<std::string>& keys, bool mask = false) {
  for (const char* file : kFiles) {
    const nlohmann::json f = test::load_fixture(file);
    int ran = 0;
    for (const nlohmann::json& c : f["cases"])
      if (std::find(keys.begin(), keys.end(), c["module"]) != keys.end() && (!mask || c["inputs"].contains("lengths")))
        ran += check_case(f, c, tolerance_of(file), mask);
    CHECK(ran > 0);
  }
}

// output, h_n (and c_n) of an RNN call flattened into one vector, for gradcheck.
Variable joined(const nn::RNNOutput& out) {
  std::vector<Variable> parts{out.output.flatten(), out.h_n.flatten()};
  if (out.c_n) parts.push_back(out.c_n.flatten());
  return cat(parts, 0);
}

}  // namespace

TEST_CASE("GRU matches torch: two layers, bidirectional, batch_first both ways, h0, packed lengths, no bias") {
  check_modules({"gru", "gru_seq", "gru_nobias"});
}

TEST_CASE("LSTM matches torch: two layers, bidirectional, batch_first both ways, h0 and c0, packed lengths") {
  check_modules({"lstm", "lstm_seq"});
}

TEST_CASE("LSTM with proj_size matches torch") { check_modules({"lstm_proj"}); }

TEST_CASE("GRUCell and LSTMCell match torch, with and without a state and bias") {
  check_modules({"grucell", "lstmcell", "lstmcell_nobias"});
}

TEST_CASE("a right-padded padding_mask gives what the lengths give (torch's packed results)") {
  check_modules({"gru", "gru_seq", "lstm", "lstm_seq", "lstm_proj"}, true);
}

TEST_CASE("parameters carry PyTorch's names in PyTorch's order") {
  const nlohmann::json f = test::load_fixture("nn/rnn.f64.json");
  for (const char* key : {"gru", "gru_nobias", "lstm_proj", "grucell", "lstmcell_nobias"}) {
    CAPTURE(key);
    std::vector<std::string> want, got;
    for (const std::string& name : f["state_dict_keys"])
      if (name.rfind(std::string(key) + ".", 0) == 0) want.push_back(name.substr(std::string(key).size() + 1));
    for (const auto& [name, p] : make_layer(key, f64)->named_parameters()) got.push_back(name);
    CHECK(got == want);
  }
}

TEST_CASE("every RNN parameter starts in U(-1/sqrt(H), 1/sqrt(H)), as PyTorch's") {
  manual_seed(3);
  nn::LSTM lstm({.input_size = 5, .hidden_size = 16, .num_layers = 2, .bidirectional = true, .proj_size = 4});
  nn::GRUCell cell({.input_size = 5, .hidden_size = 16});
  for (nn::Layer* layer : std::vector<nn::Layer*>{&lstm, &cell})
    for (const auto& [name, p] : layer->named_parameters()) {
      const std::string& parameter = name;  // CAPTURE cannot see a structured binding (clang 14)
      CAPTURE(parameter);
      CHECK(amax(abs(p.value())).item() <= 0.25);
      CHECK(amax(abs(p.value())).item() > 0.2);  // spread over the range, not zeros
    }
}

TEST_CASE("GRU and LSTM pass gradcheck in f64: two layers, bidirectional, lengths, h0 and c0") {
  manual_seed(4);
  for (bool lstm : {false, true}) {
    CAPTURE(lstm);
    const nn::RNNOptions o{.input_size = 2, .hidden_size = 2, .num_layers = 2, .batch_first = true,
                           .bidirectional = true, .dtype = f64};
    std::unique_ptr<nn::RNNBase> rnn;
    if (lstm) rnn = std::make_unique<nn::LSTM>(o);
    else rnn = std::make_unique<nn::GRU>(o);
    std::vector<Variable> in{Variable(randn({2, 3, 2}, f64), true), Variable(randn({4, 2, 2}, f64), true),
                             Variable(randn({4, 2, 2}, f64), true)};
    for (const Variable& p : rnn->parameters()) in.push_back(p);
    CHECK(gradcheck([&](const std::vector<Variable>& x) {
      return joined(rnn->forward(x[0], {.h0 = x[1], .c0 = lstm ? x[2] : Variable(), .lengths = {3, 2}}));
    }, in));
  }
}

TEST_CASE("LSTM with proj_size and the cells pass gradcheck in f64") {
  manual_seed(5);
  nn::LSTM lstm({.input_size = 2, .hidden_size = 3, .proj_size = 2, .dtype = f64});
  std::vector<Variable> in{Variable(randn({3, 2, 2}, f64), true)};
  for (const Variable& p : lstm.parameters()) in.push_back(p);
  CHECK(gradcheck([&](const std::vector<Variable>& x) { return joined(lstm.forward(x[0], {.lengths = {1, 3}})); }, in));
  nn::GRUCell gru({.input_size = 2, .hidden_size = 3, .dtype = f64});
  nn::LSTMCell cell({.input_size = 2, .hidden_size = 3, .dtype = f64});
  const Variable x(randn({2, 2}, f64), true), h(randn({2, 3}, f64), true), c(randn({2, 3}, f64), true);
  CHECK(gradcheck([&](const std::vector<Variable>& v) { return gru.forward(v[0], v[1]); }, {x, h}));
  CHECK(gradcheck([&](const std::vector<Variable>& v) {
    const nn::LSTMState s = cell.forward(v[0], {v[1], v[2]});
    return cat({s.h, s.c}, 0);
  }, {x, h, c}));
}

TEST_CASE("a padding_mask may skip steps inside a sequence and whole sequences") {
  manual_seed(6);
  nn::GRU gru({.input_size = 2, .hidden_size = 3, .batch_first = true, .bidirectional = true, .dtype = f64});
  const Tensor x = randn({2, 4, 2}, f64), h0 = randn({2, 2, 3}, f64);
  // Sequence 0 skips step 1: the same as running its steps 0, 2, 3 alone; sequence 1 skips everything.
  const Tensor mask = tensor({0, 1, 0, 0, 1, 1, 1, 1}, {2, 4}, boolean);
  const nn::RNNOutput out = gru.forward(Variable(x), {.h0 = Variable(h0), .padding_mask = mask});
  const Tensor x0 = cat({x.slice(0, 0, 1).slice(1, 0, 1), x.slice(0, 0, 1).slice(1, 2, 4)}, 1);
  const nn::RNNOutput alone = gru.forward(Variable(x0), {.h0 = Variable(h0.slice(1, 0, 1))});
  CHECK(test::max_abs_diff(out.h_n.value().slice(1, 0, 1), alone.h_n.value()) < 1e-14);
  const Tensor y = out.output.value();
  CHECK(test::max_abs_diff(y.select(0, 0).select(0, 2), alone.output.value().select(0, 0).select(0, 1)) < 1e-14);
  CHECK(test::max_abs_diff(y.select(0, 0).select(0, 1), zeros({6}, f64)) == 0);
  CHECK(test::max_abs_diff(out.h_n.value().slice(1, 1, 2), h0.slice(1, 1, 2)) == 0);
  CHECK(test::max_abs_diff(y.select(0, 1), zeros({4, 6}, f64)) == 0);
}

TEST_CASE("an unbatched input gives the batched result of a batch of one") {
  manual_seed(7);
  nn::LSTM lstm({.input_size = 2, .hidden_size = 3, .num_layers = 2, .bidirectional = true, .dtype = f64});
  const Tensor x = randn({5, 2}, f64), h0 = randn({4, 3}, f64), c0 = randn({4, 3}, f64);
  const nn::RNNOutput one = lstm.forward(Variable(x), {.h0 = Variable(h0), .c0 = Variable(c0)});
  const nn::RNNOutput batched =
      lstm.forward(Variable(x.unsqueeze(1)), {.h0 = Variable(h0.unsqueeze(1)), .c0 = Variable(c0.unsqueeze(1))});
  CHECK(one.output.shape() == Shape{5, 6});
  CHECK(one.h_n.shape() == Shape{4, 3});
  CHECK(test::max_abs_diff(one.output.value(), batched.output.value().squeeze(1)) == 0);
  CHECK(test::max_abs_diff(one.c_n.value(), batched.c_n.value().squeeze(1)) == 0);
  nn::GRUCell cell({.input_size = 2, .hidden_size = 3, .dtype = f64});
  const Tensor single = cell(Variable(x.select(0, 0))).value();
  CHECK(test::max_abs_diff(single, cell(Variable(x.slice(0, 0, 1))).value().squeeze(0)) == 0);
}

TEST_CASE("dropout acts between layers in training only") {
  manual_seed(8);
  nn::GRU gru({.input_size = 2, .hidden_size = 3, .num_layers = 2, .dropout = 1.0, .dtype = f64});
  const Variable a(randn({4, 2, 2}, f64)), b(randn({4, 2, 2}, f64));
  // p = 1 drops all of layer 0's output: layer 1 then sees zeros whatever the input.
  CHECK(test::max_abs_diff(gru(a).value(), gru(b).value()) == 0);
  gru.eval();
  CHECK(test::max_abs_diff(gru(a).value(), gru(b).value()) > 1e-3);
  nn::GRU plain({.input_size = 2, .hidden_size = 3, .num_layers = 2, .dtype = f64});
  plain.load_state_dict(gru.state_dict());
  CHECK(test::max_abs_diff(gru(a).value(), plain(a).value()) == 0);
}

TEST_CASE("forward hooks run once per call, with the output") {
  nn::GRU gru({.input_size = 2, .hidden_size = 3});
  int calls = 0;
  gru.register_forward_hook([&](nn::Layer&, const Variable&, const Variable& y) { calls += y.size(-1) == 3; });
  gru(Variable(randn({4, 1, 2})));
  gru.forward(Variable(randn({4, 1, 2})), {});
  CHECK(calls == 2);
}

TEST_CASE("RNN options are checked, naming the bad value") {
  CHECK_THROWS_WITH_AS(nn::GRU({.input_size = 2, .hidden_size = 3, .dropout = 1.5}),
                       "GRU: dropout must be in [0, 1], got 1.5", ValueError);
  CHECK_THROWS_WITH_AS(nn::LSTM({.input_size = 2, .hidden_size = 3, .dropout = -0.1}),
                       "LSTM: dropout must be in [0, 1], got -0.1", ValueError);
  CHECK_THROWS_WITH_AS(nn::GRU({.input_size = 2, .hidden_size = 3, .proj_size = 1}),
                       "GRU: proj_size is for LSTM only, got 1", ValueError);
  CHECK_THROWS_WITH_AS(nn::LSTM({.input_size = 2, .hidden_size = 3, .proj_size = 3}),
                       "LSTM: proj_size must be in [0, hidden_size = 3), got 3", ValueError);
  CHECK_THROWS_WITH_AS(nn::LSTM({.input_size = 2, .hidden_size = 3, .num_layers = 0}),
                       "LSTM: num_layers must be > 0, got 0", ValueError);
  CHECK_THROWS_WITH_AS(nn::GRUCell({.input_size = 0, .hidden_size = 3}),
                       "GRUCell: input_size and hidden_size must be > 0, got 0 and 3", ValueError);
}

TEST_CASE("RNN inputs are checked, naming expected and actual shapes") {
  nn::LSTM lstm({.input_size = 4, .hidden_size = 3, .num_layers = 2, .batch_first = true, .bidirectional = true});
  const Variable x(randn({2, 5, 4}));
  CHECK_THROWS_WITH_AS(lstm(Variable(randn({2, 5, 4, 1}))),
                       "LSTM: input must be (B, T, input_size) or unbatched (T, input_size), got (2, 5, 4, 1)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(lstm(Variable(randn({2, 5, 3}))),
                       "LSTM: input (2, 5, 3) has input_size 3 (last dim), expected 4", ShapeError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.h0 = Variable(randn({2, 2, 3}))}),
                       "LSTM: h0 has shape (2, 2, 3), expected (4, 2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.c0 = Variable(randn({4, 5, 3}))}),
                       "LSTM: c0 has shape (4, 5, 3), expected (4, 2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.lengths = {5, 0}}), "LSTM: lengths[1] = 0 is out of range [1, T = 5]",
                       ValueError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.lengths = index_tensor({6, 2}, {2})}),
                       "LSTM: lengths[0] = 6 is out of range [1, T = 5]", ValueError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.lengths = {5}}), "LSTM: lengths has 1 entries, expected B = 2", ShapeError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.lengths = {5, 1}, .padding_mask = zeros({2, 5}, boolean)}),
                       "LSTM: give lengths or padding_mask, not both", ValueError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.padding_mask = zeros({5, 2}, boolean)}),
                       "LSTM: padding_mask has shape (5, 2), expected (B, T) = (2, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(lstm.forward(x, {.padding_mask = zeros({2, 5})}), "LSTM: padding_mask must be bool, got f32",
                       DTypeError);
  CHECK_THROWS_WITH_AS(nn::SequenceLengths(tensor({1, 2})), "lengths: expected an i64 tensor, got f32", DTypeError);
  nn::GRU gru({.input_size = 4, .hidden_size = 3});
  CHECK_THROWS_WITH_AS(gru.forward(x, {.c0 = Variable(randn({1, 5, 3}))}), "GRU: c0 is for LSTM only", ValueError);
  CHECK_THROWS_WITH_AS(gru(Variable(randn({0, 2, 4}))), "GRU: input (0, 2, 4) has no time steps", ShapeError);
}

TEST_CASE("cell inputs are checked, naming expected and actual shapes") {
  nn::LSTMCell cell({.input_size = 4, .hidden_size = 3});
  CHECK_THROWS_WITH_AS(cell(Variable(randn({2, 3, 4}))),
                       "LSTMCell: input must be (B, input_size) or (input_size), got (2, 3, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(cell(Variable(randn({2, 5}))), "LSTMCell: input (2, 5) has input_size 5 (last dim), expected 4",
                       ShapeError);
  CHECK_THROWS_WITH_AS(cell.forward(Variable(randn({2, 4})), {Variable(randn({3, 3})), Variable()}),
                       "LSTMCell: h has shape (3, 3), expected (2, 3) for input (2, 4)", ShapeError);
}
