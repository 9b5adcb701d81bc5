// Embedding against PyTorch's nn.Embedding(10, 4, padding_idx=0) (fixtures nn/embedding.*), its padding
// row, finite differences and its index errors.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/embedding.h"
#include "nn/fixture.h"

using namespace tg;

TEST_CASE("Embedding matches torch.nn.Embedding: rows, padding row without gradient, repeats adding up") {
  for (const char* file : {"nn/embedding.f64.json", "nn/embedding.f32.json"}) {
    CAPTURE(file);
    const nlohmann::json f = test::load_fixture(file);
    const DType dt = test::fixture_dtype(f);
    nn::Embedding emb({.num_embeddings = 10, .embedding_dim = 4, .padding_idx = 0, .dtype = dt});
    emb.load_state_dict(test::fixture_weights(f));
    for (const nlohmann::json& c : f["cases"]) {
      emb.zero_grad();
      const Tensor indices = test::fixture_tensor(c["inputs"]["indices"], i64);
      test::check_fixture_case(emb, c, emb(indices), {}, test::fixture_tolerance(dt));
    }
  }
}

TEST_CASE("Embedding starts N(0, 1) with the padding row at zero") {
  manual_seed(0);
  nn::Embedding emb({.num_embeddings = 200, .embedding_dim = 50, .padding_idx = 3});
  const Tensor w = emb.weight().value();
  CHECK(amax(abs(w.select(0, 3))).item() == 0);
  CHECK(std::abs(mean(w).item()) < 0.04);  // 10 000 draws: σ of the mean is 0.01
  CHECK(std::sqrt(var(w).item()) == doctest::Approx(1).epsilon(0.03));
}

TEST_CASE("Embedding's padding row stays zero after a gradient step") {
  manual_seed(2);
  nn::Embedding emb({.num_embeddings = 5, .embedding_dim = 3, .padding_idx = 0, .dtype = f64});
  sum(emb(index_tensor({0, 2, 0, 4}, {2, 2})) * 3.0).backward();
  Tensor w = emb.weight().value();
  const Tensor g = emb.weight().grad();
  CHECK(amax(abs(g.select(0, 0))).item() == 0);
  CHECK(g.select(0, 2).to_vector<double>() == std::vector<double>{3, 3, 3});
  w.add_(g, -0.1);  // an SGD step
  CHECK(amax(abs(w.select(0, 0))).item() == 0);
}

// Without padding_idx: the padding row's output does depend on its weights, but gets no gradient by design.
TEST_CASE("Embedding passes gradcheck in f64 and can head a Sequential through forward(Variable)") {
  manual_seed(3);
  nn::Embedding emb({.num_embeddings = 4, .embedding_dim = 2, .dtype = f64});
  const Tensor idx = index_tensor({3, 1, 3, 0, 2, 1}, {3, 2});
  CHECK(gradcheck([&](const std::vector<Variable>&) { return emb(idx); }, emb.parameters()));
  CHECK(test::max_abs_diff(emb(Variable(idx)).value(), emb.forward(idx).value()) == 0);
}

TEST_CASE("Embedding names the index and the table size when an index is out of range") {
  nn::Embedding emb({.num_embeddings = 10, .embedding_dim = 4});
  CHECK_THROWS_WITH_AS(emb(index_tensor({1, 10}, {2})), "embedding: index 10 is out of range for 10 embeddings",
                       IndexError);
  CHECK_THROWS_WITH_AS(emb(index_tensor({-1}, {1})), "embedding: index -1 is out of range for 10 embeddings",
                       IndexError);
  CHECK_THROWS_WITH_AS(nn::Embedding({.num_embeddings = 10, .embedding_dim = 4, .padding_idx = 10}),
                       "Embedding: padding_idx 10 is out of range for 10 embeddings (-1 = none)", ValueError);
  // The function took any padding_idx: one past the table masked no row, so the padding row was trained.
  const Variable weight(randn({10, 4}), true);
  CHECK_THROWS_WITH_AS(embedding(weight, index_tensor({1}, {1}), 10),
                       "embedding: padding_idx 10 is out of range for 10 embeddings (-1 = none)", IndexError);
  CHECK_THROWS_WITH_AS(embedding(weight, index_tensor({1}, {1}), -2),
                       "embedding: padding_idx -2 is out of range for 10 embeddings (-1 = none)", IndexError);
}
