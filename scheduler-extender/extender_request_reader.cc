#include "scheduler-extender/extender_request_reader.h"

#include <new>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/api/json_path.h"

namespace modelplane::extender {
namespace {

using nlohmann::json;

// What a container (or the value about to be read in it) means to the extender.
enum class Role {
  kRoot,         // ExtenderArgs
  kPod,          // ExtenderArgs.Pod: only metadata is read
  kPodMetadata,  // namespace, name, uid, annotations
  kAnnotations,  // string values kept
  kNodeNames,    // ExtenderArgs.NodeNames: strings
  kNodeList,     // ExtenderArgs.Nodes: kept whole, items read as nodes
  kNodeItems,    // Nodes.items: each a Node object, kept
  kKeep,         // inside a kept value: built as a document
  kSkip,         // read and dropped
};

struct Frame {
  Role role = Role::kSkip;
  bool is_object = false;
  json* target = nullptr;                // kept containers: where children go
  std::string key;                       // objects: the key of the value being read
  std::size_t index = 0;                 // arrays: the index of the next element
  std::size_t entries = 0;               // objects: keys seen
  std::unordered_set<std::string> keys;  // objects whose keys matter: for duplicates
};

// The SAX handler. Each callback returns false to stop the parse, with error_ set.
class RequestReader final : public nlohmann::json_sax<json> {
 public:
  explicit RequestReader(const ExtenderRequestLimits& limits) : limits_(limits) {}

  bool null() override { return Scalar(json(nullptr)); }
  bool boolean(bool value) override { return Scalar(json(value)); }
  bool number_integer(number_integer_t value) override { return Scalar(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(json(value)); }
  bool number_float(number_float_t value, const string_t&) override { return Scalar(json(value)); }
  bool string(string_t& value) override { return String(value); }
  bool binary(binary_t&) override { return Fail("", "binary values are not JSON"); }

  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& name) override {
    Frame& frame = frames_.back();
    if (TracksKeys(frame.role) && !frame.keys.insert(name).second) {
      return Fail(core::api::JsonPathChild(Path(), name), "duplicate key");
    }
    ++frame.entries;
    if (frame.role == Role::kAnnotations && frame.entries > limits_.max_annotations) {
      return Fail(Path(), fmt::format("more than {} annotations", limits_.max_annotations));
    }
    frame.key = std::move(name);
    return true;
  }

  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& error) override {
    if (error_.empty()) error_ = fmt::format("invalid JSON: {}", error.what());
    return false;
  }

  // After a parse that returned true: the checks that need the whole request.
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
  static bool TracksKeys(Role role) { return role != Role::kSkip; }

  static core::Result<ExtenderArgs> Invalid(std::string message) {
    return std::unexpected(core::Error(core::ErrorCode::kInvalidArgument, std::move(message)));
  }

  bool Fail(std::string_view path, std::string_view message) {
    error_ = path.empty() ? std::string(message) : fmt::format("{}: {}", path, message);
    return false;
  }

  // The JSON path of the value being read now, from the open containers.
  std::string Path() const {
    std::string path;
    for (std::size_t i = 1; i < frames_.size(); ++i) {
      const Frame& parent = frames_[i - 1];
      path = parent.is_object ? core::api::JsonPathChild(path, parent.key)
                              : core::api::JsonPathIndex(path, parent.index);
    }
    return path;
  }
  std::string ValuePath() const {
    const Frame& frame = frames_.back();
    const std::string path = Path();
    return frame.is_object ? core::api::JsonPathChild(path, frame.key)
                           : core::api::JsonPathIndex(path, frame.index);
  }

