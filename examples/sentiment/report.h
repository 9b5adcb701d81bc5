#pragma once
// What the sentiment program shows and writes: classification metrics, and the SVG pictures (learning curve, attention heatmaps).
#include <cstdint>
#include <string>
#include <vector>

#include <tensorgrad/tensorgrad.h>

namespace sentiment {

/// One row of the metrics log (metrics.jsonl). Accuracies are NaN when the split is absent.
struct EpochLog {
  int64_t epoch = 0;
  double train_loss = 0, train_accuracy = 0, val_accuracy = 0, lr = 0, seconds = 0, sentences_per_second = 0;
};

/// Accuracy, per-class precision/recall/F1 (macro averages) and the confusion matrix [truth][predicted].
struct Metrics {
  double accuracy = 0, precision = 0, recall = 0, f1 = 0;
  std::vector<std::vector<int64_t>> confusion;
};
/// ValueError when the vectors differ in length or are empty, or a label is outside [0, num_classes).
Metrics compute_metrics(const std::vector<int64_t>& predicted, const std::vector<int64_t>& truth, int64_t num_classes);
/// The metrics as a small text table (accuracy, macro precision/recall/F1, confusion matrix).
std::string format_metrics(const Metrics& m, const std::vector<std::string>& class_names);

/// A learning-curve plot: training loss (left axis) and training/validation accuracy (right axis) per epoch.
std::string learning_curve_svg(const std::vector<EpochLog>& log, const std::string& title);

/// Each head's normalised attention entropy: for weights[l] (H, S, S) (rows: queries, each a distribution
/// over the S keys), entropy[l][h] is the mean over the S queries of -sum_j w_ij log w_ij / log S: 1 when
/// every query spreads its weight evenly over the keys, 0 when each puts it all on one key. NaN when S = 1
/// (one key: nothing to choose). ValueError when a weights[l] is not (H, S, S) with the same H and S.
std::vector<std::vector<double>> attention_entropy(const std::vector<tg::Tensor>& weights);

/// One heatmap per layer and head of attention weights over a sentence's tokens, one row of heads per layer,
/// under a colour scale of the weights. weights[l] is (H, S, S) for layer l; rows are queries, columns keys;
/// cells are labelled with the tokens, and each panel with its head's normalised entropy (attention_entropy).
/// For an ensemble, weights holds each of the `networks` networks' layers in turn, and the panels name the
/// network. ValueError as attention_entropy's.
std::string attention_svg(const std::vector<std::string>& tokens, const std::vector<tg::Tensor>& weights,
                          const std::string& title, int64_t networks = 1);

}  // namespace sentiment
