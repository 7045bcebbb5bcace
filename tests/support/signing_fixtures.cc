#include "tests/support/signing_fixtures.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text/base64.h"

namespace modelplane::testing {
namespace {

std::string RoleOf(const std::string& path) {
  if (path.ends_with(".safetensors")) return "weights";
  if (path.starts_with("tokenizer")) return "tokenizer";
  return "config";
}

}  // namespace

std::string SigningFixture(const std::string& name) {
  std::ifstream in(std::string(MODELPLANE_SOURCE_DIR) + "/tests/core/signing/fixtures/" + name,
                   std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TamperedSigningFixture(const std::string& name) {
  nlohmann::json bundle = nlohmann::json::parse(SigningFixture(name), nullptr, false);
  if (!bundle.is_object()) return "";
  auto statement =
      core::DecodeBase64(bundle["dsseEnvelope"]["payload"].get<std::string>(), "payload");
  if (!statement) return "";
  const std::string first = SignedModelFiles()[0]["sha256"].get<std::string>().substr(7);
  const std::size_t at = statement->find(first);
  if (at == std::string::npos) return "";
  statement->replace(at, first.size(), std::string(first.size(), 'e'));
  bundle["dsseEnvelope"]["payload"] = core::EncodeBase64(*statement);
  return bundle.dump();
}

nlohmann::json SignedModelFiles() {
  nlohmann::json files = nlohmann::json::parse(SigningFixture("files.json"), nullptr, false);
  if (!files.is_array()) return nlohmann::json::array();
  for (nlohmann::json& file : files) file["role"] = RoleOf(file.value("path", ""));
  return files;
}

std::string SignaturePolicyYaml(int indent, const std::vector<std::string>& required) {
  std::string yaml = "signatures:\n";
  if (!required.empty()) yaml += fmt::format("  required: [{}]\n", fmt::join(required, ", "));
  yaml += "  signers:\n";
  yaml += fmt::format("    - name: {}\n      publicKey: |\n", kFixtureKeySigner);
  yaml += IndentedLines(SigningFixture("key-p256.pub.pem"), 8);
  yaml +=
      fmt::format("    - name: {}\n      certificateAuthorities: |\n", kFixtureCertificateSigner);
  yaml += IndentedLines(SigningFixture("ca-root.cert.pem"), 8);
  yaml += fmt::format("      identities: [{}]\n", kFixtureIdentity);
  return IndentedLines(yaml, indent);
}

std::string FixtureKeyFingerprint(const std::string& key_name) {
  const nlohmann::json fingerprints =
      nlohmann::json::parse(SigningFixture("fingerprints.json"), nullptr, false);
  return fingerprints.is_object() ? fingerprints.value(key_name, "") : "";
}

std::string IndentedLines(std::string_view text, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += pad;
    out += text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace modelplane::testing
