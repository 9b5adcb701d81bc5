#pragma once
// Collate functions: a list of examples to one batch. default_collate stacks equal-shaped fields;
// pad_collate pads variable-length ones (torch.nn.utils.rnn.pad_sequence, batch_first) and returns the
// padding masks.
#include <cstdint>
#include <functional>
#include <vector>

#include "data/dataset.h"

namespace tg::data {

/// B examples collated. fields[k] holds field k of every example along a new first dimension (B, ...).
/// masks[k] is field k's padding mask (B, L), boolean, true at padding (PyTorch's key_padding_mask
/// polarity), for fields pad_collate padded; undefined otherwise. indices: the dataset index of each row
/// (the DataLoader fills it in).
struct Batch {
  std::vector<Tensor> fields;                               ///< each field stacked over the examples (B, ...)
  std::vector<Tensor> masks;                                ///< per field, (B, L) true at padding, or undefined
  std::vector<int64_t> indices;                             ///< the dataset index of each row
  int64_t size() const { return int64_t(indices.size()); }  ///< the number of examples, B
  /// Field k, stacked (B, ...); std::out_of_range past the fields.
  const Tensor& operator[](size_t k) const { return fields.at(k); }
};

/// Turns B >= 1 examples into a Batch (fields and masks; indices are left to the caller).
using Collate = std::function<Batch(const std::vector<Example>& examples)>;

/// Stacks field k of every example into fields[k] (B, ...); no masks. ValueError for no examples or
/// examples with different field counts; ShapeError / DTypeError naming the field and the two examples
/// whose shapes / dtypes differ.
Batch default_collate(const std::vector<Example>& examples);

/// pad_collate's options.
struct PadCollateOptions {
  double padding_value = 0;  ///< written at padded positions (e.g. the `<pad>` token id)
};
/// Pads variable-length fields: a field of rank >= 1 becomes (B, L, ...) with L and every trailing size
/// the largest in the batch, filled with padding_value past each example's extent; masks[k] is (B, L),
/// true where row b is padding along the first (sequence) dimension. 0-d fields (labels) are stacked to
/// (B) with no mask. Errors as default_collate, and ShapeError for fields whose ranks differ.
Collate pad_collate(const PadCollateOptions& options = {});

}  // namespace tg::data
