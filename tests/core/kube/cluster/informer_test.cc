// Informers and watches against the real API server: convergence across a kube-apiserver
// kill and restart, and relisting after etcd compaction expires the watch's resourceVersion.
#include "core/kube/informer.h"

#include <map>

#include <gtest/gtest.h>

#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::core::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

using InformerTest = ClusterTest;

// The informer's store must equal the server: same keys, same resourceVersions.
::testing::AssertionResult StoreMatchesServer(const Informer& informer, KubeClient& client,
                                              const ResourceType& type, const std::string& ns,
                                              const std::string& selector) {
  auto server = client.ListAll(type, ns, {.label_selector = selector});
  if (!server) return ::testing::AssertionFailure() << server.error().ToString();
  std::map<std::string, std::string> expected;
  for (const auto& item : server->items) {
    expected[ObjectStore::KeyOf(item)] = item["metadata"]["resourceVersion"];
  }
  std::map<std::string, std::string> actual;
  for (const auto& object : informer.store().List()) {
    actual[ObjectStore::KeyOf(*object)] = (*object)["metadata"]["resourceVersion"];
  }
  if (expected == actual) return ::testing::AssertionSuccess();
  std::size_t differing = 0;
  for (const auto& [key, version] : expected) differing += actual[key] != version;
  return ::testing::AssertionFailure() << "server has " << expected.size() << " objects, store "
                                       << actual.size() << ", " << differing << " differ";
}

