// MPI for tensors, shared by the collectives and DistributedDataParallel: datatypes, error codes, and the
// agreement check that turns a mismatch between ranks (which MPI does not detect: it would read the wrong
// bytes or wait forever) into the same exception on every rank.
#include "distributed/mpi_util.h"

#include <climits>
#include <vector>

#include "core/error.h"
#include "core/format.h"
#include "distributed/environment.h"

namespace tg::distributed::detail {

void check_mpi(int rc, const char* op, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(fmt::format("{}: {} failed: {}", op, call, std::string(text, size_t(length))));
}

void check_initialized(const char* op) {
  check<Error>(initialized(), "{}: MPI is not running; create a tg::distributed::Environment first", op);
}

MPI_Datatype mpi_type(DType dtype, const char* op) {
  switch (dtype) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::i64: return MPI_INT64_T;
    default: throw DTypeError(fmt::format("{}: collectives take f32, f64 or i64 tensors, got {}", op, dtype));
  }
}

void* data_of(const Tensor& t) {
  char* base = t.defined() ? static_cast<char*>(t.storage()->data) : nullptr;
  return base ? base + t.offset() * dtype_size(t.dtype()) : nullptr;
}

int mpi_count(const Tensor& t, const char* op) {
  check<ValueError>(t.numel() <= INT_MAX, "{}: {} elements, more than MPI's int count ({})", op, t.numel(), INT_MAX);
  return int(t.numel());
}

namespace {

// One rank's view of a collective call: dtype (-1: undefined tensor), contiguity, the agreed argument, the
// rank count and up to kDims sizes (past kDims dims the last slot holds the product of the rest).
constexpr int kDims = 8;
constexpr int kRecord = 4 + kDims;

std::vector<int64_t> record(const Tensor& t, int64_t arg) {
  std::vector<int64_t> r(kRecord, 0);
  r[0] = t.defined() ? int64_t(t.dtype()) : -1;
  r[1] = t.defined() && t.is_contiguous();
  r[2] = arg;
  r[3] = t.dim();
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t& slot = r[size_t(4 + std::min<int64_t>(d, kDims - 1))];
    slot = d < kDims ? t.size(d) : slot * t.size(d);
  }
  return r;
}

Shape shape_of(const int64_t* r) { return Shape(r + 4, r + 4 + std::min<int64_t>(r[3], kDims)); }

// The error for rank `k`'s record differing from rank 0's, or none.
void check_record(const int64_t* r0, const int64_t* rk, int k, Agreed arg, bool writes, const char* op,
                  const std::string& what) {
  check<ValueError>(rk[0] >= 0, "{}: {} is an undefined tensor on rank {}", op, what, k);
  check<DTypeError>(rk[0] == r0[0], "{}: {} is {} on rank {} but {} on rank 0", op, what, DType(rk[0]), k,
                    r0[0] < 0 ? "undefined" : fmt::format("{}", DType(r0[0])));
  check<ShapeError>(std::equal(rk + 3, rk + kRecord, r0 + 3), "{}: {} has shape {} on rank {} but {} on rank 0", op,
                    what, shape_of(rk), k, shape_of(r0));
  check<ValueError>(rk[2] == r0[2], "{}: {} {} on rank {} but {} on rank 0", op, arg.name, rk[2], k, r0[2]);
  check<ValueError>(!writes || rk[1], "{}: {} (shape {}) is not contiguous on rank {}; the result is written in "
                    "place, which needs a contiguous tensor (pass a contiguous() copy)", op, what, shape_of(rk), k);
}

}  // namespace

void check_same_everywhere(const Tensor& t, Agreed arg, bool writes, MPI_Comm comm, const char* op,
                           const std::string& what) {
  check_initialized(op);
  int world = 0;
  check_mpi(MPI_Comm_size(comm, &world), op, "MPI_Comm_size");
  const std::vector<int64_t> mine = record(t, arg.value);
  std::vector<int64_t> all(size_t(world) * kRecord);
  check_mpi(MPI_Allgather(mine.data(), kRecord, MPI_INT64_T, all.data(), kRecord, MPI_INT64_T, comm), op,
            "MPI_Allgather");
  for (int k = 0; k < world; ++k) check_record(all.data(), all.data() + size_t(k) * kRecord, k, arg, writes, op, what);
  mpi_type(t.dtype(), op);
}

void broadcast(const Tensor& t, int root, MPI_Comm comm, const char* op, const std::string& what) {
  check_same_everywhere(t, {"root", root}, true, comm, op, what);
  int world = 0;
  check_mpi(MPI_Comm_size(comm, &world), op, "MPI_Comm_size");
  check<ValueError>(root >= 0 && root < world, "{}: root {} outside [0, world size = {})", op, root, world);
  check_mpi(MPI_Bcast(data_of(t), mpi_count(t, op), mpi_type(t.dtype(), op), root, comm), op, "MPI_Bcast");
  ++t.storage()->version;
}

}  // namespace tg::distributed::detail
