#include "node-agent/sources/sigv4_signer.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/digest/sha256.h"
#include "core/text/hex.h"

namespace modelplane::agent {
namespace {

// Trims and collapses runs of spaces to one, as the SigV4 canonical headers require.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  bool in_space = false;
  for (const char c : value) {
    if (c == ' ' || c == '\t') {
      in_space = true;
      continue;
    }
    if (in_space && !out.empty()) out.push_back(' ');
    in_space = false;
    out.push_back(c);
  }
  return out;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::tm UtcTime(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  return parts;
}

}  // namespace

std::string FormatAmzDate(std::chrono::system_clock::time_point time) {
  const std::tm t = UtcTime(time);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                     t.tm_hour, t.tm_min, t.tm_sec);
}

std::string FormatScopeDate(std::chrono::system_clock::time_point time) {
  const std::tm t = UtcTime(time);
  return fmt::format("{:04}{:02}{:02}", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday);
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<const char*>(out), length);
}

Signature SignRequest(const SigningRequest& request, const SigningCredentials& credentials,
                      const SigningScope& scope) {
  // Repeated headers join in the order given, as the suite's get-header-key-duplicate expects.
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : request.headers) {
    std::string& joined = headers[Lower(name)];
    if (!joined.empty()) joined.push_back(',');
    joined += CanonicalHeaderValue(value);
  }
  std::string canonical_headers;
  std::string signed_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += fmt::format("{}:{}\n", name, value);
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers += name;
  }

  Signature result;
  result.signed_headers = signed_headers;
  result.canonical_request = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method,
                                         request.canonical_uri, CanonicalQueryString(request.query),
                                         canonical_headers, signed_headers, request.payload_hash);

  const std::string date = FormatScopeDate(scope.time);
  const std::string credential_scope =
      fmt::format("{}/{}/{}/aws4_request", date, scope.region, scope.service);
  result.string_to_sign =
      fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", FormatAmzDate(scope.time), credential_scope,
                  core::Sha256HexOf(result.canonical_request));

  const std::string date_key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  const std::string region_key = HmacSha256(date_key, scope.region);
  const std::string service_key = HmacSha256(region_key, scope.service);
  const std::string signing_key = HmacSha256(service_key, "aws4_request");
  result.signature = core::EncodeHex(HmacSha256(signing_key, result.string_to_sign));
  result.authorization =
      fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
                  credentials.access_key_id, credential_scope, signed_headers, result.signature);
  return result;
}

}  // namespace modelplane::agent
