#include "core/pki/openssl_handles.h"

#include <array>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/sha.h>

namespace modelplane::core::pki_internal {

Error OpenSslError(ErrorCode code, std::string_view what) {
  const unsigned long reason = ERR_get_error();
  ERR_clear_error();
  if (reason == 0) return Error(code, std::string(what));
  std::array<char, 256> text{};
  ERR_error_string_n(reason, text.data(), text.size());
  return Error(code, fmt::format("{}: {}", what, text.data()));
}

Result<BioHandle> ReadBio(std::string_view pem, std::size_t max_bytes, std::string_view what) {
  if (pem.empty()) return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is empty", what));
  if (pem.size() > max_bytes) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} has {} bytes, more than the {} allowed", what, pem.size(), max_bytes));
  }
  BioHandle bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return std::unexpected(OpenSslError(ErrorCode::kInternal, "BIO_new_mem_buf"));
  return bio;
}

Result<std::string> PublicKeyFingerprint(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int length = i2d_PUBKEY(key, &der);
  if (length <= 0) return std::unexpected(OpenSslError(ErrorCode::kInternal, "i2d_PUBKEY"));
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(der, static_cast<std::size_t>(length), digest.data());
  OPENSSL_free(der);
  std::string hex = "sha256:";
  for (const unsigned char byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

Result<NamesHandle> MakeSubjectAltNames(const std::vector<std::string>& dns_names,
                                        const std::vector<std::string>& ip_addresses) {
  NamesHandle names(sk_GENERAL_NAME_new_null());
  if (!names) return std::unexpected(OpenSslError(ErrorCode::kInternal, "GENERAL_NAMES"));
  for (const std::string& dns : dns_names) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (name == nullptr || text == nullptr ||
        ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size())) != 1) {
      GENERAL_NAME_free(name);
      ASN1_IA5STRING_free(text);
      return std::unexpected(OpenSslError(ErrorCode::kInternal, "DNS name"));
    }
    GENERAL_NAME_set0_value(name, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  for (const std::string& ip : ip_addresses) {
    ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
    if (octets == nullptr) {
      ERR_clear_error();
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("'{}' is not an IP address", ip));
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (name == nullptr) {
      ASN1_OCTET_STRING_free(octets);
      return std::unexpected(OpenSslError(ErrorCode::kInternal, "IP name"));
    }
    GENERAL_NAME_set0_value(name, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  return names;
}

Result<SubjectAltNames> ReadSubjectAltNames(const GENERAL_NAMES* names) {
  SubjectAltNames result;
  if (names == nullptr) return result;
  for (int index = 0; index < sk_GENERAL_NAME_num(names); ++index) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, index);
    int type = 0;
    const void* value = GENERAL_NAME_get0_value(name, &type);
    const auto* text = static_cast<const ASN1_STRING*>(value);
    if (type == GEN_DNS) {
      result.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                                    static_cast<std::size_t>(ASN1_STRING_length(text)));
    } else if (type == GEN_IPADD) {
      std::array<char, INET6_ADDRSTRLEN> buffer{};
      const int length = ASN1_STRING_length(text);
      const int family = length == 4 ? AF_INET : length == 16 ? AF_INET6 : AF_UNSPEC;
      if (family == AF_UNSPEC ||
          inet_ntop(family, ASN1_STRING_get0_data(text), buffer.data(), buffer.size()) == nullptr) {
        return MakeError(ErrorCode::kInvalidArgument, "an IP address name has a bad length");
      }
      result.ip_addresses.emplace_back(buffer.data());
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("a subject alternative name of type {} (only DNS and IP "
                                   "names are accepted)",
                                   type));
    }
  }
  return result;
}

}  // namespace modelplane::core::pki_internal
