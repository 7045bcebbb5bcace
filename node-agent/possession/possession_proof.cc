#include "node-agent/possession/possession_proof.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>

#include <fcntl.h>
#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/io/unique_fd.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

using core::ErrorCode;

// How much a source's failure says about why the revision's own sources do not serve a file. A
// truncated file there is as good as different bytes; a refusal explains more than "not found",
// which explains more than "unavailable" (also what a slow or overloaded source says).
int Weight(ErrorCode code) {
  switch (code) {
    case ErrorCode::kDataLoss: return 5;
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
    case ErrorCode::kAddressDenied: return 4;
    case ErrorCode::kNotFound: return 3;
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kThrottled: return 1;
    default: return 0;
  }
}

// The node's verified copy of the range. A missing or resized copy is kConflict: the precondition
// of the proof (the node holds the bytes) no longer holds, which a later pass may find again.
core::Status ReadLocal(const SourceFile& file, const SampledRange& range,
                       const BlobCatalog& catalog, std::span<std::byte> destination) {
  const std::optional<VerifiedBlob> blob = catalog.FindVerifiedBlob(file.sha256);
  if (!blob) {
    return core::MakeError(ErrorCode::kConflict,
                           fmt::format("this node holds no verified copy of {}", file.path));
  }
  if (blob->size != file.size) {
    return core::MakeError(ErrorCode::kConflict,
                           fmt::format("this node's copy of {} has {} bytes, the revision names {}",
                                       file.path, blob->size, file.size));
  }
  const core::UniqueFd fd(::open(blob->path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(ErrnoError(errno, "opening", blob->path));
  return ReadAllAt(fd.get(), destination.data(), destination.size(), range.offset, blob->path);
}

// Asks the sources in order for the range and compares the first answer with `local`.
core::Status ProveRange(const SourceFile& file, const SampledRange& range,
                        const std::vector<RangeSource*>& sources, std::span<const std::byte> local,
                        std::span<std::byte> remote, const ReadContext& context) {
  std::optional<core::Error> telling;
  for (RangeSource* source : sources) {
    if (auto stop = context.StopReason()) return std::unexpected(*stop);
    auto read = source->ReadRange(file, range.offset, remote, context);
    if (read) {
      if (std::equal(local.begin(), local.end(), remote.begin())) return core::Ok();
      return core::MakeError(ErrorCode::kDataLoss,
                             fmt::format("source {} served bytes that differ from {} at offset {}",
                                         source->name(), file.path, range.offset));
    }
    const ErrorCode code = read.error().code();
    // A cancelled proof ends here; it has nothing to say about the sources.
    if (code == ErrorCode::kCancelled) return std::unexpected(read.error());
    if (!telling || Weight(code) > Weight(telling->code())) {
      telling = read.error().Wrap(fmt::format("source {}", source->name()));
    }
  }
  return std::unexpected(telling->Wrap(
      fmt::format("reading {} at offset {} from the revision's sources", file.path, range.offset)));
}

}  // namespace

std::vector<RangeSource*> PossessionSources(const std::vector<RangeSource*>& sources) {
  std::vector<RangeSource*> asked;
  for (RangeSource* source : sources) {
    if (source != nullptr && source->tier() != core::api::kTierPeer) asked.push_back(source);
  }
  return asked;
}

core::Status ProveSourcesServe(const std::vector<SourceFile>& files,
                               const std::vector<SampledRange>& sample,
                               const std::vector<RangeSource*>& sources, const BlobCatalog& catalog,
                               const ReadContext& context) {
  const std::vector<RangeSource*> asked = PossessionSources(sources);
  if (asked.empty()) {
    return core::MakeError(ErrorCode::kInvalidArgument,
                           "the revision names no source it can be read from");
  }
  std::vector<std::byte> local;
  std::vector<std::byte> remote;
  for (const SampledRange& range : sample) {
    if (range.file >= files.size() || range.length > files[range.file].size ||
        range.offset > files[range.file].size - range.length) {
      return core::MakeError(ErrorCode::kInternal, "a sampled range lies outside its file");
    }
    const SourceFile& file = files[range.file];
    local.resize(range.length);
    remote.resize(range.length);
    if (auto read = ReadLocal(file, range, catalog, local); !read) return read;
    if (auto proven = ProveRange(file, range, asked, local, remote, context); !proven) {
      return proven;
    }
  }
  return core::Ok();
}

}  // namespace modelplane::agent
