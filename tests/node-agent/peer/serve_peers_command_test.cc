#include "node-agent/peer/serve_peers_command.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/node-agent/peer/peer_test_support.h"

namespace modelplane::agent {
namespace {

class ServePeersCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_.SetUp();
    key_file_ = cache_.directory() + "/peer.key";
    std::ofstream(key_file_) << std::string(48, 's') << "\n";
  }

  // Parses argv as `modelplane-node-agent serve-peers ...` would.
  static ServePeersFlags Parse(std::vector<std::string> arguments) {
    CLI::App app("test");
    ServePeersFlags flags;
    CLI::App* command = DeclareServePeersFlags(app, flags);
    arguments.insert(arguments.begin(), "serve-peers");
    std::vector<const char*> argv = {"modelplane-node-agent"};
    for (const auto& argument : arguments) argv.push_back(argument.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    EXPECT_TRUE(command->parsed());
    return flags;
  }

  testing::PeerCache cache_;
  std::string key_file_;
};

TEST_F(ServePeersCommandTest, FlagsBecomeServerOptions) {
  const ServePeersFlags flags =
      Parse({"--cache-root", cache_.root(), "--listen", "[::1]:7443", "--advertise-address",
             "fd00::7", "--token-key-file", key_file_, "--insecure-http", "--max-upload-rate",
             "1GiB", "--max-streams", "4"});
  auto options = PeerServerOptionsFromFlags(flags);
  ASSERT_TRUE(options) << options.error().ToString();
  EXPECT_EQ(options->address, "::1");
  EXPECT_EQ(options->port, 7443);
  EXPECT_EQ(options->advertise_address, "fd00::7");  // the token audience's host
  EXPECT_TRUE(options->allow_plain_http);
  EXPECT_FALSE(options->tls);
  ASSERT_TRUE(options->token_key);
  EXPECT_EQ(options->token_key->secret(), std::string(48, 's'));
  EXPECT_EQ(options->max_upload_bytes_per_second, 1ull << 30);
  EXPECT_EQ(options->max_streams, 4u);
}

TEST_F(ServePeersCommandTest, RefusesUnsafeOrIncompleteFlags) {
  const auto refused = [](const ServePeersFlags& flags) {
    auto options = PeerServerOptionsFromFlags(flags);
    return !options && options.error().code() == core::ErrorCode::kInvalidArgument;
  };
  ServePeersFlags base{.cache_root = cache_.root(), .token_key_file = key_file_};
  EXPECT_TRUE(refused(base));  // neither TLS nor --insecure-http
  ServePeersFlags no_credentials = base;
  no_credentials.token_key_file.clear();
  no_credentials.insecure_http = true;
  EXPECT_TRUE(refused(no_credentials));
  ServePeersFlags half_tls = base;
  half_tls.tls_certificate = cache_.pki().server_certificate_file;
  EXPECT_TRUE(refused(half_tls));
  ServePeersFlags bad_listen = base;
  bad_listen.insecure_http = true;
  bad_listen.listen = "127.0.0.1:99999";
  EXPECT_TRUE(refused(bad_listen));
  ServePeersFlags bad_rate = base;
  bad_rate.insecure_http = true;
  bad_rate.max_upload_rate = "fast";
  EXPECT_TRUE(refused(bad_rate));
  ServePeersFlags mutual{.cache_root = cache_.root(),
                         .tls_certificate = cache_.pki().server_certificate_file,
                         .tls_key = cache_.pki().server_key_file,
                         .client_ca = cache_.pki().ca_file};
  EXPECT_TRUE(PeerServerOptionsFromFlags(mutual));
}

TEST_F(ServePeersCommandTest, ServesUntilStopped) {
  ServePeersFlags flags{.cache_root = cache_.root(),
                        .listen = "127.0.0.1:0",
                        .token_key_file = key_file_,
                        .insecure_http = true};
  core::CancellationToken stop;
  stop.Cancel();
  EXPECT_EQ(ServePeers(flags, stop, cache_.logger()), 0);
  flags.insecure_http = false;
  EXPECT_EQ(ServePeers(flags, stop, cache_.logger()), 2);
  EXPECT_NE(cache_.log().find("serving_peers"), std::string::npos) << cache_.log();
}

}  // namespace
}  // namespace modelplane::agent
