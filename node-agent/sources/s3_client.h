// A small S3 client over core::HttpClient with AWS Signature Version 4: ranged GET (the fetch
// path), whole-object streaming GET (manifests), HEAD, ListObjectsV2 with continuation, and PUT
// of small objects (tests and uploads). Works with AWS S3 and S3-compatible stores (MinIO).
//
// Addressing: path style "endpoint/bucket/key" (the default: it works with any endpoint and with
// bucket names containing dots over TLS) or virtual-hosted style "bucket.endpoint-host/key".
// Keys are encoded once per segment, '/' kept, and the encoded path is the signed canonical URI.
// Errors: S3's error code (the <Code> of the XML body) decides the ErrorCode and is quoted in
// the message: NoSuchKey / NoSuchBucket -> kNotFound; AccessDenied -> kPermissionDenied;
// SignatureDoesNotMatch / InvalidAccessKeyId / ExpiredToken -> kUnauthenticated; SlowDown /
// 503 -> kThrottled (retryable); other 5xx -> kUnavailable.
// Credentials: with refresh_credentials set, a request the store answers with kUnauthenticated
// or kPermissionDenied (a rotated Secret) gets fresh credentials once and is signed and sent
// once more.
// Thread safety: every method may be called from many threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/http/http_client.h"
#include "node-agent/fetch/range_source.h"
#include "node-agent/sources/sigv4_signer.h"

namespace modelplane::agent {

enum class S3AddressingStyle { kPath, kVirtualHosted };

struct S3ClientOptions {
  // "https://s3.us-east-1.amazonaws.com" or "http://127.0.0.1:9000"; no path.
  std::string endpoint;
  std::string region = "us-east-1";
  S3AddressingStyle addressing = S3AddressingStyle::kPath;
  SigningCredentials credentials;
  // Null: `credentials` for good. Else asked after a 401/403 answer (see the file comment).
  std::function<core::Result<SigningCredentials>()> refresh_credentials;
  core::ClientOptions http;
  // Signatures carry the wall time; null means the system clock.
  std::shared_ptr<const core::Clock> clock;
};

struct S3Object {
  std::string key;
  std::uint64_t size = 0;
  std::string etag;
};

struct S3ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_continuation_token;
};

class S3Client {
 public:
  [[nodiscard]] static core::Result<std::unique_ptr<S3Client>> Create(S3ClientOptions options);
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // The URL for `key` in `bucket` (the bucket itself when key is empty), query appended in
  // canonical order. Also what gets signed, so it is exposed for tests.
  [[nodiscard]] std::string ObjectUrl(std::string_view bucket, std::string_view key,
                                      const std::vector<QueryParameter>& query = {}) const;

  // The object's size.
  [[nodiscard]] core::Result<std::uint64_t> HeadObject(std::string_view bucket,
                                                       std::string_view key);
  // Bytes [offset, offset + destination.size()) of the object, all or nothing.
  [[nodiscard]] core::Status GetObjectRange(std::string_view bucket, std::string_view key,
                                            std::uint64_t offset, std::span<std::byte> destination,
                                            const ReadContext& context);
  // The whole object into `sink`; returns how many bytes arrived.
  [[nodiscard]] core::Result<std::uint64_t> GetObject(std::string_view bucket, std::string_view key,
                                                      const core::BodySink& sink);
  // One page; `continuation_token` empty for the first.
  [[nodiscard]] core::Result<S3ListPage> ListObjectsV2(std::string_view bucket,
                                                       std::string_view prefix,
                                                       std::string_view continuation_token,
                                                       int max_keys = 1000);
  // Every object under `prefix`, following continuation tokens (at most `max_objects`).
  [[nodiscard]] core::Result<std::vector<S3Object>> ListAllObjects(
      std::string_view bucket, std::string_view prefix, int page_size = 1000,
      std::size_t max_objects = 1'000'000);
  // A small object in one request, its payload signed.
  [[nodiscard]] core::Status PutObject(std::string_view bucket, std::string_view key,
                                       std::string body,
                                       std::string_view content_type = "application/octet-stream");

  [[nodiscard]] const std::string& region() const { return options_.region; }
  [[nodiscard]] const std::string& endpoint() const { return options_.endpoint; }
  [[nodiscard]] std::chrono::milliseconds read_timeout() const {
    return options_.http.read_timeout;
  }

 private:
  S3Client(S3ClientOptions options, core::Url endpoint, std::unique_ptr<core::HttpClient> http);
  [[nodiscard]] core::ClientRequest SignedRequest(boost::beast::http::verb method,
                                                  std::string_view bucket, std::string_view key,
                                                  const std::vector<QueryParameter>& query,
                                                  std::string body) const;
  // After `error`: true when it is a 401/403 and fresh credentials replaced the old ones, so the
  // request is worth sending again.
  [[nodiscard]] bool RefreshedAfter(const core::Error& error);

  S3ClientOptions options_;
  core::Url endpoint_;
  std::unique_ptr<core::HttpClient> http_;
  mutable std::mutex credentials_mutex_;
  SigningCredentials credentials_;  // guarded by credentials_mutex_
};

// The S3 mapping described above, for an error core::HttpClient returned while doing
// `operation` ("GetObject bucket/key").
[[nodiscard]] core::Error MapS3Error(const core::Error& error, std::string_view operation);

}  // namespace modelplane::agent
