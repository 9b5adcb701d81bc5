// The network and its batched inference.
#include "model.h"

#include "images.h"

namespace digits {
namespace nn = tg::nn;

DigitsNet::DigitsNet(const ModelConfig& c) {
  // Padding 1 keeps each convolution's output the size of its input; each pool halves it.
  conv1_ = &emplace<nn::Conv2d>(nn::Conv2dOptions{.in_channels = 1, .out_channels = c.channels1, .kernel_size = 3,
                                                  .padding = 1});
  emplace<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = c.channels1});
  emplace<nn::ReLU>();
  emplace<nn::MaxPool2d>(nn::MaxPool2dOptions{.kernel_size = 2});                                  // (N, C1, 4, 4)
  emplace<nn::Conv2d>(nn::Conv2dOptions{.in_channels = c.channels1, .out_channels = c.channels2, .kernel_size = 3,
                                        .padding = 1});
  emplace<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = c.channels2});
  emplace<nn::ReLU>();
  emplace<nn::MaxPool2d>(nn::MaxPool2dOptions{.kernel_size = 2});                                  // (N, C2, 2, 2)
  emplace<nn::Flatten>();                                                                          // (N, C2·4)
  emplace<nn::Dropout>(c.dropout);
  emplace<nn::Dense>(nn::DenseOptions{.in_features = c.channels2 * 4, .out_features = kClasses});  // (N, 10)
}

tg::Tensor predict_proba(DigitsNet& model, const tg::Tensor& images) {
  tg::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<tg::Tensor> parts;
  const int64_t n = images.size(0);
  for (int64_t at = 0; at < n; at += 256)
    parts.push_back(tg::softmax(model(tg::Variable(images.narrow(0, at, std::min<int64_t>(256, n - at)))).value(), 1));
  model.train(was_training);
  return tg::cat(parts, 0);
}

int64_t count_correct(const tg::Tensor& scores, const tg::Tensor& labels) {
  return tg::sum(tg::eq(tg::argmax(scores, 1), labels)).to_vector<int64_t>()[0];
}

}  // namespace digits
