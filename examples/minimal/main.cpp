// A first look at tensorgrad's core: build tensors, broadcast, multiply on OpenBLAS, reduce, print.
#include <tensorgrad/tensorgrad.h>

int main() {
  tg::manual_seed(0);
  tg::Tensor x = tg::randn({4, 3});                    // (4, 3)
  tg::Tensor w = tg::arange(0, 6).reshape({3, 2});     // (3, 2)
  tg::Tensor y = tg::relu(tg::matmul(x, w) + 1.0);     // (4, 2)
  fmt::print("x @ w + 1, relu:\n{}\n", y);
  fmt::print("softmax over dim 1:\n{}\n", tg::softmax(y, 1));
  fmt::print("column means: {}\n", tg::mean(y, {0}));
  tg::BlasInfo blas = tg::blas_info();
  fmt::print("BLAS: {} ({}, core {}, {} threads)\n", blas.library, blas.config, blas.core, blas.threads);
}
