// Differentiable flip, roll, pad, repeat/tile and tril/triu: each gradient moves dy back where the forward took
// its elements from (pad's through its recorded adjoint, so that create_graph can differentiate it again).
#include "autograd/functions.h"

namespace tg {
namespace {

// The adjoint of pad: dy summed back onto x's shape. Linear, so its own backward is pad again.
Variable pad_backward(const Variable& dy, const Shape& shape, const std::vector<int64_t>& pads, PadMode mode) {
  return record("pad_backward", tg::pad_backward(dy.value(), shape, pads, mode), {dy},
                [pads, mode](const Variable& d, const Variable&) -> Grads { return {pad(d, pads, mode)}; });
}

}  // namespace

Variable flip(const Variable& x, const std::vector<int64_t>& dims) {
  return record("flip", tg::flip(x.value(), dims), {x},
                [dims](const Variable& dy, const Variable&) -> Grads { return {flip(dy, dims)}; });
}

Variable roll(const Variable& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  std::vector<int64_t> back;
  for (int64_t s : shifts) back.push_back(-s);
  return record("roll", tg::roll(x.value(), shifts, dims), {x},
                [back, dims](const Variable& dy, const Variable&) -> Grads { return {roll(dy, back, dims)}; });
}

Variable pad(const Variable& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  return record("pad", tg::pad(x.value(), pads, mode, value), {x},
                [shape = x.shape(), pads, mode](const Variable& dy, const Variable&) -> Grads {
                  return {pad_backward(dy, shape, pads, mode)};
                });
}

// dy (r0·s0, r1·s1, ...) viewed as (r0, s0, r1, s1, ...) and summed over the r's.
Variable repeat(const Variable& x, const std::vector<int64_t>& repeats) {
  return record("repeat", tg::repeat(x.value(), repeats), {x},
                [shape = x.shape(), repeats](const Variable& dy, const Variable&) -> Grads {
                  const size_t lead = repeats.size() - shape.size();  // x's leading dims of size 1
                  Shape tiled;
                  std::vector<int64_t> tiles;
                  for (size_t d = 0; d < repeats.size(); ++d) {
                    tiles.push_back(int64_t(tiled.size()));
                    tiled.push_back(repeats[d]);
                    tiled.push_back(d < lead ? 1 : shape[d - lead]);
                  }
                  return {reshape(sum(reshape(dy, tiled), tiles), shape)};
                });
}

Variable tile(const Variable& x, const std::vector<int64_t>& reps) {
  std::vector<int64_t> r(size_t(std::max<int64_t>(x.dim() - int64_t(reps.size()), 0)), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  return repeat(x, r);
}

Variable tril(const Variable& x, int64_t diagonal) {
  return record("tril", tg::tril(x.value(), diagonal), {x},
                [diagonal](const Variable& dy, const Variable&) -> Grads { return {tril(dy, diagonal)}; });
}
Variable triu(const Variable& x, int64_t diagonal) {
  return record("triu", tg::triu(x.value(), diagonal), {x},
                [diagonal](const Variable& dy, const Variable&) -> Grads { return {triu(dy, diagonal)}; });
}

}  // namespace tg
