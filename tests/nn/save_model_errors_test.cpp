// save_model / load_model errors: an unregistered or unknown type, a type registered twice, another format
// version, a weights-only file, tampered metadata (bad JSON, missing keys, wrong types, unknown fields,
// options out of range, sizes far beyond the weights) and weights whose shapes disagree with the options. Each
// is one exception whose message names the file and the problem.
#include <sys/resource.h>

#include <chrono>
#include <functional>

#include <doctest/doctest.h>

#include "nn/nn.h"
#include "nn/registry.h"
#include "nn/temp_file.h"

using namespace tg;
using namespace tg::nn;
using tg::test::TempFile;

namespace {

// A file with `architecture` as save_model writes it, format version `version` (none when empty).
void write_model(const TempFile& file, const std::string& architecture, const TensorMap& tensors = {},
                 const std::string& version = "1") {
  std::map<std::string, std::string> metadata = {{"format", "tensorgrad"}, {"architecture", architecture}};
  if (!version.empty()) metadata["format_version"] = version;
  save_safetensors(file.path, tensors, metadata);
}

// load_model's error on `file`: its type is E and its message holds the file and `message`.
template <class E>
void check_load_error(const TempFile& file, const std::string& message) {
  const std::string where = "load_model('" + file.path.string() + "'): ";
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains(where.c_str()), E);
  CHECK_THROWS_WITH_AS(load_model(file.path), doctest::Contains(message.c_str()), E);
}

const char* kDense =
    R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "bias": true, "dtype": "f32"}})";

}  // namespace

TEST_CASE("save_model of an unregistered layer names its type and the known ones, and writes nothing") {
  struct Unregistered : Layer {
    std::string type_name() const override { return "Unregistered"; }
  };
  TempFile file;
  Sequential s;
  s.emplace<Unregistered>();
  CHECK_THROWS_WITH_AS(
      save_model(s, file.path),
      doctest::Contains("'Unregistered' is not registered (known: AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d"),
      ValueError);
  CHECK_FALSE(std::filesystem::exists(file.path));
}

TEST_CASE("a type registered twice, by name or by C++ type, throws") {
  CHECK_THROWS_WITH_AS(LayerRegistration<ReLU>("ReLU2"), doctest::Contains("'ReLU2' is registered already as 'ReLU'"),
                       ValueError);
  struct Other : Layer {};
  CHECK_THROWS_WITH_AS(LayerRegistration<Other>("Conv2d"),
                       doctest::Contains("the name 'Conv2d' is registered already"), ValueError);
}

TEST_CASE("load_model: an unknown type, at the top or inside a container, names it and the known ones") {
  TempFile file;
  write_model(file, R"({"type": "Conv9d", "options": {}})");
  check_load_error<ValueError>(file, "unknown layer type 'Conv9d' (known: AdaptiveAvgPool1d, ");
  check_load_error<ValueError>(file, "Conv1d, Conv2d, ConvTranspose2d, Decoder, DecoderLayer, Dense");
  write_model(file, R"({"type": "Sequential", "options": {"layers": [["0", {"type": "Conv9d", "options": {}}]]}})");
  check_load_error<ValueError>(file, "unknown layer type 'Conv9d'");
  write_model(file, R"({"type": "Conv\u0000\u00ff", "options": {}})");  // quoted escaped and in full
  check_load_error<ValueError>(file, "unknown layer type 'Conv\\x00\xc3\xbf' (known: ");
}

TEST_CASE("load_model: another format version, or none, names both") {
  TempFile file;
  write_model(file, R"({"type": "ReLU", "options": {}})", {}, "2");
  check_load_error<ValueError>(file, "architecture format version '2' vs this library's '1'");
  write_model(file, R"({"type": "ReLU", "options": {}})", {}, "");
  check_load_error<ValueError>(file, "architecture format version '' vs this library's '1'");
  write_model(file, R"({"type": "ReLU", "options": {}})", {}, std::string("1\0\x01", 3));
  check_load_error<ValueError>(file, "architecture format version '1\\x00\\x01' vs this library's '1'");
}

