// The agent (the real daemon, on the fixture's cluster) staging from a sole HTTP origin that
// stalls every answer after its first 16 KiB: with fetch.minGoodput set, the staging fails
// once a goodput window shows nothing landing, its ModelCache entry says how fast it went and
// why, and a Warning Event on the ModelCache says the same. (The fixture is the agent-process
// fixture the eviction tests share.)
#include <thread>

#include "core/http/http_server.h"
#include "tests/node-agent/eviction/cluster/agent_eviction_cluster_fixture.h"

namespace modelplane::agent::testing {
namespace {

namespace http = boost::beast::http;

// Sends 16 KiB, then stalls 3 s before each further 16 KiB.
class StallingBody final : public core::BodySource {
 public:
  explicit StallingBody(std::string data) : data_(std::move(data)) {}
  [[nodiscard]] std::uint64_t Size() const override { return data_.size(); }
  [[nodiscard]] core::Result<std::size_t> ReadAt(std::uint64_t offset,
                                                 std::span<std::byte> out) override {
    if (sent_ > 0) std::this_thread::sleep_for(std::chrono::seconds(3));
    const std::size_t count = std::min<std::size_t>({out.size(), kPiece, data_.size() - offset});
    std::memcpy(out.data(), data_.data() + offset, count);
    sent_ += count;
    return count;
  }

 private:
  static constexpr std::size_t kPiece = 16 << 10;
  std::string data_;
  std::uint64_t sent_ = 0;
};

TEST_F(AgentEvictionClusterTest, AStagingBelowTheGoodputFloorFailsSayingWhyInStatusAndEvents) {
  core::Router router;
  std::map<std::string, std::string> served;
  router.HandlePrefix(http::verb::get, "/models/", [&served](const core::ServerRequest& request) {
    const auto found = served.find(request.path.substr(std::string_view("/models/").size()));
    if (found == served.end()) return core::ServerResponse::Text(http::status::not_found, "no");
    return core::ServerResponse::Stream(std::make_unique<StallingBody>(found->second));
  });
  core::ServerOptions options;
  options.threads = 4;
  options.stop_grace = std::chrono::seconds(1);
  auto origin = core::HttpServer::Create(std::move(options), std::move(router));
  ASSERT_TRUE(origin) << origin.error().ToString();
  const std::string url = fmt::format("http://127.0.0.1:{}/models", (*origin)->port());
  const TestRevision slow = MakeRevision(
      "model-slow", 4 * kMiB, 1,
      json::array({{{"name", "origin"}, {"type", "http"}, {"http", {{"baseURL", url}}}}}));
  ASSERT_FALSE(HasFailure());
  served = slow.files;  // before the agent starts: the handler only reads it
  auto cache =
      client_->Create(core::resources::ModelCaches(), "",
                      {{"apiVersion", "modelplane.io/v1alpha1"},
                       {"kind", "ModelCache"},
                       {"metadata", {{"name", node_}}},
                       {"spec", {{"revisions", json::array({Entry(slow, false, "prestage")})}}}});
  ASSERT_TRUE(cache) << cache.error().ToString();
  source_policy_ = fmt::format("{{httpOrigins: [{{url: '{}', addresses: ['127.0.0.0/8']}}]}}", url);
  extra_config_ =
      "fetch: {rangeSize: 1Mi, rangeTimeout: 1s, minGoodput: 1Mi, goodputWindow: 4s}\n"
      "admission: {enabled: false}\n";
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  std::optional<core::api::ModelCacheStatus> status;
  const core::api::CachedRevision* entry = nullptr;
  // While it stages, status shows its pace: nothing lands, so 0 B/s and no expected finish.
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        entry = status ? Find(*status, slow) : nullptr;
        return entry != nullptr && entry->state == core::api::kCacheStateStaging &&
               entry->goodput_bytes_per_second.has_value();
      },
      kWait))
      << Log();
  EXPECT_EQ(*entry->goodput_bytes_per_second, 0);
  EXPECT_FALSE(entry->expected_finish_seconds);
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        entry = status ? Find(*status, slow) : nullptr;
        return entry != nullptr && entry->state == core::api::kCacheStateFailed;
      },
      kWait))
      << Log();
  EXPECT_EQ(entry->reason, core::api::kCacheReasonSourceTooSlow);
  EXPECT_EQ(entry->message.find("127.0.0.1"), std::string::npos)
      << "the pace goes to status, the source's answers stay in the log: " << entry->message;
  EXPECT_NE(entry->message.find("slower than the floor of 1048576 B/s"), std::string::npos)
      << entry->message;
  EXPECT_NE(entry->message.find("over the last 4 s"), std::string::npos) << entry->message;
  EXPECT_FALSE(entry->goodput_bytes_per_second) << "a failed staging reports no pace";

  std::string notes;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto events = client_->List(core::resources::Events(), "default",
                                    {.field_selector = "regarding.name=" + node_});
        if (!events) return false;
        notes.clear();
        for (const json& event : events->items) {
          if (event.value("type", "") == "Warning") notes += event.value("note", "") + "\n";
        }
        return notes.find("slower than the floor") != std::string::npos;
      },
      kWait))
      << notes << Log();
}

}  // namespace
}  // namespace modelplane::agent::testing
