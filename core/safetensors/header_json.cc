#include "core/safetensors/header_json.h"

#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace modelplane::core {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

class HeaderHandler {
 public:
  using json = nlohmann::json;

  explicit HeaderHandler(const SafetensorsLimits& limits) : limits_(limits) {}

  RawHeader& header() { return header_; }
  const std::string& error() const { return error_; }
  bool done() const { return where_ == Where::kDone; }

  // --- nlohmann SAX interface -----------------------------------------------------------------
  bool null() { return WrongType("null"); }
  bool boolean(bool) { return WrongType("a boolean"); }
  bool number_integer(json::number_integer_t) { return Number(std::nullopt); }
  bool number_unsigned(json::number_unsigned_t value) { return Number(value); }
  bool number_float(json::number_float_t, const json::string_t&) { return Number(std::nullopt); }
  bool binary(json::binary_t&) { return WrongType("binary"); }

  bool string(json::string_t& value) {
    if (where_ == Where::kMetadata) {
      header_.metadata.emplace(std::move(metadata_key_), std::move(value));
      return true;
    }
    if (where_ == Where::kTensor && tensor_key_ == "dtype") {
      const auto dtype = ParseDtype(value);
      if (!dtype) return Fail(fmt::format("{}: unknown dtype {}", TensorPath(), QuoteName(value)));
      current_.dtype = *dtype;
      return true;
    }
    return WrongType("a string");
  }

  bool start_object(std::size_t) {
    switch (where_) {
      case Where::kStart: where_ = Where::kRoot; return true;
      case Where::kRoot:
        if (current_.name == kMetadataKey) {
          where_ = Where::kMetadata;
        } else {
          where_ = Where::kTensor;
          seen_dtype_ = seen_shape_ = seen_offsets_ = false;
        }
        return true;
      default: return WrongType("an object");
    }
  }

  bool key(json::string_t& key) {
    switch (where_) {
      case Where::kRoot:
        if (!names_.insert(key).second)
          return Fail(fmt::format("duplicate key {}", QuoteName(key)));
        if (header_.tensors.size() >= limits_.max_tensors) {
          return Fail(fmt::format("more than {} tensors", limits_.max_tensors));
        }
        current_ = RawTensorEntry{};
        current_.name = std::move(key);
        return true;
      case Where::kMetadata:
        if (header_.metadata.contains(key)) {
          return Fail(fmt::format("__metadata__: duplicate key {}", QuoteName(key)));
        }
        metadata_key_ = std::move(key);
        return true;
      case Where::kTensor: {
        bool* seen = key == "dtype"          ? &seen_dtype_
                     : key == "shape"        ? &seen_shape_
                     : key == "data_offsets" ? &seen_offsets_
                                             : nullptr;
        if (seen == nullptr) {
          return Fail(fmt::format("{}: unknown field {} (expected dtype, shape, data_offsets)",
                                  TensorPath(), QuoteName(key)));
        }
        if (*seen) return Fail(fmt::format("{}: duplicate field \"{}\"", TensorPath(), key));
        *seen = true;
        tensor_key_ = std::move(key);
        return true;
      }
      default: return Fail("unexpected key");
    }
  }

  bool end_object() {
    switch (where_) {
      case Where::kMetadata: where_ = Where::kRoot; return true;
      case Where::kTensor:
        if (!seen_dtype_ || !seen_shape_ || !seen_offsets_) {
          return Fail(fmt::format("{}: needs dtype, shape and data_offsets", TensorPath()));
        }
        header_.tensors.push_back(std::move(current_));
        where_ = Where::kRoot;
        return true;
      case Where::kRoot: where_ = Where::kDone; return true;
      default: return Fail("unexpected end of object");
    }
  }

  bool start_array(std::size_t) {
    if (where_ == Where::kTensor && tensor_key_ == "shape") {
      where_ = Where::kShape;
      return true;
    }
    if (where_ == Where::kTensor && tensor_key_ == "data_offsets") {
      where_ = Where::kOffsets;
      offsets_count_ = 0;
      return true;
    }
    return WrongType("an array");
  }

