// Verifies a ModelRevision's OpenSSF model signatures (spec.signatures) for its namespace: each
// bundle's signature against a signer of the signature policy that serves the namespace, and
// the signed statement's files against spec.files, exactly (every path with its sha256, no file
// more or less). The operator's admission webhook and controller and every node agent call it,
// so a revision refused at admission is refused again wherever it reaches.
//
// Every signature on a revision must verify: a revision that carries a signature nobody here
// can check is refused, not treated as unsigned. A namespace the policy lists as `required`
// needs at least one. Certificates must be valid at `at`: the callers pass the revision's
// creationTimestamp (the API server's clock, which the author cannot set), so a signature
// accepted once stays accepted when its certificate later expires, and a revision created
// with an expired certificate is refused. Compromised keys and identities are withdrawn with a
// ModelRevocation (core/api/model_revocation.h), not by the passing of time.
//
// Thread safety: pure function.
#pragma once

#include <chrono>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/model_revision.h"
#include "core/signing/signature_policy.h"

namespace modelplane::core {

// Fixed reasons (status conditions, ModelCache entries, Events, the webhook's answer).
inline constexpr std::string_view kReasonSignatureRequired = "SignatureRequired";
inline constexpr std::string_view kReasonSignatureMalformed = "SignatureMalformed";
inline constexpr std::string_view kReasonSignatureUntrusted = "SignatureUntrusted";
inline constexpr std::string_view kReasonSignatureInvalid = "SignatureInvalid";
inline constexpr std::string_view kReasonSignatureCertificateExpired =
    "SignatureCertificateExpired";
inline constexpr std::string_view kReasonSignatureFilesMismatch = "SignatureFilesMismatch";

struct SignatureRefusal {
  std::string reason;   // one of kReasonSignature*
  std::string message;  // names the signature (spec.signatures[i]) and what failed
};

// The signers that vouch for the revision, one per signature, in spec order; empty when it
// carries none and its namespace requires none. `policy` null: no policy, no signer trusted.
[[nodiscard]] std::expected<std::vector<api::SignedBy>, SignatureRefusal> VerifyModelSignatures(
    const SignaturePolicy* policy, std::string_view namespace_name,
    const api::ModelRevisionSpec& spec, std::chrono::system_clock::time_point at);

}  // namespace modelplane::core
