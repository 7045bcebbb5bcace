#include "scheduler-extender/extender_request_reader.h"

#include <algorithm>
#include <new>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "core/json/json_path.h"

namespace modelplane::extender {
namespace {

namespace dom = simdjson::dom;
using nlohmann::json;

// Where the reader is in the document, kept as views into the parsed document so that the
// path string is only built for an error message.
class PathStack {
 public:
  void PushKey(std::string_view key) { segments_.push_back({.key = key, .is_key = true}); }
  void PushIndex(std::size_t index) { segments_.push_back({.index = index}); }
  void Pop() { segments_.pop_back(); }

  [[nodiscard]] std::string Text() const {
    std::string path;
    for (const Segment& segment : segments_) {
      path = segment.is_key ? core::JsonPathChild(path, segment.key)
                            : core::JsonPathIndex(path, segment.index);
    }
    return path;
  }

 private:
  struct Segment {
    std::string_view key;
    std::size_t index = 0;
    bool is_key = false;
  };
  std::vector<Segment> segments_;
};

// Pushes a segment for the lifetime of a scope, so every return path pops it.
class PathSegment {
 public:
  PathSegment(PathStack& stack, std::string_view key) : stack_(stack) { stack_.PushKey(key); }
  PathSegment(PathStack& stack, std::size_t index) : stack_(stack) { stack_.PushIndex(index); }
  ~PathSegment() { stack_.Pop(); }
  PathSegment(const PathSegment&) = delete;
  PathSegment& operator=(const PathSegment&) = delete;

 private:
  PathStack& stack_;
};

bool IsNull(dom::element value) {
  return value.type() == dom::element_type::NULL_VALUE;
}
bool IsObject(dom::element value) {
  return value.type() == dom::element_type::OBJECT;
}
bool IsArray(dom::element value) {
  return value.type() == dom::element_type::ARRAY;
}

// Walks a parsed ExtenderArgs in document order. Each step returns false to stop, with error_
// set; the checks that need the whole request run in Finish.
class RequestReader {
 public:
  explicit RequestReader(const ExtenderRequestLimits& limits) : limits_(limits) {}

  bool Read(dom::element root) {
    if (!IsObject(root)) return Fail("ExtenderArgs must be an object");
    const dom::object fields = root.get_object().value_unsafe();
    if (!RefuseDuplicateKeys(fields)) return false;
    for (const dom::key_value_pair field : fields) {
      // A missing key and a null one mean the same to Go's decoder.
      if (IsNull(field.value)) continue;
      if (field.key == "Pod") {
        if (!ReadPod(field.value)) return false;
      } else if (field.key == "NodeNames") {
        if (!IsArray(field.value)) return Fail("NodeNames must be an array");
        saw_names_ = true;
        const PathSegment segment(path_, field.key);
        if (!ReadNodeNames(field.value.get_array().value_unsafe())) return false;
      } else if (field.key == "Nodes") {
        if (!IsObject(field.value)) return Fail("Nodes must be a NodeList object");
        saw_list_ = true;
        const PathSegment segment(path_, field.key);
        if (!ReadNodeList(field.value.get_object().value_unsafe())) return false;
      }
    }
    return true;
  }