TEST_CASE("load_model: a weights-only file from Layer::save says so") {
  TempFile file;
  Dense d({.in_features = 2, .out_features = 2});
  d.save(file.path);
  check_load_error<ValueError>(file, "weights without an architecture");
}

TEST_CASE("load_model: tampered metadata is a ValueError naming the file and what is wrong") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{not json", "the architecture is not valid JSON"},
      {R"([1, 2])", "needs \"type\" and \"options\""},
      {R"({"type": "Dense"})", "needs \"type\" and \"options\""},
      {R"({"type": "Dense", "options": {"in_features": 4, "out_features": 3, "dtype": "f32"}})",
       "Dense: bad options {\"dtype\":\"f32\",\"in_features\":4,\"out_features\":3}"},
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
      {R"({"type": "Sequential", "options": {"layers": [["0"]]}})", "a container's layer must be [name, architecture]"},
      {R"({"type": "Sequential", "options": {"layers": [["0", {"type": "Dense"}]]}})", "needs \"type\" and \"options\""},
  };
  for (const auto& [architecture, message] : bad) {
    const std::string& json = architecture;  // CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(json);
    TempFile file;
    write_model(file, architecture, {{"weight", zeros({3, 4})}, {"bias", zeros({3})}});
    check_load_error<ValueError>(file, message);
  }
}

TEST_CASE("load_model: tampered sizes and paddings of a convolution are bad options") {
  const std::string head = R"({"type": "Conv2d", "options": {"in_channels": 2, "out_channels": 4, "stride": [1, 1],
      "dilation": [1, 1], "groups": 1, "bias": false, "dtype": "f32", )";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"("kernel_size": 3, "padding": [0, 0]}})", "Conv2d: bad options"},
      {R"("kernel_size": [3, 3, 3], "padding": [0, 0]}})", "read back as"},
      {R"("kernel_size": [3, 3], "padding": "full"}})", "read back as"},
      {R"("kernel_size": [3, 3], "padding": "sizes"}})", "read back as"},
  };
  for (const auto& [tail, message] : bad) {
    const std::string& options_tail = tail;  // CAPTURE cannot see a structured binding (clang 14)
    CAPTURE(options_tail);
    TempFile file;
    write_model(file, head + tail, {{"weight", zeros({4, 2, 3, 3})}});
    check_load_error<ValueError>(file, message);
  }
}

TEST_CASE("load_model: an option out of range is the layer's own constructor error") {
  TempFile file;
  write_model(file, R"({"type": "Dropout", "options": {"p": 1.5}})");
  check_load_error<ValueError>(file, "Dropout");
  write_model(file, R"({"type": "Hardtanh", "options": {"min_val": 1.0, "max_val": -1.0}})");
  check_load_error<ValueError>(file, "Hardtanh: min_val 1 is greater than max_val -1");
  write_model(file, R"({"type": "ModuleDict", "options": {"layers": [["a.b", {"type": "ReLU", "options": {}}]]}})");
  check_load_error<ValueError>(file, "a.b");
}

TEST_CASE("load_model: weights whose shapes disagree with the options name the parameter and both shapes") {
  TempFile file;
  write_model(file, kDense, {{"weight", zeros({3, 5})}, {"bias", zeros({3})}});
  check_load_error<ShapeError>(file, "shape of 'weight' differs: expected (3, 4) vs loaded (3, 5)");
  write_model(file, kDense, {{"weight", zeros({3, 4})}});
  check_load_error<ValueError>(file, "missing keys [bias]");
  write_model(file, std::string(R"({"type": "Sequential", "options": {"layers": [["0", )") + kDense + "]]}}",
              {{"0.weight", zeros({3, 4})}, {"0.bias", zeros({4})}});
  check_load_error<ShapeError>(file, "shape of '0.bias' differs: expected (3,) vs loaded (4,)");
  write_model(file, R"({"type": "Conv2d", "options": {"in_channels": 2, "out_channels": 4, "kernel_size": [3, 3],
      "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1, "bias": false, "dtype": "f32"}})",
              {{"weight", zeros({4, 2, 5, 5})}});
  check_load_error<ShapeError>(file, "shape of 'weight' differs: expected (4, 2, 3, 3) vs loaded (4, 2, 5, 5)");
}

