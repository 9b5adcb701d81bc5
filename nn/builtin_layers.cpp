// The library's layers for save_model / load_model, in one list that the registry takes in on first use
// (nn/registry.cpp). A list that names every type, rather than a static registration in each layer's .cpp,
// because a linker keeps an object of a static archive only when the program names a symbol of it: a
// program that only loads models would otherwise lose the registrations of the layers it never names.
// A new layer type adds a row here and one in tests/nn/save_model_test.cpp (a test fails without it).
#include "nn/containers.h"
#include "nn/dropout.h"
#include "nn/options_json.h"
#include "nn/sequential.h"

namespace tg::nn {
namespace {

using nlohmann::json;

// Layers whose constructor takes one value rather than an options struct: {"<key>": value}.
template <class L, class Value>
LayerType single_value_type(std::string name, const char* key, Value (L::*get)() const) {
  return layer_type<L>(
      std::move(name), [key, get](const L& l) { return json{{key, (l.*get)()}}; },
      [key](const json& j) { return std::make_unique<L>(j.at(key).get<Value>()); });
}

}  // namespace

std::vector<LayerType> builtin_layer_types() {
  return {
    // Activations.
    layer_type<ReLU>("ReLU"),
    layer_type<GELU>("GELU"),
    layer_type<Tanh>("Tanh"),
    layer_type<Sigmoid>("Sigmoid"),
    layer_type<SiLU>("SiLU"),
    layer_type<LeakyReLU>("LeakyReLU"),
    layer_type<ELU>("ELU"),
    layer_type<SELU>("SELU"),
    layer_type<Softplus>("Softplus"),
    layer_type<Hardtanh>("Hardtanh"),
    layer_type<Mish>("Mish"),
    single_value_type<Softmax>("Softmax", "dim", &Softmax::dim),
    // The generator is not saved: a loaded Dropout draws from the default one.
    single_value_type<Dropout>("Dropout", "p", &Dropout::p),
    // Linear, embedding, convolution, pooling.
    layer_type<Dense>("Dense"),
    layer_type<Embedding>("Embedding"),
    layer_type<Conv1d>("Conv1d"),
    layer_type<Conv2d>("Conv2d"),
    layer_type<ConvTranspose2d>("ConvTranspose2d"),
    layer_type<MaxPool1d>("MaxPool1d"),
    layer_type<MaxPool2d>("MaxPool2d"),
    layer_type<AvgPool1d>("AvgPool1d"),
    layer_type<AvgPool2d>("AvgPool2d"),
    single_value_type<AdaptiveAvgPool1d>("AdaptiveAvgPool1d", "output_size", &AdaptiveAvgPool1d::output_size),
    single_value_type<AdaptiveAvgPool2d>("AdaptiveAvgPool2d", "output_size", &AdaptiveAvgPool2d::output_size),
    layer_type<Flatten>("Flatten"),
    // Normalisation.
    layer_type<LayerNorm>("LayerNorm"),
    layer_type<RMSNorm>("RMSNorm"),
    layer_type<GroupNorm>("GroupNorm"),
    layer_type<BatchNorm1d>("BatchNorm1d"),
    layer_type<BatchNorm2d>("BatchNorm2d"),
    // Recurrent.
    layer_type<GRU>("GRU"),
    layer_type<LSTM>("LSTM"),
    layer_type<GRUCell>("GRUCell"),
    layer_type<LSTMCell>("LSTMCell"),
    // Attention and transformers. LayerList is not here: it refers to layers its owner (Encoder, Decoder)
    // builds from its own options.
    layer_type<SinusoidalPositionalEncoding>("SinusoidalPositionalEncoding"),
    layer_type<LearnedPositionalEncoding>("LearnedPositionalEncoding"),
    layer_type<MultiHeadAttention>("MultiHeadAttention"),
    layer_type<EncoderLayer>("EncoderLayer"),
    layer_type<Encoder>("Encoder"),
    layer_type<DecoderLayer>("DecoderLayer"),
    layer_type<Decoder>("Decoder"),
    layer_type<Transformer>("Transformer"),
    // Containers: their options are their children's architectures.
    list_layer_type<Sequential>("Sequential"),
    list_layer_type<ModuleList>("ModuleList"),
    layer_type<ModuleDict>(
        "ModuleDict", [](const ModuleDict& d) { return json{{"layers", child_architectures(d)}}; },
        [](const json& j) {
          auto dict = std::make_unique<ModuleDict>();
          for (auto& [key, layer] : build_children(j.at("layers"))) dict->insert(key, std::move(layer));
          return dict;
        }),
  };
}

}  // namespace tg::nn
