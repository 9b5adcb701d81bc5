// Your own layer, the Keras way: multi-head self-attention written as a Layer subclass from Dense layers,
// with its weights made in build() once the width of the input is known. Then three checks that every new
// layer deserves:
//   1. its gradients against finite differences (tg::gradcheck, in float64);
//   2. its output against the library's nn::MultiHeadAttention given the same weights;
//   3. a short training run, in which the loss must fall.
// Each check prints one line ending in "passed" or "FAILED"; the exit code is the number of failures.
#include <cmath>

#include <tensorgrad/tensorgrad.h>

using namespace tg;

struct MyAttentionOptions {
  int64_t d_model = 0;    // E: the width of the output and of every head together
  int64_t num_heads = 0;  // H: each head attends in d_model / num_heads dims
  DType dtype = f32;
};

// softmax(Q·Kᵀ/√d)·V per head, heads concatenated, then a Dense (Vaswani et al. 2017, §3.2.2).
// x: (B, S, width) -> (B, S, d_model); the input's width can be anything, build() reads it.
class MyAttention : public nn::Layer {
 public:
  explicit MyAttention(const MyAttentionOptions& o)
      : options_(o),
        // No in_features: a Dense without it makes its weight on its first input (PyTorch's LazyLinear).
        wq_({.out_features = o.d_model, .dtype = o.dtype}),
        wk_({.out_features = o.d_model, .dtype = o.dtype}),
        wv_({.out_features = o.d_model, .dtype = o.dtype}),
        dense_({.out_features = o.d_model, .dtype = o.dtype}) {
    check<ValueError>(o.num_heads > 0 && o.d_model % o.num_heads == 0,
                      "MyAttention: d_model {} is not a multiple of num_heads {}", o.d_model, o.num_heads);
    defer_build();  // parameters() before the first call throws, instead of returning an empty list
    register_layer("wq", wq_);  // the names give the dotted paths: "wq.weight", "dense.bias", ...
    register_layer("wk", wk_);
    register_layer("wv", wv_);
    register_layer("dense", dense_);
  }

  Variable forward(const Variable& x) override {
    const int64_t B = x.size(0), S = x.size(1), H = options_.num_heads, d = options_.d_model / H;
    auto split_heads = [&](nn::Dense& project) {  // (B, S, E) -> (B, H, S, d)
      return project(x).reshape({B, S, H, d}).permute({0, 2, 1, 3});
    };
    const Variable q = split_heads(wq_), k = split_heads(wk_), v = split_heads(wv_);
    const Variable weights = softmax(matmul(q, k.mT()) / std::sqrt(double(d)), -1);         // (B, H, S, S)
    const Variable heads = matmul(weights, v).permute({0, 2, 1, 3}).reshape({B, S, H * d});  // (B, S, E)
    return dense_(heads);
  }
  std::string type_name() const override { return "MyAttention"; }
  // The four projections, for reading or setting their weights.
  nn::Dense& wq() { return wq_; }
  nn::Dense& wk() { return wk_; }
  nn::Dense& wv() { return wv_; }
  nn::Dense& dense() { return dense_; }

 protected:
  // Keras's build(input_shape): runs once, before the first forward, when the input's shape is known.
  void build(const Shape& input_shape) override {
    check<ShapeError>(input_shape.size() == 3, "MyAttention: input must be (B, S, width), got {}", input_shape);
    for (nn::Dense* project : {&wq_, &wk_, &wv_}) project->ensure_built(input_shape);  // (E, width) each
    dense_.ensure_built({input_shape[0], input_shape[1], options_.d_model});               // (E, E)
  }

 private:
  MyAttentionOptions options_;
  nn::Dense wq_, wk_, wv_, dense_;  // as the Keras write-up names them
};

// Prints "<what>: passed" or "<what>: FAILED" and returns 1 on failure.
int report(const std::string& what, bool ok) {
  fmt::print("{}: {}\n", what, ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}

// 1. Every parameter and the input, against central differences in float64.
int check_gradients() {
  MyAttention attention({.d_model = 4, .num_heads = 2, .dtype = f64});
  try {
    attention.parameters();
  } catch (const ValueError& e) {
    fmt::print("before the first call, parameters() says:\n  {}\n", e.what());
  }
  const Variable x(randn({2, 3, 5}, f64), true);  // (B, S, width): width 5, so E x 5 projections
  attention(x);                                   // a dry run: build() makes the weights
  std::vector<Variable> inputs{x};
  for (const Variable& p : attention.parameters()) inputs.push_back(p);
  const GradcheckResult r = gradcheck([&](const std::vector<Variable>& in) { return attention(in[0]); }, inputs);
  if (!r) fmt::print("{}\n", r);
  return report("1. gradcheck in f64", bool(r));
}

// 2. The library's layer keeps q, k and v stacked in one in_proj (3E, E); ours has three Dense layers.
int check_against_library() {
  MyAttention mine({.d_model = 8, .num_heads = 2, .dtype = f64});
  const Variable x(randn({2, 5, 8}, f64));
  const Variable y = mine(x);
  nn::MultiHeadAttention library({.d_model = 8, .num_heads = 2, .dtype = f64});
  library.in_proj_weight().copy_(cat({mine.wq().weight().value(), mine.wk().weight().value(),
                                      mine.wv().weight().value()}, 0));  // (3E, E): rows q, k, v
  library.in_proj_bias().copy_(cat({mine.wq().bias().value(), mine.wk().bias().value(), mine.wv().bias().value()}, 0));
  library.out_proj().weight().copy_(mine.dense().weight().value());
  library.out_proj().bias().copy_(mine.dense().bias().value());
  const double diff = amax(abs(y.value() - library.forward(x, x, x).output.value())).item();
  return report(fmt::format("2. same output as nn::MultiHeadAttention (max |difference| {:.1e})", diff), diff < 1e-12);
}

// 3. Fit the outputs of a fixed, random nn::MultiHeadAttention (the teacher) on random inputs.
int check_training() {
  nn::MultiHeadAttention teacher({.d_model = 8, .num_heads = 2});
  MyAttention student({.d_model = 8, .num_heads = 2});
  const Variable x(randn({16, 6, 8}));
  Variable target;
  {
    NoGradGuard no_grad;
    target = teacher.forward(x, x, x).output;  // (16, 6, 8)
    student(x);                                // a dry run, so that the optimizer sees every weight
  }
  optim::Adam opt(student.parameters(), {.lr = 1e-2});
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    Variable loss = nn::mse_loss(student(x), target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step == 0) first = loss.item();
    last = loss.item();
  }
  return report(fmt::format("3. training: mse {:.4f} -> {:.4f}", first, last), last < first / 10);
}

int main() {
  manual_seed(0);
  int failures = check_gradients() + check_against_library() + check_training();
  MyAttention model({.d_model = 8, .num_heads = 2});
  model(Variable(zeros({1, 1, 8})));
  fmt::print("\n{}", model.summary());
  return failures;
}
