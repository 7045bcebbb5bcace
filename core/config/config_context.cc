#include "core/config/config_context.h"

#include <fmt/format.h>

namespace modelplane::core {
namespace {

constexpr std::size_t kMaxQuotedBytes = 64;

}  // namespace

Status ConfigContext::status() const {
  if (error_) return std::unexpected(*error_);
  return Ok();
}

void ConfigContext::Fail(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  if (error_) return;
  std::string text = source_name_;
  if (!mark.is_null()) text += fmt::format(":{}", mark.line + 1);
  text += ": ";
  if (!path.empty()) text += fmt::format("field '{}': ", path);
  text += message;
  error_ = Error(ErrorCode::kInvalidArgument, std::move(text));
}

bool ConfigContext::CountValue(const YAML::Mark& mark, std::string_view path) {
  if (++values_read_ <= max_values_) return true;
  Fail(mark, path,
       fmt::format("the document expands to more than {} values (check for YAML aliases)",
                   max_values_));
  return false;
}

std::string DescribeYamlValue(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (text.size() <= kMaxQuotedBytes) return fmt::format("{:?}", text);
      return fmt::format("{:?}... ({} bytes)", std::string_view(text).substr(0, kMaxQuotedBytes),
                         text.size());
    }
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing (null)";
  }
  return "an unknown value";
}

}  // namespace modelplane::core
