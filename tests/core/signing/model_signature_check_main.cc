// Verifies one ModelRevision's signatures as the operator and the node agents do, for
// test_with_model_signing.py, which signs models with the real `model_signing` tool:
//
//   model_signature_check POLICY.yaml NAMESPACE REVISION.json TIME
//
// POLICY.yaml is the `signatures` mapping of the source policy (signature_policy.h), TIME the
// revision's creationTimestamp (RFC 3339). Prints one line, "verified <signer>:<identity>..."
// (exit 0) or "refused <reason>: <message>" (exit 1); anything else that fails exits 2.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/timestamp.h"
#include "core/config/config_loader.h"
#include "core/io/bounded_file.h"
#include "core/json/json_document.h"
#include "core/signing/model_signature_verifier.h"

namespace modelplane::core {
namespace {

int Fail(const Error& error) {
  fmt::print(stderr, "model_signature_check: {}\n", error.ToString());
  return 2;
}

int Run(int argc, char** argv) {
  if (argc != 5) {
    fmt::print(stderr, "usage: {} POLICY.yaml NAMESPACE REVISION.json TIME\n", argv[0]);
    return 2;
  }
  auto policy = LoadConfigFile<SignaturePolicy>(argv[1]);
  if (!policy) return Fail(policy.error());
  auto text = ReadBoundedFile(argv[3], kMaxJsonDocumentBytes);
  if (!text) return Fail(text.error());
  auto revision = api::ParseModelRevision(*text);
  if (!revision) return Fail(revision.error());
  auto at = api::ParseTimestamp(argv[4]);
  if (!at) return Fail(at.error());

  auto signers = VerifyModelSignatures(&*policy, argv[2], revision->spec, *at);
  if (!signers) {
    fmt::print("refused {}: {}\n", signers.error().reason, signers.error().message);
    return 1;
  }
  std::string line = "verified";
  for (const api::SignedBy& signer : *signers) {
    line += fmt::format(" {}:{}", signer.signer, signer.identity);
  }
  fmt::print("{}\n", line);
  return 0;
}

}  // namespace
}  // namespace modelplane::core

int main(int argc, char** argv) {
  return modelplane::core::Run(argc, argv);
}