  // The role a container opened now takes, from its parent and key.
  Role ChildRole(bool is_object) const {
    const Frame& parent = frames_.back();
    switch (parent.role) {
      case Role::kRoot:
        if (parent.key == "Pod") return Role::kPod;
        if (parent.key == "NodeNames") return Role::kNodeNames;
        if (parent.key == "Nodes") return Role::kNodeList;
        return Role::kSkip;
      case Role::kPod: return parent.key == "metadata" ? Role::kPodMetadata : Role::kSkip;
      case Role::kPodMetadata:
        return parent.key == "annotations" && is_object ? Role::kAnnotations : Role::kSkip;
      case Role::kNodeList:
        return parent.key == "items" && !is_object ? Role::kNodeItems : Role::kKeep;
      case Role::kNodeItems:
      case Role::kKeep: return Role::kKeep;
      case Role::kAnnotations:
      case Role::kNodeNames:
      case Role::kSkip: return Role::kSkip;
    }
    return Role::kSkip;
  }

  // Kept containers and scalars go into the parent's document.
  json& Insert(json value) {
    Frame& parent = frames_.back();
    if (parent.is_object) return (*parent.target)[parent.key] = std::move(value);
    parent.target->push_back(std::move(value));
    return parent.target->back();
  }

  bool Open(bool is_object) {
    if (frames_.empty()) {
      if (!is_object) return Fail("", "ExtenderArgs must be an object");
      frames_.push_back({.role = Role::kRoot, .is_object = true});
      return true;
    }
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      return Fail(ValuePath(), fmt::format("nesting deeper than {} levels", limits_.max_depth));
    }
    const Frame& parent = frames_.back();
    if (parent.role == Role::kNodeNames) return Fail(ValuePath(), "must be a non-empty string");
    if (parent.role == Role::kNodeItems) {
      if (!is_object) return NamelessNode();
      if (args_.node_names.size() >= limits_.max_nodes) return TooManyNodes();
    }
    const Role role = ChildRole(is_object);
    Frame frame{.role = role, .is_object = is_object};
    switch (role) {
      case Role::kPod:
        if (!is_object) return Fail("", "Pod must be an object");
        saw_pod_ = true;
        break;
      case Role::kPodMetadata:
        if (!is_object) return Fail("", "Pod.metadata must be an object");
        saw_metadata_ = true;
        break;
      case Role::kNodeNames:
        if (is_object) return Fail("", "NodeNames must be an array");
        saw_names_ = true;
        break;
      case Role::kNodeList:
        if (!is_object) return Fail("", "Nodes must be a NodeList object");
        saw_list_ = true;
        args_.node_list = json::object();
        frame.target = &args_.node_list;
        break;
      case Role::kNodeItems: frame.target = &Insert(json::array()); break;
      case Role::kKeep:
        if (parent.role == Role::kNodeList && parent.key == "items") {
          return Fail("", "Nodes.items must be an array");
        }
        frame.target = &Insert(is_object ? json::object() : json::array());
        break;
      case Role::kRoot:
      case Role::kAnnotations:
      case Role::kSkip: break;
    }
    frames_.push_back(std::move(frame));
    return true;
  }

  bool Close() {
    const Role role = frames_.back().role;
    frames_.pop_back();
    if (frames_.empty()) return true;
    Frame& parent = frames_.back();
    if (role == Role::kKeep && parent.role == Role::kNodeItems) {
      if (!NodeDone(parent.target->back())) return false;
    }
    Next();
    return true;
  }

  // The next element of an array, once a value in it is complete.
  void Next() {
    Frame& frame = frames_.back();
    if (!frame.is_object) ++frame.index;
  }

  bool NamelessNode() { return Fail(ValuePath(), "has no metadata.name"); }
  bool TooManyNodes() { return Fail(Path(), fmt::format("more than {} nodes", limits_.max_nodes)); }

