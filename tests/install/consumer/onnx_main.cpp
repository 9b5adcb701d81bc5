// Uses the installed ONNX export: a Dense layer written to the file named by argv[1], checked by the calling
// script (the file exists and is not empty).
#include <tensorgrad/onnx/export.h>
#include <tensorgrad/tensorgrad.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  tg::nn::Dense dense(tg::nn::DenseOptions{.in_features = 3, .out_features = 2});
  tg::onnx::export_model(dense, tg::randn({1, 3}), argv[1]);
  fmt::print("exported\n");
}
