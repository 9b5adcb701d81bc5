// safetensors reading and writing. The reader trusts nothing: every size, offset and dtype in the header
// is checked against the bytes actually present before a tensor is built from them.
#include "core/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/read_file.h"

namespace tg {
namespace {

const char* st_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f64: return "F64";
    case DType::i64: return "I64";
    case DType::boolean: return "BOOL";
  }
  return "?";
}

DType parse_dtype(const std::string& s, const std::string& file, const std::string& key) {
  if (s == "F32") return f32;
  if (s == "F64") return f64;
  if (s == "I64") return i64;
  if (s == "BOOL") return boolean;
  throw ValueError(fmt::format("safetensors {}: tensor '{}' has unsupported dtype '{}' (F32, F64, I64, BOOL)", file,
                               escape_bytes(key), escape_bytes(s)));
}

Tensor parse_entry(const nlohmann::json& e, std::string_view data, const std::string& file, const std::string& key,
                   std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  auto bad = [&](const std::string& what) {
    return ValueError(fmt::format("safetensors {}: tensor '{}': {}", file, escape_bytes(key), what));
  };
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    throw bad("entry needs dtype, shape and data_offsets");
  if (!e["dtype"].is_string() || !e["shape"].is_array() || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
    throw bad("malformed dtype, shape or data_offsets");
  DType dtype = parse_dtype(e["dtype"].get<std::string>(), file, key);
  Shape shape;
  for (const auto& s : e["shape"]) {
    if (!s.is_number_unsigned() || s.get<uint64_t>() > uint64_t(INT64_MAX))
      throw bad("shape entries must be non-negative integers below 2^63");
    shape.push_back(s.get<int64_t>());
  }
  int64_t numel = 0;
  try {
    numel = shape.numel();
  } catch (const ValueError&) {
    throw bad(fmt::format("shape {} overflows", shape));
  }
  const auto& off = e["data_offsets"];
  if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) throw bad("offsets must be non-negative integers");
  uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
  if (begin > end || end > data.size())
    throw bad(fmt::format("data_offsets [{}, {}] outside the {} data bytes (truncated file?)", begin, end, data.size()));
  uint64_t nbytes = 0;  // a product that wraps past 2^64 could otherwise match a small byte range
  if (__builtin_mul_overflow(uint64_t(numel), uint64_t(dtype_size(dtype)), &nbytes) || end - begin != nbytes)
    throw bad(fmt::format("{} bytes for shape {} of {}", end - begin, shape, dtype));
  ranges.emplace_back(begin, end);
  Tensor t = empty(shape, dtype);
  if (numel) std::memcpy(t.storage()->data, data.data() + begin, end - begin);
  if (dtype == boolean)
    for (int64_t i = 0; i < numel; ++i)
      if (reinterpret_cast<uint8_t*>(t.storage()->data)[i] > 1) throw bad("BOOL data holds a byte other than 0 or 1");
  return t;
}

}  // namespace

void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> contiguous;
  uint64_t at = 0;
  for (const auto& [name, t] : tensors) {
    check<ValueError>(name != "__metadata__", "save_safetensors {}: '__metadata__' is reserved", path);
    check<ValueError>(t.defined(), "save_safetensors {}: '{}' is an undefined tensor", path, name);
    Tensor c = t.contiguous();
    uint64_t bytes = uint64_t(c.numel()) * uint64_t(dtype_size(c.dtype()));
    header[name] = {{"dtype", st_dtype(c.dtype())}, {"shape", c.shape()}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
    contiguous.push_back(c);
  }
  std::string h;
  try {
    h = header.dump();
  } catch (const nlohmann::json::type_error&) {  // the header is JSON, which holds UTF-8 text only
    throw ValueError(fmt::format("save_safetensors {}: a tensor name or metadata string is not valid UTF-8", path));
  }
  h.append((8 - h.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned, as the reference writer does
  const uint64_t n = h.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = char((n >> (8 * i)) & 0xff);
  std::vector<std::string_view> chunks = {{len, 8}, h};
  for (const Tensor& c : contiguous)
    chunks.emplace_back(static_cast<const char*>(c.storage()->data) + c.offset() * dtype_size(c.dtype()),
                        size_t(c.numel() * dtype_size(c.dtype())));
  write_file_atomic(path, chunks, "save_safetensors");
}

Safetensors parse_safetensors(std::string_view bytes, const std::string& name) {
  check<ValueError>(bytes.size() >= 8, "safetensors {}: {} bytes is too short for the 8-byte header length", name,
                    bytes.size());
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  check<ValueError>(n <= bytes.size() - 8, "safetensors {}: header length {} exceeds the file ({} bytes)", name, n,
                    bytes.size());
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(fmt::format("safetensors {}: header is not valid JSON: {}", name, escape_bytes(e.what())));
  }
  check<ValueError>(header.is_object(), "safetensors {}: header must be a JSON object", name);
  std::string_view data = bytes.substr(8 + n);
  Safetensors out;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [key, e] : header.items()) {
    if (key == "__metadata__") {
      check<ValueError>(e.is_object(), "safetensors {}: __metadata__ must be an object", name);
      for (const auto& [k, v] : e.items()) {
        check<ValueError>(v.is_string(), "safetensors {}: metadata '{}' must be a string", name, escape_bytes(k));
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    out.tensors[key] = parse_entry(e, data, name, key, ranges);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    check<ValueError>(ranges[i].first >= ranges[i - 1].second || ranges[i].first == ranges[i].second,
                      "safetensors {}: tensors overlap at byte ranges [{}, {}) and [{}, {})", name, ranges[i - 1].first,
                      ranges[i - 1].second, ranges[i].first, ranges[i].second);
  return out;
}

Safetensors load_safetensors(const std::string& path, int64_t max_bytes) {
  return parse_safetensors(read_file(path, max_bytes, "load_safetensors"), path);
}

}  // namespace tg
