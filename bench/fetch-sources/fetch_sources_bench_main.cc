// Throughput of the data-plane sources: a shared-filesystem file read with O_DIRECT or through
// the page cache, an S3 object read with ranged GETs (MinIO from e2e/cluster.sh), and manifest
// hashing of a folder. Every run reads whole files in fixed-size ranges on N threads, the way the
// fetch engine does, and checks the bytes against the file's sha256.
//
//   fetch_sources_bench fs --dir /mnt/nfs/bench --size-mib 1024 --range-mib 8 --threads 8
//   fetch_sources_bench s3 --size-mib 256 --range-mib 8 --threads 16   (S3_ENDPOINT_URL, AWS_*)
//   fetch_sources_bench hash --dir /models/llama --threads 4
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "core/digest/sha256.h"
#include "node-agent/manifest/manifest_builder.h"
#include "node-agent/sources/s3_credentials.h"
#include "node-agent/sources/s3_range_source.h"
#include "node-agent/sources/shared_filesystem_range_source.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kMiB = 1024 * 1024;

struct AlignedDeleter {
  void operator()(std::byte* data) const { std::free(data); }
};

std::string Pattern(std::size_t size) {
  std::string out(size, '\0');
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = 0; i < size; i += 8) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    std::memcpy(out.data() + i, &state, std::min<std::size_t>(8, size - i));
  }
  return out;
}

// Reads the whole file through `source` in `range` pieces on `threads` threads; returns seconds.
double ReadAll(RangeSource& source, const SourceFile& file, std::size_t range, int threads,
               const std::string& expected_sha256) {
  std::unique_ptr<std::byte, AlignedDeleter> buffer(
      static_cast<std::byte*>(std::aligned_alloc(4096, (file.size + 4095) / 4096 * 4096)));
  std::atomic<std::uint64_t> next{0};
  std::atomic<int> failures{0};
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        while (true) {
          const std::uint64_t offset = next.fetch_add(range);
          if (offset >= file.size) return;
          const std::size_t length = std::min<std::uint64_t>(range, file.size - offset);
          auto status = source.ReadRange(file, offset, {buffer.get() + offset, length}, {});
          if (!status) {
            std::cerr << status.error().ToString() << "\n";
            ++failures;
          }
        }
      });
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string digest =
      core::Sha256HexOf(std::string_view(reinterpret_cast<const char*>(buffer.get()), file.size));
  if (failures > 0 || digest != expected_sha256) {
    std::cerr << "read failed or bytes differ\n";
    std::exit(1);
  }
  return seconds;
}

void Report(std::string_view what, std::uint64_t bytes, double seconds) {
  std::cout << fmt::format("{:<44} {:>8.1f} MiB in {:>6.2f} s  {:>8.1f} MiB/s\n", what,
                           static_cast<double>(bytes) / kMiB, seconds,
                           static_cast<double>(bytes) / kMiB / seconds);
}

int RunFs(const std::string& dir, std::size_t size, std::size_t range, int threads, int runs) {
  const std::string path = dir + "/fetch-sources-bench.bin";
  const std::string content = Pattern(size);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  const std::string sha = core::Sha256HexOf(content);
  for (const bool direct : {true, false}) {
    for (const bool cold : {true, false}) {
      if (!direct && !cold) continue;
      auto source = SharedFilesystemRangeSource::Create(
          {.name = "bench", .root = dir, .max_concurrency = 64, .direct_io = direct});
      if (!source) {
        std::cerr << source.error().ToString() << "\n";
        return 1;
      }
      for (int run = 0; run < runs; ++run) {
        if (cold) {
          // Clean pages leave the cache with DONTNEED, so each run starts from the disk.
          const int fd = ::open(path.c_str(), O_RDONLY);
          ::fdatasync(fd);
          ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
          ::close(fd);
        }
        const double seconds = ReadAll(**source, {.path = "fetch-sources-bench.bin", .size = size},
                                       range, threads, sha);
        Report(fmt::format("fs {} {} threads={} range={}MiB", direct ? "O_DIRECT" : "buffered",
                           cold ? "cold" : "warm", threads, range / kMiB),
               size, seconds);
      }
      std::cout << fmt::format("  direct bytes {} buffered bytes {}\n", (*source)->direct_bytes(),
                               (*source)->buffered_bytes());
    }
  }
  std::remove(path.c_str());
  return 0;
}

