// Kubernetes ObjectMeta as modelplane reads and writes it, with JSON conversion both ways.
//
// Fields the operator does not use (managedFields, generateName, ...) are kept verbatim in
// `unknown_fields` so an object read, changed and written back does not lose them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core::api {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // "namespace" in JSON
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<Timestamp> creation_timestamp;
  std::optional<Timestamp> deletion_timestamp;
  std::vector<std::string> finalizers;
  std::vector<OwnerReference> owner_references;
  nlohmann::json unknown_fields = nlohmann::json::object();

  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

[[nodiscard]] Result<ObjectMeta> ObjectMetaFromJson(const JsonObjectReader& reader);
[[nodiscard]] nlohmann::json ToJson(const ObjectMeta& meta);

// Checks apiVersion and kind when present (objects inside a List may omit them) and reads
// metadata, for the top level of every modelplane object.
[[nodiscard]] Result<ObjectMeta> ReadTypeAndObjectMeta(const JsonObjectReader& reader,
                                                       std::string_view api_version,
                                                       std::string_view kind);

}  // namespace modelplane::core::api
