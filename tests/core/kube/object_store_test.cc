#include "core/kube/object_store.h"

#include <gtest/gtest.h>

namespace modelplane::core {
namespace {

using nlohmann::json;

ObjectPtr Pod(const std::string& ns, const std::string& name, const std::string& node) {
  return std::make_shared<const json>(
      json{{"metadata", {{"namespace", ns}, {"name", name}}}, {"spec", {{"nodeName", node}}}});
}

TEST(ObjectStoreTest, KeysAreNamespaceSlashNameOrName) {
  EXPECT_EQ(ObjectStore::KeyOf(*Pod("ns", "a", "")), "ns/a");
  EXPECT_EQ(ObjectStore::KeyOf(json{{"metadata", {{"name", "node-1"}}}}), "node-1");
}

TEST(ObjectStoreTest, IndexesFollowUpdatesAndDeletes) {
  ObjectStore store;
  store.AddIndexer("namespace", indexers::ByNamespace());
  store.AddIndexer("node", indexers::ByNodeName());
  store.Upsert(Pod("a", "p1", "node-1"));
  store.Upsert(Pod("a", "p2", "node-1"));
  store.Upsert(Pod("b", "p3", "node-2"));
  EXPECT_EQ(store.ByIndex("node", "node-1").size(), 2u);
  EXPECT_EQ(store.ByIndex("namespace", "b").size(), 1u);

  ObjectPtr previous = store.Upsert(Pod("a", "p2", "node-2"));  // rescheduled
  ASSERT_NE(previous, nullptr);
  EXPECT_EQ((*previous)["spec"]["nodeName"], "node-1");
  EXPECT_EQ(store.ByIndex("node", "node-1").size(), 1u);
  EXPECT_EQ(store.ByIndex("node", "node-2").size(), 2u);

  EXPECT_NE(store.Remove("b/p3"), nullptr);
  EXPECT_EQ(store.Remove("b/p3"), nullptr);
  EXPECT_EQ(store.ByIndex("namespace", "b").size(), 0u);
  EXPECT_EQ(store.Size(), 2u);
  EXPECT_TRUE(store.ByIndex("no-such-index", "x").empty());
}

TEST(ObjectStoreTest, ReplaceReturnsVanishedObjectsAndReindexes) {
  ObjectStore store;
  store.AddIndexer("node", indexers::ByNodeName());
  store.Upsert(Pod("a", "keep", "node-1"));
  store.Upsert(Pod("a", "gone", "node-1"));
  auto gone = store.Replace({Pod("a", "keep", "node-3"), Pod("a", "new", "node-3")});
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(ObjectStore::KeyOf(*gone[0]), "a/gone");
  EXPECT_TRUE(store.ByIndex("node", "node-1").empty());
  EXPECT_EQ(store.ByIndex("node", "node-3").size(), 2u);
}

TEST(ObjectStoreTest, IndexerAddedLateCoversExistingObjects) {
  ObjectStore store;
  store.Upsert(Pod("a", "p1", "node-1"));
  store.AddIndexer("node", indexers::ByNodeName());
  EXPECT_EQ(store.ByIndex("node", "node-1").size(), 1u);
}

}  // namespace
}  // namespace modelplane::core
