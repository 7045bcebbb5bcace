// Typed access for our CRDs and built-in kinds against the real API server.
#include "core/kube/typed_client.h"

#include <gtest/gtest.h>

#include "tests/core/kube/cluster/cluster_fixture.h"

namespace modelplane::core::testing {
namespace {

using TypedClientTest = ClusterTest;

api::ModelRevision SampleRevision(const std::string& ns) {
  api::ModelRevision revision;
  revision.metadata.name = "typed";
  revision.metadata.namespace_name = ns;
  revision.spec.model_name = "typed model";
  revision.spec.format = "safetensors";
  revision.spec.files.push_back({.path = "model.safetensors",
                                 .size = 4096,
                                 .sha256 = "sha256:" + std::string(64, 'b'),
                                 .role = "weights"});
  revision.spec.engine = {.name = "vllm", .version = "0.6.3"};
  api::ModelSource source;
  source.name = "origin";
  source.type = "http";
  source.http = api::HttpLocation{.base_url = "http://127.0.0.1:1/models"};
  revision.spec.sources.push_back(source);
  return revision;
}

TEST_F(TypedClientTest, ModelRevisionRoundTripAndStatus) {
  TypedClient<api::ModelRevision> revisions(*client_);
  auto created = revisions.Create(SampleRevision(namespace_));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_FALSE(created->metadata.uid.empty());
  EXPECT_EQ(created->spec.files.at(0).size, 4096);

  api::ModelRevision with_status = *created;
  with_status.status = api::ModelRevisionStatus{};
  with_status.status->phase = "Staging";
  with_status.status->desired_nodes = 2;
  auto updated = revisions.UpdateStatus(with_status);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  ASSERT_TRUE(updated->status.has_value());
  EXPECT_EQ(updated->status->phase, "Staging");

  auto listed = revisions.List(namespace_);
  ASSERT_TRUE(listed.has_value()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].status->desired_nodes, 2);

  // The API server enforces the CRD's immutability rules on typed updates too.
  api::ModelRevision changed = *updated;
  changed.spec.files[0].size = 8192;
  auto refused = revisions.Update(changed);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument) << refused.error().ToString();
  ASSERT_TRUE(revisions.Delete(namespace_, "typed"));
}

TEST_F(TypedClientTest, NodesAndLeases) {
  TypedClient<Node> nodes(*client_);
  auto listed = nodes.List("");
  ASSERT_TRUE(listed.has_value()) << listed.error().ToString();
  ASSERT_FALSE(listed->empty());
  for (const auto& node : *listed) {
    EXPECT_TRUE(node.ready) << node.metadata.name;
    EXPECT_TRUE(node.metadata.labels.contains("topology.kubernetes.io/zone"));
  }
  TypedClient<Lease> leases(*client_);
  Lease lease;
  lease.metadata.name = "typed-lease";
  lease.metadata.namespace_name = namespace_;
  lease.holder_identity = "someone";
  lease.lease_duration_seconds = 15;
  auto created = leases.Create(lease);
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  created->lease_transitions = 1;
  auto updated = leases.Update(*created);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  EXPECT_EQ(updated->lease_transitions, 1);
  EXPECT_EQ(updated->holder_identity, "someone");
}

}  // namespace
}  // namespace modelplane::core::testing