  core::Result<ExtenderArgs> Finish() && {
    if (!saw_pod_) return Invalid("ExtenderArgs.Pod is missing");
    if (!saw_metadata_) return Invalid("Pod.metadata must be an object");
    if (args_.pod.name.empty()) return Invalid("Pod.metadata.name is missing");
    if (saw_names_ && saw_list_) return Invalid("ExtenderArgs has both Nodes and NodeNames");
    if (!saw_names_ && !saw_list_) {
      return Invalid("ExtenderArgs has neither Nodes nor NodeNames");
    }
    args_.form = saw_names_ ? NodeForm::kNodeNames : NodeForm::kNodeList;
    return std::move(args_);
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  static core::Result<ExtenderArgs> Invalid(std::string message) {
    return std::unexpected(core::Error(core::ErrorCode::kInvalidArgument, std::move(message)));
  }

  bool Fail(std::string_view message) {
    error_ = std::string(message);
    return false;
  }
  // The message with the path of the value being read.
  bool FailHere(std::string_view message) {
    const std::string path = path_.Text();
    error_ = path.empty() ? std::string(message) : fmt::format("{}: {}", path, message);
    return false;
  }

  // The message with the path of an element of the array being read.
  bool FailAt(std::size_t index, std::string_view message) {
    const PathSegment segment(path_, index);
    return FailHere(message);
  }

  // Go's decoder takes the last of two equal keys; a reader that took the first could disagree
  // with kube-scheduler, so wherever a value is kept a second key is refused.
  bool RefuseDuplicateKeys(dom::object object) {
    std::unordered_set<std::string_view> keys;
    for (const dom::key_value_pair field : object) {
      if (!keys.insert(field.key).second) {
        const PathSegment segment(path_, field.key);
        return FailHere("duplicate key");
      }
    }
    return true;
  }

  // Only metadata is read; the rest of the Pod is neither kept nor checked.
  bool ReadPod(dom::element pod) {
    if (!IsObject(pod)) return Fail("Pod must be an object");
    saw_pod_ = true;
    const PathSegment segment(path_, "Pod");
    const dom::object fields = pod.get_object().value_unsafe();
    if (!RefuseDuplicateKeys(fields)) return false;
    for (const dom::key_value_pair field : fields) {
      if (field.key != "metadata" || IsNull(field.value)) continue;
      if (!IsObject(field.value)) return Fail("Pod.metadata must be an object");
      saw_metadata_ = true;
      const PathSegment metadata(path_, field.key);
      if (!ReadMetadata(field.value.get_object().value_unsafe())) return false;
    }
    return true;
  }

  bool ReadMetadata(dom::object metadata) {
    if (!RefuseDuplicateKeys(metadata)) return false;
    for (const dom::key_value_pair field : metadata) {
      std::string_view text;
      const bool is_string = !field.value.get_string().get(text);
      if (field.key == "annotations" && IsObject(field.value)) {
        const PathSegment segment(path_, field.key);
        if (!ReadAnnotations(field.value.get_object().value_unsafe())) return false;
      } else if (!is_string) {
        continue;
      } else if (field.key == "namespace") {
        args_.pod.namespace_name = text;
      } else if (field.key == "name") {
        args_.pod.name = text;
      } else if (field.key == "uid") {
        args_.pod.uid = text;
      }
    }
    return true;
  }

  // Annotations that are not strings are ignored, not fatal; they still count to the bound.
  bool ReadAnnotations(dom::object annotations) {
    if (!RefuseDuplicateKeys(annotations)) return false;
    std::size_t entries = 0;
    for (const dom::key_value_pair field : annotations) {
      if (++entries > limits_.max_annotations) {
        return FailHere(fmt::format("more than {} annotations", limits_.max_annotations));
      }
      std::string_view text;
      if (!field.value.get_string().get(text)) {
        args_.pod.annotations.insert_or_assign(std::string(field.key), std::string(text));
      }
    }
    return true;
  }

  // The hot loop of a names request: no path segment per name, only for an error.
  bool ReadNodeNames(dom::array names) {
    std::size_t index = 0;
    for (const dom::element name : names) {
      if (args_.node_names.size() >= limits_.max_nodes) return TooManyNodes();
      std::string_view text;
      if (name.get_string().get(text) || text.empty()) {
        return FailAt(index, "must be a non-empty string");
      }
      if (text.size() > limits_.max_node_name_bytes) return FailAt(index, NameTooLong());
      args_.node_names.emplace_back(text);
      ++index;
    }
    return true;
  }

  // The NodeList is kept whole, as sent, so the filter answer can return its objects.
  bool ReadNodeList(dom::object list) {
    args_.node_list = json::object();
    for (const dom::key_value_pair field : list) {
      const PathSegment segment(path_, field.key);
      auto [kept, inserted] = args_.node_list.emplace(std::string(field.key), nullptr);
      if (!inserted) return FailHere("duplicate key");
      if (field.key != "items") {
        if (!Keep(field.value, *kept)) return false;
      } else if (IsArray(field.value)) {
        *kept = json::array();
        if (!ReadNodeItems(field.value.get_array().value_unsafe(), *kept)) return false;
      } else if (!IsNull(field.value)) {
        // Go encodes an empty slice that was never allocated as null; anything else is wrong.
        return Fail("Nodes.items must be an array");
      }
    }
    return true;
  }

  bool ReadNodeItems(dom::array items, json& kept) {
    std::size_t index = 0;
    for (const dom::element item : items) {
      if (args_.node_names.size() >= limits_.max_nodes) return TooManyNodes();
      const PathSegment segment(path_, index++);
      if (!IsObject(item)) return FailHere("has no metadata.name");
      kept.push_back(nullptr);
      if (!Keep(item, kept.back())) return false;
      const json& node = kept.back();
      const auto metadata = node.find("metadata");
      const json* name = nullptr;
      if (metadata != node.end() && metadata->is_object()) {
        if (const auto found = metadata->find("name"); found != metadata->end()) name = &*found;
      }
      if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
        return FailHere("has no metadata.name");
      }
      if (name->get_ref<const std::string&>().size() > limits_.max_node_name_bytes) {
        return FailHere(NameTooLong());
      }
      args_.node_names.push_back(name->get<std::string>());
    }
    return true;
  }

