#include "node-agent/sources/s3_credentials.h"

#include <map>

#include <gtest/gtest.h>

#include "test_files.h"

namespace modelplane::agent {
namespace {

using testing::TempFolder;

EnvironmentLookup FakeEnvironment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    const auto found = values.find(std::string(name));
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(CredentialsFromEnvironment, ReadsTheAwsVariables) {
  auto credentials =
      CredentialsFromEnvironment(FakeEnvironment({{"AWS_ACCESS_KEY_ID", "AKID"},
                                                  {"AWS_SECRET_ACCESS_KEY", "secret"},
                                                  {"AWS_SESSION_TOKEN", "token"}}));
  ASSERT_TRUE(credentials.has_value()) << credentials.error().ToString();
  EXPECT_EQ(credentials->access_key_id, "AKID");
  EXPECT_EQ(credentials->secret_access_key, "secret");
  EXPECT_EQ(credentials->session_token, "token");
}

TEST(CredentialsFromEnvironment, MissingSecretIsUnauthenticated) {
  auto credentials = CredentialsFromEnvironment(FakeEnvironment({{"AWS_ACCESS_KEY_ID", "AKID"}}));
  ASSERT_FALSE(credentials.has_value());
  EXPECT_EQ(credentials.error().code(), core::ErrorCode::kUnauthenticated);
}

TEST(RegionFromEnvironment, PrefersAwsRegion) {
  EXPECT_EQ(RegionFromEnvironment(
                FakeEnvironment({{"AWS_REGION", "eu-west-1"}, {"AWS_DEFAULT_REGION", "x"}})),
            "eu-west-1");
  EXPECT_EQ(RegionFromEnvironment(FakeEnvironment({{"AWS_DEFAULT_REGION", "x"}})), "x");
  EXPECT_EQ(RegionFromEnvironment(FakeEnvironment({})), std::nullopt);
}

TEST(CredentialsFromDirectory, ReadsAMountedSecretAndTrimsNewlines) {
  TempFolder folder;
  folder.Write("accessKeyId", "AKID\n");
  folder.Write("secretAccessKey", "se/cr+et\r\n");
  auto credentials = CredentialsFromDirectory(folder.path());
  ASSERT_TRUE(credentials.has_value()) << credentials.error().ToString();
  EXPECT_EQ(credentials->access_key_id, "AKID");
  EXPECT_EQ(credentials->secret_access_key, "se/cr+et");
  EXPECT_EQ(credentials->session_token, "");
}

TEST(TokenFromDirectory, ReadsTokenThenTheHubClientsVariableNames) {
  TempFolder folder;
  EXPECT_EQ(TokenFromDirectory(folder.path()).error().code(), core::ErrorCode::kNotFound);
  folder.Write("HF_TOKEN", "hf_abc\n");
  EXPECT_EQ(TokenFromDirectory(folder.path()).value(), "hf_abc");
  folder.Write("token", "own\n");
  EXPECT_EQ(TokenFromDirectory(folder.path()).value(), "own");
  TempFolder empty_token;
  empty_token.Write("token", "\n");
  EXPECT_EQ(TokenFromDirectory(empty_token.path()).error().code(), core::ErrorCode::kNotFound);
}

TEST(CredentialsFromDirectory, AcceptsEnvironmentStyleKeyNames) {
  TempFolder folder;
  folder.Write("AWS_ACCESS_KEY_ID", "AKID");
  folder.Write("AWS_SECRET_ACCESS_KEY", "secret");
  folder.Write("AWS_SESSION_TOKEN", "token");
  auto credentials = CredentialsFromDirectory(folder.path());
  ASSERT_TRUE(credentials.has_value()) << credentials.error().ToString();
  EXPECT_EQ(credentials->session_token, "token");
}

TEST(CredentialsFromDirectory, MissingKeyOrFolderIsNotFound) {
  TempFolder folder;
  folder.Write("accessKeyId", "AKID");
  auto missing_secret = CredentialsFromDirectory(folder.path());
  ASSERT_FALSE(missing_secret.has_value());
  EXPECT_EQ(missing_secret.error().code(), core::ErrorCode::kNotFound);
  EXPECT_NE(missing_secret.error().message().find("secretAccessKey"), std::string::npos);
  auto missing_folder = CredentialsFromDirectory(folder.path() + "/nope");
  ASSERT_FALSE(missing_folder.has_value());
  EXPECT_EQ(missing_folder.error().code(), core::ErrorCode::kNotFound);
}

TEST(CredentialsFromDirectory, EmptyKeyIsUnauthenticated) {
  TempFolder folder;
  folder.Write("accessKeyId", "AKID");
  folder.Write("secretAccessKey", "\n");
  auto credentials = CredentialsFromDirectory(folder.path());
  ASSERT_FALSE(credentials.has_value());
  EXPECT_EQ(credentials.error().code(), core::ErrorCode::kUnauthenticated);
}

TEST(CredentialsFromDirectory, AKeyFileOverItsBoundIsRefusedNotRead) {
  TempFolder folder;
  folder.Write("accessKeyId", "AKID");
  folder.Write("secretAccessKey", std::string(64 * 1024 + 1, 's'));
  auto credentials = CredentialsFromDirectory(folder.path());
  ASSERT_FALSE(credentials.has_value());
  EXPECT_EQ(credentials.error().code(), core::ErrorCode::kInvalidArgument);
  EXPECT_NE(credentials.error().message().find("secretAccessKey"), std::string::npos)
      << credentials.error().message();
}

TEST(CredentialsFromSharedFile, AFileOverItsBoundIsRefusedNotRead) {
  TempFolder folder;
  const std::string path = folder.Write(
      "credentials", "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n# " +
                         std::string(1024 * 1024, 'x') + "\n");
  auto credentials = CredentialsFromSharedFile(path);
  ASSERT_FALSE(credentials.has_value());
  EXPECT_EQ(credentials.error().code(), core::ErrorCode::kInvalidArgument);
}

TEST(CredentialsFromSharedFile, ReadsTheNamedProfile) {
  TempFolder folder;
  const std::string path = folder.Write("credentials",
                                        "# comment\n[default]\naws_access_key_id = D\n"
                                        "aws_secret_access_key = DS\n\n[models]\n"
                                        "aws_access_key_id=M\naws_secret_access_key=MS\n"
                                        "aws_session_token = MT\n");
  auto models = CredentialsFromSharedFile(path, "models");
  ASSERT_TRUE(models.has_value()) << models.error().ToString();
  EXPECT_EQ(models->access_key_id, "M");
  EXPECT_EQ(models->secret_access_key, "MS");
  EXPECT_EQ(models->session_token, "MT");
  auto fallback = CredentialsFromSharedFile(path);
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(fallback->access_key_id, "D");
  auto absent = CredentialsFromSharedFile(path, "other");
  ASSERT_FALSE(absent.has_value());
  EXPECT_EQ(absent.error().code(), core::ErrorCode::kNotFound);
}

}  // namespace
}  // namespace modelplane::agent
