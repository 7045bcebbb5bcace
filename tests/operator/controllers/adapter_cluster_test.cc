// LoRA adapter revisions placed beside their base by the operator's controllers, in-process
// against the real API server and the KWOK nodes of e2e/cluster.sh: an adapter (spec.base names
// the base's digest) gets an entry on exactly the nodes that list its base, follows the base
// when it moves and goes when it goes, and ignores a revision with the same digest in another
// namespace.
#include <gmock/gmock.h>

#include "tests/operator/controllers/controllers_fixture.h"

namespace modelplane::controller {
namespace {

using cluster_testing::ControllersTest;
using cluster_testing::kWait;
using cluster_testing::RevisionWithContent;
using core::testing::WaitUntil;
using nlohmann::json;

json Adapter(const std::string& ns, const std::string& name, const std::string& base_digest) {
  json adapter = RevisionWithContent(ns, name, 'd', 0);
  adapter["spec"].erase("prestage");
  adapter["spec"]["files"] = json::array({{{"path", "adapter_model.safetensors"},
                                           {"size", 2048},
                                           {"sha256", "sha256:" + std::string(64, 'e')},
                                           {"role", "adapter"}},
                                          {{"path", "adapter_config.json"},
                                           {"size", 300},
                                           {"sha256", "sha256:" + std::string(64, 'f')},
                                           {"role", "adapter"}}});
  adapter["spec"]["base"] = {{"digest", base_digest}, {"name", "base"}};
  return adapter;
}

class AdapterClusterTest : public ControllersTest {};

TEST_F(AdapterClusterTest, AnAdapterIsStagedBesideItsBaseAndFollowsIt) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "base", 'a', 2)));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return CachesListing("base").size() == 2 &&
               !RevisionStatus("base").value("digest", "").empty();
      },
      kWait));
  const std::string digest = RevisionStatus("base")["digest"];

  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Adapter(namespace_, "lora", digest)));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("lora") == CachesListing("base"); }, kWait))
      << "adapter on " << ::testing::PrintToString(CachesListing("lora"));
  EXPECT_NE(RevisionStatus("lora").value("digest", ""), digest);

  // The same base digest in another namespace places nothing there, nor here.
  const std::string other = CreateOtherNamespace();
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), other,
                              Adapter(other, "foreign-lora", digest)));
  ASSERT_TRUE(WaitForRevisionPasses());
  auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
  ASSERT_TRUE(caches);
  for (const json& cache : caches->items) {
    for (const std::string& key : SpecRevisionKeys(cache)) {
      EXPECT_NE(key, other + "/foreign-lora")
          << "an adapter is placed only beside its namespace's base";
    }
  }

  // The base moves to one node: the adapter follows; the base goes: so does the adapter.
  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, "base",
                             core::PatchType::kMerge, {{"spec", {{"prestage", {{"nodes", 1}}}}}}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return CachesListing("base").size() == 1 && CachesListing("lora") == CachesListing("base");
      },
      kWait))
      << "adapter on " << ::testing::PrintToString(CachesListing("lora"));
  ASSERT_TRUE(client_->Delete(core::resources::ModelRevisions(), namespace_, "base"));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("lora").empty(); }, kWait));
}

TEST_F(AdapterClusterTest, ARevokedBaseTakesItsAdapterWithIt) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              RevisionWithContent(namespace_, "base", 'a', 2)));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return CachesListing("base").size() == 2 &&
               !RevisionStatus("base").value("digest", "").empty();
      },
      kWait));
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Adapter(namespace_, "lora", RevisionStatus("base")["digest"])));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("lora").size() == 2; }, kWait));
  ASSERT_TRUE(client_->Patch(core::resources::ModelRevisions(), namespace_, "base",
                             core::PatchType::kMerge, {{"spec", {{"revoked", true}}}}));
  ASSERT_TRUE(WaitUntil([&] { return CachesListing("lora").empty(); }, kWait))
      << "adapter still on " << ::testing::PrintToString(CachesListing("lora"));
}

}  // namespace
}  // namespace modelplane::controller
