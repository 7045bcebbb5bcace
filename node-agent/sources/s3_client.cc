#include "node-agent/sources/s3_client.h"

#include <charconv>
#include <sstream>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <fmt/format.h>

#include "core/digest/sha256.h"
#include "core/text/percent_encoding.h"
#include "node-agent/sources/http_range_reader.h"

namespace modelplane::agent {
namespace {

using core::Error;
using core::ErrorCode;
using core::MakeError;
namespace http = boost::beast::http;

constexpr std::size_t kListBodyLimit = 16 * 1024 * 1024;

std::string BetweenTags(std::string_view text, std::string_view tag) {
  const std::string open = fmt::format("<{}>", tag);
  const std::string close = fmt::format("</{}>", tag);
  const std::size_t begin = text.find(open);
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find(close, begin + open.size());
  if (end == std::string_view::npos) return {};
  return std::string(text.substr(begin + open.size(), end - begin - open.size()));
}

std::string ObjectName(std::string_view bucket, std::string_view key) {
  return key.empty() ? std::string(bucket) : fmt::format("{}/{}", bucket, key);
}

}  // namespace

Error MapS3Error(const Error& error, std::string_view operation) {
  const std::string s3_code = BetweenTags(error.message(), "Code");
  const std::optional<unsigned> status = error.http_status();
  ErrorCode code = error.code();
  bool retryable = error.retryable();
  if (s3_code == "NoSuchKey" || s3_code == "NoSuchBucket" || s3_code == "NoSuchUpload") {
    code = ErrorCode::kNotFound;
    retryable = false;
  } else if (s3_code == "AccessDenied" || s3_code == "AllAccessDisabled" ||
             s3_code == "AccountProblem") {
    code = ErrorCode::kPermissionDenied;
    retryable = false;
  } else if (s3_code == "SignatureDoesNotMatch" || s3_code == "InvalidAccessKeyId" ||
             s3_code == "ExpiredToken" || s3_code == "InvalidToken" ||
             s3_code == "TokenRefreshRequired" || s3_code == "AuthorizationHeaderMalformed" ||
             s3_code == "RequestTimeTooSkewed") {
    code = ErrorCode::kUnauthenticated;
    retryable = false;
  } else if (s3_code == "SlowDown" || s3_code == "ServiceUnavailable" ||
             s3_code == "RequestLimitExceeded" || status == 503u || status == 429u) {
    code = ErrorCode::kThrottled;
    retryable = true;
  } else if (s3_code == "InternalError" || (status && *status >= 500)) {
    code = ErrorCode::kUnavailable;
    retryable = true;
  } else if (status == 404u) {
    code = ErrorCode::kNotFound;  // HEAD answers carry no body, hence no S3 code
  } else if (status == 403u) {
    code = ErrorCode::kPermissionDenied;
  } else if (status == 416u) {
    code = ErrorCode::kDataLoss;  // the range starts past the object's end
  }
  const std::string detail = s3_code.empty() ? ""
                                             : fmt::format("S3 error {}: {}: ", s3_code,
                                                           BetweenTags(error.message(), "Message"));
  return Error(code, fmt::format("{}: {}{}", operation, detail, error.message()), retryable)
      .WithHttpStatus(status);
}

core::Result<std::unique_ptr<S3Client>> S3Client::Create(S3ClientOptions options) {
  auto endpoint = core::Url::Parse(options.endpoint);
  if (!endpoint) return std::unexpected(endpoint.error().Wrap("S3 endpoint"));
  if (endpoint->target != "/") {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("S3 endpoint {} must not have a path", options.endpoint));
  }
  if (options.region.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "S3 region must be set");
  }
  if (options.credentials.access_key_id.empty() || options.credentials.secret_access_key.empty()) {
    return MakeError(ErrorCode::kUnauthenticated, "S3 credentials are missing");
  }
  if (!options.clock) options.clock = std::make_shared<core::SystemClock>();
  auto http_client = core::HttpClient::Create(options.http);
  if (!http_client) return std::unexpected(http_client.error());
  return std::unique_ptr<S3Client>(
      new S3Client(std::move(options), std::move(*endpoint), std::move(*http_client)));
}

S3Client::S3Client(S3ClientOptions options, core::Url endpoint,
                   std::unique_ptr<core::HttpClient> http)
    : options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      http_(std::move(http)),
      credentials_(options_.credentials) {}

