// PodAdapterReader over in-memory informer stores: a pod waits, told why, for an adapter that
// is missing, not an adapter, made for another base, invalid, revoked or not validated yet; it
// may go where every adapter is Ready for its namespace; the engine names come from digests.
#include "operator/controllers/pod_adapters.h"

#include <gtest/gtest.h>

#include "operator/controllers/cache_entries.h"

namespace modelplane::controller {
namespace {

using nlohmann::json;

// Test constants: a throw before main ends the test binary either way.
// NOLINTBEGIN(cert-err58-cpp)
const std::string kBaseDigest = "sha256:" + std::string(64, 'b');
const std::string kSqlDigest = "sha256:0123456789ab" + std::string(52, '1');
const std::string kChatDigest = "sha256:fedcba987654" + std::string(52, '2');
// NOLINTEND(cert-err58-cpp)

json AdapterRevision(const std::string& name, const std::string& digest,
                     const std::string& base = kBaseDigest, const std::string& phase = "Ready") {
  return {{"metadata", {{"namespace", "models"}, {"name", name}}},
          {"spec", {{"base", {{"digest", base}}}}},
          {"status", {{"digest", digest}, {"phase", phase}}}};
}

// A node's status: each digest Ready, proven for the adapter of that name in `proven_namespace`.
json CacheHolding(const std::string& node, const std::vector<std::string>& digests,
                  const std::string& proven_namespace = "models") {
  json revisions = json::array();
  for (const std::string& digest : digests) {
    const std::string name = digest == kSqlDigest ? "sql-lora" : "chat-lora";
    revisions.push_back(
        {{"digest", digest},
         {"state", "Ready"},
         {"sourceProofs",
          json::array({{{"revision", {{"namespace", proven_namespace}, {"name", name}}},
                        {"state", "Proven"}}})}});
  }
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelCache"},
          {"metadata", {{"name", node}}},
          {"spec", {{"revisions", json::array()}}},
          {"status", {{"revisions", revisions}}}};
}

json PodNaming(const std::string& adapters, const std::string& mount_path = "") {
  json pod = {{"metadata",
               {{"namespace", "models"},
                {"name", "llama-0"},
                {"annotations",
                 {{"modelplane.io/revision", "llama-r1"}, {"modelplane.io/adapters", adapters}}}}}};
  if (!mount_path.empty()) pod["metadata"]["annotations"]["modelplane.io/mount-path"] = mount_path;
  return pod;
}

class PodAdaptersTest : public ::testing::Test {
 protected:
  void SetUp() override { caches_.AddIndexer(kCachesByHeldDigest, CachesByHeldDigestIndex()); }
  void Add(core::ObjectStore& store, json object) {
    store.Upsert(std::make_shared<const json>(std::move(object)));
  }
  std::optional<PodAdapters> Read(const json& pod) {
    PodAdapterReader reader(revisions_, caches_, parsed_, "models/llama-r1", kBaseDigest);
    return reader.Read(pod);
  }
  // The hold of a pod naming only `adapter`.
  AdapterHold HoldOf(const std::string& adapter) {
    const std::optional<PodAdapters> read = Read(PodNaming(adapter));
    if (!read || !read->hold) {
      ADD_FAILURE() << adapter << " holds nothing";
      return {};
    }
    return *read->hold;
  }