  bool NodeDone(const json& node) {
    const auto metadata = node.find("metadata");
    const json* name = nullptr;
    if (metadata != node.end() && metadata->is_object()) {
      if (const auto found = metadata->find("name"); found != metadata->end()) name = &*found;
    }
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return NamelessNode();
    }
    return AddNodeName(name->get<std::string>());
  }

  bool AddNodeName(std::string name) {
    if (name.size() > limits_.max_node_name_bytes) {
      return Fail(ValuePath(),
                  fmt::format("node name longer than {} bytes", limits_.max_node_name_bytes));
    }
    if (args_.node_names.size() >= limits_.max_nodes) return TooManyNodes();
    args_.node_names.push_back(std::move(name));
    return true;
  }

  bool String(std::string& value) {
    // A document that is a bare string has no frame yet (the fuzzer found it).
    if (frames_.empty()) return Fail("", "ExtenderArgs must be an object");
    Frame& frame = frames_.back();
    switch (frame.role) {
      case Role::kPodMetadata:
        if (frame.key == "namespace") {
          args_.pod.namespace_name = std::move(value);
        } else if (frame.key == "name") {
          args_.pod.name = std::move(value);
        } else if (frame.key == "uid") {
          args_.pod.uid = std::move(value);
        }
        break;
      case Role::kAnnotations: args_.pod.annotations[frame.key] = std::move(value); break;
      case Role::kNodeNames:
        if (value.empty()) return Fail(ValuePath(), "must be a non-empty string");
        if (!AddNodeName(std::move(value))) return false;
        break;
      default: return Scalar(json(std::move(value)));
    }
    Next();
    return true;
  }

  // Any value that is not a container, or a string String() did not take.
  bool Scalar(json value) {
    if (frames_.empty()) return Fail("", "ExtenderArgs must be an object");
    const Frame& frame = frames_.back();
    const bool is_null = value.is_null();
    switch (frame.role) {
      case Role::kRoot:
        // A missing key and a null key mean the same to Go's decoder.
        if (!is_null && frame.key == "Pod") return Fail("", "Pod must be an object");
        if (!is_null && frame.key == "NodeNames") return Fail("", "NodeNames must be an array");
        if (!is_null && frame.key == "Nodes") return Fail("", "Nodes must be a NodeList object");
        break;
      case Role::kPod:
        if (!is_null && frame.key == "metadata") {
          return Fail("", "Pod.metadata must be an object");
        }
        break;
      case Role::kNodeNames: return Fail(ValuePath(), "must be a non-empty string");
      case Role::kNodeList:
        if (frame.key == "items") {
          // Go encodes an empty slice that was never allocated as null.
          if (!is_null) return Fail("", "Nodes.items must be an array");
        }
        Insert(std::move(value));
        break;
      case Role::kNodeItems: return NamelessNode();
      case Role::kKeep: Insert(std::move(value)); break;
      case Role::kPodMetadata:
      case Role::kAnnotations:  // annotations that are not strings are ignored, not fatal
      case Role::kSkip: break;
    }
    Next();
    return true;
  }

  const ExtenderRequestLimits& limits_;
  std::vector<Frame> frames_;
  ExtenderArgs args_;
  std::string error_;
  bool saw_pod_ = false;
  bool saw_metadata_ = false;
  bool saw_names_ = false;
  bool saw_list_ = false;
};

}  // namespace

core::Result<ExtenderArgs> ParseExtenderArgs(std::string_view body,
                                             const ExtenderRequestLimits& limits) {
  auto invalid = [](std::string message) {
    return std::unexpected(
        core::Error(core::ErrorCode::kInvalidArgument, "ExtenderArgs: " + std::move(message)));
  };
  if (body.size() > limits.max_bytes) {
    return invalid(fmt::format("body of {} bytes exceeds the limit of {} bytes", body.size(),
                               limits.max_bytes));
  }
  // nlohmann's lexer takes a NUL byte for the end of input, which would hide whatever follows;
  // valid JSON never holds a raw NUL (inside strings it must be escaped).
  if (const auto nul = body.find('\0'); nul != std::string_view::npos) {
    return invalid(fmt::format("invalid JSON: NUL byte at offset {}", nul));
  }
  RequestReader reader(limits);
  try {
    if (!json::sax_parse(body.begin(), body.end(), &reader)) return invalid(reader.error());
  } catch (const json::exception& error) {
    return invalid(fmt::format("invalid JSON: {}", error.what()));
  } catch (const std::bad_alloc&) {
    return std::unexpected(
        core::Error(core::ErrorCode::kResourceExhausted, "out of memory reading ExtenderArgs"));
  }
  auto args = std::move(reader).Finish();
  if (!args) return invalid(args.error().message());
  return args;
}

}  // namespace modelplane::extender
