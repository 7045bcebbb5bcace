// peer_bench: the moving parts of bench/peer/run.sh in one binary.
//
//   peer_bench serve-peers ...          the real `serve-peers` subcommand (AddServePeersCommand)
//   peer_bench fetch --endpoint H:P --digest sha256:<hex> --size N --out FILE
//                    [--range-mib 8] [--parallel 4] [--token-key-file F] [--ca F --cert F --key F]
//       reads the blob with PeerRangeSource, `parallel` ranges in flight, each written with
//       pwrite, and prints "bytes seconds bytes_per_second"
//   peer_bench sign --token-key-file F --audience H:P --path /v1/blobs/sha256:<hex>
//       prints an Authorization header value for the peer at H:P, valid for 2 minutes (for curl)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/io/unique_fd.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/peer/serve_peers_command.h"

namespace {

using namespace modelplane;

struct FetchFlags {
  std::string endpoint;
  std::string digest;
  std::uint64_t size = 0;
  std::string out;
  std::size_t range_mib = 8;
  std::size_t parallel = 4;
  std::string token_key_file;
  std::string ca;
  std::string certificate;
  std::string key;
};

int Fetch(const FetchFlags& flags) {
  const core::SystemClock clock;
  agent::PeerRangeSourceOptions options;
  options.endpoint = flags.endpoint;
  options.max_concurrency = flags.parallel;
  // A loaded 2-CPU machine can take seconds for a handshake; the default 2 s is for real peers.
  options.connect_timeout = std::chrono::seconds(10);
  if (!flags.token_key_file.empty()) {
    auto key = agent::PeerTokenKey::Load(flags.token_key_file);
    if (!key) {
      std::cerr << key.error().ToString() << "\n";
      return 2;
    }
    options.token_key = std::move(*key);
  }
  if (!flags.ca.empty()) {
    options.tls = core::TlsClientOptions{.ca_file = flags.ca,
                                         .certificate_chain_file = flags.certificate,
                                         .private_key_file = flags.key};
  }
  auto digest = core::ParseDigest(flags.digest);
  if (!digest) {
    std::cerr << digest.error().ToString() << "\n";
    return 2;
  }
  auto source = agent::PeerRangeSource::Create(std::move(options), clock);
  if (!source) {
    std::cerr << source.error().ToString() << "\n";
    return 2;
  }
  core::UniqueFd out(::open(flags.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid() || ::ftruncate(out.get(), static_cast<off_t>(flags.size)) != 0) {
    std::perror(flags.out.c_str());
    return 1;
  }
  const agent::SourceFile file{.path = "bench", .sha256 = *digest, .size = flags.size};
  const std::uint64_t range = flags.range_mib * 1024 * 1024;
  const std::uint64_t ranges = (flags.size + range - 1) / range;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < flags.parallel; ++i) {
    workers.emplace_back([&] {
      std::vector<std::byte> buffer(range);
      for (std::uint64_t index = next++; index < ranges && !failed; index = next++) {
        const std::uint64_t offset = index * range;
        const std::size_t length =
            static_cast<std::size_t>(std::min<std::uint64_t>(range, flags.size - offset));
        auto read = (*source)->ReadRange(file, offset, std::span(buffer.data(), length), {});
        if (!read) {
          std::cerr << read.error().ToString() << "\n";
          failed = true;
          return;
        }
        for (std::size_t done = 0; done < length;) {
          const ssize_t written = ::pwrite(out.get(), buffer.data() + done, length - done,
                                           static_cast<off_t>(offset + done));
          if (written <= 0) {
            std::perror("pwrite");
            failed = true;
            return;
          }
          done += static_cast<std::size_t>(written);
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed) return 1;
  fmt::print("{} {:.4f} {:.0f}\n", flags.size, seconds, static_cast<double>(flags.size) / seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("peer benchmark driver");
  app.require_subcommand(1);
  agent::Subcommand serve = agent::AddServePeersCommand(app);

  FetchFlags fetch;
  CLI::App* fetch_app = app.add_subcommand("fetch", "read a blob from a peer with PeerRangeSource");
  fetch_app->add_option("--endpoint", fetch.endpoint)->required();
  fetch_app->add_option("--digest", fetch.digest)->required();
  fetch_app->add_option("--size", fetch.size)->required();
  fetch_app->add_option("--out", fetch.out)->required();
  fetch_app->add_option("--range-mib", fetch.range_mib);
  fetch_app->add_option("--parallel", fetch.parallel);
  fetch_app->add_option("--token-key-file", fetch.token_key_file);
  fetch_app->add_option("--ca", fetch.ca);
  fetch_app->add_option("--cert", fetch.certificate);
  fetch_app->add_option("--key", fetch.key);

  std::string key_file;
  std::string audience;
  std::string path;
  CLI::App* sign_app = app.add_subcommand("sign", "print a peer token for curl");
  sign_app->add_option("--token-key-file", key_file)->required();
  sign_app->add_option("--audience", audience, "the peer's endpoint, host:port")->required();
  sign_app->add_option("--path", path)->required();

  CLI11_PARSE(app, argc, argv);
  if (serve.app->parsed()) return serve.run();
  if (fetch_app->parsed()) return Fetch(fetch);
  auto key = agent::PeerTokenKey::Load(key_file);
  if (!key) {
    std::cerr << key.error().ToString() << "\n";
    return 2;
  }
  fmt::print("{}\n",
             agent::SignPeerToken(*key, {.audience = audience, .method = "GET", .path = path},
                                  std::chrono::system_clock::now() + std::chrono::minutes(2)));
  return 0;
}
