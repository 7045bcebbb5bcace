#include "core/signing/model_signature_verifier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/api/limits.h"
#include "core/api/timestamp.h"
#include "core/digest/sha256.h"
#include "core/signing/model_signing_statement.h"
#include "core/signing/signing_certificates.h"
#include "core/signing/signing_keys.h"
#include "core/signing/sigstore_bundle.h"

namespace modelplane::core {
namespace {

using pki_internal::CertificateHandle;

// Enough differences to see what went wrong without writing the whole file list into a status.
constexpr std::size_t kMaxDifferencesListed = 5;
constexpr std::size_t kMaxIdentitiesListed = 5;

SignatureRefusal Refuse(std::string_view reason, std::string message) {
  return {.reason = std::string(reason), .message = std::move(message)};
}

// "a", "b", "c" and 2 more.
std::string ListQuoted(const std::vector<std::string>& items, std::size_t max_listed) {
  std::vector<std::string> quoted;
  for (std::size_t i = 0; i < items.size() && i < max_listed; ++i) {
    quoted.push_back(fmt::format("\"{}\"", items[i]));
  }
  std::string text = fmt::format("{}", fmt::join(quoted, ", "));
  if (items.size() > max_listed) text += fmt::format(" and {} more", items.size() - max_listed);
  return text;
}

// The statement's files against spec.files: the same paths, each with the same sha256.
std::optional<SignatureRefusal> CompareFiles(const SignedModelManifest& manifest,
                                             const std::vector<api::ModelFile>& files) {
  std::vector<std::string> differences;
  std::map<std::string_view, std::string_view> signed_digests;
  for (const SignedModelFile& file : manifest.files) signed_digests.emplace(file.path, file.sha256);
  std::map<std::string_view, const api::ModelFile*> spec_files;
  for (const api::ModelFile& file : files) {
    if (!spec_files.emplace(file.path, &file).second) {
      differences.push_back(fmt::format("spec.files names \"{}\" twice", file.path));
      continue;
    }
    const auto found = signed_digests.find(file.path);
    if (found == signed_digests.end()) {
      differences.push_back(fmt::format("\"{}\" is in spec.files but not signed", file.path));
      continue;
    }
    // spec.files may spell the hex in upper case; the statement's is normalized.
    auto digest = ParseDigest(file.sha256);
    if (!digest || FormatDigest(*digest) != found->second) {
      differences.push_back(fmt::format("\"{}\" has {} in spec.files but {} signed", file.path,
                                        file.sha256, found->second));
    }
  }
  for (const SignedModelFile& file : manifest.files) {
    if (!spec_files.contains(file.path)) {
      differences.push_back(fmt::format("\"{}\" is signed but not in spec.files", file.path));
    }
  }
  if (differences.empty()) return std::nullopt;
  std::string message =
      fmt::format("the signed statement ({} files) and spec.files ({} files) differ: {}",
                  manifest.files.size(), files.size(),
                  fmt::join(differences.begin(),
                            differences.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                      differences.size(), kMaxDifferencesListed)),
                            "; "));
  if (differences.size() > kMaxDifferencesListed) {
    message += fmt::format("; and {} more", differences.size() - kMaxDifferencesListed);
  }
  return Refuse(kReasonSignatureFilesMismatch, std::move(message));
}

// One signature, checked against the policy's signers for one namespace.
class SignatureCheck {
 public:
  SignatureCheck(const SignaturePolicy& policy, std::string_view namespace_name,
                 const SigstoreBundle& bundle, std::chrono::system_clock::time_point at)
      : policy_(policy), namespace_(namespace_name), bundle_(bundle), at_(at) {}

  std::expected<api::SignedBy, SignatureRefusal> Run() const {
    return bundle_.certificates.empty() ? CheckKeyMode() : CheckCertificateMode();
  }

 private:
  bool SignatureVerifies(EVP_PKEY* key) const {
    return signing_internal::VerifyDsseSignature(key, bundle_.payload_type, bundle_.payload,
                                                 bundle_.signature);
  }

  SignatureRefusal Altered(std::string_view whose) const {
    return Refuse(kReasonSignatureInvalid,
                  fmt::format("the signature does not verify with {}: the bundle's statement or "
                              "signature was altered after signing",
                              whose));
  }

  std::expected<api::SignedBy, SignatureRefusal> Accept(const SignerRule& rule, EVP_PKEY* key,
                                                        std::string identity) const {
    auto fingerprint = pki_internal::PublicKeyFingerprint(key);
    if (!fingerprint) {
      return std::unexpected(Refuse(kReasonSignatureMalformed, fingerprint.error().message()));
    }
    return api::SignedBy{.signer = rule.name,
                         .public_key = std::move(*fingerprint),
                         .identity = std::move(identity)};
  }

