// DistributedDataParallel's buckets. Each parameter's post-accumulate hook copies its gradient into its
// bucket's flat buffer; a bucket whose gradients are all in starts its MPI_Iallreduce at once, unless an
// earlier bucket has not started (every rank must start them in one order), and each hook also lets MPI
// progress the ones in flight (Open MPI moves a non-blocking collective only while it is called). finish()
// starts whatever is left, waits, and divides by the world size (PyTorch's Reducer, without its graph walk:
// a parameter nobody reached shows up at finish() instead).
#include "distributed/data_parallel.h"

#include <chrono>
#include <map>

#include "core/error.h"
#include "core/format.h"
#include "core/ops.h"
#include "distributed/environment.h"
#include "distributed/mpi_util.h"

namespace tg::distributed {

namespace {

constexpr const char* kOp = "DistributedDataParallel";

struct Param {
  std::string name;
  Variable var;
  size_t bucket = 0;
  int64_t offset = 0;  // in its bucket's buffer, in elements
  int hook = -1;
  bool ready = false;  // its gradient came in during this synchronised backward
};

struct Bucket {
  Tensor buffer;               // (elements of its parameters), their dtype: gradients, then their sum
  std::vector<size_t> params;  // indices into State::params
  size_t pending = 0;          // parameters whose gradient has not come in yet
  MPI_Request request = MPI_REQUEST_NULL;
};

}  // namespace

struct DistributedDataParallel::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int world = 1;
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  size_t started = 0;  // buckets [0, started) have started their allreduce since the last finish()
  double last_wait = 0;  // seconds, last_wait_seconds()

  ~State() {
    for (Param& p : params)
      if (p.hook >= 0) p.var.remove_post_accumulate_grad_hook(p.hook);
    if (comm == MPI_COMM_NULL || !initialized()) return;
    for (Bucket& b : buckets) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
  }

  // Parameters in reverse order, each dtype filling its own bucket up to cap_bytes (at least one parameter
  // per bucket).
  void assign_buckets(int64_t cap_bytes) {
    std::map<DType, size_t> open;  // the bucket each dtype is filling
    std::vector<int64_t> bytes;    // by bucket
    for (size_t k = params.size(); k-- > 0;) {
      Param& p = params[k];
      const int64_t size = p.var.numel() * dtype_size(p.var.dtype());
      auto it = open.find(p.var.dtype());
      if (it == open.end() || (bytes[it->second] > 0 && bytes[it->second] + size > cap_bytes)) {
        it = open.insert_or_assign(p.var.dtype(), buckets.size()).first;
        buckets.emplace_back();
        bytes.push_back(0);
      }
      p.bucket = it->second;
      p.offset = bytes[p.bucket] / dtype_size(p.var.dtype());
      buckets[p.bucket].params.push_back(k);
      bytes[p.bucket] += size;
    }
    for (size_t i = 0; i < buckets.size(); ++i) {
      const DType dtype = params[buckets[i].params.front()].var.dtype();
      buckets[i].buffer = zeros({bytes[i] / dtype_size(dtype)}, dtype);
      buckets[i].pending = buckets[i].params.size();
    }
  }

  // Parameter p's gradient (zeros when it has none) into its place in its bucket.
  void write_slot(const Param& p, const Tensor& grad) {
    Tensor slot = buckets[p.bucket].buffer.narrow(0, p.offset, p.var.numel());
    if (grad.defined()) slot.copy_(grad.reshape({p.var.numel()}));
    else slot.zero_();
  }

  // Starts the allreduce of every complete bucket that follows the started ones, in bucket order.
  void start_ready() {
    for (; started < buckets.size() && buckets[started].pending == 0; ++started) {
      Bucket& b = buckets[started];
      detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, detail::data_of(b.buffer), detail::mpi_count(b.buffer, kOp),
                                       detail::mpi_type(b.buffer.dtype(), kOp), MPI_SUM, comm, &b.request),
                        kOp, "MPI_Iallreduce");
    }
  }

  // Lets MPI move the allreduces in flight along (a finished request becomes MPI_REQUEST_NULL).
  void progress() {
    for (size_t i = 0; i < started; ++i) {
      int done = 0;
      detail::check_mpi(MPI_Test(&buckets[i].request, &done, MPI_STATUS_IGNORE), kOp, "MPI_Test");
    }
  }
};

