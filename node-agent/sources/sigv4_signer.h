// AWS Signature Version 4 (header form): canonical request, string to sign, signing key and the
// Authorization header, written here because no AWS SDK is packaged.
//
// The caller supplies the canonical URI already encoded (S3: ObjectKeyPath, encoded once; see
// uri_encoding.h), the query parameters unencoded, and exactly the headers to sign; the signer
// lower-cases and sorts header names, trims values, collapses inner runs of spaces and joins
// repeated headers with ','. Checked against AWS's published test suite
// (tests/node-agent/sources/sigv4_testsuite).
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node-agent/sources/uri_encoding.h"

namespace modelplane::agent {

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// sha256 of the empty string, the payload hash of a body-less request.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct SigningCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty unless temporary credentials
};

struct SigningRequest {
  std::string method;         // "GET"
  std::string canonical_uri;  // encoded path, e.g. "/bucket/my%20key"
  std::vector<QueryParameter> query;
  std::vector<std::pair<std::string, std::string>> headers;  // signed, any name case
  std::string payload_hash;  // hex sha256 of the body, or kUnsignedPayload
};

struct SigningScope {
  std::string region;   // "us-east-1"
  std::string service;  // "s3"
  std::chrono::system_clock::time_point time;
};

struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;x-amz-date"
  std::string signature;       // 64 lower-case hex
  std::string authorization;   // the Authorization header value
};

[[nodiscard]] Signature SignRequest(const SigningRequest& request,
                                    const SigningCredentials& credentials,
                                    const SigningScope& scope);

// "20150830T123600Z" (x-amz-date) and "20150830" (the scope date), in UTC.
[[nodiscard]] std::string FormatAmzDate(std::chrono::system_clock::time_point time);
[[nodiscard]] std::string FormatScopeDate(std::chrono::system_clock::time_point time);

// HMAC-SHA256 of `data` under `key`, raw 32 bytes.
[[nodiscard]] std::string HmacSha256(std::string_view key, std::string_view data);

}  // namespace modelplane::agent
