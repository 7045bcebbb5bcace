// The in-toto statement inside a model-signing bundle (predicate type
// https://model_signing/signature/v1.0): one subject, the model, whose sha256 is the hash of the
// concatenated raw digests of the resources in order, and the resources themselves, one per
// file: its path relative to the model folder and its sha256.
//
// Only what maps onto a ModelRevision's files[].sha256 is accepted: serialization method
// "files" with hash_type sha256 and every resource's algorithm sha256. Sharded serialization
// ("shards"), other hash types and the pre-1.0 predicate are refused with a clear error, as is a
// statement whose subject digest disagrees with its resources or that names a file twice.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error/error.h"

namespace modelplane::core {

inline constexpr std::string_view kInTotoStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kModelSigningPredicateType =
    "https://model_signing/signature/v1.0";

struct SignedModelFile {
  std::string path;    // as the statement names it ('/'-separated, relative)
  std::string sha256;  // "sha256:<64 lower-case hex>", as ModelFile::sha256
};

struct SignedModelManifest {
  std::string model_name;              // the subject's name (the signed folder's name)
  std::vector<SignedModelFile> files;  // in the statement's order
};

// kInvalidArgument naming what is wrong.
[[nodiscard]] Result<SignedModelManifest> ParseModelSigningStatement(std::string_view payload);

}  // namespace modelplane::core