namespace {

// A file of `model` whose architecture `edit` changed; the tensors stay `model`'s.
void write_edited(const TempFile& file, const Layer& model, const std::function<void(nlohmann::json&)>& edit) {
  save_model(model, file.path);
  Safetensors s = load_safetensors(file.path);
  nlohmann::json architecture = nlohmann::json::parse(s.metadata.at("architecture"));
  edit(architecture);
  s.metadata["architecture"] = architecture.dump();
  save_safetensors(file.path, s.tensors, s.metadata);
}

// The peak resident memory of this process so far, in MiB (Linux: ru_maxrss is in KiB).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024;
}

}  // namespace

// Each would take gigabytes (a Dense of 10^6 x 10^6 is 4 TB; 10^5 encoder layers of width 8, 150 MB) if built
// before its sizes were weighed against the file: refused at the first buffer past the budget instead.
TEST_CASE("load_model: options asking for far more than the file's weights are refused before they allocate") {
  TempFile file;
  const Encoder encoder({.layer = {.d_model = 8, .num_heads = 2, .dim_feedforward = 16}, .num_layers = 2});
  const double peak_before = peak_rss_mib();
  const auto started = std::chrono::steady_clock::now();
  write_edited(file, encoder, [](nlohmann::json& a) { a["options"]["num_layers"] = 100000; });
  check_load_error<ValueError>(file, R"(Encoder with options {"final_norm":false,"layer":{"activation":"relu",)");
  check_load_error<ValueError>(file, R"("num_layers":100000} asks for more memory than its file's weights justify)");
  check_load_error<ValueError>(file, "would pass the budget of 1099264 bytes (8 x the 6336 bytes of the file's 24 "
                                     "tensors, whose largest dimension is 24, + 1 MiB;");
  write_edited(file, encoder, [](nlohmann::json& a) { a["options"]["layer"]["d_model"] = 1000000; });
  check_load_error<ValueError>(file, R"("d_model":1000000,)");
  check_load_error<ValueError>(file, "a buffer of 4000000000000 bytes would pass the budget");
  Sequential dense;
  dense.emplace<ReLU>();
  dense.emplace<Dense>(DenseOptions{.in_features = 4, .out_features = 3});
  write_edited(file, dense, [](nlohmann::json& a) { a["options"]["layers"][1][1]["options"]["in_features"] = 1000000; });
  check_load_error<ValueError>(file, R"(Dense with options {"bias":true,"dtype":"f32","in_features":1000000,)");
  check_load_error<ValueError>(file, "the file's 2 tensors, whose largest dimension is 4");
  write_model(file, R"({"type": "SinusoidalPositionalEncoding", "options": {"d_model": 64, "max_len": 1000000000,
      "dtype": "f32"}})");  // its table was a std::vector, out of the budget's sight
  check_load_error<ValueError>(file, "SinusoidalPositionalEncoding with options {\"d_model\":64,\"dtype\":\"f32\","
                                     "\"max_len\":1000000000} asks for more memory");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  CHECK(peak_rss_mib() - peak_before < 64);
}

TEST_CASE("load_model: a model within its weights' budget loads, however many small layers it has") {
  TempFile file;
  const Encoder encoder({.layer = {.d_model = 4, .num_heads = 1, .dim_feedforward = 4}, .num_layers = 300});
  save_model(encoder, file.path);
  CHECK(load_model(file.path)->state_dict().size() == encoder.state_dict().size());
}
