// ModuleList and ModuleDict: children named by position or key under their parent's name, kept in step
// through append/extend/insert/replace/pop, bounds and key errors, and PyTorch's state_dict of a ModuleDict
// holding ModuleLists (fixtures nn/norms.*) loaded by name and in PyTorch's order.
#include <doctest/doctest.h>

#include "nn/activation.h"
#include "nn/containers.h"
#include "nn/dense.h"
#include "nn/norms_fixture.h"

using namespace tg;

namespace {

std::unique_ptr<nn::Dense> dense(int64_t in, int64_t out) {
  return std::make_unique<nn::Dense>(nn::DenseOptions{.in_features = in, .out_features = out});
}

std::vector<std::string> parameter_names(const nn::Layer& l) {
  std::vector<std::string> names;
  for (const auto& [name, p] : l.named_parameters()) names.push_back(name);
  return names;
}

// A model holding a ModuleList "layers" and a ModuleDict "blocks", as a PyTorch module would.
struct Model : nn::Layer {
  nn::ModuleList layers;
  nn::ModuleDict blocks;
  Model() {
    register_layer("layers", layers);
    register_layer("blocks", blocks);
  }
};

}  // namespace

TEST_CASE("ModuleList and ModuleDict give PyTorch's dotted paths under their parent") {
  Model m;
  m.layers.append(dense(2, 3));
  m.layers.emplace<nn::ReLU>();
  m.layers.emplace<nn::Dense>(nn::DenseOptions{.in_features = 3, .out_features = 1, .bias = false});
  m.blocks.insert("encoder", dense(3, 3));
  m.blocks.emplace<nn::BatchNorm1d>("norm", nn::BatchNormOptions{.num_features = 3});
  CHECK(parameter_names(m) == std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.2.weight",
                                                       "blocks.encoder.weight", "blocks.encoder.bias",
                                                       "blocks.norm.weight", "blocks.norm.bias"});
  std::vector<std::string> buffers;
  for (const auto& [name, b] : m.named_buffers()) buffers.push_back(name);
  CHECK(buffers == std::vector<std::string>{"blocks.norm.running_mean", "blocks.norm.running_var",
                                            "blocks.norm.num_batches_tracked"});
}

TEST_CASE("ModuleList indexes from either end, with a bounds check, and gets a layer by type") {
  nn::ModuleList list;
  list.append(dense(2, 3)).append(std::make_unique<nn::ReLU>());
  CHECK(list.size() == 2);
  CHECK(list[1].type_name() == "ReLU");
  CHECK(list[-2].type_name() == "Dense");
  CHECK(list.get<nn::Dense>(0).named_parameters().size() == 2);
  CHECK_THROWS_WITH_AS(list[2], "ModuleList: index 2 is out of range for 2 layers", IndexError);
  CHECK_THROWS_WITH_AS(list[-3], "ModuleList: index -3 is out of range for 2 layers", IndexError);
  CHECK_THROWS_WITH_AS(list.get<nn::Dense>(1), "ModuleList::get(1): the layer is a ReLU, not the type asked for",
                       ValueError);
  CHECK_THROWS_WITH_AS(list.append(nullptr), "ModuleList::append: null layer at position 2", ValueError);
  CHECK_THROWS_AS(list(Variable(randn({1, 2}))), Error);  // no forward of its own, as PyTorch's
}

TEST_CASE("ModuleList insert and extend renumber the children") {
  nn::ModuleList list;
  list.append(dense(1, 1));
  list.append(dense(2, 2));
  nn::Dense& first = list.emplace<nn::Dense>(nn::DenseOptions{.in_features = 3, .out_features = 3});
  list.insert(0, dense(4, 4));
  CHECK(list.size() == 4);
  CHECK(&list[3] == &first);
  const std::vector<std::string> names = parameter_names(list);
  CHECK(names.front() == "0.weight");
  CHECK(list.named_parameters()[0].second.shape() == Shape{4, 4});
  CHECK(list.named_parameters()[6].first == "3.weight");
  CHECK(list.named_parameters()[6].second.shape() == Shape{3, 3});
  CHECK_THROWS_WITH_AS(list.insert(5, dense(1, 1)), "ModuleList::insert: position 5 is out of range for 4 layers",
                       IndexError);
  std::vector<std::unique_ptr<nn::Layer>> more;
  more.push_back(dense(5, 5));
  more.push_back(nullptr);
  CHECK_THROWS_WITH_AS(list.extend(std::move(more)), "ModuleList::extend: null layer at position 1 of 2", ValueError);
  CHECK(list.size() == 4);  // nothing appended
  std::vector<std::unique_ptr<nn::Layer>> two;
  two.push_back(dense(5, 5));
  two.push_back(std::make_unique<nn::ReLU>());
  list.extend(std::move(two));
  CHECK(list.size() == 6);
  CHECK(parameter_names(list).back() == "4.bias");
}

