// Loopback download throughput: modelplane's HttpClient against curl, both fetching the same
// file from modelplane's HttpServer (streamed with FileBodySource) in the same run.
//
//   http_download_bench --file /tmp/blob [--repetitions 5] [--hash] [--no-sendfile]
//                       [--chunk-kib 128] [--client-buffer-kib 64]
//
// Prints one row per repetition and the medians as a Markdown table. curl runs as
// `curl -s -o /dev/null -w '%{size_download} %{time_total}'`, so both sides discard the body
// (or, with --hash, modelplane's client also SHA-256s it, which curl does not).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>

#include "core/digest/sha256.h"
#include "core/http/http_client.h"
#include "core/http/http_server.h"

namespace {

using modelplane::core::ClientOptions;
using modelplane::core::ClientRequest;
using modelplane::core::FileBodySource;
using modelplane::core::HttpClient;
using modelplane::core::HttpServer;
using modelplane::core::Ok;
using modelplane::core::Router;
using modelplane::core::ServerOptions;
using modelplane::core::ServerRequest;
using modelplane::core::ServerResponse;
using modelplane::core::Sha256;
using Clock = std::chrono::steady_clock;

struct Arguments {
  std::string file = "/tmp/modelplane-http-bench.bin";
  int repetitions = 5;
  bool hash = false;
  bool sendfile = true;
  std::size_t chunk_kib = ServerOptions{}.stream_chunk_size / 1024;
  std::size_t client_buffer_kib = ClientOptions{}.stream_buffer_size / 1024;
};

Arguments Parse(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--file" && has_value)
      arguments.file = argv[++i];
    else if (flag == "--repetitions" && has_value)
      arguments.repetitions = std::atoi(argv[++i]);
    else if (flag == "--chunk-kib" && has_value)
      arguments.chunk_kib = std::strtoul(argv[++i], nullptr, 10);
    else if (flag == "--client-buffer-kib" && has_value)
      arguments.client_buffer_kib = std::strtoul(argv[++i], nullptr, 10);
    else if (flag == "--hash")
      arguments.hash = true;
    else if (flag == "--no-sendfile")
      arguments.sendfile = false;
    else {
      std::fprintf(stderr,
                   "usage: %s --file PATH [--repetitions N] [--hash] [--no-sendfile] "
                   "[--chunk-kib K] [--client-buffer-kib K]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  arguments.repetitions = std::max(1, arguments.repetitions);
  return arguments;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double CpuSeconds(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  const auto seconds = [](const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Sample {
  double bytes_per_second = -1;
  double cpu_seconds = 0;  // of the downloading thread (ours) or process (curl)
};

// The client runs on this thread, so RUSAGE_THREAD is its CPU cost alone (not the server's).
Sample RunClient(HttpClient& client, const std::string& url, bool hash, std::uint64_t size) {
  auto hasher = Sha256::Create();
  if (!hasher) return {};
  std::uint64_t received = 0;
  const double cpu_start = CpuSeconds(RUSAGE_THREAD);
  ClientRequest request;
  request.url = url;
  const auto start = Clock::now();
  auto response = client.FetchStream(request, [&](std::span<const std::byte> data) {
    received += data.size();
    if (hash) hasher->Update(data);
    return Ok();
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!response || received != size) {
    std::fprintf(stderr, "client download failed: %s\n",
                 response ? "short body" : response.error().ToString().c_str());
    return {};
  }
  if (hash) (void)hasher->Finish();
  return {static_cast<double>(received) / seconds, CpuSeconds(RUSAGE_THREAD) - cpu_start};
}

// While curl downloads, only the server works in this process: RUSAGE_SELF is the server's cost.
Sample RunCurl(const std::string& url, std::uint64_t size, double& server_cpu_seconds) {
  const std::string command =
      fmt::format("curl -s -o /dev/null -w '%{{size_download}} %{{time_total}}' '{}'", url);
  const double cpu_start = CpuSeconds(RUSAGE_CHILDREN);
  const double server_cpu_start = CpuSeconds(RUSAGE_SELF);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  double bytes = 0;
  double seconds = 0;
  const int fields = std::fscanf(pipe, "%lf %lf", &bytes, &seconds);
  const int status = ::pclose(pipe);
  server_cpu_seconds = CpuSeconds(RUSAGE_SELF) - server_cpu_start;
  if (fields != 2 || status != 0 || seconds <= 0 || static_cast<std::uint64_t>(bytes) != size) {
    std::fprintf(stderr, "curl failed (status %d)\n", status);
    return {};
  }
  return {bytes / seconds, CpuSeconds(RUSAGE_CHILDREN) - cpu_start};
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments arguments = Parse(argc, argv);
  auto probe = FileBodySource::Open(arguments.file);
  if (!probe) {
    std::fprintf(stderr, "%s\n", probe.error().ToString().c_str());
    return 1;
  }
  const std::uint64_t size = (*probe)->Size();

  Router router;
  const std::string path = arguments.file;
  router.Handle(boost::beast::http::verb::get, "/blob", [path](const ServerRequest&) {
    auto source = FileBodySource::Open(path);
    if (!source) {
      return ServerResponse::Text(boost::beast::http::status::internal_server_error,
                                  source.error().ToString());
    }
    return ServerResponse::Stream(std::move(*source));
  });
  ServerOptions server_options;
  server_options.threads = 2;
  server_options.stream_chunk_size = arguments.chunk_kib * 1024;
  server_options.use_sendfile = arguments.sendfile;
  auto server = HttpServer::Create(server_options, std::move(router));
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().ToString().c_str());
    return 1;
  }
  const std::string url = fmt::format("http://127.0.0.1:{}/blob", (*server)->port());
  ClientOptions client_options;
  client_options.stream_buffer_size = arguments.client_buffer_kib * 1024;
  auto client = HttpClient::Create(client_options);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().ToString().c_str());
    return 1;
  }

  // One untimed pass each warms the page cache and the connection.
  double server_cpu = 0;
  if (RunClient(**client, url, false, size).bytes_per_second < 0 ||
      RunCurl(url, size, server_cpu).bytes_per_second < 0) {
    return 1;
  }

  std::vector<double> ours;
  std::vector<double> curl;
  std::vector<double> ours_cpu;
  std::vector<double> curl_cpu;
  std::vector<double> server_cpus;
  const double gib = static_cast<double>(size) / (1 << 30);
  std::printf(
      "| repetition | modelplane client (MiB/s) | curl (MiB/s) | modelplane CPU (s/GiB) | "
      "curl CPU (s/GiB) |\n|---|---|---|---|---|\n");
  for (int repetition = 0; repetition < arguments.repetitions; ++repetition) {
    // Alternate who goes first so neither always inherits the other's cache or CPU state.
    Sample client_sample;
    Sample curl_sample;
    if (repetition % 2 == 0) {
      client_sample = RunClient(**client, url, arguments.hash, size);
      curl_sample = RunCurl(url, size, server_cpu);
    } else {
      curl_sample = RunCurl(url, size, server_cpu);
      client_sample = RunClient(**client, url, arguments.hash, size);
    }
    if (client_sample.bytes_per_second < 0 || curl_sample.bytes_per_second < 0) return 1;
    ours.push_back(client_sample.bytes_per_second);
    curl.push_back(curl_sample.bytes_per_second);
    ours_cpu.push_back(client_sample.cpu_seconds / gib);
    curl_cpu.push_back(curl_sample.cpu_seconds / gib);
    server_cpus.push_back(server_cpu / gib);
    std::printf("| %d | %.0f | %.0f | %.3f | %.3f |\n", repetition + 1,
                client_sample.bytes_per_second / (1 << 20),
                curl_sample.bytes_per_second / (1 << 20), ours_cpu.back(), curl_cpu.back());
    std::fflush(stdout);
  }
  const double ours_median = Median(ours);
  const double curl_median = Median(curl);
  std::printf(
      "\n| bytes | sink | client buffer | modelplane median (bytes/s) | curl median (bytes/s) | "
      "ratio | modelplane CPU median (s/GiB) | curl CPU median (s/GiB) | server chunk | "
      "server CPU median (s/GiB) |\n|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf(
      "| %llu | %s | %zu KiB | %.0f | %.0f | %.2fx | %.3f | %.3f | %s | %.3f |\n",
      static_cast<unsigned long long>(size), arguments.hash ? "sha256" : "discard",
      arguments.client_buffer_kib, ours_median, curl_median, ours_median / curl_median,
      Median(ours_cpu), Median(curl_cpu),
      arguments.sendfile ? "sendfile" : fmt::format("{} KiB copy", arguments.chunk_kib).c_str(),
      Median(server_cpus));
  return 0;
}