// Updates with retries, for writes made while kube-apiserver is down or coming back.
void UpdateWithRetry(KubeClient& client, const std::string& ns, const std::string& name,
                     const std::string& value) {
  for (int attempt = 0; attempt < 600; ++attempt) {
    auto patched = client.Patch(resources::ConfigMaps(), ns, name, PatchType::kMerge,
                                {{"data", {{"value", value}}}});
    if (patched) return;
    if (!patched.error().retryable()) FAIL() << patched.error().ToString();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL() << "could not update " << name << " within 60 s";
}

TEST_F(InformerTest, ConvergesAcrossApiServerKillAndRestart) {
  if (cluster_script_.empty()) GTEST_SKIP() << "MODELPLANE_TEST_CLUSTER is not set";
  constexpr int kObjects = 100;
  constexpr int kUpdates = 1000;
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(client_->Create(
        resources::ConfigMaps(), namespace_,
        ConfigMap(namespace_, "cm-" + std::to_string(i), {{"value", "0"}}, {{"set", "restart"}})));
  }
  InformerOptions options{.type = resources::ConfigMaps(),
                          .namespace_name = namespace_,
                          .label_selector = "set=restart",
                          .watch_timeout_seconds = 60,
                          .initial_backoff = std::chrono::milliseconds(50),
                          .max_backoff = std::chrono::milliseconds(1000)};
  Informer informer(*client_, *watcher_, options, clock_);
  std::atomic<int> updates_seen{0};
  informer.AddHandlers({.on_update = [&](const ObjectPtr&, const ObjectPtr&) { updates_seen++; }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
  EXPECT_EQ(informer.store().Size(), static_cast<std::size_t>(kObjects));

  // Half the updates before the restart, half during and after it.
  for (int u = 0; u < kUpdates / 2; ++u) {
    UpdateWithRetry(*client_, namespace_, "cm-" + std::to_string(u % kObjects), std::to_string(u));
  }
  std::string output;
  std::thread restarter(
      [&] { EXPECT_EQ(Cluster("restart kube-apiserver", &output), 0) << output; });
  for (int u = kUpdates / 2; u < kUpdates; ++u) {
    UpdateWithRetry(*client_, namespace_, "cm-" + std::to_string(u % kObjects), std::to_string(u));
  }
  restarter.join();

  EXPECT_TRUE(WaitUntil(
      [&] {
        return static_cast<bool>(StoreMatchesServer(informer, *client_, resources::ConfigMaps(),
                                                    namespace_, "set=restart"));
      },
      std::chrono::seconds(60)));
  EXPECT_TRUE(
      StoreMatchesServer(informer, *client_, resources::ConfigMaps(), namespace_, "set=restart"));
  EXPECT_GE(informer.stats().watches.load(), 2u) << "the watch must have been re-established";
  for (const auto& object : informer.store().List()) {
    const int index = std::stoi((*object)["metadata"]["name"].get<std::string>().substr(3));
    EXPECT_EQ((*object)["data"]["value"], std::to_string(kUpdates - kObjects + index));
  }
  informer.Stop();
}

// Returns the etcd revision (= resourceVersion) of a fresh write.
std::string CurrentRevision(KubeClient& client, const std::string& ns) {
  auto marker = client.Patch(
      resources::ConfigMaps(), ns, "revision-marker", PatchType::kApply,
      ConfigMap(
          ns, "revision-marker",
          {{"now", std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())}}),
      {.field_manager = "test", .force = true});
  return marker ? (*marker)["metadata"]["resourceVersion"].get<std::string>() : "";
}

TEST_F(InformerTest, WatchFromCompactedVersionIsGone) {
  if (cluster_script_.empty()) GTEST_SKIP() << "MODELPLANE_TEST_CLUSTER is not set";
  const std::string old_version = CurrentRevision(*client_, namespace_);
  ASSERT_FALSE(old_version.empty());
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(CurrentRevision(*client_, namespace_).empty());
  const std::string now = CurrentRevision(*client_, namespace_);
  std::string output;
  ASSERT_EQ(Cluster("etcdctl compact " + now, &output), 0) << output;

  CancellationToken cancel;
  WatchOptions options{.resource_version = old_version, .timeout_seconds = 10};
  Status watched = watcher_->Watch(
      resources::ConfigMaps(), namespace_, options, [](const WatchEvent&) { return Status{}; },
      cancel);
  ASSERT_FALSE(watched.has_value());
  EXPECT_EQ(watched.error().code(), ErrorCode::kGone) << watched.error().ToString();
}

TEST_F(InformerTest, RelistsAfterCompactionAndConverges) {
  if (cluster_script_.empty()) GTEST_SKIP() << "MODELPLANE_TEST_CLUSTER is not set";
  ASSERT_TRUE(
      client_->Create(resources::ConfigMaps(), namespace_,
                      ConfigMap(namespace_, "watched", {{"value", "0"}}, {{"set", "compaction"}})));
  // Short watches re-connect from the informer's last resourceVersion every two seconds.
  // Its selector matches one object that we leave alone and bookmarks are off, so that
  // version stays old while writes elsewhere move etcd on; compaction then expires it.
  InformerOptions options{.type = resources::ConfigMaps(),
                          .namespace_name = namespace_,
                          .label_selector = "set=compaction",
                          .watch_timeout_seconds = 2,
                          .allow_bookmarks = false,
                          .initial_backoff = std::chrono::milliseconds(50),
                          .max_backoff = std::chrono::milliseconds(500)};
  Informer informer(*client_, *watcher_, options, clock_);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
  for (int i = 0; i < 20; ++i) ASSERT_FALSE(CurrentRevision(*client_, namespace_).empty());
  std::string output;
  ASSERT_EQ(Cluster("etcdctl compact " + CurrentRevision(*client_, namespace_), &output), 0)
      << output;
  // The watch running now keeps going; the next one resumes from the compacted version.
  EXPECT_TRUE(WaitUntil([&] { return informer.stats().expired_relists.load() >= 1; },
                        std::chrono::seconds(30)))
      << "last error: " << informer.LastError() << ", watches " << informer.stats().watches.load()
      << ", resourceVersion " << informer.LastResourceVersion();
  EXPECT_NE(informer.LastError().find("gone"), std::string::npos) << informer.LastError();
  // After the relist the informer keeps following changes.
  ASSERT_TRUE(client_->Create(
      resources::ConfigMaps(), namespace_,
      ConfigMap(namespace_, "added-later", {{"value", "1"}}, {{"set", "compaction"}})));
  ASSERT_TRUE(client_->Delete(resources::ConfigMaps(), namespace_, "watched"));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return static_cast<bool>(StoreMatchesServer(informer, *client_, resources::ConfigMaps(),
                                                    namespace_, "set=compaction"));
      },
      std::chrono::seconds(30)));
  EXPECT_NE(informer.store().Get(namespace_ + "/added-later"), nullptr);
  EXPECT_EQ(informer.store().Get(namespace_ + "/watched"), nullptr);
  informer.Stop();
}