TEST_CASE("ModuleDict keeps insertion order, replaces in place and pops") {
  nn::ModuleDict d;
  d.insert("z", dense(1, 1));
  d.insert("a", dense(2, 2));
  d.insert("m", std::make_unique<nn::ReLU>());
  CHECK(d.keys() == std::vector<std::string>{"z", "a", "m"});
  CHECK(parameter_names(d) == std::vector<std::string>{"z.weight", "z.bias", "a.weight", "a.bias"});
  d.insert("z", dense(3, 3));  // replaced where it was
  CHECK(d.keys() == std::vector<std::string>{"z", "a", "m"});
  CHECK(d.named_parameters()[0].second.shape() == Shape{3, 3});
  CHECK(d.contains("a"));
  CHECK_FALSE(d.contains("b"));
  CHECK(d["m"].type_name() == "ReLU");
  CHECK(d.get<nn::Dense>("a").named_parameters()[0].second.shape() == Shape{2, 2});
  std::unique_ptr<nn::Layer> a = d.pop("a");
  CHECK(a->type_name() == "Dense");
  CHECK(d.keys() == std::vector<std::string>{"z", "m"});
  CHECK(parameter_names(d) == std::vector<std::string>{"z.weight", "z.bias"});
  CHECK(d.size() == 2);
}

TEST_CASE("ModuleDict names a missing key and the keys it has, and refuses bad keys") {
  nn::ModuleDict d;
  d.insert("encoder", dense(1, 1));
  d.insert("decoder", dense(1, 1));
  CHECK_THROWS_WITH_AS(d.at("head"), "ModuleDict: no key 'head' (keys: [encoder, decoder])", IndexError);
  CHECK_THROWS_AS(d.pop("head"), IndexError);
  CHECK_THROWS_WITH_AS(d.insert("a.b", dense(1, 1)), "ModuleDict::insert: key 'a.b' must be non-empty and contain no '.'",
                       ValueError);
  CHECK_THROWS_AS(d.insert("", dense(1, 1)), ValueError);
  CHECK_THROWS_WITH_AS(d.insert("x", nullptr), "ModuleDict::insert: null layer for key 'x'", ValueError);
  CHECK_THROWS_WITH_AS(d.get<nn::ReLU>("encoder"), "ModuleDict::get('encoder'): the layer is a Dense, not the type "
                       "asked for", ValueError);
  CHECK(d.size() == 2);
}

TEST_CASE("PyTorch's state_dict of a ModuleDict of ModuleLists loads, names in PyTorch's order") {
  for (const char* file : {"nn/norms.f64.json", "nn/norms.f32.json"}) {
    const nlohmann::json f = test::load_fixture(file);
    const DType dt = test::fixture_dtype(f);
    nn::ModuleDict model;
    for (const char* key : {"bn1d", "bn2d", "bn2d_cma", "bn2d_noaffine", "bn1d_notrack"})
      model.insert(key, test::make_norm_layer(key, dt));
    for (const char* key : {"gn", "rms"}) {
      auto& list = model.emplace<nn::ModuleList>(key);
      for (int i = 0; i < (std::string(key) == "gn" ? 2 : 3); ++i)
        list.append(test::make_norm_layer(fmt::format("{}.{}", key, i), dt));
    }
    const TensorMap weights = test::fixture_weights(f);
    model.load_state_dict(weights);  // strict: the same keys, shapes and dtypes
    CHECK(parameter_names(model) == f["named_parameters"].get<std::vector<std::string>>());
    std::vector<std::string> buffers;
    for (const auto& [name, b] : model.named_buffers()) buffers.push_back(name);
    CHECK(buffers == f["named_buffers"].get<std::vector<std::string>>());
    for (const auto& [key, t] : model.state_dict()) CHECK(test::max_abs_diff(t, weights.at(key)) == 0);
    CHECK(model.get<nn::BatchNorm2d>("bn2d_cma").num_batches_tracked().item() == 5);
  }
}
