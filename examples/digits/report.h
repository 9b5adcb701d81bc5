#pragma once
// What a trained model does on labelled images: accuracy, confusion matrix, and the pictures of its first
// layer's filters and of the images it gets wrong.
#include <cstdint>
#include <string>
#include <vector>

#include "images.h"
#include "model.h"

namespace digits {

struct Evaluation {
  tg::Tensor proba;                ///< (N, 10) softmax probabilities
  std::vector<int64_t> predicted;  ///< the most probable digit of each image
  std::vector<int64_t> truth;
  double accuracy = 0;
  std::vector<std::vector<int64_t>> confusion;  ///< [true][predicted] counts, 10 × 10
};

/// Runs `model` on labelled `images`. ValueError for images without labels.
Evaluation evaluate(DigitsNet& model, const Images& images);

/// "accuracy 0.9851 (265 of 269)" and the confusion matrix as a table (rows: true digit).
std::string format_evaluation(const Evaluation& e);

/// Creates `dir` if needed and writes `dir`/filters.svg (the first convolution's filters) and
/// `dir`/misclassified.svg (every image of `images` that `e` gets wrong, captioned "true → predicted (probability)"), each atomically. Returns
/// the two paths. tg::Error naming the file when a write fails.
std::vector<std::string> write_pictures(const DigitsNet& model, const Images& images, const Evaluation& e,
                                        const std::string& dir, const std::string& name);

}  // namespace digits
