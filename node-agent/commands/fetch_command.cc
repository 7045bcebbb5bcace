#include "node-agent/commands/fetch_command.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/peer_identity.h"
#include "core/clock/clock.h"
#include "core/config/byte_size.h"
#include "core/config/duration.h"
#include "core/digest/file_set_tree.h"
#include "core/io/bounded_file.h"
#include "core/log/log_level.h"
#include "core/log/logger.h"
#include "core/pki/peer_ticket.h"
#include "node-agent/commands/progress_line.h"
#include "node-agent/commands/revision_file.h"
#include "node-agent/fetch/fetch_engine.h"
#include "node-agent/fetch/source_order.h"
#include "node-agent/peer/peer_range_source.h"
#include "node-agent/sources/revision_sources.h"

namespace modelplane::agent {
namespace {

struct FetchFlags {
  std::string revision_file;
  std::string cache_root;
  std::vector<std::string> peers;
  std::string peer_ca;
  std::string peer_certificate;
  std::string peer_key;
  std::string peer_node;  // the node whose per-node certificate the peers must present
  std::string peer_token_key_file;
  std::string peer_ticket_file;  // the operator's ticket for this node and revision
  bool peer_plain_http = false;
  bool skip_spec_sources = false;
  std::string secrets_directory;
  std::string range_size = "8Mi";
  std::size_t in_flight = 16;
  std::size_t files_in_flight = 8;
  std::string buffer_pool = "256Mi";
  std::string range_timeout = "60s";
  std::string min_goodput = "0";
  std::string goodput_window = "60s";
  std::string deadline = "0s";
  std::string capacity;
  bool no_direct_io = false;
  std::string log_level = "warn";
};

int RunFetch(const FetchFlags& flags) {
  auto fail_usage = [](const core::Error& error) {
    std::fprintf(stderr, "modelplane-node-agent fetch: %s\n", error.ToString().c_str());
    return 2;
  };
  auto loaded = LoadRevisionFile(flags.revision_file);
  if (!loaded) return fail_usage(loaded.error());
  auto request = MakeFetchRequest(*loaded);
  if (!request) return fail_usage(request.error());
  auto range_size = core::ParseByteSize(flags.range_size);
  auto pool = core::ParseByteSize(flags.buffer_pool);
  auto timeout = core::ParseDuration(flags.range_timeout);
  if (!range_size) return fail_usage(range_size.error());
  if (!pool) return fail_usage(pool.error());
  if (!timeout) return fail_usage(timeout.error());
  auto min_goodput = core::ParseByteSize(flags.min_goodput);
  auto goodput_window = core::ParseDuration(flags.goodput_window);
  auto deadline = core::ParseDuration(flags.deadline);
  if (!min_goodput) return fail_usage(min_goodput.error().Wrap("--min-goodput"));
  if (!goodput_window) return fail_usage(goodput_window.error().Wrap("--goodput-window"));
  if (!deadline) return fail_usage(deadline.error().Wrap("--deadline"));
  std::uint64_t capacity = 0;
  if (!flags.capacity.empty()) {
    auto parsed = core::ParseByteSize(flags.capacity);
    if (!parsed) return fail_usage(parsed.error());
    capacity = *parsed;
  }
  auto level = core::ParseLogLevel(flags.log_level);
  if (!level) return fail_usage(level.error());
  auto logger = core::Logger::Create({.component = "node-agent", .level = *level});
  if (!logger) return fail_usage(logger.error());

  core::SystemClock clock;
  std::vector<std::unique_ptr<RangeSource>> owned;
  std::optional<PeerTokenKey> token_key;
  if (!flags.peer_token_key_file.empty()) {
    auto key = PeerTokenKey::Load(flags.peer_token_key_file);
    if (!key) return fail_usage(key.error());
    token_key = std::move(*key);
  }
  PeerTicketHolding ticket;
  if (!flags.peer_ticket_file.empty()) {
    auto text = core::ReadBoundedFile(flags.peer_ticket_file,
                                      core::kPeerTicketHeader.size() + core::kMaxPeerTicketBytes);
    if (!text) return fail_usage(text.error().Wrap("--peer-ticket-file"));
    std::vector<core::Sha256Bytes> digests;
    for (const FetchFile& file : request->files) digests.push_back(file.sha256);
    while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back()))) {
      text->pop_back();
    }
    ticket = {.ticket = std::move(*text),
              .files = std::make_shared<const core::FileSetTree>(core::FileSetTree::Of(digests))};
  }
  for (const std::string& peer : flags.peers) {
    PeerRangeSourceOptions options{.endpoint = peer, .token_key = token_key, .ticket = ticket};
    if (!flags.peer_plain_http) {
      options.tls = core::TlsClientOptions{.ca_file = flags.peer_ca,
                                           .certificate_chain_file = flags.peer_certificate,
                                           .private_key_file = flags.peer_key};
      if (!flags.peer_node.empty()) {
        options.tls->server_name = core::api::PeerIdentityName(flags.peer_node);
      }
    }
    auto source = PeerRangeSource::Create(std::move(options), clock);
    if (!source) return fail_usage(source.error().Wrap("peer " + peer));
    owned.push_back(std::move(*source));
  }
  if (!flags.skip_spec_sources) {
    SourceEnvironment environment;
    if (!flags.secrets_directory.empty()) {
      environment.secrets = std::make_shared<DirectorySecrets>(flags.secrets_directory);
    }
    const auto& spec_sources = loaded->revision.spec.sources;
    auto sources =
        CreateRevisionSources(spec_sources, OperatorNamedGrants(spec_sources), environment);
    if (!sources) return fail_usage(sources.error());
    for (auto& source : *sources) owned.push_back(std::move(source));
  }
  SortByTierPreference(owned);
  for (const auto& source : owned) request->sources.push_back(source.get());

  auto store = CacheStore::Open({.root = flags.cache_root,
                                 .capacity_bytes = capacity,
                                 .allow_direct_io = !flags.no_direct_io});
  if (!store) return fail_usage(store.error());
  SourceHealth health(clock, std::chrono::minutes(5));
  auto engine = FetchEngine::Create(
      {.range_size = *range_size,
       .max_in_flight = flags.in_flight,
       .files_in_flight = flags.files_in_flight,
       .buffer_pool_bytes = *pool,
       .range_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout),
       .goodput_window = std::chrono::duration_cast<std::chrono::milliseconds>(*goodput_window),
       .min_goodput = *min_goodput,
       .deadline = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline)},
      {.store = store->get(), .health = &health, .logger = &*logger, .clock = &clock});
  if (!engine) return fail_usage(engine.error());

  // SIGINT/SIGTERM cancel the fetch cleanly, keeping its progress for the next run. They are
  // blocked and taken by a watcher thread: Cancel() takes a mutex, which a handler must not.
  // SIGUSR1, also blocked, is how the fetch tells the watcher it finished: a timed wait for
  // the watcher to notice on its own added up to 100 ms to every fetch's exit.
  core::CancellationToken cancel;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::jthread signal_watcher([&] {
    int signal = 0;
    if (sigwait(&signals, &signal) == 0 && signal != SIGUSR1) cancel.Cancel();
  });
  auto stop_watcher = [&] {
    pthread_kill(signal_watcher.native_handle(), SIGUSR1);
    signal_watcher.join();
  };

  ProgressLine progress;
  FetchReport report;
  auto result = (*engine)->Fetch(
      *request, cancel, [&](const FetchProgress& now) { progress.Update(now); }, &report);
  stop_watcher();
  progress.Finish();
  std::printf("%s\n", ToJson(report).dump(2).c_str());
  if (!result) {
    std::fprintf(stderr, "modelplane-node-agent fetch: %s\n", result.error().ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

Subcommand AddFetchCommand(CLI::App& parent) {
  auto flags = std::make_shared<FetchFlags>();
  CLI::App* app = parent.add_subcommand(
      "fetch", "Stage a ModelRevision manifest into a cache root and print the report as JSON");
  app->add_option("--revision", flags->revision_file, "ModelRevision manifest (YAML or JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--cache-root", flags->cache_root, "the cache root folder")->required();
  app->add_option("--peer", flags->peers,
                  "a peer agent host:port, tried before the spec's sources");
  app->add_option("--peer-ca", flags->peer_ca, "CA that signs peer certificates (PEM)");
  app->add_option("--peer-cert", flags->peer_certificate, "client certificate for mutual TLS");
  app->add_option("--peer-key", flags->peer_key, "client key for mutual TLS");
  app->add_option("--peer-node", flags->peer_node,
                  "the node the peers' certificates must name (per-node certificates, "
                  "docs/peer.md) instead of the address dialed");
  app->add_option("--peer-token-key-file", flags->peer_token_key_file,
                  "shared key that signs peer request tokens");
  app->add_option("--peer-ticket-file", flags->peer_ticket_file,
                  "the operator's peer ticket for this node and revision (a ModelCache entry's "
                  "peerTicket), for peers that check scope (docs/peer.md)")
      ->check(CLI::ExistingFile);
  app->add_flag("--peer-plain-http", flags->peer_plain_http,
                "talk to peers over plain HTTP (loopback benchmarks only)");
  app->add_flag("--no-spec-sources", flags->skip_spec_sources,
                "use only --peer sources, not the revision's spec.sources");
  app->add_option("--secrets-dir", flags->secrets_directory,
                  "folder holding one subfolder per credentials Secret");
  app->add_option("--range-size", flags->range_size, "bytes per range request (default 8Mi)");
  app->add_option("--in-flight", flags->in_flight, "range requests in flight (default 16)")
      ->check(CLI::Range(1, 1024));
  app->add_option("--files-in-flight", flags->files_in_flight,
                  "files fetched and hashed at once (default 8)")
      ->check(CLI::Range(1, 256));
  app->add_option("--buffer-pool", flags->buffer_pool,
                  "memory for ranges in flight (default 256Mi)");
  app->add_option("--range-timeout", flags->range_timeout, "deadline of one range (default 60s)");
  app->add_option("--min-goodput", flags->min_goodput,
                  "give up when fewer bytes a second land over --goodput-window (default 0: "
                  "never)");
  app->add_option("--goodput-window", flags->goodput_window,
                  "the window goodput is measured over (default 60s)");
  app->add_option("--deadline", flags->deadline,
                  "give up when the fetch is not done by then (default 0s: none)");
  app->add_option("--capacity", flags->capacity, "bytes the cache may hold (default: the disk)");
  app->add_flag("--no-direct-io", flags->no_direct_io, "write through the page cache");
  app->add_option("--log-level", flags->log_level, "trace|debug|info|warn|error (default warn)");
  return {.app = app, .run = [flags] { return RunFetch(*flags); }};
}

}  // namespace modelplane::agent
