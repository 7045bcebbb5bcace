// A throwaway PKI for tests: a CA (core::CertificateAuthority, the operator's own signer) that
// issues EC P-256 leaf certificates (SAN IP:127.0.0.1, IP:::1, DNS:localhost), written as PEM
// files into a directory. Issuing goes the product's way: a key, a certificate request for it,
// the CA's signature.
//
// Test-only: keys are unprotected and validity is a few days. Thread safety: a CA object is used
// by one thread at a time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error/error.h"
#include "core/pki/certificate_authority.h"

namespace modelplane::core::testing {

struct PemPair {
  std::string certificate_pem;
  std::string private_key_pem;
};

class TestCertificateAuthority {
 public:
  [[nodiscard]] static Result<TestCertificateAuthority> Create(const std::string& common_name);

  // A leaf usable as TLS server and client, valid for loopback addresses, "localhost" and
  // `dns_names` (a node's peer identity, for instance).
  [[nodiscard]] Result<PemPair> Issue(const std::string& common_name,
                                      const std::vector<std::string>& dns_names = {}) const;
  [[nodiscard]] const std::string& certificate_pem() const { return authority_.certificate_pem(); }
  [[nodiscard]] const CertificateAuthority& authority() const { return authority_; }

 private:
  explicit TestCertificateAuthority(CertificateAuthority authority)
      : authority_(std::move(authority)) {}
  CertificateAuthority authority_;
};

// Files of a complete two-party setup, all PEM, inside `directory`.
struct TestPki {
  std::string ca_file;        // the CA that issued server and client
  std::string other_ca_file;  // an unrelated CA (verification must fail against it)
  std::string server_certificate_file;
  std::string server_key_file;
  std::string client_certificate_file;  // CN = client_common_name
  std::string client_key_file;
  std::string client_common_name;
};

// Makes `directory` (if missing) and writes the files into it.
[[nodiscard]] Result<TestPki> MakeTestPki(const std::string& directory,
                                          const std::string& client_common_name = "test-client");

// A directory under $TMPDIR (or /tmp) removed with everything in it on destruction.
class TemporaryDirectory {
 public:
  [[nodiscard]] static Result<TemporaryDirectory> Create(const std::string& prefix);
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  ~TemporaryDirectory();
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace modelplane::core::testing
