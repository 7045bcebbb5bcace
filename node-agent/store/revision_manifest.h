// The store's record of one staged revision: which blob holds each file. Written only after
// every blob it names is published, so its presence means "this revision is ready here".
//
// On disk it is JSON (revisions/sha256/<digest>.json), read back with bounded size and strict
// checks: the store never trusts a file it did not just write.
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/digest/sha256.h"
#include "core/error/error.h"

namespace modelplane::agent {

struct ManifestFile {
  std::string path;  // relative path in the revision, validated
  std::uint64_t size = 0;
  core::Sha256Bytes sha256{};

  friend bool operator==(const ManifestFile&, const ManifestFile&) = default;
};

struct RevisionManifest {
  core::Sha256Bytes revision_digest{};
  std::string name;  // "namespace/name" for humans; the digest is the identity
  std::vector<ManifestFile> files;
  std::int64_t published_unix_seconds = 0;

  [[nodiscard]] std::uint64_t TotalBytes() const;
  friend bool operator==(const RevisionManifest&, const RevisionManifest&) = default;
};

[[nodiscard]] std::string SerializeManifest(const RevisionManifest& manifest);
[[nodiscard]] core::Result<RevisionManifest> ParseManifest(std::string_view text);

// A relative path a revision may name: '/'-separated, no empty, "." or ".." segments, not
// absolute, no NUL or backslash, valid UTF-8, at most 1024 bytes. Everything that turns a
// manifest path into a filesystem or URL path calls this first.
[[nodiscard]] core::Status ValidateRelativePath(std::string_view path);

}  // namespace modelplane::agent
