// What a PEM certificate says about itself: names, validity and the key it certifies. The node
// agent reads its issued peer certificate with this to know when to renew and that it is for
// its own key.
// Thread safety: values.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/error/error.h"
#include "core/pki/certificate_request.h"

namespace modelplane::core {

struct CertificateInfo {
  CertificateNames names;
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
  std::string public_key_fingerprint;  // as PrivateKey::fingerprint()
};

// The first certificate of `pem` (at most 64 KiB).
[[nodiscard]] Result<CertificateInfo> ReadCertificateInfo(std::string_view pem);

// ASN.1 time to a time point; internal to core/pki but shared by the authority and the reader.
namespace pki_internal {
[[nodiscard]] Result<std::chrono::system_clock::time_point> ToTimePoint(const ASN1_TIME* time);
}  // namespace pki_internal

}  // namespace modelplane::core