bool S3Client::RefreshedAfter(const Error& error) {
  if (!options_.refresh_credentials || (error.code() != ErrorCode::kUnauthenticated &&
                                        error.code() != ErrorCode::kPermissionDenied)) {
    return false;
  }
  auto fresh = options_.refresh_credentials();
  if (!fresh) return false;
  const std::scoped_lock lock(credentials_mutex_);
  credentials_ = std::move(*fresh);
  return true;
}

std::string S3Client::ObjectUrl(std::string_view bucket, std::string_view key,
                                const std::vector<QueryParameter>& query) const {
  core::Url url = endpoint_;
  std::string path;
  if (options_.addressing == S3AddressingStyle::kVirtualHosted) {
    url.host = fmt::format("{}.{}", bucket, endpoint_.host);
    path = ObjectKeyPath(key);
  } else {
    path = fmt::format("/{}{}", core::PercentEncode(bucket),
                       key.empty() ? std::string() : ObjectKeyPath(key));
  }
  std::string text = fmt::format("{}://{}{}", url.tls ? "https" : "http", url.HostHeader(), path);
  if (!query.empty()) text += "?" + CanonicalQueryString(query);
  return text;
}

core::ClientRequest S3Client::SignedRequest(http::verb method, std::string_view bucket,
                                            std::string_view key,
                                            const std::vector<QueryParameter>& query,
                                            std::string body) const {
  core::ClientRequest request;
  request.method = method;
  request.url = ObjectUrl(bucket, key, query);
  // Parsing our own URL cannot fail; the Host header the client sends comes from the same parse.
  const core::Url url = core::Url::Parse(request.url).value();
  const std::string canonical_uri = url.target.substr(0, url.target.find('?'));

  const auto now = options_.clock->WallNow();
  const std::string payload_hash =
      method == http::verb::put ? core::Sha256HexOf(body) : std::string(kUnsignedPayload);
  SigningRequest signing{.method = std::string(http::to_string(method)),
                         .canonical_uri = canonical_uri,
                         .query = query,
                         .headers = {{"host", url.HostHeader()},
                                     {"x-amz-content-sha256", payload_hash},
                                     {"x-amz-date", FormatAmzDate(now)}},
                         .payload_hash = payload_hash};
  const SigningCredentials credentials = [&] {
    const std::scoped_lock lock(credentials_mutex_);
    return credentials_;
  }();
  if (!credentials.session_token.empty()) {
    signing.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  const Signature signature = SignRequest(
      signing, credentials, SigningScope{.region = options_.region, .service = "s3", .time = now});
  for (const auto& [name, value] : signing.headers) {
    if (name != "host") request.headers.set(name, value);
  }
  request.headers.set(http::field::authorization, signature.authorization);
  request.body = std::move(body);
  return request;
}

core::Result<std::uint64_t> S3Client::HeadObject(std::string_view bucket, std::string_view key) {
  const auto head = [&] {
    auto response = http_->Fetch(SignedRequest(http::verb::head, bucket, key, {}, {}));
    if (!response) {
      return core::Result<core::ClientResponse>(std::unexpected(
          MapS3Error(response.error(), fmt::format("HeadObject {}", ObjectName(bucket, key)))));
    }
    return response;
  };
  auto response = head();
  if (!response && RefreshedAfter(response.error())) response = head();
  if (!response) return std::unexpected(response.error());
  const auto length = response->headers.find(http::field::content_length);
  std::uint64_t size = 0;
  if (length == response->headers.end() ||
      std::from_chars(length->value().data(), length->value().data() + length->value().size(), size)
              .ec != std::errc()) {
    return MakeError(ErrorCode::kUnavailable, fmt::format("HeadObject {}: no usable Content-Length",
                                                          ObjectName(bucket, key)));
  }
  return size;
}

core::Status S3Client::GetObjectRange(std::string_view bucket, std::string_view key,
                                      std::uint64_t offset, std::span<std::byte> destination,
                                      const ReadContext& context) {
  const std::string operation = fmt::format("GetObject {}", ObjectName(bucket, key));
  const auto read = [&] {
    return ReadHttpRange(*http_, SignedRequest(http::verb::get, bucket, key, {}, {}), offset,
                         destination, context, options_.http.read_timeout,
                         [&](const Error& error) { return MapS3Error(error, operation); });
  };
  core::Status status = read();
  if (!status && RefreshedAfter(status.error())) status = read();
  return status;
}

core::Result<std::uint64_t> S3Client::GetObject(std::string_view bucket, std::string_view key,
                                                const core::BodySink& sink) {
  auto response = http_->FetchStream(SignedRequest(http::verb::get, bucket, key, {}, {}), sink);
  if (!response && RefreshedAfter(MapS3Error(response.error(), "GetObject"))) {
    response = http_->FetchStream(SignedRequest(http::verb::get, bucket, key, {}, {}), sink);
  }
  if (!response) {
    return std::unexpected(
        MapS3Error(response.error(), fmt::format("GetObject {}", ObjectName(bucket, key))));
  }
  return response->bytes_delivered;
}

core::Result<S3ListPage> S3Client::ListObjectsV2(std::string_view bucket, std::string_view prefix,
                                                 std::string_view continuation_token,
                                                 int max_keys) {
  std::vector<QueryParameter> query = {
      {"list-type", "2"}, {"max-keys", std::to_string(max_keys)}, {"prefix", std::string(prefix)}};
  if (!continuation_token.empty()) {
    query.emplace_back("continuation-token", std::string(continuation_token));
  }
  const std::string operation = fmt::format("ListObjectsV2 {} prefix={}", bucket, prefix);
  auto response =
      http_->Fetch(SignedRequest(http::verb::get, bucket, "", query, {}), kListBodyLimit);
  if (!response && RefreshedAfter(MapS3Error(response.error(), operation))) {
    response = http_->Fetch(SignedRequest(http::verb::get, bucket, "", query, {}), kListBodyLimit);
  }
  if (!response) return std::unexpected(MapS3Error(response.error(), operation));

  namespace pt = boost::property_tree;
  pt::ptree tree;
  try {
    std::istringstream in(response->body);
    pt::read_xml(in, tree, pt::xml_parser::no_comments);
  } catch (const pt::ptree_error& error) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("{}: malformed XML answer: {}", operation, error.what()));
  }
  const auto result = tree.get_child_optional("ListBucketResult");
  if (!result) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("{}: answer has no ListBucketResult", operation));
  }
  S3ListPage page;
  page.truncated = result->get<std::string>("IsTruncated", "false") == "true";
  page.next_continuation_token = result->get<std::string>("NextContinuationToken", "");
  for (const auto& [name, child] : *result) {
    if (name != "Contents") continue;
    S3Object object;
    object.key = child.get<std::string>("Key", "");
    object.etag = child.get<std::string>("ETag", "");
    const std::string size = child.get<std::string>("Size", "");
    if (object.key.empty() ||
        std::from_chars(size.data(), size.data() + size.size(), object.size).ec != std::errc()) {
      return MakeError(ErrorCode::kUnavailable,
                       fmt::format("{}: an entry lacks Key or Size", operation));
    }
    page.objects.push_back(std::move(object));
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("{}: truncated page without a continuation token", operation));
  }
  return page;
}

