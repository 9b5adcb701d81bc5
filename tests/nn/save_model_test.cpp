// save_model / load_model round trips: every registered layer type and containers of them nested (the same
// state, bit for bit, and the same outputs), the architecture JSON, and a user-defined layer registered once.
// The errors are in save_model_errors_test.cpp.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "nn/nn.h"
#include "nn/registry.h"
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

// One row per layer type (or more): how to build one, with options away from the defaults, and run it.
struct Case {
  std::string type;
  std::function<std::unique_ptr<Layer>()> make;
  std::function<Variable(Layer&)> run;
};

template <class L, class... Args>
std::function<std::unique_ptr<Layer>()> make(Args... args) {
  return [=] { return std::make_unique<L>(args...); };
}

// Runs the layer's forward(x) on x of `shape`, seeded, so that the saved and the loaded layer see the same x.
std::function<Variable(Layer&)> on(const Shape& shape, DType dt = f32) {
  return [shape, dt](Layer& l) {
    manual_seed(7);
    return l(Variable(randn(shape, dt)));
  };
}

// Runs f(layer as an L, inputs of `shapes`), for a forward with more than one input.
template <class L>
std::function<Variable(Layer&)> on(std::vector<Shape> shapes, DType dt,
                                   std::function<Variable(L&, const std::vector<Variable>&)> f) {
  return [shapes, dt, f](Layer& l) {
    manual_seed(7);
    std::vector<Variable> x;
    for (const Shape& s : shapes) x.emplace_back(randn(s, dt));
    return f(dynamic_cast<L&>(l), x);
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
  heads.emplace<LayerNorm>(LayerNormOptions{.normalized_shape = {3}});
  return d;
}

// Three levels: a dict of a convolutional Sequential and a list holding another Sequential.
// x (2, 2, 6, 6) -> features (2, 27) -> heads (2, 2).
std::unique_ptr<Layer> cnn() {
  auto d = std::make_unique<ModuleDict>();
  auto& features = d->emplace<Sequential>("features");
  features.emplace<Conv2d>(Conv2dOptions{.in_channels = 2, .out_channels = 3, .kernel_size = 3, .padding = 1});
  features.emplace<BatchNorm2d>(BatchNormOptions{.num_features = 3});
  features.emplace<ReLU>();
  features.emplace<MaxPool2d>(MaxPool2dOptions{.kernel_size = 2});
  features.emplace<Flatten>();
  auto& heads = d->emplace<ModuleList>("heads");
  auto& hidden = heads.emplace<Sequential>();
  hidden.emplace<Dense>(DenseOptions{.in_features = 27, .out_features = 5});
  hidden.emplace<Mish>();
  heads.emplace<Dense>(DenseOptions{.in_features = 5, .out_features = 2});
  return d;
}

Variable run_cnn(Layer& l) {
  auto& d = dynamic_cast<ModuleDict&>(l);
  auto& heads = d.get<ModuleList>("heads");
  manual_seed(7);
  return heads[1](heads[0](d["features"](Variable(randn({2, 2, 6, 6})))));
}

const EncoderLayerOptions kEncoderLayer = {.d_model = 8,
                                           .num_heads = 2,
                                           .dim_feedforward = 16,
                                           .dropout = 0.2,
                                           .activation = Activation::gelu,
                                           .norm_first = true,
                                           .dtype = f64};
const DecoderLayerOptions kDecoderLayer = {.d_model = 8,
                                           .num_heads = 2,
                                           .dim_feedforward = 16,
                                           .dropout = 0.2,
                                           .activation = Activation::gelu,
                                           .layer_norm_eps = 1e-6,
                                           .norm_first = true,
                                           .batch_first = false,
                                           .dtype = f64};

// tgt (T = 4, B = 2, 8) and memory (S = 5, B = 2, 8), sequence-major as kDecoderLayer.
template <class L>
std::function<Variable(Layer&)> decode() {
  return on<L>({{4, 2, 8}, {5, 2, 8}}, f64, [](L& l, const auto& x) { return l.forward(x[0], x[1]); });
}

std::vector<Case> activation_cases() {
  return {
      {"ReLU", make<ReLU>(), on({2, 4})},
      {"GELU", make<GELU>(GELUOptions{.approximate = GELUOptions::Approximate::tanh}), on({2, 4})},
      {"Tanh", make<Tanh>(), on({2, 4})},
      {"Sigmoid", make<Sigmoid>(), on({2, 4})},
      {"SiLU", make<SiLU>(), on({2, 4})},
      {"LeakyReLU", make<LeakyReLU>(LeakyReLUOptions{.negative_slope = 0.2}), on({2, 4})},
      {"ELU", make<ELU>(ELUOptions{.alpha = 0.5}), on({2, 4})},
      {"SELU", make<SELU>(), on({2, 4})},
      {"Softplus", make<Softplus>(SoftplusOptions{.beta = 2, .threshold = 1}), on({2, 4})},
      {"Hardtanh", make<Hardtanh>(HardtanhOptions{.min_val = -0.5, .max_val = 0.25}), on({2, 4})},
      {"Mish", make<Mish>(), on({2, 4})},
      {"Softmax", make<Softmax>(int64_t(0)), on({2, 4})},
      {"Dropout", make<Dropout>(0.25), on({2, 4})},
  };
}

std::vector<Case> conv_pool_cases() {
  return {
      {"Conv1d",
       make<Conv1d>(Conv1dOptions{
           .in_channels = 4, .out_channels = 6, .kernel_size = 3, .stride = 2, .padding = 1, .groups = 2, .dtype = f64}),
       on({2, 4, 9}, f64)},
      {"Conv1d", make<Conv1d>(Conv1dOptions{.in_channels = 2, .out_channels = 3, .kernel_size = 3,
                                            .padding = PaddingMode::same, .dilation = 2, .bias = false}),
       on({2, 2, 7})},
      {"Conv2d",
       make<Conv2d>(Conv2dOptions{.in_channels = 4, .out_channels = 4, .kernel_size = {3, 2},
                                  .padding = PaddingMode::same, .dilation = {1, 2}, .groups = 2}),
       on({2, 4, 5, 6})},
      {"Conv2d",
       make<Conv2d>(Conv2dOptions{
           .in_channels = 2, .out_channels = 3, .kernel_size = 3, .stride = {2, 1}, .padding = {1, 0}, .bias = false}),
       on({2, 2, 5, 6})},
      {"ConvTranspose2d",
       make<ConvTranspose2d>(ConvTranspose2dOptions{.in_channels = 4, .out_channels = 6, .kernel_size = 3,
                                                    .stride = 2, .padding = 1, .output_padding = 1, .groups = 2}),
       on({2, 4, 3, 3})},
      {"MaxPool1d", make<MaxPool1d>(MaxPool1dOptions{.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true}),
       on({2, 3, 8})},
      {"MaxPool2d", make<MaxPool2d>(MaxPool2dOptions{.kernel_size = {3, 2}, .padding = {1, 0}, .dilation = {1, 2}}),
       on({2, 3, 7, 8})},
      {"AvgPool1d", make<AvgPool1d>(AvgPool1dOptions{.kernel_size = 3, .padding = 1, .count_include_pad = false}),
       on({2, 3, 8})},
      {"AvgPool2d", make<AvgPool2d>(AvgPool2dOptions{.kernel_size = 2, .stride = Size2{1, 2}, .ceil_mode = true}),
       on({2, 3, 5, 5})},
      {"AdaptiveAvgPool1d", make<AdaptiveAvgPool1d>(int64_t(3)), on({2, 3, 7})},
      {"AdaptiveAvgPool2d", make<AdaptiveAvgPool2d>(Size2{2, 3}), on({2, 3, 5, 7})},
      {"Flatten", make<Flatten>(FlattenOptions{.start_dim = 0, .end_dim = 1}), on({2, 3, 4})},
  };
}

std::vector<Case> norm_rnn_cases() {
  return {
      {"Dense", make<Dense>(DenseOptions{.in_features = 4, .out_features = 3, .bias = false}), on({2, 4})},
      {"Embedding", make<Embedding>(EmbeddingOptions{.num_embeddings = 10, .embedding_dim = 4, .padding_idx = 0}),
       [](Layer& l) { return l(Variable(tensor({1.0, 0.0, 7.0, 9.0}, {2, 2}, i64))); }},
      {"LayerNorm", make<LayerNorm>(LayerNormOptions{.normalized_shape = {4}, .eps = 1e-3}), on({2, 4})},
      {"RMSNorm", make<RMSNorm>(RMSNormOptions{.normalized_shape = {3, 4}}), on({2, 3, 4})},
      {"GroupNorm",
       make<GroupNorm>(GroupNormOptions{.num_groups = 2, .num_channels = 4, .affine = false, .dtype = f64}),
       on({2, 4, 3}, f64)},
      {"BatchNorm1d", make<BatchNorm1d>(BatchNormOptions{.num_features = 3, .momentum = std::nullopt}), on({4, 3})},
      {"BatchNorm2d", make<BatchNorm2d>(BatchNormOptions{.num_features = 3, .eps = 1e-3}), on({2, 3, 2, 2})},
      {"GRU",
       make<GRU>(GRUOptions{.input_size = 3, .hidden_size = 4, .num_layers = 2, .batch_first = true,
                            .dropout = 0.1, .bidirectional = true}),
       on({2, 5, 3})},
      {"LSTM",
       make<LSTM>(LSTMOptions{.input_size = 3, .hidden_size = 4, .bias = false, .proj_size = 2, .dtype = f64}),
       on({5, 2, 3}, f64)},
      {"GRUCell", make<GRUCell>(RNNCellOptions{.input_size = 3, .hidden_size = 4}), on({2, 3})},
      {"LSTMCell", make<LSTMCell>(RNNCellOptions{.input_size = 3, .hidden_size = 4, .bias = false, .dtype = f64}),
       on({2, 3}, f64)},
  };
}

std::vector<Case> attention_cases() {
  return {
      {"SinusoidalPositionalEncoding",
       make<SinusoidalPositionalEncoding>(PositionalEncodingOptions{.d_model = 8, .max_len = 10}), on({2, 5, 8})},
      {"LearnedPositionalEncoding",
       make<LearnedPositionalEncoding>(LearnedPositionalEncodingOptions{.d_model = 8, .max_len = 10, .std = 0.02}),
       on({2, 5, 8})},
      {"MultiHeadAttention",
       make<MultiHeadAttention>(
           MultiHeadAttentionOptions{.d_model = 8, .num_heads = 2, .bias = false, .kdim = 6, .vdim = 5}),
       on<MultiHeadAttention>({{2, 3, 8}, {2, 4, 6}, {2, 4, 5}}, f32,
                              [](MultiHeadAttention& l, const auto& x) { return l.forward(x[0], x[1], x[2]).output; })},
      {"EncoderLayer", make<EncoderLayer>(kEncoderLayer), on({2, 5, 8}, f64)},
      {"Encoder", make<Encoder>(EncoderOptions{.layer = kEncoderLayer, .num_layers = 2, .final_norm = true}),
       on({2, 5, 8}, f64)},
      {"DecoderLayer", make<DecoderLayer>(kDecoderLayer), decode<DecoderLayer>()},
      {"DecoderLayer", make<DecoderLayer>(DecoderLayerOptions{.d_model = 8, .num_heads = 2, .dim_feedforward = 16,
                                                              .cross_attention = false}),
       on({2, 4, 8})},
      {"Decoder", make<Decoder>(DecoderOptions{.layer = kDecoderLayer, .num_layers = 2, .final_norm = true}),
       decode<Decoder>()},
      {"Transformer",
       make<Transformer>(TransformerOptions{.d_model = 8, .num_heads = 2, .num_encoder_layers = 1,
                                            .num_decoder_layers = 2, .dim_feedforward = 16,
                                            .activation = Activation::gelu, .batch_first = false, .dtype = f64}),
       on<Transformer>({{5, 2, 8}, {4, 2, 8}}, f64, [](Transformer& l, const auto& x) { return l.forward(x[0], x[1]); })},
  };
}

std::vector<Case> container_cases() {
  return {
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
      {"ModuleDict", cnn, run_cnn},
      {"ScaledDense", make<ScaledDense>(ScaledDenseOptions{.width = 3, .scale = 0.5}), on({2, 3})},
  };
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (auto part : {activation_cases, conv_pool_cases, norm_rnn_cases, attention_cases, container_cases})
    for (Case& c : part()) all.push_back(std::move(c));
  return all;
}

// The model with every parameter moved off its initial value and, through one forward in training mode,
// BatchNorm's running statistics off theirs, so that a load that kept the fresh layer's values would show.
std::unique_ptr<Layer> trained(const Case& c) {
  auto model = c.make();
  for (const Variable& p : model->parameters()) Tensor(p.value()).add_(randn(p.shape(), p.dtype()));
  c.run(*model);
  model->eval();
  return model;
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
    const nn::Layer &loaded_layer = *loaded, &saved_layer = *saved;  // typeid of a plain reference: no side effects
    CHECK(typeid(loaded_layer) == typeid(saved_layer));
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

TEST_CASE("the architecture writes sizes as pairs, paddings as sizes or modes, an unset stride as null") {
  Conv2d conv({.in_channels = 2, .out_channels = 4, .kernel_size = {3, 1}, .padding = PaddingMode::same});
  CHECK(layer_architecture(conv)["options"] == nlohmann::json::parse(R"({"in_channels": 2, "out_channels": 4,
        "kernel_size": [3, 1], "stride": [1, 1], "padding": "same", "dilation": [1, 1], "groups": 1,
        "bias": true, "dtype": "f32"})"));
  Conv1d conv1({.in_channels = 2, .out_channels = 2, .kernel_size = 3, .padding = 1});
  CHECK(layer_architecture(conv1)["options"]["padding"] == 1);
  MaxPool2d pool({.kernel_size = 2, .padding = {1, 0}});
  CHECK(layer_architecture(pool)["options"] == nlohmann::json::parse(R"({"kernel_size": [2, 2], "stride": null,
        "padding": [1, 0], "dilation": [1, 1], "ceil_mode": false})"));
  CHECK(layer_architecture(AdaptiveAvgPool2d(Size2{2, 3})) ==
        nlohmann::json::parse(R"({"type": "AdaptiveAvgPool2d", "options": {"output_size": [2, 3]}})"));
}
