// CRUD, optimistic concurrency, server-side apply, status subresource and paging against the
// real kube-apiserver.
#include <gtest/gtest.h>

#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::core::testing {
namespace {

using nlohmann::json;

using RequestsTest = ClusterTest;

TEST_F(RequestsTest, CrudAndConflictOnStaleResourceVersion) {
  auto created = client_->Create(resources::ConfigMaps(), namespace_,
                                 ConfigMap(namespace_, "weights", {{"a", "1"}}));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  const std::string uid = (*created)["metadata"]["uid"];
  auto duplicate = client_->Create(resources::ConfigMaps(), namespace_,
                                   ConfigMap(namespace_, "weights", {{"a", "1"}}));
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().code(), ErrorCode::kAlreadyExists);

  json first = *created;
  first["data"]["a"] = "2";
  auto updated = client_->Update(resources::ConfigMaps(), first);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  EXPECT_EQ((*updated)["data"]["a"], "2");

  // `first` still carries the old resourceVersion: the server must refuse it.
  first["data"]["a"] = "3";
  auto stale = client_->Update(resources::ConfigMaps(), first);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), ErrorCode::kConflict);
  EXPECT_TRUE(stale.error().retryable());

  auto fetched = client_->Get(resources::ConfigMaps(), namespace_, "weights");
  ASSERT_TRUE(fetched.has_value());
  EXPECT_EQ((*fetched)["data"]["a"], "2");

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  auto refused = client_->Delete(resources::ConfigMaps(), namespace_, "weights", wrong_uid);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kConflict);
  DeleteOptions right_uid;
  right_uid.precondition_uid = uid;
  ASSERT_TRUE(client_->Delete(resources::ConfigMaps(), namespace_, "weights", right_uid));
  auto gone = client_->Get(resources::ConfigMaps(), namespace_, "weights");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
}

TEST_F(RequestsTest, ServerSideApplyConflictsAndForce) {
  const json intent = ConfigMap(namespace_, "applied", {{"owner", "alpha"}});
  PatchOptions alpha{.field_manager = "alpha"};
  auto applied = client_->Patch(resources::ConfigMaps(), namespace_, "applied", PatchType::kApply,
                                intent, alpha);
  ASSERT_TRUE(applied.has_value()) << applied.error().ToString();

  PatchOptions beta{.field_manager = "beta"};
  auto conflicting =
      client_->Patch(resources::ConfigMaps(), namespace_, "applied", PatchType::kApply,
                     ConfigMap(namespace_, "applied", {{"owner", "beta"}}), beta);
  ASSERT_FALSE(conflicting.has_value()) << "beta must not silently take alpha's field";
  EXPECT_EQ(conflicting.error().code(), ErrorCode::kConflict);

  beta.force = true;
  auto forced = client_->Patch(resources::ConfigMaps(), namespace_, "applied", PatchType::kApply,
                               ConfigMap(namespace_, "applied", {{"owner", "beta"}}), beta);
  ASSERT_TRUE(forced.has_value()) << forced.error().ToString();
  EXPECT_EQ((*forced)["data"]["owner"], "beta");
  bool beta_manages = false;
  for (const auto& entry : (*forced)["metadata"]["managedFields"]) {
    if (entry["manager"] == "beta" && entry["operation"] == "Apply") beta_manages = true;
  }
  EXPECT_TRUE(beta_manages);

  auto no_manager =
      client_->Patch(resources::ConfigMaps(), namespace_, "applied", PatchType::kApply, intent, {});
  ASSERT_FALSE(no_manager.has_value());
  EXPECT_EQ(no_manager.error().code(), ErrorCode::kInvalidArgument);
}

