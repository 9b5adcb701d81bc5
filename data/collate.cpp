// Collation: stacking, or padding to the batch's longest example with a mask of what is padding. Each
// field's shapes and dtypes are checked across the batch first, so an error names the field and the two
// examples that disagree rather than an anonymous stack.
#include "data/collate.h"

#include <algorithm>

#include "core/error.h"
#include "core/ops.h"

namespace tg::data {
namespace {

// Field k of every example; checks the field counts, dtypes and (unless `ragged`) shapes against example 0.
std::vector<Tensor> field(const std::vector<Example>& examples, size_t k, bool ragged, const char* op) {
  std::vector<Tensor> out;
  out.reserve(examples.size());
  const Tensor& first = examples[0][k];
  for (size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = examples[i][k];
    check<ValueError>(t.defined(), "{}: field {} of example {} is undefined", op, k, i);
    check<DTypeError>(t.dtype() == first.dtype(), "{}: field {} has dtype {} in example 0 but {} in example {}", op, k,
                      dtype_name(first.dtype()), dtype_name(t.dtype()), i);
    check<ShapeError>(ragged ? t.dim() == first.dim() : t.shape() == first.shape(), "{}: field {} has shape {} in "
                      "example 0 but {} in example {}", op, k, first.shape(), t.shape(), i);
    out.push_back(t);
  }
  return out;
}

// ValueError for an empty batch or examples whose field counts differ.
void check_examples(const std::vector<Example>& examples, const char* op) {
  check<ValueError>(!examples.empty(), "{}: no examples to collate", op);
  for (size_t i = 1; i < examples.size(); ++i)
    check<ValueError>(examples[i].size() == examples[0].size(), "{}: example 0 has {} fields but example {} has {}", op,
                      examples[0].size(), i, examples[i].size());
}

// rows (each (L_b, ...)) padded to the largest extent per dimension: the (B, L, ...) tensor and its (B, L)
// mask, true where row b is past L_b.
std::pair<Tensor, Tensor> pad(const std::vector<Tensor>& rows, double value) {
  Shape extent = rows[0].shape();
  for (const Tensor& r : rows)
    for (int64_t d = 0; d < r.dim(); ++d) extent[size_t(d)] = std::max(extent[size_t(d)], r.size(d));
  Shape shape = extent;
  shape.insert(shape.begin(), int64_t(rows.size()));
  Tensor out = full(shape, value, rows[0].dtype());
  Tensor mask = ones({int64_t(rows.size()), extent[0]}, DType::boolean);
  for (size_t b = 0; b < rows.size(); ++b) {
    Tensor dst = out.select(0, int64_t(b));
    for (int64_t d = 0; d < rows[b].dim(); ++d) dst = dst.narrow(d, 0, rows[b].size(d));
    dst.copy_(rows[b]);
    mask.select(0, int64_t(b)).narrow(0, 0, rows[b].size(0)).fill_(0);
  }
  return {out, mask};
}

}  // namespace

Batch default_collate(const std::vector<Example>& examples) {
  check_examples(examples, "default_collate");
  Batch b;
  for (size_t k = 0; k < examples[0].size(); ++k) {
    b.fields.push_back(stack(field(examples, k, false, "default_collate"), 0));
    b.masks.emplace_back();
  }
  return b;
}

Collate pad_collate(const PadCollateOptions& options) {
  return [options](const std::vector<Example>& examples) {
    check_examples(examples, "pad_collate");
    Batch b;
    for (size_t k = 0; k < examples[0].size(); ++k) {
      std::vector<Tensor> rows = field(examples, k, true, "pad_collate");
      if (rows[0].dim() == 0) {
        b.fields.push_back(stack(rows, 0)), b.masks.emplace_back();
        continue;
      }
      auto [padded, mask] = pad(rows, options.padding_value);
      b.fields.push_back(padded), b.masks.push_back(mask);
    }
    return b;
  };
}

}  // namespace tg::data