  // Key mode: the rule whose key the hint names (every key rule, for a bundle without one).
  std::expected<api::SignedBy, SignatureRefusal> CheckKeyMode() const {
    const SignerRule* not_serving = nullptr;
    for (const SignerRule& rule : policy_.signers) {
      if (rule.public_key.empty()) continue;
      auto key = signing_internal::ReadSigningPublicKey(rule.public_key);
      if (!key) continue;  // checked when the config was read
      if (!bundle_.public_key_hint.empty() &&
          signing_internal::ModelSigningKeyHint(key->get()) != bundle_.public_key_hint) {
        continue;
      }
      if (!SignerServes(rule, namespace_)) {
        // Only to explain the refusal; another rule may hold the same key for this namespace.
        if (not_serving == nullptr && SignatureVerifies(key->get())) not_serving = &rule;
        continue;
      }
      if (SignatureVerifies(key->get())) return Accept(rule, key->get(), "");
      if (!bundle_.public_key_hint.empty()) {
        return std::unexpected(
            Altered(fmt::format("signer \"{}\"'s key, which its key hint names", rule.name)));
      }
    }
    if (not_serving != nullptr) {
      return std::unexpected(
          Refuse(kReasonSignatureUntrusted,
                 fmt::format("signed by signer \"{}\", which does not serve namespace \"{}\"",
                             not_serving->name, namespace_)));
    }
    const std::string key = bundle_.public_key_hint.empty()
                                ? std::string("a key")
                                : fmt::format("the key with hint {}", bundle_.public_key_hint);
    return std::unexpected(Refuse(
        kReasonSignatureUntrusted,
        fmt::format("signed with {}, which is no publicKey of a signer serving namespace \"{}\"",
                    key, namespace_)));
  }

  // Certificate mode: the first rule whose authorities issued the certificate, valid at the
  // time, for one of the rule's identities.
  std::expected<api::SignedBy, SignatureRefusal> CheckCertificateMode() const {
    auto leaf = signing_internal::ReadDerCertificate(bundle_.certificates.front());
    if (!leaf) return std::unexpected(Malformed("certificates[0]", leaf.error()));
    std::vector<CertificateHandle> intermediates;
    for (std::size_t i = 1; i < bundle_.certificates.size(); ++i) {
      auto certificate = signing_internal::ReadDerCertificate(bundle_.certificates[i]);
      if (!certificate) {
        return std::unexpected(Malformed(fmt::format("certificates[{}]", i), certificate.error()));
      }
      intermediates.push_back(std::move(*certificate));
    }
    EVP_PKEY* key = X509_get0_pubkey(leaf->get());
    if (key == nullptr) {
      return std::unexpected(
          Refuse(kReasonSignatureMalformed, "the signing certificate's key cannot be read"));
    }
    if (auto supported = signing_internal::CheckSigningKey(key); !supported) {
      return std::unexpected(Malformed("the signing certificate", supported.error()));
    }
    const std::vector<std::string> identities = signing_internal::SignerIdentities(leaf->get());

    // When no rule accepts it, the refusal that says most: a trusted chain whose certificate
    // may not sign or names no listed identity, then one out of its validity at `at_`, then one
    // trusted only by signers of other namespaces, then no trusted chain at all.
    std::optional<SignatureRefusal> not_accepted;
    std::optional<SignatureRefusal> expired;
    std::optional<SignatureRefusal> no_chain_serving;
    std::optional<SignatureRefusal> not_serving;
    for (const SignerRule& rule : policy_.signers) {
      if (rule.certificate_authorities.empty()) continue;
      auto authorities = signing_internal::ReadCertificateAuthorities(rule.certificate_authorities);
      if (!authorities) continue;  // checked when the config was read
      const signing_internal::ChainVerdict verdict =
          signing_internal::VerifyCertificateChain(leaf->get(), intermediates, *authorities, at_);
      if (verdict.outcome == signing_internal::ChainOutcome::kUntrusted) {
        if (SignerServes(rule, namespace_) && !no_chain_serving) {
          no_chain_serving = Refuse(kReasonSignatureUntrusted, verdict.detail);
        }
        continue;
      }
      if (!SignerServes(rule, namespace_)) {
        if (!not_serving) {
          not_serving = Refuse(
              kReasonSignatureUntrusted,
              fmt::format("the signing certificate is from signer \"{}\"'s authorities, and the "
                          "signer does not serve namespace \"{}\"",
                          rule.name, namespace_));
        }
        continue;
      }
      if (verdict.outcome == signing_internal::ChainOutcome::kExpired) {
        if (!expired) {
          expired = Refuse(
              kReasonSignatureCertificateExpired,
              fmt::format("the signing certificate chain of signer \"{}\" is not valid at {}: {}",
                          rule.name,
                          api::FormatTimestamp(std::chrono::floor<std::chrono::microseconds>(at_)),
                          verdict.detail));
        }
        continue;
      }
      if (!signing_internal::MaySign(leaf->get())) {
        if (!not_accepted) {
          not_accepted = Refuse(kReasonSignatureUntrusted,
                                "the signing certificate may not sign: it has neither keyUsage "
                                "digitalSignature nor extendedKeyUsage codeSigning");
        }
        continue;
      }
      const auto identity = std::ranges::find_if(identities, [&](const std::string& name) {
        return std::ranges::find(rule.identities, name) != rule.identities.end();
      });
      if (identity == identities.end()) {
        if (!not_accepted) {
          not_accepted =
              Refuse(kReasonSignatureUntrusted,
                     fmt::format("the signing certificate's identities ({}) are not among signer "
                                 "\"{}\"'s identities",
                                 identities.empty() ? std::string("none: no email, URI or DNS "
                                                                  "subjectAltName")
                                                    : ListQuoted(identities, kMaxIdentitiesListed),
                                 rule.name));
        }
        continue;
      }
      if (!SignatureVerifies(key)) {
        return std::unexpected(
            Altered(fmt::format("the key of signer \"{}\"'s certificate", rule.name)));
      }
      return Accept(rule, key, *identity);
    }
    for (auto* refusal : {&not_accepted, &expired, &not_serving}) {
      if (*refusal) return std::unexpected(std::move(**refusal));
    }
    std::string message = fmt::format(
        "the signing certificate leads to no certificateAuthorities of a signer serving namespace "
        "\"{}\"",
        namespace_);
    if (no_chain_serving) message += fmt::format(": {}", no_chain_serving->message);
    return std::unexpected(Refuse(kReasonSignatureUntrusted, std::move(message)));
  }