int RunS3(std::size_t size, std::size_t range, int threads, int runs) {
  const auto environment = ProcessEnvironment();
  auto credentials = CredentialsFromEnvironment(environment);
  const auto endpoint = environment("S3_ENDPOINT_URL");
  const auto bucket = environment("MODELPLANE_S3_BUCKET");
  if (!credentials || !endpoint || !bucket) {
    std::cerr << "needs S3_ENDPOINT_URL, MODELPLANE_S3_BUCKET and AWS_* (e2e/cluster.sh env)\n";
    return 2;
  }
  S3ClientOptions options{.endpoint = *endpoint,
                          .region = RegionFromEnvironment(environment).value_or("us-east-1"),
                          .credentials = *credentials};
  options.http.max_connections_per_origin = static_cast<std::size_t>(threads);
  options.http.retry.max_attempts = 1;
  auto created = S3Client::Create(options);
  if (!created) {
    std::cerr << created.error().ToString() << "\n";
    return 1;
  }
  std::shared_ptr<S3Client> client = std::move(*created);
  const std::string content = Pattern(size);
  const std::string key = fmt::format("fetch-sources-bench/{}.bin", size);
  if (auto put = client->PutObject(*bucket, key, content); !put) {
    std::cerr << put.error().ToString() << "\n";
    return 1;
  }
  auto source = S3RangeSource::Create(
      client, {.name = "bench", .bucket = *bucket, .prefix = "fetch-sources-bench"});
  const std::string sha = core::Sha256HexOf(content);
  for (int run = 0; run < runs; ++run) {
    const double seconds =
        ReadAll(**source, {.path = fmt::format("{}.bin", size), .size = size}, range, threads, sha);
    Report(fmt::format("s3 ranged GET threads={} range={}MiB", threads, range / kMiB), size,
           seconds);
  }
  return 0;
}

int RunHash(const std::string& dir, int threads) {
  const auto start = std::chrono::steady_clock::now();
  auto listing = ListFolderFiles(dir, {.threads = static_cast<std::size_t>(threads)});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!listing) {
    std::cerr << listing.error().ToString() << "\n";
    return 1;
  }
  std::uint64_t bytes = 0;
  for (const auto& file : listing->files) bytes += static_cast<std::uint64_t>(file.size);
  Report(fmt::format("manifest hash {} files threads={}", listing->files.size(), threads), bytes,
         seconds);
  return 0;
}

}  // namespace
}  // namespace modelplane::agent

int main(int argc, char** argv) {
  CLI::App app("Throughput of the node agent's data-plane sources");
  app.require_subcommand(1);
  std::string dir = "/tmp";
  std::size_t size_mib = 256;
  std::size_t range_mib = 8;
  int threads = 8;
  int runs = 3;
  for (CLI::App* sub : {app.add_subcommand("fs", "shared filesystem, O_DIRECT vs buffered"),
                        app.add_subcommand("s3", "S3 ranged GETs (MinIO)"),
                        app.add_subcommand("hash", "manifest hashing of a folder")}) {
    sub->add_option("--dir", dir, "folder (fs: where the test file goes)");
    sub->add_option("--size-mib", size_mib, "file size");
    sub->add_option("--range-mib", range_mib, "range size");
    sub->add_option("--threads", threads, "parallel reads");
    sub->add_option("--runs", runs, "repetitions");
  }
  CLI11_PARSE(app, argc, argv);
  const std::size_t size = size_mib * modelplane::agent::kMiB;
  const std::size_t range = range_mib * modelplane::agent::kMiB;
  if (app.got_subcommand("fs")) return modelplane::agent::RunFs(dir, size, range, threads, runs);
  if (app.got_subcommand("s3")) return modelplane::agent::RunS3(size, range, threads, runs);
  return modelplane::agent::RunHash(dir, threads);
}