core::Result<std::vector<S3Object>> S3Client::ListAllObjects(std::string_view bucket,
                                                             std::string_view prefix, int page_size,
                                                             std::size_t max_objects) {
  std::vector<S3Object> objects;
  std::string token;
  do {
    auto page = ListObjectsV2(bucket, prefix, token, page_size);
    if (!page) return std::unexpected(page.error());
    for (auto& object : page->objects) objects.push_back(std::move(object));
    if (objects.size() > max_objects) {
      return MakeError(
          ErrorCode::kResourceExhausted,
          fmt::format("more than {} objects under {}/{}", max_objects, bucket, prefix));
    }
    token = page->truncated ? page->next_continuation_token : std::string();
  } while (!token.empty());
  return objects;
}

core::Status S3Client::PutObject(std::string_view bucket, std::string_view key, std::string body,
                                 std::string_view content_type) {
  core::ClientRequest request = SignedRequest(http::verb::put, bucket, key, {}, std::move(body));
  request.headers.set(http::field::content_type, std::string(content_type));
  auto response = http_->Fetch(request);
  if (!response) {
    return std::unexpected(
        MapS3Error(response.error(), fmt::format("PutObject {}", ObjectName(bucket, key))));
  }
  return core::Ok();
}

}  // namespace modelplane::agent
