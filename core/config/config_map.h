// The config binder: reads a YAML mapping into a typed struct, field by field, so each binary
// declares its configuration in a few lines:
//
//   struct HttpConfig {
//     std::string address = "0.0.0.0";
//     std::uint16_t port = 8080;
//     std::chrono::milliseconds read_timeout{30'000};
//   };
//   void BindConfig(ConfigMap& map, HttpConfig& config) {
//     map.Optional("address", config.address);
//     map.Required("port", config.port, InRange(1, 65535));
//     map.Optional("read_timeout", config.read_timeout, InRange(1ms, 1h));
//   }
//
// Field types: std::string, bool, integers (range-checked against their own type), floating
// point, std::chrono durations ("30s", see duration.h), ByteSize ("256Mi", see byte_size.h),
// std::optional, std::vector and std::map<std::string, T> of any of these, and any struct with
// a BindConfig(ConfigMap&, T&) found by argument-dependent lookup (nested maps). Optional
// fields keep their default when absent or empty (null); Required ones report "required field
// is missing". After a struct's BindConfig runs, keys it did not ask for are rejected with
// their line, so a typo never silently falls back to a default. Duplicate keys are rejected.
// Errors carry the file, line and dotted field path (config_context.h).
//
// Thread safety: one ConfigMap per load, used by one thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/config/config_checks.h"
#include "core/config/config_context.h"
#include "core/config/config_scalars.h"

namespace modelplane::core {

class ConfigMap;

template <typename T>
concept ConfigStruct = requires(ConfigMap& map, T& value) {
  BindConfig(map, value);
};

namespace config_internal {
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct IsStringMap : std::false_type {};
template <typename T, typename C, typename A>
struct IsStringMap<std::map<std::string, T, C, A>> : std::true_type {};
template <typename T>
struct IsParsedBy : std::false_type {};
template <typename P>
struct IsParsedBy<ParsedBy<P>> : std::true_type {};
}  // namespace config_internal

// Reads `value` into `out`, or records an error in value.context and leaves `out` unchanged.
template <typename T, typename Check = NoCheck>
void ReadConfigValue(const ConfigValue& value, T& out, const Check& check = {});

class ConfigMap {
 public:
  // `node` must be a map, or null (an empty map); anything else records an error.
  ConfigMap(ConfigContext& context, const YAML::Node& node, std::string path, YAML::Mark mark);
  ConfigMap(const ConfigMap&) = delete;
  ConfigMap& operator=(const ConfigMap&) = delete;

  template <typename T, typename Check = NoCheck>
  void Required(std::string_view key, T& out, const Check& check = {}) {
    Field(key, out, check, /*required=*/true);
  }
  template <typename T, typename Check = NoCheck>
  void Optional(std::string_view key, T& out, const Check& check = {}) {
    Field(key, out, check, /*required=*/false);
  }

  // Reads every entry of the map into `out`, for free-form maps such as labels.
  template <typename V, typename Check = NoCheck>
  void ReadAll(std::map<std::string, V>& out, const Check& check = {}) {
    std::map<std::string, V> result;
    for (Entry& entry : entries_) {
      entry.used = true;
      V item{};
      ReadConfigValue(ConfigValue{context_, entry.value, ChildPath(entry.key), entry.key_mark},
                      item, check);
      result.emplace(entry.key, std::move(item));
    }
    if (context_.ok()) out = std::move(result);
  }

  // Records an error for the first key that no Required/Optional call asked for.
  void RejectUnknownKeys();

  // For checks that involve several fields (e.g. "min must not exceed max"): records an error
  // located at this map.
  void Fail(std::string_view message) { context_.Fail(mark_, path_, message); }
  [[nodiscard]] bool ok() const { return context_.ok(); }

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    YAML::Mark key_mark;
    bool used = false;
  };

  template <typename T, typename Check>
  void Field(std::string_view key, T& out, const Check& check, bool required) {
    requested_.emplace_back(key);
    if (!context_.ok()) return;
    Entry* entry = Find(key);
    if (entry == nullptr || entry->value.IsNull()) {
      if (required) {
        context_.Fail(entry != nullptr ? entry->key_mark : mark_, ChildPath(key),
                      "required field is missing");
      }
      return;
    }
    ReadConfigValue(ConfigValue{context_, entry->value, ChildPath(key), entry->key_mark}, out,
                    check);
  }

  Entry* Find(std::string_view key);
  [[nodiscard]] std::string ChildPath(std::string_view key) const;

  ConfigContext& context_;
  std::string path_;
  YAML::Mark mark_;
  std::vector<Entry> entries_;
  std::vector<std::string> requested_;  // for the hint in the unknown-field error
};

template <typename T, typename Check>
void ReadConfigValue(const ConfigValue& value, T& out, const Check& check) {
  using namespace config_internal;
  if (!value.context.ok() || !value.context.CountValue(value.mark, value.path)) return;
  const YAML::Node& node = value.node;

  if constexpr (IsOptional<T>::value) {
    typename T::value_type inner{};
    ReadConfigValue(value, inner, check);
    if (value.context.ok()) out = std::move(inner);
  } else if constexpr (IsVector<T>::value) {
    if (!node.IsSequence()) {
      value.Fail(fmt::format("expected a list, got {}", DescribeYamlValue(node)));
      return;
    }
    T result;
    std::size_t index = 0;
    for (const auto& item : node) {
      typename T::value_type element{};
      const YAML::Node item_node = item;
      ReadConfigValue(ConfigValue{value.context, item_node,
                                  fmt::format("{}[{}]", value.path, index++), item_node.Mark()},
                      element, check);
      if (!value.context.ok()) return;
      result.push_back(std::move(element));
    }
    out = std::move(result);
  } else if constexpr (IsStringMap<T>::value) {
    ConfigMap map(value.context, node, value.path, value.mark);
    map.ReadAll(out, check);
  } else if constexpr (IsParsedBy<Check>::value) {
    if (!node.IsScalar()) {
      value.Fail(fmt::format("expected a string, got {}", DescribeYamlValue(node)));
      return;
    }
    auto parsed = check.parser(std::string_view(node.Scalar()));
    if (!parsed) {
      value.Fail(parsed.error().message());
      return;
    }
    out = std::move(*parsed);
  } else if constexpr (ConfigStruct<T>) {
    ConfigMap map(value.context, node, value.path, value.mark);
    if (!value.context.ok()) return;
    BindConfig(map, out);
    map.RejectUnknownKeys();
  } else {
    static_assert(ConfigScalar<T>,
                  "a config field must be a scalar type (config_scalars.h), an optional, vector "
                  "or string map of one, or a struct with BindConfig(ConfigMap&, T&)");
    const auto fail = [&] {
      std::string expected = check.Expected(DescribeScalarType<T>());
      if constexpr (std::same_as<Check, NoCheck>) expected += DescribeNaturalRange<T>();
      value.Fail(fmt::format("expected {}, got {}", expected, DescribeYamlValue(node)));
    };
    if (!node.IsScalar()) return fail();
    auto parsed = ParseScalarAs<T>(node.Scalar());
    if (!parsed || !check.Accepts(*parsed)) return fail();
    out = std::move(*parsed);
  }
}

}  // namespace modelplane::core