  core::ObjectStore revisions_;
  core::ObjectStore caches_;
  core::ParsedObjects<core::api::ModelCache> parsed_{core::api::ModelCacheFromJson};
};

TEST_F(PodAdaptersTest, APodGoesWhereEveryAdapterIsReadyUnderNamesFromTheirDigests) {
  Add(revisions_, AdapterRevision("sql-lora", kSqlDigest));
  Add(revisions_, AdapterRevision("chat-lora", kChatDigest));
  Add(caches_, CacheHolding("gpu-0", {kSqlDigest}));
  Add(caches_, CacheHolding("gpu-1", {kSqlDigest, kChatDigest}));
  Add(caches_, CacheHolding("gpu-2", {kChatDigest}));
  const std::optional<PodAdapters> read = Read(PodNaming("sql-lora,chat-lora", "/weights/llama"));
  ASSERT_TRUE(read);
  EXPECT_FALSE(read->hold);
  EXPECT_EQ(read->readiness.ready_nodes, std::set<std::string>{"gpu-1"});
  EXPECT_EQ(read->readiness.adapters, "models/sql-lora, models/chat-lora");
  EXPECT_EQ(read->lora_modules,
            "sql-lora-0123456789ab=/weights/adapters/sql-lora "
            "chat-lora-fedcba987654=/weights/adapters/chat-lora");
  EXPECT_FALSE(Read(PodNaming("")));
  EXPECT_FALSE(Read({{"metadata", {{"namespace", "models"}}}}));
}

// Bytes another namespace brought are not this namespace's until its own sources were shown to
// serve them (core/api/source_proofs.h): proven on one node, they count on every holder.
TEST_F(PodAdaptersTest, ACopyProvenOnlyForAnotherNamespaceIsNotReadyForThePod) {
  Add(revisions_, AdapterRevision("sql-lora", kSqlDigest));
  Add(caches_, CacheHolding("gpu-0", {kSqlDigest}, "team-b"));
  std::optional<PodAdapters> read = Read(PodNaming("sql-lora"));
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->readiness.ready_nodes.empty());
  Add(caches_, CacheHolding("gpu-1", {kSqlDigest}));
  read = Read(PodNaming("sql-lora"));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->readiness.ready_nodes, (std::set<std::string>{"gpu-0", "gpu-1"}));
}

TEST_F(PodAdaptersTest, APodWaitsToldWhyForAnAdapterThatCannotServeIt) {
  Add(revisions_, AdapterRevision("other-base", kSqlDigest, "sha256:" + std::string(64, 'c')));
  Add(revisions_, AdapterRevision("broken", kSqlDigest, kBaseDigest, "Invalid"));
  Add(revisions_, AdapterRevision("revoked", kSqlDigest, kBaseDigest, "Revoked"));
  json fresh = AdapterRevision("fresh", kSqlDigest);
  fresh.erase("status");
  Add(revisions_, fresh);
  json base = AdapterRevision("llama-r2", kSqlDigest);
  base["spec"].erase("base");
  Add(revisions_, base);

  const AdapterHold missing = HoldOf("sql-lora");
  EXPECT_EQ(missing.type, "Normal");
  EXPECT_EQ(missing.reason, "WaitingForAdapter");
  EXPECT_EQ(missing.message,
            "waiting for adapter ModelRevision models/sql-lora, which does not exist yet; the pod "
            "stays gated until it is created and staged beside its base");
  EXPECT_EQ(HoldOf("fresh").reason, "WaitingForAdapter");
  EXPECT_EQ(HoldOf("fresh").message,
            "waiting for adapter ModelRevision models/fresh, which the operator has not validated "
            "yet");
  const AdapterHold mismatch = HoldOf("other-base");
  EXPECT_EQ(mismatch.type, "Warning");
  EXPECT_EQ(mismatch.reason, "AdapterBaseMismatch");
  EXPECT_EQ(mismatch.message,
            "adapter models/other-base applies to base sha256:" + std::string(64, 'c') +
                ", not to revision models/llama-r1's " + kBaseDigest + "; the pod stays gated");
  EXPECT_EQ(HoldOf("broken").reason, "AdapterInvalid");
  EXPECT_EQ(HoldOf("revoked").reason, "AdapterRevoked");
  const AdapterHold not_adapter = HoldOf("llama-r2");
  EXPECT_EQ(not_adapter.reason, "NotAnAdapter");
  EXPECT_EQ(not_adapter.message,
            "ModelRevision models/llama-r2 is not an adapter (it has no spec.base): "
            "modelplane.io/adapters lists LoRA adapter revisions only; the pod stays gated");
  // Edited after admission, which would have refused it.
  const AdapterHold foreign = HoldOf("team-b/sql-lora");
  EXPECT_EQ(foreign.type, "Warning");
  EXPECT_EQ(foreign.reason, "AdaptersUnreadable");
}

}  // namespace
}  // namespace modelplane::controller
