// save_model / load_model: a round trip of every registered layer type and of containers of them (the same
// state, bit for bit, and the same outputs), a user-defined layer registered once, and the errors for an
// unknown type, another format version, tampered metadata and weights that do not fit.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "nn/nn.h"
#include "nn/registry.h"
#include "nn/save_model.h"
#include "nn/temp_file.h"

using namespace tg;
using namespace tg::nn;
using tg::test::raw_state;
using tg::test::TempFile;

namespace {

// A user-defined layer: registered once, below, with its options' JSON.
struct ScaledDenseOptions {
  int64_t width = 0;
  double scale = 1;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ScaledDenseOptions, width, scale)

class ScaledDense : public Layer {
 public:
  explicit ScaledDense(const ScaledDenseOptions& o)
      : options_(o), dense_({.in_features = o.width, .out_features = o.width}) {
    check<ValueError>(o.scale > 0, "ScaledDense: scale must be positive, got {}", o.scale);
    register_layer("dense", dense_);
  }
  Variable forward(const Variable& x) override { return dense_(x) * options_.scale; }
  std::string type_name() const override { return "ScaledDense"; }
  const ScaledDenseOptions& options() const { return options_; }

 private:
  ScaledDenseOptions options_;
  Dense dense_;
};
const LayerRegistration<ScaledDense> scaled_dense_registration("ScaledDense");

// One row per layer type: how to build one (with options away from the defaults) and run it.
struct Case {
  std::string type;
  std::function<std::unique_ptr<Layer>()> make;
  std::function<Variable(Layer&)> run;
};

template <class L, class... Args>
std::function<std::unique_ptr<Layer>()> make(Args... args) {
  return [=] { return std::make_unique<L>(args...); };
}

std::function<Variable(Layer&)> on(const Shape& shape, DType dt = f32) {
  return [shape, dt](Layer& l) {
    manual_seed(7);  // the same input for the saved and the loaded layer
    return l(Variable(randn(shape, dt)));
  };
}

std::unique_ptr<Layer> sequential() {
  auto s = std::make_unique<Sequential>();
  s->emplace<Dense>(DenseOptions{.in_features = 4, .out_features = 6});
  s->emplace<GELU>(GELUOptions{.approximate = GELUOptions::Approximate::tanh});
  s->emplace<Dropout>(0.3);
  s->emplace<Dense>(DenseOptions{.in_features = 6, .out_features = 2, .bias = false});
  return s;
}

std::unique_ptr<Layer> module_dict() {  // containers inside containers
  auto d = std::make_unique<ModuleDict>();
  d->insert("body", sequential());
  auto& heads = d->emplace<ModuleList>("heads");
  heads.emplace<Dense>(DenseOptions{.in_features = 2, .out_features = 3});
  heads.emplace<LayerNorm>(LayerNormOptions{.normalized_shape = 3});
  return d;
}

const EncoderLayerOptions kEncoderLayer = {.d_model = 8,
                                           .num_heads = 2,
                                           .dim_feedforward = 16,
                                           .dropout = 0.2,
                                           .activation = Activation::gelu,
                                           .norm_first = true,
                                           .dtype = f64};

std::vector<Case> cases() {
  using A = GELUOptions::Approximate;
  return {
      {"Dense", make<Dense>(DenseOptions{.in_features = 4, .out_features = 3, .bias = false}), on({2, 4})},
      {"Embedding", make<Embedding>(EmbeddingOptions{.num_embeddings = 10, .embedding_dim = 4, .padding_idx = 0}),
       [](Layer& l) {
         return l(Variable(tensor({1.0, 0.0, 7.0, 9.0}, {2, 2}, i64)));
       }},
      {"LayerNorm", make<LayerNorm>(LayerNormOptions{.normalized_shape = 4, .eps = 1e-3}), on({2, 4})},
      {"RMSNorm", make<RMSNorm>(RMSNormOptions{.normalized_shape = {3, 4}}), on({2, 3, 4})},
      {"GroupNorm",
       make<GroupNorm>(GroupNormOptions{.num_groups = 2, .num_channels = 4, .affine = false, .dtype = f64}),
       on({2, 4, 3}, f64)},
      {"BatchNorm1d", make<BatchNorm1d>(BatchNormOptions{.num_features = 3, .momentum = std::nullopt}), on({4, 3})},
      {"BatchNorm2d", make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .eps = 1e-3}), on({2, 3, 2, 2})},
      {"Dropout", make<Dropout>(0.25), on({2, 4})},
      {"ReLU", make<ReLU>(), on({2, 4})},
      {"GELU", make<GELU>(GELUOptions{.approximate = A::tanh}), on({2, 4})},
      {"Tanh", make<Tanh>(), on({2, 4})},
      {"Sigmoid", make<Sigmoid>(), on({2, 4})},
      {"SiLU", make<SiLU>(), on({2, 4})},
      {"Softmax", make<Softmax>(int64_t(0)), on({2, 4})},
      {"MultiHeadAttention",
       make<MultiHeadAttention>(
           MultiHeadAttentionOptions{.d_model = 8, .num_heads = 2, .bias = false, .kdim = 6, .vdim = 5}),
       [](Layer& l) {
         manual_seed(7);
         Variable q(randn({2, 3, 8})), k(randn({2, 4, 6})), v(randn({2, 4, 5}));
         return dynamic_cast<MultiHeadAttention&>(l).forward(q, k, v).output;
       }},
      {"EncoderLayer", make<EncoderLayer>(kEncoderLayer), on({2, 5, 8}, f64)},
      {"Encoder", make<Encoder>(EncoderOptions{.layer = kEncoderLayer, .num_layers = 2, .final_norm = true}),
       on({2, 5, 8}, f64)},
      {"SinusoidalPositionalEncoding",
       make<SinusoidalPositionalEncoding>(PositionalEncodingOptions{.d_model = 8, .max_len = 10}), on({2, 5, 8})},
      {"LearnedPositionalEncoding",
       make<LearnedPositionalEncoding>(LearnedPositionalEncodingOptions{.d_model = 8, .max_len = 10, .std = 0.02}),
       on({2, 5, 8})},
      {"Sequential", sequential, on({3, 4})},
      {"ModuleList", [] { return dynamic_cast<ModuleDict&>(*module_dict()).pop("heads"); },
       [](Layer& l) {
         auto& list = dynamic_cast<ModuleList&>(l);
         return list[1](list[0](Variable(ones({2, 2}))));
       }},
      {"ModuleDict", module_dict,
       [](Layer& l) {
         auto& d = dynamic_cast<ModuleDict&>(l);
         manual_seed(7);
         Variable h = d["body"](Variable(randn({3, 4})));
         auto& heads = d.get<ModuleList>("heads");
         return heads[1](heads[0](h));
       }},
      {"ScaledDense", make<ScaledDense>(ScaledDenseOptions{.width = 3, .scale = 0.5}), on({2, 3})},
  };
}