json MinimalModelRevision(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevision"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"modelName", "tiny"},
            {"format", "safetensors"},
            {"files",
             {{{"path", "model.safetensors"},
               {"size", 1024},
               {"sha256", "sha256:" + std::string(64, 'a')},
               {"role", "weights"}}}},
            {"engine", {{"name", "vllm"}, {"version", "0.6.3"}}},
            {"sources",
             {{{"name", "origin"},
               {"type", "http"},
               {"http", {{"baseURL", "http://127.0.0.1:1/models"}}}}}}}}};
}

TEST_F(RequestsTest, StatusSubresourceChangesOnlyStatus) {
  auto created = client_->Create(resources::ModelRevisions(), namespace_,
                                 MinimalModelRevision(namespace_, "tiny"));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();

  json with_status = *created;
  with_status["status"] = {{"phase", "Staging"}, {"observedGeneration", 1}};
  with_status["spec"]["modelName"] = "renamed through status";  // must be ignored
  auto status_written = client_->UpdateStatus(resources::ModelRevisions(), with_status);
  ASSERT_TRUE(status_written.has_value()) << status_written.error().ToString();
  EXPECT_EQ((*status_written)["status"]["phase"], "Staging");
  EXPECT_EQ((*status_written)["spec"]["modelName"], "tiny");

  json spec_change = *status_written;
  spec_change["spec"]["modelName"] = "renamed";
  spec_change["status"]["phase"] = "Ready";  // must be ignored on the main resource
  auto spec_written = client_->Update(resources::ModelRevisions(), spec_change);
  ASSERT_TRUE(spec_written.has_value()) << spec_written.error().ToString();
  EXPECT_EQ((*spec_written)["spec"]["modelName"], "renamed");
  EXPECT_EQ((*spec_written)["status"]["phase"], "Staging");

  // A merge patch of the status subresource, as controllers do it.
  auto patched = client_->Patch(resources::ModelRevisions(), namespace_, "tiny", PatchType::kMerge,
                                {{"status", {{"phase", "Ready"}}}}, {.subresource = "status"});
  ASSERT_TRUE(patched.has_value()) << patched.error().ToString();
  EXPECT_EQ((*patched)["status"]["phase"], "Ready");
}

TEST_F(RequestsTest, PagingOver2000Objects) {
  constexpr int kObjects = 2000;
  for (int i = 0; i < kObjects; ++i) {
    auto created = client_->Create(resources::ConfigMaps(), namespace_,
                                   ConfigMap(namespace_, "page-" + std::to_string(i),
                                             {{"i", std::to_string(i)}}, {{"set", "paging"}}));
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }
  ListOptions options;
  options.limit = 300;
  options.label_selector = "set=paging";
  int pages = 0;
  std::set<std::string> seen;
  while (true) {
    auto page = client_->List(resources::ConfigMaps(), namespace_, options);
    ASSERT_TRUE(page.has_value()) << page.error().ToString();
    ++pages;
    EXPECT_LE(page->items.size(), 300u);
    for (const auto& item : page->items) {
      EXPECT_EQ(item["kind"], "ConfigMap");
      seen.insert(item["metadata"]["name"].get<std::string>());
    }
    if (page->continue_token.empty()) break;
    options.continue_token = page->continue_token;
  }
  EXPECT_EQ(pages, 7);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kObjects));

  auto all = client_->ListAll(resources::ConfigMaps(), namespace_,
                              {.label_selector = "set=paging", .limit = 500});
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  EXPECT_EQ(all->items.size(), static_cast<std::size_t>(kObjects));
  EXPECT_FALSE(all->resource_version.empty());
}

TEST_F(RequestsTest, UnknownResourcesAndBadInputGiveClearErrors) {
  ResourceType bogus{"modelplane.io", "v1alpha1", "nonexistents", "Nonexistent", true};
  auto missing = client_->Get(bogus, namespace_, "x");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  json invalid = ConfigMap(namespace_, "Not_A_Valid_Name", {{"a", "1"}});
  auto rejected = client_->Create(resources::ConfigMaps(), namespace_, invalid);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(rejected.error().retryable());
}

}  // namespace
}  // namespace modelplane::core::testing
