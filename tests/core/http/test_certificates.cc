#include "tests/core/http/test_certificates.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include <stdlib.h>

#include "core/pki/certificate_request.h"
#include "core/pki/private_key.h"

namespace modelplane::core::testing {
namespace {

constexpr std::chrono::hours kValidity{7 * 24};

Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) return MakeError(ErrorCode::kIo, "cannot write " + path);
  return Ok();
}

}  // namespace

Result<TestCertificateAuthority> TestCertificateAuthority::Create(const std::string& common_name) {
  auto authority =
      CertificateAuthority::Generate(common_name, std::chrono::system_clock::now() + kValidity);
  if (!authority) return std::unexpected(authority.error());
  return TestCertificateAuthority(std::move(*authority));
}

Result<PemPair> TestCertificateAuthority::Issue(const std::string& common_name,
                                                const std::vector<std::string>& dns_names) const {
  auto key = PrivateKey::Generate();
  if (!key) return std::unexpected(key.error());
  CertificateNames names{
      .common_name = common_name, .dns_names = {"localhost"}, .ip_addresses = {"127.0.0.1", "::1"}};
  names.dns_names.insert(names.dns_names.end(), dns_names.begin(), dns_names.end());
  auto request_pem = MakeCertificateRequestPem(*key, names);
  if (!request_pem) return std::unexpected(request_pem.error());
  auto request = CertificateRequest::Parse(*request_pem);
  if (!request) return std::unexpected(request.error());
  const auto now = std::chrono::system_clock::now();
  auto certificate = authority_.Issue(
      *request,
      {.names = names, .not_before = now - std::chrono::hours(1), .not_after = now + kValidity});
  if (!certificate) return std::unexpected(certificate.error());
  return PemPair{.certificate_pem = std::move(*certificate), .private_key_pem = key->ToPem()};
}

Result<TestPki> MakeTestPki(const std::string& directory, const std::string& client_common_name) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return MakeError(ErrorCode::kIo, "cannot create " + directory);
  auto authority = TestCertificateAuthority::Create("modelplane-test-ca");
  if (!authority) return std::unexpected(authority.error());
  auto other = TestCertificateAuthority::Create("unrelated-test-ca");
  if (!other) return std::unexpected(other.error());
  auto server = authority->Issue("localhost");
  if (!server) return std::unexpected(server.error());
  auto client = authority->Issue(client_common_name);
  if (!client) return std::unexpected(client.error());

  TestPki pki;
  pki.ca_file = directory + "/ca.pem";
  pki.other_ca_file = directory + "/other-ca.pem";
  pki.server_certificate_file = directory + "/server.pem";
  pki.server_key_file = directory + "/server-key.pem";
  pki.client_certificate_file = directory + "/client.pem";
  pki.client_key_file = directory + "/client-key.pem";
  pki.client_common_name = client_common_name;
  const std::vector<std::pair<std::string, std::string>> files = {
      {pki.ca_file, authority->certificate_pem()},
      {pki.other_ca_file, other->certificate_pem()},
      {pki.server_certificate_file, server->certificate_pem},
      {pki.server_key_file, server->private_key_pem},
      {pki.client_certificate_file, client->certificate_pem},
      {pki.client_key_file, client->private_key_pem},
  };
  for (const auto& [path, content] : files) {
    if (auto status = WriteFile(path, content); !status) return std::unexpected(status.error());
  }
  return pki;
}

Result<TemporaryDirectory> TemporaryDirectory::Create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return MakeError(ErrorCode::kIo, "mkdtemp " + pattern + " failed");
  }
  return TemporaryDirectory(std::move(pattern));
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace modelplane::core::testing
