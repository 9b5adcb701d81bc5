// Differentiable indexing along one dim: gather, scatter (of a source or of one value), scatter_add and
// index_add. Each backward is made of these ops and index_select (gather and scatter_add are adjoint, as
// index_select and index_add are), so that a recorded backward (create_graph) can be differentiated again.
#include "autograd/functions.h"

namespace tg {
namespace {

// The leading corner of source that index addresses (core checks the shapes): a view, whose backward pads
// the gradient with zeros back to source's shape.
Variable source_corner(const Variable& source, const Tensor& index) {
  Variable s = source;
  for (int64_t d = 0; s.dim() == index.dim() && d < index.dim(); ++d)
    if (index.size(d) < s.size(d)) s = s.narrow(d, 0, index.size(d));
  return s;
}

// True at the positions of a tensor of `shape` that index writes to along dim.
Tensor written(const Shape& shape, int64_t dim, const Tensor& index) {
  return tg::scatter(zeros(shape, boolean), dim, index, 1.0);
}

// True at the entries of index whose write survives: the last of each repeated position in row-major order
// (core's scatter writes in that order).
Tensor surviving(const Shape& shape, int64_t dim, const Tensor& index) {
  const Tensor order = arange(0, double(index.numel()), 1, i64).reshape(index.shape());
  const Tensor last = tg::scatter(full(shape, -1, i64), dim, index, order);
  return eq(tg::gather(last, dim, index), order);
}

}  // namespace

// y[..i..] = x[..index[..i..]..] along dim.  dx = zeros with dy added where it was read (repeats add up).
Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  return record("gather", tg::gather(x.value(), dim, index), {x},
                [shape = x.shape(), dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {scatter_add(Variable(zeros(shape, dy.dtype())), dim, index, dy)};
                });
}

// y = x, then y[..index[..i..]..] = source[..i..].  dx = dy, 0 where written (x's value there is gone);
// dsource = dy read back at index, 0 for an entry whose write a later repeat overwrote.
Variable scatter(const Variable& x, int64_t dim, const Tensor& index, const Variable& source) {
  const Variable s = source_corner(source, index);
  return record("scatter", tg::scatter(x.value(), dim, index, s.value()), {x, s},
                [shape = x.shape(), dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {masked_fill(dy, written(shape, dim, index), 0.0),
                          masked_fill(gather(dy, dim, index), logical_not(surviving(shape, dim, index)), 0.0)};
                });
}

// y = x, then y[..index[..i..]..] = value.  dx = dy, 0 where written.
Variable scatter(const Variable& x, int64_t dim, const Tensor& index, double value) {
  return record("scatter_value", tg::scatter(x.value(), dim, index, value), {x},
                [shape = x.shape(), dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {masked_fill(dy, written(shape, dim, index), 0.0)};
                });
}

// y = x, then y[..index[..i..]..] += source[..i..].  dx = dy; dsource = gather(dy) (every repeat reads it).
Variable scatter_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source) {
  const Variable s = source_corner(source, index);
  return record("scatter_add", tg::scatter_add(x.value(), dim, index, s.value()), {x, s},
                [dim, index](const Variable& dy, const Variable&) -> Grads { return {dy, gather(dy, dim, index)}; });
}

// y = x, then slice index[j] of y along dim += slice j of source.  dx = dy; dsource = index_select(dy).
Variable index_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source) {
  return record("index_add", tg::index_add(x.value(), dim, index, source.value()), {x, source},
                [dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {dy, index_select(dy, dim, index)};
                });
}

}  // namespace tg
