#include "core/signing/model_signing_statement.h"

#include <cstdint>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/api/limits.h"
#include "core/digest/sha256.h"
#include "core/json/json_document.h"
#include "core/json/json_object_reader.h"

namespace modelplane::core {
namespace {

// model-signing before 1.0 wrote this predicate: no serialization parameters and no root digest.
constexpr std::string_view kPreReleasePredicateType = "https://model_signing/Digests/v0.1";
constexpr std::string_view kFilesMethod = "files";
constexpr std::string_view kShardsMethod = "shards";
constexpr std::string_view kSha256Name = "sha256";
// Enough for any statement a bundle within kMaxSignatureBundleLength can carry.
constexpr std::size_t kMaxStatementResources = api::kMaxFiles;
constexpr int kMaxStatementDepth = 8;

Result<JsonObjectReader> ChildObject(const JsonObjectReader& reader, std::string_view key) {
  auto value = reader.Find(key, Presence::kRequired);
  if (!value) return std::unexpected(value.error());
  return JsonObjectReader::Create(**value, reader.PathOf(key));
}

// The raw digest of a bare 64-hex sha256 field.
Result<Sha256Bytes> ReadSha256Hex(const JsonObjectReader& reader, std::string_view key) {
  std::string hex;
  MODELPLANE_JSON_TRY(reader.String(key, hex, api::kMaxDigestLength, Presence::kRequired));
  auto digest = ParseDigest(hex, /*allow_bare=*/true);
  if (!digest || hex.starts_with("sha256:")) {
    return FieldError(reader.PathOf(key), "must be 64 hex digits (a sha256)");
  }
  return *digest;
}

Status CheckSerialization(const JsonObjectReader& predicate) {
  auto serialization = ChildObject(predicate, "serialization");
  if (!serialization) return std::unexpected(serialization.error());
  std::string method;
  std::string hash_type;
  MODELPLANE_JSON_TRY(serialization->String("method", method, 64, Presence::kRequired));
  MODELPLANE_JSON_TRY(serialization->String("hash_type", hash_type, 64, Presence::kRequired));
  if (method == kShardsMethod) {
    // Shards name byte ranges of files; spec.files names whole files, so nothing here could
    // say that a shard's digest covers a file's sha256.
    return FieldError(serialization->PathOf("method"),
                      "\"shards\" (sharded serialization) is not supported: a ModelRevision names "
                      "whole files; sign with the default method (\"files\")");
  }
  if (method != kFilesMethod) {
    return FieldError(serialization->PathOf("method"),
                      fmt::format("\"{}\" is not supported (only \"files\")", method));
  }
  if (hash_type != kSha256Name) {
    return FieldError(serialization->PathOf("hash_type"),
                      fmt::format("\"{}\" is not supported: a ModelRevision's files carry sha256 "
                                  "digests; sign with hash type sha256",
                                  hash_type));
  }
  return Ok();
}

struct Subject {
  std::string name;
  Sha256Bytes root{};
};

Result<Subject> ReadSubject(const JsonObjectReader& statement) {
  auto subjects = statement.Find("subject", Presence::kRequired);
  if (!subjects) return std::unexpected(subjects.error());
  const std::string path = statement.PathOf("subject");
  if (!(*subjects)->is_array() || (*subjects)->size() != 1) {
    return FieldError(path, "must hold exactly one subject (the model)");
  }
  auto subject = JsonObjectReader::Create((**subjects)[0], path + "[0]");
  if (!subject) return std::unexpected(subject.error());
  Subject result;
  MODELPLANE_JSON_TRY(subject->String("name", result.name, api::kMaxPathLength));
  auto digest = ChildObject(*subject, "digest");
  if (!digest) return std::unexpected(digest.error());
  auto root = ReadSha256Hex(*digest, kSha256Name);
  if (!root) return std::unexpected(root.error());
  result.root = *root;
  return result;
}

struct Resource {
  std::string path;
  Sha256Bytes digest{};
};

Result<Resource> ReadResource(const JsonObjectReader& reader) {
  Resource resource;
  std::string algorithm;
  MODELPLANE_JSON_TRY(
      reader.String("name", resource.path, api::kMaxPathLength, Presence::kRequired));
  MODELPLANE_JSON_TRY(reader.String("algorithm", algorithm, 64, Presence::kRequired));
  if (resource.path.empty()) return FieldError(reader.PathOf("name"), "is empty");
  if (algorithm != kSha256Name) {
    return FieldError(reader.PathOf("algorithm"), fmt::format("\"{}\" is not sha256", algorithm));
  }
  auto digest = ReadSha256Hex(reader, "digest");
  if (!digest) return std::unexpected(digest.error());
  resource.digest = *digest;
  return resource;
}

}  // namespace

Result<SignedModelManifest> ParseModelSigningStatement(std::string_view payload) {
  auto document = ParseJsonDocument(
      payload, {.max_bytes = api::kMaxSignatureBundleLength, .max_depth = kMaxStatementDepth});
  if (!document) return std::unexpected(document.error().Wrap("the signed statement"));
  auto statement = JsonObjectReader::Create(*document, "");
  if (!statement) return std::unexpected(statement.error());

  std::string type;
  std::string predicate_type;
  MODELPLANE_JSON_TRY(statement->String("_type", type, 256, Presence::kRequired));
  if (type != kInTotoStatementType) {
    return FieldError("_type", fmt::format("\"{}\" is not {}", type, kInTotoStatementType));
  }
  MODELPLANE_JSON_TRY(statement->String("predicateType", predicate_type, 256, Presence::kRequired));
  if (predicate_type == kPreReleasePredicateType) {
    return FieldError("predicateType",
                      fmt::format("\"{}\" is model-signing's pre-1.0 format, which carries no "
                                  "serialization parameters; re-sign with model_signing 1.0 or "
                                  "later",
                                  predicate_type));
  }
  if (predicate_type != kModelSigningPredicateType) {
    return FieldError("predicateType",
                      fmt::format("\"{}\" is not {}", predicate_type, kModelSigningPredicateType));
  }
  auto subject = ReadSubject(*statement);
  if (!subject) return std::unexpected(subject.error());
  auto predicate = ChildObject(*statement, "predicate");
  if (!predicate) return std::unexpected(predicate.error());
  MODELPLANE_JSON_TRY(CheckSerialization(*predicate));

  std::vector<Resource> resources;
  MODELPLANE_JSON_TRY(predicate->ObjectArray<Resource>(
      "resources", resources, kMaxStatementResources, ReadResource, Presence::kRequired));
  SignedModelManifest manifest{.model_name = std::move(subject->name), .files = {}};
  std::set<std::string_view> names;
  auto hasher = Sha256::Create();
  if (!hasher) return std::unexpected(hasher.error());
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const Resource& resource = resources[i];
    if (!names.insert(resource.path).second) {
      return FieldError(fmt::format("predicate.resources[{}].name", i),
                        fmt::format("\"{}\" is named twice", resource.path));
    }
    hasher->Update(std::string_view(reinterpret_cast<const char*>(resource.digest.data()),
                                    resource.digest.size()));
    manifest.files.push_back({.path = resource.path, .sha256 = FormatDigest(resource.digest)});
  }
  // model-signing's root digest: sha256 over the resources' raw digests, in order. A statement
  // whose subject disagrees was not made by model-signing (or was edited before signing).
  if (const Sha256Bytes root = hasher->Finish(); root != subject->root) {
    return FieldError("subject[0].digest.sha256",
                      fmt::format("{} is not the digest of the resources' digests ({})",
                                  ToHex(subject->root), ToHex(root)));
  }
  return manifest;
}

}  // namespace modelplane::core
