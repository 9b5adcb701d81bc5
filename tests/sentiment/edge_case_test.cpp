// Edge cases of the sentiment example found while running it under the sanitizers (tests/fuzz and the
// TENSORGRAD_SANITIZE build): inputs at the limits of what the program accepts.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "temp_dir.h"
#include "train.h"

using namespace sentiment;
using sentiment_test::TempDir;

// `sentiment train --data five.tsv`: four training sentences leave no validation set (round(0.1 * 4) = 0),
// so no epoch had a best validation accuracy to save, and restoring "the best epoch" read a file never
// written ("load_safetensors: cannot open .../model.safetensors"). The last epoch is kept instead.
TEST_CASE("keep_best with an empty validation split keeps the last epoch") {
  TempDir dir;
  const std::string data_path =
      dir.write("five.tsv", "text\tlabel\ngood\t1\nbad\t0\nfine film\t1\nawful\t0\nnice\t1\n");  // 4 train, 1 test
  Config c = config_by_name("default");
  c.model.d_model = 8, c.model.num_heads = 2, c.model.num_layers = 1, c.model.dim_feedforward = 8;
  c.train.epochs = 1, c.train.keep_best = true;
  Data data = prepare_data(data_path, c, /*seed=*/0);
  REQUIRE(data.val.empty());
  REQUIRE(data.train.size() == 4);
  const std::string out = (dir.path / "model").string();
  TrainResult r;
  CHECK_NOTHROW(r = train(c, data, out, /*seed=*/0, /*verbose=*/false));
  CHECK(r.log.size() == 1);
  CHECK(std::filesystem::exists(dir.path / "model" / "model.safetensors"));
  CHECK_NOTHROW(load_model(out));
}
