// The SigV4 signer against AWS's published test vectors (sigv4_testsuite/README.md says where
// each file came from and which cases apply to S3).
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/digest/sha256.h"
#include "core/text/percent_encoding.h"
#include "node-agent/sources/sigv4_signer.h"
#include "node-agent/sources/uri_encoding.h"

namespace modelplane::agent {
namespace {

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kSuite =
    std::string(MODELPLANE_SOURCE_DIR) + "/tests/node-agent/sources/sigv4_testsuite";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::chrono::system_clock::time_point ParseAmzDate(const std::string& text) {
  std::tm parts{};
  std::istringstream in(text);
  in >> std::get_time(&parts, "%Y%m%dT%H%M%SZ");
  return std::chrono::system_clock::from_time_t(::timegm(&parts));
}

struct ParsedRequest {
  std::string method;
  std::string path;  // decoded
  std::vector<QueryParameter> query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// The suite's .req format: "METHOD target http/1.1", "Name:value" lines, a blank line, the body.
ParsedRequest ParseRequest(const std::string& text) {
  ParsedRequest request;
  const std::size_t line_end = text.find('\n');
  const std::string line = text.substr(0, line_end);
  const std::size_t first_space = line.find(' ');
  const std::size_t last_space = line.rfind(' ');
  request.method = line.substr(0, first_space);
  const std::string target = line.substr(first_space + 1, last_space - first_space - 1);
  const std::size_t question = target.find('?');
  request.path = core::PercentDecode(target.substr(0, question)).value();
  if (question != std::string::npos) {
    std::string_view query = std::string_view(target).substr(question + 1);
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const std::size_t equals = pair.find('=');
      request.query.emplace_back(core::PercentDecode(pair.substr(0, equals)).value(),
                                 equals == std::string_view::npos
                                     ? std::string()
                                     : core::PercentDecode(pair.substr(equals + 1)).value());
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
  }
  std::size_t at = line_end + 1;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string header = text.substr(at, end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    if (header.empty()) break;
    const std::size_t colon = header.find(':');
    request.headers.emplace_back(header.substr(0, colon), header.substr(colon + 1));
  }
  request.body = at < text.size() ? text.substr(at) : std::string();
  return request;
}

class OriginalSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(OriginalSuite, CanonicalRequestStringToSignAndAuthorizationMatch) {
  const std::string base = kSuite + "/" + GetParam() + "/" + GetParam();
  const ParsedRequest parsed = ParseRequest(ReadFile(base + ".req"));
  const SigningRequest request{.method = parsed.method,
                               .canonical_uri = ObjectKeyPath(parsed.path.substr(1)),
                               .query = parsed.query,
                               .headers = parsed.headers,
                               .payload_hash = core::Sha256HexOf(parsed.body)};
  const Signature signature = SignRequest(
      request,
      {.access_key_id = "AKIDEXAMPLE",
       .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
      {.region = "us-east-1", .service = "host", .time = ParseAmzDate("20110909T233600Z")});
  EXPECT_EQ(signature.canonical_request, ReadFile(base + ".creq"));
  EXPECT_EQ(signature.string_to_sign, ReadFile(base + ".sts"));
  EXPECT_EQ(signature.authorization, ReadFile(base + ".authz"));
}

INSTANTIATE_TEST_SUITE_P(Aws, OriginalSuite,
                         ::testing::Values("get-vanilla-query-order-key-case",
                                           "get-vanilla-query-order-value",
                                           "get-vanilla-query-unreserved", "get-vanilla-ut8-query",
                                           "get-vanilla-empty-query-key", "get-utf8", "get-space",
                                           "get-unreserved", "get-header-value-trim",
                                           "post-x-www-form-urlencoded"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// The 2015 suite: headers named in the published SignedHeaders are signed, the rest are not.
Signature Sign2015(const ParsedRequest& parsed, const std::string& canonical_uri,
                   const std::string& expected_authorization) {
  const std::size_t begin = expected_authorization.find("SignedHeaders=") + 14;
  const std::string signed_list =
      ";" + expected_authorization.substr(begin, expected_authorization.find(',', begin) - begin) +
      ";";
  SigningRequest request{.method = parsed.method,
                         .canonical_uri = canonical_uri,
                         .query = parsed.query,
                         .payload_hash = std::string(kEmptyPayloadSha256)};
  SigningCredentials credentials{.access_key_id = "AKIDEXAMPLE",
                                 .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
  for (const auto& [name, value] : parsed.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (signed_list.find(";" + lower + ";") != std::string::npos) {
      request.headers.emplace_back(name, value);
    }
    if (lower == "x-amz-security-token") credentials.session_token = value;
  }
  return SignRequest(
      request, credentials,
      {.region = "us-east-1", .service = "service", .time = ParseAmzDate("20150830T123600Z")});
}

std::string AuthorizationOf(const ParsedRequest& parsed) {
  for (const auto& [name, value] : parsed.headers) {
    if (name == "Authorization") return value;
  }
  return {};
}

class Suite2015 : public ::testing::TestWithParam<std::string> {};

TEST_P(Suite2015, SingleEncodedPathReproducesThePublishedSignature) {
  const ParsedRequest parsed =
      ParseRequest(ReadFile(kSuite + "/v4-2015/" + GetParam() + "/header-signed-request.txt"));
  const std::string expected = AuthorizationOf(parsed);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Sign2015(parsed, ObjectKeyPath(parsed.path.substr(1)), expected).authorization,
            expected);
}

INSTANTIATE_TEST_SUITE_P(Aws, Suite2015,
                         ::testing::Values("get-vanilla-query-order-key-case", "get-utf8",
                                           "get-vanilla-with-session-token"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(Suite2015Encoding, SpaceInThePathIsEncodedOnceNotTwice) {
  const ParsedRequest parsed =
      ParseRequest(ReadFile(kSuite + "/v4-2015/get-space-unnormalized/header-signed-request.txt"));
  const std::string expected = AuthorizationOf(parsed);
  const std::string once = ObjectKeyPath(parsed.path.substr(1));
  EXPECT_EQ(once, "/example%20space/");
  // The published signature is over the path encoded once, as S3 requires.
  EXPECT_EQ(Sign2015(parsed, once, expected).authorization, expected);
  // Encoding the already-encoded path again (the rule for non-S3 services when the caller hands
  // the signer a wire path) signs "/example%2520space/", which S3 rejects.
  const std::string twice = core::PercentEncode(once, true);
  EXPECT_EQ(twice, "/example%2520space/");
  EXPECT_NE(Sign2015(parsed, twice, expected).authorization, expected);
}

TEST(S3Example, GetObjectWithRangeMatchesTheS3Documentation) {
  const std::string base = kSuite + "/s3-get-object-range/s3-get-object-range";
  const ParsedRequest parsed = ParseRequest(ReadFile(base + ".req"));
  const Signature signature = SignRequest(
      {.method = parsed.method,
       .canonical_uri = ObjectKeyPath(parsed.path.substr(1)),
       .query = parsed.query,
       .headers = parsed.headers,
       .payload_hash = std::string(kEmptyPayloadSha256)},
      {.access_key_id = "AKIAIOSFODNN7EXAMPLE",
       .secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
      {.region = "us-east-1", .service = "s3", .time = ParseAmzDate("20130524T000000Z")});
  EXPECT_EQ(signature.canonical_request, ReadFile(base + ".creq"));
  EXPECT_EQ(signature.string_to_sign, ReadFile(base + ".sts"));
  EXPECT_EQ(signature.authorization, ReadFile(base + ".authz"));
}

TEST(SigV4, S3KeepsPathsTheGenericSuiteWouldNormalise) {
  // "a//b" and "./x" are distinct S3 keys; normalising them would sign another object's name.
  EXPECT_EQ(ObjectKeyPath("foo//bar"), "/foo//bar");
  EXPECT_EQ(ObjectKeyPath("./foo"), "/./foo");
  EXPECT_EQ(ObjectKeyPath("a b/ü+c"), "/a%20b/%C3%BC%2Bc");
}

TEST(SigV4, DatesAreUtc) {
  const auto time = ParseAmzDate("20150830T123600Z");
  EXPECT_EQ(FormatAmzDate(time), "20150830T123600Z");
  EXPECT_EQ(FormatScopeDate(time), "20150830");
}

TEST(SigV4, HeadersAreLowerCasedSortedTrimmedAndJoined) {
  const Signature signature = SignRequest(
      {.method = "GET",
       .canonical_uri = "/",
       .headers = {{"X-B", "  two   words "}, {"host", "h"}, {"x-a", "1"}, {"X-A", "2"}},
       .payload_hash = std::string(kUnsignedPayload)},
      {.access_key_id = "A", .secret_access_key = "S"},
      {.region = "r", .service = "s3", .time = ParseAmzDate("20200101T000000Z")});
  EXPECT_EQ(signature.canonical_request,
            "GET\n/\n\nhost:h\nx-a:1,2\nx-b:two words\n\nhost;x-a;x-b\nUNSIGNED-PAYLOAD");
  EXPECT_EQ(signature.signed_headers, "host;x-a;x-b");
}

}  // namespace
}  // namespace modelplane::agent
