#pragma once
#include "nn/layer.h"

namespace tg::nn {

/// SinusoidalPositionalEncoding's options.
struct PositionalEncodingOptions {
  int64_t d_model = 0;     ///< the width of the input
  int64_t max_len = 5000;  ///< the longest sequence forward accepts
  DType dtype = f32;       ///< of the table
};

/// Fixed sinusoids (Vaswani et al. 2017, §3.5): PE(pos, 2i) = sin(pos / 10000^(2i/d)),
/// PE(pos, 2i+1) = cos(pos / 10000^(2i/d)), held in the buffer "pe" (max_len, d_model) (saved, not trained;
/// an odd d_model drops the last cosine). x: (B, S, d_model) -> x + PE[:S]. ValueError when S > max_len.
class SinusoidalPositionalEncoding : public Layer {
 public:
  /// Fills the table PE; ValueError for a non-positive d_model or max_len, DTypeError for a dtype not f32/f64.
  explicit SinusoidalPositionalEncoding(const PositionalEncodingOptions& options);
  Variable forward(const Variable& x) override;
  /// x + PE[start : start + S]: positions from `start` on, for cached decoding (the new tokens come after
  /// `start` cached ones). ValueError when start < 0 or start + S > max_len.
  Variable forward(const Variable& x, int64_t start);
  std::string type_name() const override { return "SinusoidalPositionalEncoding"; }
  const Tensor& pe() const { return pe_; }  ///< the table PE (max_len, d_model), the buffer "pe"
  const PositionalEncodingOptions& options() const { return options_; }  ///< as constructed

 private:
  PositionalEncodingOptions options_;
  Tensor pe_;  // (max_len, d_model)
};

/// LearnedPositionalEncoding's options.
struct LearnedPositionalEncodingOptions {
  int64_t d_model = 0;    ///< the width of the input
  int64_t max_len = 512;  ///< the longest sequence forward accepts
  /// Init N(0, std²). 1 is nn.Embedding's default, what a PyTorch user who writes
  /// nn.Embedding(max_len, d_model) gets; BERT and GPT-2 use 0.02.
  double std = 1.0;
  DType dtype = f32;  ///< of the weight
};

/// Learned absolute positions (Gehring et al. 2017; BERT): a trained table "weight" (max_len, d_model), the
/// layout of nn.Embedding(max_len, d_model). x: (B, S, d_model) -> x + weight[:S]. ValueError when S > max_len.
class LearnedPositionalEncoding : public Layer {
 public:
  /// ValueError for a non-positive d_model or max_len, or a negative std.
  explicit LearnedPositionalEncoding(const LearnedPositionalEncodingOptions& options);
  Variable forward(const Variable& x) override;
  /// x + weight[start : start + S], for cached decoding. ValueError when start < 0 or start + S > max_len.
  Variable forward(const Variable& x, int64_t start);
  std::string type_name() const override { return "LearnedPositionalEncoding"; }
  Variable weight() const { return weight_; }                                   ///< (max_len, d_model), "weight"
  const LearnedPositionalEncodingOptions& options() const { return options_; }  ///< as constructed

 private:
  LearnedPositionalEncodingOptions options_;
  Variable weight_;  // (max_len, d_model)
};

}  // namespace tg::nn
