// The revision digest: sha256 over a canonical encoding of everything that changes execution.
//
// It is the cache key every node agent stores a revision under, so two specs that execute the
// same way must get the same digest whatever their JSON formatting, key order or file order, and
// any change to the bytes or how they run must change it. Display names, sources, prestage,
// retention and `revoked` are deliberately left out: fetching the same bytes from elsewhere or
// keeping them longer does not change what runs. docs/api.md defines the encoding byte by byte.
#pragma once

#include <string>
#include <string_view>

#include "core/api/model_revision.h"
#include "core/error/error.h"

namespace modelplane::core::api {

inline constexpr std::string_view kRevisionDigestVersion = "modelplane.io/revision-digest/v1";

// The encoded bytes. Defined for any spec; meaningful only for a valid one.
[[nodiscard]] std::string CanonicalRevisionEncoding(const ModelRevisionSpec& spec);

// "sha256:<hex>" of the canonical encoding. Fails (listing the problems) when the spec does not
// pass ValidateModelRevisionSpec, so no invalid spec ever gets a cache key.
[[nodiscard]] Result<std::string> ComputeRevisionDigest(const ModelRevisionSpec& spec);

}  // namespace modelplane::core::api
