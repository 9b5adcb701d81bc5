// Collation: stacking, padding to the longest example with the masks (true = padding), and the errors
// that name the field and the examples that disagree.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ops.h"
#include "data/collate.h"

using namespace tg;
using namespace tg::data;

TEST_CASE("default_collate stacks each field along a new first dimension") {
  Batch b = default_collate({{tensor({1, 2}), scalar_tensor(0, i64)}, {tensor({3, 4}), scalar_tensor(1, i64)}});
  REQUIRE(b.fields.size() == 2);
  CHECK(b[0].shape() == Shape{2, 2});
  CHECK(b[0].to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(b[1].to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK_FALSE(b.masks[0].defined());
}

TEST_CASE("pad_collate pads to the longest sequence and masks the padding (true = padding)") {
  Example a = {index_tensor({5, 6, 7}, {3}), scalar_tensor(1, i64)};
  Example b = {index_tensor({8}, {1}), scalar_tensor(0, i64)};
  Batch batch = pad_collate({.padding_value = -1})({a, b});
  CHECK(batch[0].shape() == Shape{2, 3});
  CHECK(batch[0].to_vector<int64_t>() == std::vector<int64_t>{5, 6, 7, 8, -1, -1});
  REQUIRE(batch.masks[0].defined());
  CHECK(batch.masks[0].dtype() == DType::boolean);
  CHECK(batch.masks[0].to(i64).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 1, 1});
  CHECK(batch[1].to_vector<int64_t>() == std::vector<int64_t>{1, 0});  // 0-d labels are stacked, unmasked
  CHECK_FALSE(batch.masks[1].defined());
}

TEST_CASE("pad_collate pads every dimension of a ragged field and masks along the first") {
  // (2, 1) and (1, 3): padded to (2, 3) each, as sub-word lists of differing counts per token.
  Batch b = pad_collate()({{index_tensor({1, 2}, {2, 1})}, {index_tensor({3, 4, 5}, {1, 3})}});
  CHECK(b[0].shape() == Shape{2, 2, 3});
  CHECK(b[0].to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 2, 0, 0, 3, 4, 5, 0, 0, 0});
  CHECK(b.masks[0].to(i64).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 1});
}

TEST_CASE("collate errors name the field and the examples that disagree") {
  CHECK_THROWS_WITH_AS(default_collate({{tensor({1, 2})}, {tensor({1, 2, 3})}}),
                       "default_collate: field 0 has shape (2,) in example 0 but (3,) in example 1", ShapeError);
  CHECK_THROWS_WITH_AS(default_collate({{tensor({1})}, {index_tensor({1}, {1})}}),
                       "default_collate: field 0 has dtype f32 in example 0 but i64 in example 1", DTypeError);
  CHECK_THROWS_WITH_AS(pad_collate()({{tensor({1}), tensor({1})}, {tensor({1})}}),
                       "pad_collate: example 0 has 2 fields but example 1 has 1", ValueError);
  CHECK_THROWS_WITH_AS(pad_collate()({{tensor({1})}, {tensor({1}, {1, 1})}}),
                       "pad_collate: field 0 has shape (1,) in example 0 but (1, 1) in example 1", ShapeError);
  CHECK_THROWS_WITH_AS(default_collate({}), "default_collate: no examples to collate", ValueError);
}
