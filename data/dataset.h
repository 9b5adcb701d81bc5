#pragma once
// Datasets: indexable collections of examples, as torch.utils.data.Dataset (map-style). An example is a
// short list of tensors (its fields: tokens, label, ...), so that one collate function serves every dataset.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace tg::data {

/// The fields of one example, e.g. {tokens (S), label ()}. Every example of a dataset has the same number
/// of fields, each of the same dtype and rank.
using Example = std::vector<Tensor>;

/// A map-style dataset. get() is called from the DataLoader's worker threads, several at once, so it must
/// not modify shared state; and it must not draw from tg::default_generator() (the threads would interleave
/// its draws): derive randomness from the index instead.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The number of examples.
  virtual int64_t size() const = 0;
  /// Example `index`, 0 <= index < size(); IndexError otherwise.
  virtual Example get(int64_t index) const = 0;
};

/// Examples that are rows of tensors sharing their first dimension, as torch.utils.data.TensorDataset:
/// example i is {tensors[0][i], tensors[1][i], ...} (views, no copies).
class TensorDataset : public Dataset {
 public:
  /// ValueError for no tensors, an undefined or 0-d tensor, or first dimensions that differ (naming both).
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const override { return size_; }
  Example get(int64_t index) const override;

 private:
  std::vector<Tensor> tensors_;
  int64_t size_ = 0;
};

}  // namespace tg::data
