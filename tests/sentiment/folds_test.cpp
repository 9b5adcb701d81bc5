// An ensemble on folds (ensemble_data "folds"): member k trains on all training sentences but fold k, and
// the validation accuracy is out-of-fold, each member judged on the fold it did not train on.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tiny_run.h"

using namespace sentiment;
using sentiment_test::TempDir;

TEST_CASE("an ensemble on folds reports each member's accuracy on its own held-out fold as validation accuracy") {
  TempDir tmp;
  Config c = sentiment_test::tiny_config();
  c.model.ensemble = 3, c.train.ensemble_data = EnsembleData::folds, c.train.val_fraction = 0, c.train.keep_best = false;
  const Data data = prepare_data(sentiment_test::write_tiny_tsv(tmp), c, /*seed=*/7);
  REQUIRE(data.val.empty());
  REQUIRE(data.train.size() == 120);
  const std::string dir = (tmp.path / "model").string();
  const TrainResult r = train(c, data, {.out_dir = dir, .seed = 7, .verbose = false});

  // Recount with the saved members and the folds of seed 7: member k on fold k.
  LoadedModel m = load_model(dir);
  REQUIRE(m.model->num_members() == 3);
  const std::vector<int64_t> fold = assign_folds(data.train.size(), 3, 7);
  tg::NoGradGuard no_grad;
  int64_t correct = 0;
  for (int64_t k = 0; k < 3; ++k) {
    std::vector<Encoded> held_out;
    for (size_t i = 0; i < data.train.size(); ++i)
      if (fold[i] == k) held_out.push_back(data.train[i]);
    REQUIRE(held_out.size() == 40);
    const std::unique_ptr<tg::data::DataLoader> loader = make_loader(held_out, 128);
    for (const tg::data::Batch& batch : *loader) {
      const Batch b = Batch::of(batch);
      correct += tg::sum(tg::eq(tg::argmax(m.model->member(k).forward(b.tokens, b.pad_mask, b.subwords).value(), 1),
                                   b.labels))
                     .to_vector<int64_t>()[0];
    }
  }
  CHECK(r.val_accuracy == double(correct) / 120.0);
  CHECK(r.log.back().val_accuracy == r.val_accuracy);
  CHECK(r.val_accuracy > 0.5);  // members learn: the tiny data is separable by its sentiment words
}
