// Where the config binder is while reading one document, and the first error it met.
//
// Every error names the file, the line of the offending value and the dotted path of the field:
//   config.yaml:7: field 'http.port': expected an integer in 1..65535, got "abc"
// Only the first error is kept: later ones are usually consequences of it, and one precise
// message is easier to act on than a cascade. The context also counts values read, because
// YAML aliases let a small file expand into a huge tree and the binder would walk all of it.
//
// Thread safety: one context per load, used by one thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "core/error/error.h"

namespace modelplane::core {

inline constexpr std::size_t kMaxConfigValues = 100'000;

class ConfigContext {
 public:
  explicit ConfigContext(std::string source_name, std::size_t max_values = kMaxConfigValues)
      : source_name_(std::move(source_name)), max_values_(max_values) {}

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  [[nodiscard]] Status status() const;

  // Records `message` about the value at `path` (empty for the document root) unless an error
  // was already recorded.
  void Fail(const YAML::Mark& mark, std::string_view path, std::string_view message);

  // Counts one value about to be read; false, with an error recorded, once over the budget.
  [[nodiscard]] bool CountValue(const YAML::Mark& mark, std::string_view path);

 private:
  std::string source_name_;
  std::size_t max_values_;
  std::size_t values_read_ = 0;
  std::optional<Error> error_;
};

// One YAML value being read, with where it is for error messages.
struct ConfigValue {
  ConfigContext& context;
  YAML::Node node;
  std::string path;  // "http.port", "peers[2]"; empty for the root
  YAML::Mark mark;   // of the value, or of its key when the value has none (empty values)

  void Fail(std::string_view message) const { context.Fail(mark, path, message); }
};

// For "got ..." in errors: a quoted, shortened scalar, or "null", "a list", "a map".
[[nodiscard]] std::string DescribeYamlValue(const YAML::Node& node);

}  // namespace modelplane::core