namespace {

// Every parameter and buffer takes rank 0's values, after checking that the ranks' models agree.
void broadcast_state(const nn::Layer& module, MPI_Comm comm) {
  const auto params = module.named_parameters();
  const auto buffers = module.named_buffers();
  const Tensor none = zeros({});
  detail::check_same_everywhere(none, {"parameter count", int64_t(params.size())}, false, comm, kOp, "the model");
  detail::check_same_everywhere(none, {"buffer count", int64_t(buffers.size())}, false, comm, kOp, "the model");
  for (const auto& [name, v] : params) detail::broadcast(v.value(), 0, comm, kOp, fmt::format("parameter '{}'", name));
  for (const auto& [name, t] : buffers) detail::broadcast(t, 0, comm, kOp, fmt::format("buffer '{}'", name));
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(nn::Layer& module, const DistributedDataParallelOptions& options)
    : module_(module), options_(options), state_(std::make_unique<State>()) {
  check<ValueError>(options.bucket_cap_bytes >= 1, "{}: bucket_cap_bytes must be >= 1, got {}", kOp,
                    options.bucket_cap_bytes);
  detail::check_initialized(kOp);
  State& s = *state_;
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &s.comm), kOp, "MPI_Comm_dup");
  detail::check_mpi(MPI_Comm_size(s.comm, &s.world), kOp, "MPI_Comm_size");
  broadcast_state(module, s.comm);
  for (const auto& [name, v] : module.named_parameters())
    if (v.requires_grad()) s.params.push_back({.name = name, .var = v});
  s.assign_buckets(options.bucket_cap_bytes);
  for (size_t i = 0; i < s.params.size(); ++i)
    s.params[i].hook =
        s.params[i].var.register_post_accumulate_grad_hook([this, i](const Tensor& g) { on_gradient_ready(i, g); });
}

DistributedDataParallel::~DistributedDataParallel() = default;

void DistributedDataParallel::on_gradient_ready(size_t param, const Tensor& grad) {
  if (!sync_) return;
  State& s = *state_;
  Param& p = s.params[param];
  check<ValueError>(!p.ready, "{}: the gradient of '{}' came in twice before finish(); call finish() after each "
                    "backward, or run the earlier backwards under no_sync()", kOp, p.name);
  p.ready = true;
  s.write_slot(p, grad);
  --s.buckets[p.bucket].pending;
  s.start_ready();
  s.progress();
}

void DistributedDataParallel::finish() {
  if (!sync_) return;
  const auto begin = std::chrono::steady_clock::now();
  State& s = *state_;
  // Per parameter: the ranks whose backward reached it, and the ranks where it has a gradient at all.
  std::vector<int> counts(2 * s.params.size());
  for (size_t i = 0; i < s.params.size(); ++i) {
    Param& p = s.params[i];
    const Tensor grad = p.var.grad();
    counts[2 * i] = p.ready;
    counts[2 * i + 1] = grad.defined();
    if (!p.ready) s.write_slot(p, grad), --s.buckets[p.bucket].pending;
  }
  s.start_ready();
  // After every bucket has started, so that all ranks issue this communicator's collectives in one order.
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, counts.data(), int(counts.size()), MPI_INT, MPI_SUM, s.comm), kOp,
                    "MPI_Allreduce");
  for (Bucket& b : s.buckets) {
    detail::check_mpi(MPI_Wait(&b.request, MPI_STATUS_IGNORE), kOp, "MPI_Wait");
    b.pending = b.params.size();
  }
  s.last_wait = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  s.started = 0;
  std::vector<std::string> unused;
  for (size_t i = 0; i < s.params.size(); ++i) {
    Param& p = s.params[i];
    p.ready = false;
    if (counts[2 * i] < s.world) unused.push_back(fmt::format("'{}' (on {} of {} ranks)", p.name, s.world - counts[2 * i], s.world));
    if (counts[2 * i] == 0 && counts[2 * i + 1] == 0) continue;  // nothing to average: no gradient anywhere
    const Tensor sum = s.buckets[p.bucket].buffer.narrow(0, p.offset, p.var.numel());
    p.var.set_grad((sum / double(s.world)).reshape(p.var.shape()));
  }
  check<ValueError>(options_.find_unused_parameters || unused.empty(), "{}: no gradient reached {} in this backward; "
                    "use every parameter in the loss, or pass find_unused_parameters = true", kOp,
                    fmt::join(unused, ", "));
}

std::vector<std::vector<std::string>> DistributedDataParallel::bucket_names() const {
  std::vector<std::vector<std::string>> names;
  for (const Bucket& b : state_->buckets) {
    names.emplace_back();
    for (size_t i : b.params) names.back().push_back(state_->params[i].name);
  }
  return names;
}

int64_t DistributedDataParallel::started_buckets() const { return int64_t(state_->started); }

double DistributedDataParallel::last_wait_seconds() const { return state_->last_wait; }

}  // namespace tg::distributed
