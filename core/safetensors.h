#pragma once
// Named tensors in the safetensors format, so that PyTorch (and others) read our weights and we read
// theirs: an 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}},
// then the raw little-endian data. Dtypes: F32, F64, I64, BOOL.
#include <map>
#include <string>
#include <string_view>

#include "core/tensor.h"

namespace tg {

using TensorMap = std::map<std::string, Tensor>;

/// load_safetensors' default limit on a file's size: 16 GiB.
inline constexpr int64_t kMaxSafetensorsBytes = int64_t(1) << 34;

/// Tensors and the free-form string metadata ("__metadata__") of one file.
struct Safetensors {
  TensorMap tensors;                            ///< by name
  std::map<std::string, std::string> metadata;  ///< "__metadata__", e.g. {"format": "pt"}
};

/// Writes `tensors` to `path` atomically (write_file_atomic, core/atomic_file.h: a temporary file in the same
/// folder, fsync, rename, fsync of the folder), so a failed save leaves any previous file intact. Throws Error
/// naming the path when a write fails,
/// ValueError for an undefined tensor, the reserved name "__metadata__", or a name or metadata string that is
/// not valid UTF-8.
void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// Reads a file written by save_safetensors or by PyTorch's safetensors. Throws ValueError naming the
/// file and the problem: missing file, truncated data, header size past the end, bad JSON, unknown dtype,
/// a shape that does not match its byte range, offsets past the end or overlapping, and a file larger than
/// `max_bytes` (read_file's limit, core/read_file.h: /dev/zero is refused at it instead of filling the memory).
Safetensors load_safetensors(const std::string& path, int64_t max_bytes = kMaxSafetensorsBytes);

/// The same parser on bytes in memory; `name` is used in error messages.
Safetensors parse_safetensors(std::string_view bytes, const std::string& name = "<memory>");

}  // namespace tg
