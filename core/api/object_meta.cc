#include "core/api/object_meta.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "core/api/limits.h"

namespace modelplane::core::api {
namespace {

constexpr std::array<std::string_view, 11> kKnownFields = {"name",
                                                           "namespace",
                                                           "uid",
                                                           "resourceVersion",
                                                           "generation",
                                                           "labels",
                                                           "annotations",
                                                           "creationTimestamp",
                                                           "deletionTimestamp",
                                                           "finalizers",
                                                           "ownerReferences"};

Result<OwnerReference> OwnerReferenceFromJson(const JsonObjectReader& reader) {
  OwnerReference ref;
  MODELPLANE_JSON_TRY(
      reader.String("apiVersion", ref.api_version, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("kind", ref.kind, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("name", ref.name, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("uid", ref.uid, kMaxShortString, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.Bool("controller", ref.controller));
  MODELPLANE_JSON_TRY(reader.Bool("blockOwnerDeletion", ref.block_owner_deletion));
  return ref;
}

}  // namespace

Result<ObjectMeta> ObjectMetaFromJson(const JsonObjectReader& reader) {
  ObjectMeta meta;
  MODELPLANE_JSON_TRY(reader.String("name", meta.name, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("namespace", meta.namespace_name, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("uid", meta.uid, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("resourceVersion", meta.resource_version, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.Int64("generation", meta.generation));
  MODELPLANE_JSON_TRY(
      reader.StringMap("labels", meta.labels, kMaxMapEntries, kMaxMapKeyLength, 63));
  MODELPLANE_JSON_TRY(reader.StringMap("annotations", meta.annotations, kMaxMapEntries,
                                       kMaxMapKeyLength, kMaxLongString));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "creationTimestamp", meta.creation_timestamp));
  MODELPLANE_JSON_TRY(ReadTimestamp(reader, "deletionTimestamp", meta.deletion_timestamp));
  MODELPLANE_JSON_TRY(
      reader.StringList("finalizers", meta.finalizers, kMaxListEntries, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.ObjectArray<OwnerReference>("ownerReferences", meta.owner_references,
                                                         kMaxListEntries, OwnerReferenceFromJson));
  for (const auto& [key, value] : reader.object().items()) {
    bool known = false;
    for (std::string_view known_key : kKnownFields) known = known || key == known_key;
    if (!known) meta.unknown_fields[key] = value;
  }
  return meta;
}

Result<ObjectMeta> ReadTypeAndObjectMeta(const JsonObjectReader& reader,
                                         std::string_view api_version, std::string_view kind) {
  std::string found_api_version;
  std::string found_kind;
  MODELPLANE_JSON_TRY(reader.String("apiVersion", found_api_version, kMaxShortString));
  MODELPLANE_JSON_TRY(reader.String("kind", found_kind, kMaxShortString));
  if (!found_api_version.empty() && found_api_version != api_version) {
    return FieldError("apiVersion", fmt::format("must be {}", api_version));
  }
  if (!found_kind.empty() && found_kind != kind) {
    return FieldError("kind", fmt::format("must be {}", kind));
  }
  std::optional<ObjectMeta> meta;
  MODELPLANE_JSON_TRY(reader.Object<ObjectMeta>("metadata", meta, ObjectMetaFromJson));
  return meta.value_or(ObjectMeta{});
}

nlohmann::json ToJson(const ObjectMeta& meta) {
  nlohmann::json out =
      meta.unknown_fields.is_object() ? meta.unknown_fields : nlohmann::json::object();
  if (!meta.name.empty()) out["name"] = meta.name;
  if (!meta.namespace_name.empty()) out["namespace"] = meta.namespace_name;
  if (!meta.uid.empty()) out["uid"] = meta.uid;
  if (!meta.resource_version.empty()) out["resourceVersion"] = meta.resource_version;
  if (meta.generation != 0) out["generation"] = meta.generation;
  if (!meta.labels.empty()) out["labels"] = meta.labels;
  if (!meta.annotations.empty()) out["annotations"] = meta.annotations;
  if (meta.creation_timestamp) out["creationTimestamp"] = FormatTimestamp(*meta.creation_timestamp);
  if (meta.deletion_timestamp) out["deletionTimestamp"] = FormatTimestamp(*meta.deletion_timestamp);
  if (!meta.finalizers.empty()) out["finalizers"] = meta.finalizers;
  if (!meta.owner_references.empty()) {
    nlohmann::json refs = nlohmann::json::array();
    for (const OwnerReference& ref : meta.owner_references) {
      nlohmann::json item = {{"apiVersion", ref.api_version},
                             {"kind", ref.kind},
                             {"name", ref.name},
                             {"uid", ref.uid}};
      if (ref.controller) item["controller"] = *ref.controller;
      if (ref.block_owner_deletion) item["blockOwnerDeletion"] = *ref.block_owner_deletion;
      refs.push_back(std::move(item));
    }
    out["ownerReferences"] = std::move(refs);
  }
  return out;
}

}  // namespace modelplane::core::api
