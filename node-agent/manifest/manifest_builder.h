// Builds the file list of a ModelRevision (path, size, sha256, role) from a local folder or an
// S3 prefix, hashing files in parallel on a bounded number of threads with large reads; S3
// objects are streamed through the hasher and never stored. core/manifest/revision_builder.h
// makes the revision from the list.
//
// A folder is walked without following symlinks: a symlink to a regular file inside the folder
// is hashed (its target's bytes), one that leaves the folder or points at a directory is an
// error (kPermissionDenied), so a manifest never describes bytes from elsewhere. Files without a
// role (core/manifest/file_roles.h) are skipped and listed in `skipped`.
// Thread safety: each call is independent; it starts and joins its own threads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/api/model_revision.h"
#include "core/error/error.h"
#include "node-agent/sources/s3_client.h"

namespace modelplane::agent {

struct HashOptions {
  std::size_t threads = 4;
  std::size_t read_size = 8 * 1024 * 1024;  // one pread of a local file
};

struct FileListing {
  std::vector<core::api::ModelFile> files;  // sorted by path
  std::vector<std::string> skipped;         // paths without a role
};

[[nodiscard]] core::Result<FileListing> ListFolderFiles(const std::string& folder,
                                                        const HashOptions& options);

// Objects under "<prefix>/" of `bucket`; paths are the keys without that prefix.
[[nodiscard]] core::Result<FileListing> ListS3Files(S3Client& client, const std::string& bucket,
                                                    const std::string& prefix,
                                                    const HashOptions& options);

}  // namespace modelplane::agent