TEST_F(InformerTest, HandlersSeeAddUpdateDeleteInOrder) {
  InformerOptions options{.type = resources::ConfigMaps(), .namespace_name = namespace_};
  Informer informer(*client_, *watcher_, options, clock_);
  std::mutex mutex;
  std::vector<std::string> seen;
  informer.AddHandlers({
      .on_add =
          [&](const ObjectPtr& o) {
            std::lock_guard lock(mutex);
            seen.push_back("add " + (*o)["metadata"]["name"].get<std::string>());
          },
      .on_update =
          [&](const ObjectPtr&, const ObjectPtr& o) {
            std::lock_guard lock(mutex);
            seen.push_back("update " + (*o)["metadata"]["name"].get<std::string>());
          },
      .on_delete =
          [&](const ObjectPtr& o) {
            std::lock_guard lock(mutex);
            seen.push_back("delete " + (*o)["metadata"]["name"].get<std::string>());
          },
  });
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
  ASSERT_TRUE(client_->Create(resources::ConfigMaps(), namespace_,
                              ConfigMap(namespace_, "x", {{"v", "1"}})));
  ASSERT_TRUE(client_->Patch(resources::ConfigMaps(), namespace_, "x", PatchType::kMerge,
                             {{"data", {{"v", "2"}}}}));
  ASSERT_TRUE(client_->Delete(resources::ConfigMaps(), namespace_, "x"));
  auto contains_all = [&] {
    std::lock_guard lock(mutex);
    return std::find(seen.begin(), seen.end(), "delete x") != seen.end();
  };
  ASSERT_TRUE(WaitUntil(contains_all, std::chrono::seconds(20)));
  std::lock_guard lock(mutex);
  std::vector<std::string> about_x;
  for (const auto& entry : seen) {
    if (entry.ends_with(" x")) about_x.push_back(entry);
  }
  EXPECT_EQ(about_x, (std::vector<std::string>{"add x", "update x", "delete x"}));
  EXPECT_EQ(informer.store().Get(namespace_ + "/x"), nullptr);
}

}  // namespace
}  // namespace modelplane::core::testing

namespace modelplane::core::testing {
namespace {

TEST_F(InformerTest, ResyncReannouncesEveryObjectAndIndexesWork) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_->Create(resources::ConfigMaps(), namespace_,
                                ConfigMap(namespace_, "r-" + std::to_string(i), {{"v", "1"}},
                                          {{"set", "resync"}, {"tier", i < 2 ? "hot" : "cold"}})));
  }
  InformerOptions options{.type = resources::ConfigMaps(),
                          .namespace_name = namespace_,
                          .label_selector = "set=resync",
                          .resync_period = std::chrono::seconds(1)};
  Informer informer(*client_, *watcher_, options, clock_);
  informer.AddIndexer("tier", [](const nlohmann::json& object) -> std::vector<std::string> {
    return {object["metadata"]["labels"].value("tier", "")};
  });
  std::atomic<int> same_object_updates{0};
  informer.AddHandlers({.on_update = [&](const ObjectPtr& before, const ObjectPtr& after) {
    if (before == after) same_object_updates++;
  }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
  EXPECT_TRUE(informer.HasSynced());
  EXPECT_EQ(informer.store().ByIndex("tier", "hot").size(), 2u);
  EXPECT_EQ(informer.store().ByIndex("tier", "cold").size(), 3u);
  // Two resync periods: every object re-announced at least once, with no change on the server.
  EXPECT_TRUE(
      WaitUntil([&] { return same_object_updates.load() >= 10; }, std::chrono::seconds(10)));
  informer.Stop();
}

}  // namespace
}  // namespace modelplane::core::testing
