#include "tests/core/http/test_certificates.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

namespace modelplane::core::testing {
namespace {

constexpr long kValiditySeconds = 7L * 24 * 3600;

std::unexpected<Error> OpenSslError(const std::string& what) {
  return MakeError(ErrorCode::kInternal, "openssl: " + what);
}

template <class Write>
std::string ToPem(Write write) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return {};
  std::string pem;
  if (write(bio) == 1) {
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    if (length > 0) pem.assign(data, static_cast<std::size_t>(length));
  }
  BIO_free(bio);
  return pem;
}

std::string KeyPem(EVP_PKEY* key) {
  return ToPem([key](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

std::string CertificatePem(X509* certificate) {
  return ToPem([certificate](BIO* bio) { return PEM_write_bio_X509(bio, certificate); });
}

bool AddExtension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate for `key` named `common_name`; issuer fields are filled by the caller.
X509* NewCertificate(EVP_PKEY* key, const std::string& common_name, long serial) {
  X509* certificate = X509_new();
  if (certificate == nullptr) return nullptr;
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial);
  X509_gmtime_adj(X509_getm_notBefore(certificate), -3600);
  X509_gmtime_adj(X509_getm_notAfter(certificate), kValiditySeconds);
  X509_set_pubkey(certificate, key);
  X509_NAME* name = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("modelplane-test"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return certificate;
}

Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) return MakeError(ErrorCode::kIo, "cannot write " + path);
  return Ok();
}

}  // namespace

void TestCertificateAuthority::KeyDeleter::operator()(EVP_PKEY* key) const {
  EVP_PKEY_free(key);
}
void TestCertificateAuthority::CertificateDeleter::operator()(X509* certificate) const {
  X509_free(certificate);
}

TestCertificateAuthority::TestCertificateAuthority(TestCertificateAuthority&&) noexcept = default;
TestCertificateAuthority& TestCertificateAuthority::operator=(TestCertificateAuthority&&) noexcept =
    default;
TestCertificateAuthority::~TestCertificateAuthority() = default;

Result<TestCertificateAuthority> TestCertificateAuthority::Create(const std::string& common_name) {
  TestCertificateAuthority authority;
  authority.key_.reset(EVP_EC_gen("P-256"));
  if (!authority.key_) return OpenSslError("EVP_EC_gen");
  authority.certificate_.reset(NewCertificate(authority.key_.get(), common_name, 1));
  X509* certificate = authority.certificate_.get();
  if (certificate == nullptr) return OpenSslError("X509_new");
  X509_set_issuer_name(certificate, X509_get_subject_name(certificate));
  if (!AddExtension(certificate, certificate, NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(certificate, certificate, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(certificate, certificate, NID_subject_key_identifier, "hash")) {
    return OpenSslError("CA extensions");
  }
  if (X509_sign(certificate, authority.key_.get(), EVP_sha256()) == 0) {
    return OpenSslError("X509_sign CA");
  }
  authority.certificate_pem_ = CertificatePem(certificate);
  return authority;
}

Result<PemPair> TestCertificateAuthority::Issue(const std::string& common_name) {
  std::unique_ptr<EVP_PKEY, KeyDeleter> key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("EVP_EC_gen");
  std::unique_ptr<X509, CertificateDeleter> certificate(
      NewCertificate(key.get(), common_name, next_serial_++));
  if (!certificate) return OpenSslError("X509_new");
  X509* leaf = certificate.get();
  X509_set_issuer_name(leaf, X509_get_subject_name(certificate_.get()));
  if (!AddExtension(leaf, certificate_.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(leaf, certificate_.get(), NID_key_usage, "critical,digitalSignature") ||
      !AddExtension(leaf, certificate_.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
      !AddExtension(leaf, certificate_.get(), NID_subject_alt_name,
                    "IP:127.0.0.1,IP:::1,DNS:localhost")) {
    return OpenSslError("leaf extensions");
  }
  if (X509_sign(leaf, key_.get(), EVP_sha256()) == 0) return OpenSslError("X509_sign leaf");
  return PemPair{CertificatePem(leaf), KeyPem(key.get())};
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