  static SignatureRefusal Malformed(std::string_view what, const Error& error) {
    return Refuse(kReasonSignatureMalformed, fmt::format("{}: {}", what, error.message()));
  }

  const SignaturePolicy& policy_;
  const std::string_view namespace_;
  const SigstoreBundle& bundle_;
  const std::chrono::system_clock::time_point at_;
};

std::expected<api::SignedBy, SignatureRefusal> VerifySignature(
    const SignaturePolicy& policy, std::string_view namespace_name,
    const api::ModelRevisionSpec& spec, const api::ModelSignature& signature,
    std::chrono::system_clock::time_point at) {
  auto bundle = ParseSigstoreBundle(signature.bundle);
  if (!bundle) {
    return std::unexpected(
        Refuse(kReasonSignatureMalformed, fmt::format("bundle: {}", bundle.error().message())));
  }
  auto signed_by = SignatureCheck(policy, namespace_name, *bundle, at).Run();
  if (!signed_by) return signed_by;
  // Only a verified statement is read: until then its bytes are anyone's.
  if (bundle->payload_type != kInTotoPayloadType) {
    return std::unexpected(
        Refuse(kReasonSignatureMalformed, fmt::format("the signed payload's type is \"{}\", not {}",
                                                      bundle->payload_type, kInTotoPayloadType)));
  }
  auto manifest = ParseModelSigningStatement(bundle->payload);
  if (!manifest) {
    return std::unexpected(Refuse(kReasonSignatureMalformed,
                                  fmt::format("statement: {}", manifest.error().message())));
  }
  if (auto mismatch = CompareFiles(*manifest, spec.files)) return std::unexpected(*mismatch);
  return signed_by;
}

}  // namespace

std::expected<std::vector<api::SignedBy>, SignatureRefusal> VerifyModelSignatures(
    const SignaturePolicy* policy, std::string_view namespace_name,
    const api::ModelRevisionSpec& spec, std::chrono::system_clock::time_point at) {
  if (spec.signatures.empty()) {
    if (policy != nullptr && RequiresSignature(*policy, namespace_name)) {
      return std::unexpected(
          Refuse(kReasonSignatureRequired,
                 fmt::format("namespace \"{}\" requires signed revisions (sourcePolicy.signatures."
                             "required), and spec.signatures is empty",
                             namespace_name)));
    }
    return std::vector<api::SignedBy>{};
  }
  if (spec.signatures.size() > api::kMaxSignatures) {
    return std::unexpected(
        Refuse(kReasonSignatureMalformed,
               fmt::format("spec.signatures: {} signatures, more than the {} allowed",
                           spec.signatures.size(), api::kMaxSignatures)));
  }
  if (policy == nullptr) {
    return std::unexpected(
        Refuse(kReasonSignatureUntrusted,
               "spec.signatures: no signature policy is configured (sourcePolicy.signatures), so "
               "no signer is trusted"));
  }
  std::vector<api::SignedBy> signers;
  for (std::size_t i = 0; i < spec.signatures.size(); ++i) {
    auto signed_by = VerifySignature(*policy, namespace_name, spec, spec.signatures[i], at);
    if (!signed_by) {
      SignatureRefusal refusal = std::move(signed_by).error();
      refusal.message = fmt::format("spec.signatures[{}]: {}", i, refusal.message);
      return std::unexpected(std::move(refusal));
    }
    signers.push_back(std::move(*signed_by));
  }
  return signers;
}

}  // namespace modelplane::core