  bool end_array() {
    if (where_ == Where::kOffsets && offsets_count_ != 2) {
      return Fail(fmt::format("{}: data_offsets must hold exactly two integers", TensorPath()));
    }
    if (where_ != Where::kShape && where_ != Where::kOffsets) return Fail("unexpected array end");
    where_ = Where::kTensor;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    if (error_.empty()) error_ = fmt::format("invalid JSON at byte {}", position);
    return false;
  }

 private:
  enum class Where { kStart, kRoot, kMetadata, kTensor, kShape, kOffsets, kDone };

  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  std::string TensorPath() const { return fmt::format("tensor {}", QuoteName(current_.name)); }

  bool Number(std::optional<std::uint64_t> value) {
    if (where_ == Where::kShape || where_ == Where::kOffsets) {
      const char* field = where_ == Where::kShape ? "shape" : "data_offsets";
      if (!value) {
        return Fail(fmt::format("{}: {} values must be non-negative integers below 2^64",
                                TensorPath(), field));
      }
      if (where_ == Where::kShape) {
        if (current_.shape.size() >= limits_.max_rank) {
          return Fail(
              fmt::format("{}: shape has more than {} dimensions", TensorPath(), limits_.max_rank));
        }
        current_.shape.push_back(*value);
      } else {
        if (offsets_count_ >= 2) {
          return Fail(fmt::format("{}: data_offsets must hold exactly two integers", TensorPath()));
        }
        (offsets_count_ == 0 ? current_.begin : current_.end) = *value;
        ++offsets_count_;
      }
      return true;
    }
    return WrongType("a number");
  }

  // A value of the wrong JSON type (or a container where none may be) for where we are.
  bool WrongType(std::string_view what) {
    switch (where_) {
      case Where::kStart:
        return Fail(fmt::format("the header must be a JSON object, not {}", what));
      case Where::kRoot:
        if (current_.name == kMetadataKey) {
          return Fail(fmt::format("__metadata__ must be an object of strings, not {}", what));
        }
        return Fail(fmt::format("{} must be an object, not {}", TensorPath(), what));
      case Where::kMetadata:
        return Fail(fmt::format("__metadata__[{}] must be a string, not {}",
                                QuoteName(metadata_key_), what));
      case Where::kTensor:
        if (tensor_key_ == "dtype") {
          return Fail(fmt::format("{}: dtype must be a string, not {}", TensorPath(), what));
        }
        return Fail(fmt::format("{}: {} must be an array of integers, not {}", TensorPath(),
                                tensor_key_, what));
      case Where::kShape:
      case Where::kOffsets:
        return Fail(fmt::format("{}: {} must hold integers, not {}", TensorPath(),
                                where_ == Where::kShape ? "shape" : "data_offsets", what));
      case Where::kDone: break;
    }
    return Fail(fmt::format("unexpected {}", what));
  }

  const SafetensorsLimits& limits_;
  RawHeader header_;
  std::string error_;
  Where where_ = Where::kStart;
  RawTensorEntry current_;
  std::string tensor_key_;
  std::string metadata_key_;
  std::unordered_set<std::string> names_;
  bool seen_dtype_ = false;
  bool seen_shape_ = false;
  bool seen_offsets_ = false;
  int offsets_count_ = 0;
};

}  // namespace

std::string QuoteName(std::string_view name) {
  constexpr std::size_t kMaxShown = 200;
  std::string shown(name.substr(0, kMaxShown));
  std::string quoted =
      nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (name.size() > kMaxShown) quoted += "...";
  return quoted;
}

Result<RawHeader> ParseHeaderJson(std::string_view json, const SafetensorsLimits& limits) {
  HeaderHandler handler(limits);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(json.begin(), json.end(), &handler);
  } catch (const nlohmann::json::exception& error) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("safetensors header: {}", error.what()));
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kResourceExhausted, "safetensors header: out of memory");
  }
  if (!ok || !handler.done()) {
    const std::string& reason = handler.error().empty() ? "invalid JSON" : handler.error();
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("safetensors header: {}", reason));
  }
  return std::move(handler.header());
}

}  // namespace modelplane::core
