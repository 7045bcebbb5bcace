// Standard base64 (RFC 4648 section 4, with padding): the one codec for every place that meets
// it (kubeconfig certificate data, AdmissionReview patches, Secret data).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/error/error.h"

namespace modelplane::core {

[[nodiscard]] std::string EncodeBase64(std::string_view bytes);

// Whitespace (line breaks in PEM-like text) is ignored; anything else that is not base64, or a
// length that is not a whole number of quanta, is kInvalidArgument naming `field`.
[[nodiscard]] Result<std::string> DecodeBase64(std::string_view text, std::string_view field);

}  // namespace modelplane::core
