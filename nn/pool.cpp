// The pooling layers' constructors, which check their options as the functions would at the first forward, so
// that a bad size fails where the model is built.
#include "nn/pool.h"

namespace tg::nn {
namespace {

// ValueError naming the layer unless kernel, stride and dilation are >= 1 and 0 <= padding <= kernel / 2, each
// a (height, width) pair (height 1, padding 0 for 1-d layers).
struct PoolSizes {
  std::array<int64_t, 2> kernel, stride, padding, dilation;
};
void check_sizes(const char* layer, int n, const PoolSizes& s) {
  auto at_least_1 = [&](const std::array<int64_t, 2>& a, const char* what) {
    check<ValueError>(a[0] >= 1 && a[1] >= 1, "{}: {} must be >= 1, got {}", layer, what, window_dims(a, n));
  };
  at_least_1(s.kernel, "kernel_size");
  at_least_1(s.stride, "stride");
  at_least_1(s.dilation, "dilation");
  check<ValueError>(s.padding[0] >= 0 && s.padding[1] >= 0 && s.padding[0] <= s.kernel[0] / 2 &&
                        s.padding[1] <= s.kernel[1] / 2,
                    "{}: padding {} must be >= 0 and at most half of kernel_size {}", layer, window_dims(s.padding, n),
                    window_dims(s.kernel, n));
}

std::array<int64_t, 2> pair(Size2 s) { return {s.h, s.w}; }

}  // namespace

MaxPool2d::MaxPool2d(const MaxPool2dOptions& o) : options_(o) {
  check_sizes("MaxPool2d", 2, {pair(o.kernel_size), pair(o.stride.value_or(o.kernel_size)), pair(o.padding),
                               pair(o.dilation)});
}

MaxPool1d::MaxPool1d(const MaxPool1dOptions& o) : options_(o) {
  check_sizes("MaxPool1d", 1, {{1, o.kernel_size}, {1, o.stride.value_or(o.kernel_size)}, {0, o.padding},
                               {1, o.dilation}});
}

AvgPool2d::AvgPool2d(const AvgPool2dOptions& o) : options_(o) {
  check_sizes("AvgPool2d", 2, {pair(o.kernel_size), pair(o.stride.value_or(o.kernel_size)), pair(o.padding), {1, 1}});
}

AvgPool1d::AvgPool1d(const AvgPool1dOptions& o) : options_(o) {
  check_sizes("AvgPool1d", 1, {{1, o.kernel_size}, {1, o.stride.value_or(o.kernel_size)}, {0, o.padding}, {1, 1}});
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2 output_size) : output_size_(output_size) {
  check<ValueError>(output_size.h >= 1 && output_size.w >= 1,
                    "AdaptiveAvgPool2d: output_size must be >= 1, got ({}, {})", output_size.h, output_size.w);
}

AdaptiveAvgPool1d::AdaptiveAvgPool1d(int64_t output_size) : output_size_(output_size) {
  check<ValueError>(output_size >= 1, "AdaptiveAvgPool1d: output_size must be >= 1, got {}", output_size);
}

}  // namespace tg::nn
