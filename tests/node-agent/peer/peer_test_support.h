// Shared by the peer tests: a real cache directory with random blobs, a logger into a string,
// and a PeerServer factory over DirectoryBlobCatalog.
//
// Thread safety: one test thread drives a PeerCache; the server's threads only read its files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock/clock.h"
#include "core/digest/sha256.h"
#include "core/log/logger.h"
#include "core/metrics/metrics_registry.h"
#include "node-agent/peer/directory_blob_catalog.h"
#include "node-agent/peer/peer_server.h"
#include "node-agent/peer/peer_token.h"
#include "tests/core/http/test_certificates.h"

namespace modelplane::agent::testing {

struct TestBlob {
  std::string bytes;
  core::Sha256Bytes digest{};
};

// A 32-byte key made of printable bytes (a mounted Secret usually is).
inline PeerTokenKey MakeKey(char fill = 'k') {
  auto key = PeerTokenKey::FromBytes(std::string(32, fill) + "-peer-test-key");
  EXPECT_TRUE(key) << key.error().ToString();
  return *key;
}

class PeerCache {
 public:
  void SetUp() {
    auto directory = core::testing::TemporaryDirectory::Create("peer-");
    ASSERT_TRUE(directory) << directory.error().ToString();
    directory_.emplace(std::move(*directory));
    auto pki = core::testing::MakeTestPki(directory_->path() + "/pki", "node-7");
    ASSERT_TRUE(pki) << pki.error().ToString();
    pki_ = *pki;
    std::filesystem::create_directories(blobs_directory());
    catalog_.emplace(root());
    auto logger = core::Logger::Create({.component = "peer-test",
                                        .level = core::LogLevel::kDebug,
                                        .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger) << logger.error().ToString();
    logger_.emplace(std::move(*logger));
  }

  // Writes `size` random bytes as a blob named by their digest.
  TestBlob AddBlob(std::size_t size, std::uint64_t seed = 1) {
    std::mt19937_64 random(seed);
    TestBlob blob;
    blob.bytes.resize(size);
    for (char& byte : blob.bytes) byte = static_cast<char>(random());
    blob.digest = core::Sha256Of(blob.bytes);
    std::ofstream(blobs_directory() / core::ToHex(blob.digest), std::ios::binary)
        .write(blob.bytes.data(), static_cast<std::streamsize>(blob.bytes.size()));
    return blob;
  }

  [[nodiscard]] std::string root() const { return directory_->path() + "/cache"; }
  [[nodiscard]] std::filesystem::path blobs_directory() const {
    return std::filesystem::path(root()) / "blobs" / "sha256";
  }
  [[nodiscard]] const std::string& directory() const { return directory_->path(); }
  [[nodiscard]] const core::testing::TestPki& pki() const { return pki_; }
  [[nodiscard]] const BlobCatalog& catalog() const { return *catalog_; }
  [[nodiscard]] const core::Logger& logger() const { return *logger_; }
  [[nodiscard]] std::string log() const { return log_.str(); }

  // Plain HTTP with tokens: the mode raw loopback connections can check byte for byte.
  static PeerServerOptions PlainTokenOptions() {
    PeerServerOptions options;
    options.allow_plain_http = true;
    options.token_key = MakeKey();
    options.stop_grace = std::chrono::seconds(5);
    return options;
  }
  PeerServerOptions MutualTlsOptions() const {
    PeerServerOptions options;
    options.tls = core::TlsServerOptions{.certificate_chain_file = pki_.server_certificate_file,
                                         .private_key_file = pki_.server_key_file,
                                         .client_ca_file = pki_.ca_file};
    options.stop_grace = std::chrono::seconds(5);
    return options;
  }

  std::unique_ptr<PeerServer> StartServer(PeerServerOptions options) {
    // A registry per server: each registers the modelplane_peer_* families once.
    registries_.push_back(std::make_unique<core::MetricsRegistry>());
    auto server =
        PeerServer::Create(std::move(options), *catalog_, *registries_.back(), *logger_, clock_);
    EXPECT_TRUE(server) << server.error().ToString();
    return server ? std::move(*server) : nullptr;
  }

  // The registry of the server started last.
  core::MetricsRegistry& metrics() { return *registries_.back(); }
  const core::Clock& clock() const { return clock_; }

 private:
  std::optional<core::testing::TemporaryDirectory> directory_;
  core::testing::TestPki pki_;
  std::optional<DirectoryBlobCatalog> catalog_;
  std::ostringstream log_;
  std::optional<core::Logger> logger_;
  std::vector<std::unique_ptr<core::MetricsRegistry>> registries_;
  core::SystemClock clock_;
};

}  // namespace modelplane::agent::testing