// The model with every parameter moved off its initial value, and BatchNorm's running statistics off theirs
// (one training step), so that a load that kept the fresh layer's values would show.
std::unique_ptr<Layer> trained(const Case& c) {
  auto model = c.make();
  for (const Variable& p : model->parameters()) Tensor(p.value()).add_(randn(p.shape(), p.dtype()));
  if (c.type.starts_with("BatchNorm")) c.run(*model);
  model->eval();
  return model;
}

// A file with `architecture` as save_model writes it (version `version`) and `tensors`.
void write_model(const TempFile& file, const std::string& architecture, const TensorMap& tensors = {},
                 const std::string& version = "1") {
  save_safetensors(file.path, tensors,
                   {{"format", "tensorgrad"}, {"format_version", version}, {"architecture", architecture}});
}

}  // namespace

TEST_CASE("every registered layer type has a round-trip case") {
  std::set<std::string> covered;
  for (const Case& c : cases()) covered.insert(c.type);
  for (const std::string& type : registered_layer_types()) {
    CAPTURE(type);
    CHECK(covered.count(type) == 1);
  }
}

TEST_CASE("load_model(save_model(m)) has m's state, bit for bit, and m's outputs, for every layer type") {
  for (const Case& c : cases()) {
    CAPTURE(c.type);
    TempFile file;
    manual_seed(3);
    auto saved = trained(c);
    save_model(*saved, file.path);
    manual_seed(4);  // a loaded layer starts from other random values
    auto loaded = load_model(file.path);
    CHECK(loaded->type_name() == saved->type_name());
    CHECK(typeid(*loaded) == typeid(*saved));
    CHECK(raw_state(*loaded) == raw_state(*saved));
    CHECK(layer_architecture(*loaded) == layer_architecture(*saved));
    loaded->eval();
    const Tensor a = c.run(*saved).value(), b = c.run(*loaded).value();
    CHECK(a.shape() == b.shape());
    CHECK(a.to_vector<double>() == b.to_vector<double>());
  }
}

TEST_CASE("the architecture nests containers and spells options out") {
  const auto model = module_dict();
  const nlohmann::json arch = layer_architecture(*model);
  CHECK(arch["type"] == "ModuleDict");
  const nlohmann::json& body = arch["options"]["layers"][0];
  CHECK(body[0] == "body");
  CHECK(body[1]["type"] == "Sequential");
  CHECK(body[1]["options"]["layers"][1][1] ==
        nlohmann::json::parse(R"({"type": "GELU", "options": {"approximate": "tanh"}})"));
  CHECK(body[1]["options"]["layers"][3][1]["options"] ==
        nlohmann::json::parse(R"({"in_features": 6, "out_features": 2, "bias": false, "dtype": "f32"})"));
  CHECK(arch["options"]["layers"][1][1]["type"] == "ModuleList");
}