  // The value as a document, every type kept as sent. Depth is bounded by the parse already.
  bool Keep(dom::element value, json& out) {
    switch (value.type()) {
      case dom::element_type::OBJECT: {
        out = json::object();
        const dom::object fields = value.get_object().value_unsafe();
        for (const dom::key_value_pair field : fields) {
          const PathSegment segment(path_, field.key);
          auto [child, inserted] = out.emplace(std::string(field.key), nullptr);
          if (!inserted) return FailHere("duplicate key");
          if (!Keep(field.value, *child)) return false;
        }
        return true;
      }
      case dom::element_type::ARRAY: {
        out = json::array();
        std::size_t index = 0;
        const dom::array items = value.get_array().value_unsafe();
        for (const dom::element item : items) {
          const PathSegment segment(path_, index++);
          out.push_back(nullptr);
          if (!Keep(item, out.back())) return false;
        }
        return true;
      }
      case dom::element_type::STRING:
        out = std::string(value.get_string().value_unsafe());
        return true;
      case dom::element_type::INT64: out = value.get_int64().value_unsafe(); return true;
      case dom::element_type::UINT64: out = value.get_uint64().value_unsafe(); return true;
      case dom::element_type::DOUBLE: out = value.get_double().value_unsafe(); return true;
      case dom::element_type::BOOL: out = value.get_bool().value_unsafe(); return true;
      case dom::element_type::NULL_VALUE: out = nullptr; return true;
    }
    return FailHere("value of an unknown type");
  }

  // Called with path_ at the list, before the node past the bound is read.
  bool TooManyNodes() { return FailHere(fmt::format("more than {} nodes", limits_.max_nodes)); }

  std::string NameTooLong() const {
    return fmt::format("node name longer than {} bytes", limits_.max_node_name_bytes);
  }

  const ExtenderRequestLimits& limits_;
  PathStack path_;
  ExtenderArgs args_;
  std::string error_;
  bool saw_pod_ = false;
  bool saw_metadata_ = false;
  bool saw_names_ = false;
  bool saw_list_ = false;
};

// simdjson says what kind of syntax error a document has, not where; nlohmann's parser says
// where. Only a request that is not JSON pays for the second parse.
class SyntaxErrorFinder final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_object() override { return true; }
  bool end_array() override { return true; }
  bool key(string_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& error) override {
    message_ = error.what();
    return false;
  }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string message_;
};

std::string SyntaxError(std::string_view body, simdjson::error_code code) {
  SyntaxErrorFinder finder;
  try {
    if (!json::sax_parse(body.begin(), body.end(), &finder) && !finder.message().empty()) {
      return finder.message();
    }
  } catch (const json::exception& error) {
    return error.what();
  }
  // Input nlohmann accepts but simdjson does not (a byte-order mark, an integer past 64 bits).
  return simdjson::error_message(code);
}

}  // namespace

core::Result<ExtenderArgs> ParseExtenderArgs(std::string_view body,
                                             const ExtenderRequestLimits& limits) {
  auto invalid = [](std::string message) {
    return std::unexpected(
        core::Error(core::ErrorCode::kInvalidArgument, "ExtenderArgs: " + std::move(message)));
  };
  auto out_of_memory = [] {
    return std::unexpected(
        core::Error(core::ErrorCode::kResourceExhausted, "out of memory reading ExtenderArgs"));
  };
  if (body.size() > limits.max_bytes) {
    return invalid(fmt::format("body of {} bytes exceeds the limit of {} bytes", body.size(),
                               limits.max_bytes));
  }
  // Valid JSON never holds a raw NUL (inside strings it must be escaped); saying so plainly
  // beats the parsers' generic messages.
  if (const auto nul = body.find('\0'); nul != std::string_view::npos) {
    return invalid(fmt::format("invalid JSON: NUL byte at offset {}", nul));
  }
  try {
    // simdjson validates the whole document (UTF-8, numbers, structure, nesting) in one pass at
    // several bytes per cycle, about six times nlohmann's parser on a 5,000-name request; the
    // reader then walks only the parts it uses. The parser is the request's own, so the
    // function stays pure; its buffers are sized by the body, which is bounded above.
    const std::size_t max_depth = static_cast<std::size_t>(std::max(limits.max_depth, 1));
    dom::parser parser;
    if (parser.allocate(std::max<std::size_t>(body.size(), 1), max_depth)) return out_of_memory();
    const simdjson::padded_string padded(body.data(), body.size());
    dom::element root;
    if (const auto code = parser.parse(padded).get(root)) {
      if (code == simdjson::MEMALLOC) return out_of_memory();
      if (code == simdjson::DEPTH_ERROR) {
        return invalid(fmt::format("nesting deeper than {} levels", limits.max_depth));
      }
      return invalid(fmt::format("invalid JSON: {}", SyntaxError(body, code)));
    }
    RequestReader reader(limits);
    if (!reader.Read(root)) return invalid(reader.error());
    auto args = std::move(reader).Finish();
    if (!args) return invalid(args.error().message());
    return args;
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
}

}  // namespace modelplane::extender
