// TensorDataset: rows of tensors as examples, by view.
#include "data/dataset.h"

#include "core/error.h"

namespace tg::data {

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  check<ValueError>(!tensors_.empty(), "TensorDataset: no tensors given");
  for (size_t k = 0; k < tensors_.size(); ++k) {
    check<ValueError>(tensors_[k].defined() && tensors_[k].dim() >= 1, "TensorDataset: tensor {} is {}; every tensor "
                      "needs a first dimension (the examples)", k, tensors_[k].defined() ? "0-d" : "undefined");
    check<ValueError>(tensors_[k].size(0) == tensors_[0].size(0), "TensorDataset: tensors 0 and {} differ in their first "
                      "dimension: {} vs {}", k, tensors_[0].shape(), tensors_[k].shape());
  }
  size_ = tensors_[0].size(0);
}

Example TensorDataset::get(int64_t index) const {
  check<IndexError>(index >= 0 && index < size_, "TensorDataset: index {} out of range for {} examples", index, size_);
  Example out;
  out.reserve(tensors_.size());
  for (const Tensor& t : tensors_) out.push_back(t.select(0, index));
  return out;
}

}  // namespace tg::data