TEST_CASE("save_model of an unregistered layer names its type and the known ones") {
  struct Unregistered : Layer {
    std::string type_name() const override { return "Unregistered"; }
  };
  TempFile file;
  Sequential s;
  s.emplace<Unregistered>();
  CHECK_THROWS_WITH_AS(save_model(s, file.path),
                       doctest::Contains("'Unregistered' is not registered (known: BatchNorm1d, BatchNorm2d, Dense"),
                       ValueError);
  CHECK_FALSE(std::filesystem::exists(file.path));
}

TEST_CASE("a type registered twice, by name or by C++ type, throws") {
  CHECK_THROWS_WITH_AS(LayerRegistration<ReLU>("ReLU2"), doctest::Contains("'ReLU2' is registered already as 'ReLU'"),
                       ValueError);
  struct Other : Layer {};
  CHECK_THROWS_WITH_AS(LayerRegistration<Other>("Dense"), doctest::Contains("the name 'Dense' is registered already"),
                       ValueError);
}

TEST_CASE("load_model: an unknown type names it, the known ones and the file") {
  TempFile file;
  write_model(file, R"({"type": "Conv9d", "options": {}})");
  const std::string path = file.path.string();
  CHECK_THROWS_WITH_AS(load_model(path),
                       doctest::Contains(("load_model('" + path + "'): unknown layer type 'Conv9d' (known: ").c_str()),
                       ValueError);
  CHECK_THROWS_WITH_AS(load_model(path), doctest::Contains("ScaledDense, Sequential, SiLU, Sigmoid"), ValueError);
}

TEST_CASE("load_model: another format version names both") {
  TempFile file;
  write_model(file, R"({"type": "ReLU", "options": {}})", {}, "2");
  CHECK_THROWS_WITH_AS(load_model(file.path),
                       doctest::Contains("architecture format version '2' vs this library's '1'"), ValueError);
}

TEST_CASE("load_model: a weights-only file from Layer::save says so") {
  TempFile file;
  Dense d({.in_features = 2, .out_features = 2});
  d.save(file.path);
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains("weights without an architecture"), ValueError);
}

TEST_CASE("load_model: tampered metadata is a clear error naming the file") {
  const Tensor w = zeros({3, 4}), b = zeros({3});
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{not json", "the architecture is not valid JSON"},
      {R"({"type": "Dense"})", "needs \"type\" and \"options\""},
      {R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "dtype": "f32"}})",
       "key 'bias' not found"},
      {R"({"type": "Dense", "options": {"in_features": 4.5, "out_features": 3, "bias": true, "dtype": "f32"}})",
       "read back as"},
      {R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "bias": true, "dtype": "f16"}})",
       "read back as"},
      {R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "bias": true, "dtype": "f32", "x": 1}})",
       "read back as"},
      {R"({"type": "Dense", "options": {"in_features": "4", "out_features": 3, "bias": true, "dtype": "f32"}})",
       "type must be number"},
      {R"({"type": "Sequential", "options": {"layers": {}}})", "a container's layers must be a list"},
  };
  for (const auto& [architecture, message] : bad) {
    CAPTURE(architecture);
    TempFile file;
    write_model(file, architecture, {{"weight", w}, {"bias", b}});
    CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains(("load_model('" + file.path.string() + "')").c_str()),
                         ValueError);
    CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains(message.c_str()), ValueError);
  }
}

TEST_CASE("load_model: an option out of range is the layer's own constructor error") {
  TempFile file;
  write_model(file, R"({"type": "Dropout", "options": {"p": 1.5}})");
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains("Dropout"), ValueError);
  write_model(file, R"({"type": "ScaledDense", "options": {"width": 3, "scale": -1.0}})");
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains("ScaledDense: scale must be positive, got -1"),
                       ValueError);
}

TEST_CASE("load_model: weights that do not fit the architecture name the parameter and both shapes") {
  TempFile file;
  const std::string dense =
      R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "bias": true, "dtype": "f32"}})";
  write_model(file, dense, {{"weight", zeros({3, 5})}, {"bias", zeros({3})}});
  CHECK_THROWS_WITH_AS(load_model(file.path),
                       doctest::Contains("shape of 'weight' differs: expected (3, 4) vs loaded (3, 5)"), ShapeError);
  write_model(file, dense, {{"weight", zeros({3, 4})}});
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains("missing keys [bias]"), ValueError);
}
