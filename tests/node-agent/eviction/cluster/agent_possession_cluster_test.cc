// Bytes shared across namespaces only with proof, in the real `modelplane-node-agent run`
// process against the local control plane (the fixture's tmpfs cache root; needs root).
//
// One namespace's revision is held Ready on the node. Another namespace copies its spec (same
// files, so the same digest) and names a shared-filesystem source of its own: one where the
// files are missing, one whose files have the right sizes and other bytes. The node reports
// the digest Ready (the first namespace uses it) but lists, per revision, what its check of the
// copy's own source found: Failed with SourceNotFound and PossessionNotProven, and the held
// bytes serve neither copy. Once the right bytes appear at the first copy's source, its next
// check (after the retry backoff) proves it, having read a few sampled ranges only.
#include <gtest/gtest.h>

#include "tests/node-agent/eviction/cluster/agent_eviction_cluster_fixture.h"

namespace modelplane::agent {
namespace {

using core::testing::WaitUntil;
using nlohmann::json;
using testing::AgentEvictionClusterTest;
using testing::kMiB;
using testing::TestRevision;

// A proof that failed waits 15-30 s (jittered) before it is tried again.
constexpr auto kRetryWait = std::chrono::seconds(90);

const core::api::SourceProof* ProofOf(const core::api::CachedRevision& entry,
                                      const std::string& namespace_name, const std::string& name) {
  for (const core::api::SourceProof& proof : entry.source_proofs) {
    if (proof.revision.namespace_name == namespace_name && proof.revision.name == name) {
      return &proof;
    }
  }
  return nullptr;
}

TEST_F(AgentEvictionClusterTest, HeldBytesServeACopyInAnotherNamespaceOnlyOnceItsSourceServesThem) {
  const std::string other = CreateOtherNamespace();
  ASSERT_FALSE(other.empty());

  const TestRevision original = MakeRevision("original", 2 * kMiB, 2);
  ASSERT_FALSE(HasFailure());
  StageAll({&original});
  ASSERT_FALSE(HasFatalFailure());

  // The copies' sources: one without the files, one with other bytes of the same sizes.
  const std::filesystem::path share = base_ / "share";
  std::filesystem::create_directories(share / "missing");
  std::filesystem::create_directories(share / "poisoned");
  for (const auto& [path, content] : original.files) {
    // Every byte differs: a proof samples ranges, so one changed byte would be found only by
    // chance (a source must hold nearly all of a file to pass: docs/security.md says so).
    std::string poisoned = content;
    for (char& byte : poisoned) byte = static_cast<char>(byte ^ 0x5a);
    std::ofstream(share / "poisoned" / path) << poisoned;
  }
  auto spec = client_->Get(core::resources::ModelRevisions(), namespace_, original.name);
  ASSERT_TRUE(spec) << spec.error().ToString();
  auto copy = [&](const std::string& name, const std::string& folder) {
    json object = {{"apiVersion", "modelplane.io/v1alpha1"},
                   {"kind", "ModelRevision"},
                   {"metadata", {{"name", name}, {"namespace", other}}},
                   {"spec", (*spec)["spec"]}};
    object["spec"]["sources"] =
        json::array({{{"name", "nfs"},
                      {"type", "sharedFilesystem"},
                      {"sharedFilesystem", {{"path", (share / folder).string()}}}}});
    auto created = client_->Create(core::resources::ModelRevisions(), other, object);
    ASSERT_TRUE(created) << created.error().ToString();
  };
  copy("copy-missing", "missing");
  copy("copy-poisoned", "poisoned");
  ASSERT_FALSE(HasFatalFailure());
  auto other_entry = [&](const std::string& name) {
    return json{{"revision", {{"namespace", other}, {"name", name}}},
                {"digest", core::FormatDigest(original.digest)},
                {"pinned", false},
                {"reason", "in-use"}};
  };
  CreateCache(node_, json::array({Entry(original, false, "prestage"), other_entry("copy-missing"),
                                  other_entry("copy-poisoned")}));
  ASSERT_FALSE(HasFatalFailure());
  source_policy_ = fmt::format(
      "{{objectStores: [{{buckets: [models], nodeCredentials: true}}], "
      "sharedFilesystems: [{{root: {}}}]}}",
      share.string());
  StartAgent();
  ASSERT_FALSE(HasFatalFailure());

  std::optional<core::api::ModelCacheStatus> status;
  const core::api::CachedRevision* entry = nullptr;
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        entry = status ? Find(*status, original) : nullptr;
        return entry != nullptr && entry->source_proofs.size() == 3;
      },
      testing::kWait))
      << Log();
  EXPECT_EQ(entry->state, core::api::kCacheStateReady);
  const core::api::SourceProof* own = ProofOf(*entry, namespace_, original.name);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->state, core::api::kProofStateProven);
  const core::api::SourceProof* missing = ProofOf(*entry, other, "copy-missing");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->state, core::api::kProofStateFailed);
  EXPECT_EQ(missing->reason, core::api::kCacheReasonSourceNotFound) << missing->message;
  const core::api::SourceProof* poisoned = ProofOf(*entry, other, "copy-poisoned");
  ASSERT_NE(poisoned, nullptr);
  EXPECT_EQ(poisoned->state, core::api::kProofStateFailed);
  EXPECT_EQ(poisoned->reason, core::api::kCacheReasonPossessionNotProven) << poisoned->message;
  // Status carries no byte, digest or host path of what was compared.
  for (const core::api::SourceProof* failed : {missing, poisoned}) {
    EXPECT_EQ(failed->message.find(share.string()), std::string::npos) << failed->message;
    EXPECT_EQ(failed->message.find("sha256:"), std::string::npos) << failed->message;
  }

  // The right bytes appear at the first copy's source: its next check proves it.
  for (const auto& [path, content] : original.files) {
    std::ofstream(share / "missing" / path) << content;
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        status = Status();
        entry = status ? Find(*status, original) : nullptr;
        const core::api::SourceProof* proof =
            entry != nullptr ? ProofOf(*entry, other, "copy-missing") : nullptr;
        return proof != nullptr && proof->state == core::api::kProofStateProven;
      },
      kRetryWait))
      << Log();
  const core::api::SourceProof* still_poisoned = ProofOf(*entry, other, "copy-poisoned");
  ASSERT_NE(still_poisoned, nullptr);
  EXPECT_EQ(still_poisoned->state, core::api::kProofStateFailed);
  EXPECT_NE(Count("event=possession_proven"), 0U) << Log();
}

}  // namespace
}  // namespace modelplane::agent
