#include "core/config/yaml_document.h"

#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "core/io/bounded_file.h"

namespace modelplane::core {
namespace {

// Thrown from inside yaml-cpp's parse to stop it, and caught in CheckStructure.
struct DepthExceeded {
  YAML::Mark mark;
};

class DepthCheckHandler final : public YAML::EventHandler {
 public:
  explicit DepthCheckHandler(int max_depth) : max_depth_(max_depth) {}

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    // The parser announces a collection before recursing into it, so throwing here bounds the
    // parser's own recursion by max_depth_.
    if (++depth_ > max_depth_) throw DepthExceeded{mark};
  }

  int max_depth_;
  int depth_ = 0;
};

std::string Location(std::string_view source_name, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(source_name);
  return fmt::format("{}:{}:{}", source_name, mark.line + 1, mark.column + 1);
}

Status Invalid(std::string_view source_name, const YAML::Mark& mark, std::string_view message) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("{}: {}", Location(source_name, mark), message));
}

// First pass: depth and document count, without building anything.
Status CheckStructure(const std::string& text, std::string_view source_name,
                      const YamlLimits& limits) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DepthCheckHandler handler(limits.max_depth);
  try {
    if (!parser.HandleNextDocument(handler)) return Ok();  // empty input
    DepthCheckHandler second(limits.max_depth);
    if (parser.HandleNextDocument(second)) {
      return Invalid(source_name, YAML::Mark::null_mark(),
                     "holds more than one YAML document; a configuration file holds exactly one");
    }
  } catch (const DepthExceeded& exceeded) {
    return Invalid(source_name, exceeded.mark,
                   fmt::format("nesting deeper than {} levels", limits.max_depth));
  } catch (const YAML::Exception& error) {
    return Invalid(source_name, error.mark, fmt::format("malformed YAML: {}", error.msg));
  } catch (const std::exception& error) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("{}: YAML parser failed: {}", source_name, error.what()));
  }
  return Ok();
}

}  // namespace

Result<YamlDocument> LoadYamlString(std::string_view text, std::string source_name,
                                    const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: {} bytes is more than the limit of {} bytes", source_name,
                                 text.size(), limits.max_bytes));
  }
  const std::string owned(text);
  if (auto valid = CheckStructure(owned, source_name, limits); !valid) {
    return std::unexpected(valid.error());
  }
  YAML::Node root;
  try {
    root = YAML::Load(owned);
  } catch (const YAML::Exception& error) {
    return std::unexpected(
        Invalid(source_name, error.mark, fmt::format("malformed YAML: {}", error.msg)).error());
  } catch (const std::exception& error) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("{}: YAML parser failed: {}", source_name, error.what()));
  }
  return YamlDocument{.source_name = std::move(source_name),
                      .root = root};  // Node is a cheap handle
}

Result<YamlDocument> LoadYamlFile(const std::string& path, const YamlLimits& limits) {
  auto text = ReadBoundedFile(path, limits.max_bytes);
  if (!text) {
    if (text.error().code() == ErrorCode::kNotFound) {
      return MakeError(ErrorCode::kNotFound, fmt::format("{}: no such file", path));
    }
    return std::unexpected(text.error());
  }
  return LoadYamlString(*text, path, limits);
}

}  // namespace modelplane::core
