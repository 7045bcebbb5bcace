#include "core/api/model_revision.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/model_revision_validation.h"
#include "tests/core/api/test_support.h"

namespace modelplane::core::api {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

nlohmann::json SampleJson() {
  return testing::LoadYamlAsJson("crds/examples/modelrevision-sample.yaml");
}

// Applies `edit` to the sample and returns the parse error message (empty if it parsed).
std::string ParseErrorAfter(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json document = SampleJson();
  edit(document);
  auto parsed = ParseModelRevision(document.dump());
  return parsed ? std::string() : parsed.error().message();
}

TEST(ModelRevisionTest, ParsesTheSampleManifest) {
  auto revision = ModelRevisionFromJson(SampleJson());
  ASSERT_TRUE(revision.has_value()) << revision.error().message();
  EXPECT_EQ(revision->metadata.name, "llama-3-8b-instruct-r1");
  EXPECT_EQ(revision->metadata.namespace_name, "models");
  EXPECT_EQ(revision->metadata.labels.at("modelplane.io/model"), "llama-3-8b-instruct");
  const ModelRevisionSpec& spec = revision->spec;
  ASSERT_EQ(spec.files.size(), 5u);
  EXPECT_EQ(spec.files[1].path, "model-00001-of-00002.safetensors");
  EXPECT_EQ(spec.files[1].size, 4976698672);
  EXPECT_EQ(spec.files[1].role, kRoleWeights);
  EXPECT_EQ(spec.format, kFormatSafetensors);
  EXPECT_EQ(spec.parallelism.tensor_parallel, 2);
  EXPECT_EQ(spec.engine.name, "vllm");
  EXPECT_EQ(spec.engine.version, "0.6.3");
  ASSERT_EQ(spec.sources.size(), 2u);
  ASSERT_TRUE(spec.sources[0].object_store.has_value());
  EXPECT_EQ(spec.sources[0].object_store->bucket, "models");
  EXPECT_EQ(spec.sources[0].credentials_secret_ref->name, "s3-models-readonly");
  EXPECT_EQ(spec.sources[0].capacity->max_concurrent_fetches, 64);
  EXPECT_EQ(spec.sources[1].http->base_url,
            "https://models.example.com/llama-3-8b-instruct/5f0b02c7");
  EXPECT_EQ(spec.prestage->nodes, 4);
  EXPECT_EQ(spec.retention->rollback_window, "24h");
  EXPECT_FALSE(spec.revoked);
  EXPECT_FALSE(revision->status.has_value());
  EXPECT_THAT(ValidateModelRevisionSpec(spec), IsEmpty());
}

TEST(ModelRevisionTest, HubSourcesRoundTripThroughJson) {
  nlohmann::json document = SampleJson();
  document["spec"]["sources"] = nlohmann::json::array(
      {{{"name", "hub"},
        {"type", "huggingFace"},
        {"huggingFace", {{"repository", "org/m"}, {"commit", std::string(40, 'b')}}},
        {"credentialsSecretRef", {{"name", "hf-token"}}}},
       {{"name", "ms"},
        {"type", "modelScope"},
        {"modelScope",
         {{"endpoint", "http://127.0.0.1:9000"},
          {"repository", "org/m"},
          {"commit", std::string(40, 'c')}}}}});
  auto revision = ModelRevisionFromJson(document);
  ASSERT_TRUE(revision.has_value()) << revision.error().ToString();
  ASSERT_TRUE(revision->spec.sources[0].hugging_face.has_value());
  EXPECT_EQ(revision->spec.sources[0].hugging_face->repository, "org/m");
  EXPECT_EQ(revision->spec.sources[1].model_scope->endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(ToJson(*revision)["spec"]["sources"], document["spec"]["sources"]);
}

TEST(ModelRevisionTest, RoundTripsThroughJsonIncludingStatusAndUnknownMetadata) {
  nlohmann::json document = SampleJson();
  document["metadata"]["managedFields"] = nlohmann::json::array({{{"manager", "kubectl"}}});
  document["metadata"]["uid"] = "0d6f3c1e-8d0b-4a8e-9d7b-3b8e9a1f2c4d";
  document["metadata"]["resourceVersion"] = "12345";
  document["metadata"]["generation"] = 3;
  document["metadata"]["creationTimestamp"] = "2024-05-01T12:00:00Z";
  document["metadata"]["finalizers"] = {"modelplane.io/revision"};
  document["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                              {"kind", "Deployment"},
                                              {"name", "llm"},
                                              {"uid", "u1"},
                                              {"controller", true}}};
  document["status"] = {
      {"observedGeneration", 3},
      {"digest", "sha256:" + std::string(64, 'a')},
      {"totalBytes", 6154944939},
      {"phase", "Staging"},
      {"conditions",
       {{{"type", "Ready"},
         {"status", "False"},
         {"lastTransitionTime", "2024-05-01T12:01:00Z"},
         {"reason", "Staging"},
         {"message", "2 of 4 nodes ready"},
         {"observedGeneration", 3}}}},
      {"desiredNodes", 4},
      {"stagingNodes", 2},
      {"readyNodes", 2},
      {"failedNodes", 0},
      {"bytesToReadySeconds", {{"p50", 41.5}, {"p95", 60.25}, {"p99", 75.0}}},
      {"nodes", {{{"node", "gpu-1"}, {"tier", "peer"}, {"bytesToReadySeconds", 12.5}}}},
      {"workloads",
       {{{"kind", "Deployment"},
         {"name", "llm"},
         {"role", "current"},
         {"pods", 4},
         {"readyPods", 3}}}},
      {"purge", {{"nodesHolding", 2}, {"bytesHeld", 1024}, {"nodes", {"gpu-1", "gpu-2"}}}}};
  auto revision = ParseModelRevision(document.dump(2));
  ASSERT_TRUE(revision.has_value()) << revision.error().message();
  EXPECT_EQ(revision->metadata.unknown_fields["managedFields"][0]["manager"], "kubectl");
  ASSERT_TRUE(revision->status.has_value());
  EXPECT_EQ(revision->status->nodes[0].tier, kTierPeer);
  ASSERT_EQ(revision->status->workloads.size(), 1u);
  EXPECT_EQ(revision->status->workloads[0].kind, "Deployment");
  EXPECT_EQ(revision->status->workloads[0].ready_pods, 3);
  ASSERT_TRUE(revision->status->purge.has_value());
  EXPECT_EQ(revision->status->purge->nodes_holding, 2);
  EXPECT_EQ(revision->status->purge->nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));

  const nlohmann::json written = ToJson(*revision);
  EXPECT_EQ(written["metadata"]["managedFields"][0]["manager"], "kubectl");
  EXPECT_EQ(written["metadata"]["creationTimestamp"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(written["status"]["conditions"][0]["lastTransitionTime"], "2024-05-01T12:01:00Z");
  EXPECT_EQ(written["spec"]["sources"][0]["objectStore"]["region"], "us-east-1");
  auto reparsed = ModelRevisionFromJson(written);
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().message();
  EXPECT_EQ(*reparsed, *revision);
}

TEST(ModelRevisionTest, AppliesDefaultsForOmittedOptionalSpec) {
  nlohmann::json document = SampleJson();
  document["spec"].erase("parallelism");
  document["spec"].erase("quantization");
  document["spec"]["prestage"] = nullptr;  // null means absent, as Kubernetes clients write it
  auto revision = ModelRevisionFromJson(document);
  ASSERT_TRUE(revision.has_value()) << revision.error().message();
  EXPECT_EQ(revision->spec.parallelism, Parallelism{});
  EXPECT_EQ(revision->spec.quantization.method, "none");
  EXPECT_FALSE(revision->spec.prestage.has_value());
}

TEST(ModelRevisionTest, NamesThePathOfWrongTypes) {
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][3]["size"] = "23950"; }),
            "spec.files[3].size: must be an integer");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][0]["size"] = 1.5; }),
            "spec.files[0].size: must be an integer");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][0]["sha256"] = 7; }),
            "spec.files[0].sha256: must be a string");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"] = "all"; }),
            "spec.files: must be an array");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][2] = 5; }),
            "spec.files[2]: must be an object");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["revoked"] = "yes"; }),
            "spec.revoked: must be a boolean");
  EXPECT_EQ(
      ParseErrorAfter([](auto& d) { d["spec"]["parallelism"]["tensorParallel"] = 1LL << 40; }),
      "spec.parallelism.tensorParallel: is out of the int32 range");
  EXPECT_EQ(
      ParseErrorAfter([](auto& d) { d["spec"]["files"][0]["size"] = 18446744073709551615ULL; }),
      "spec.files[0].size: is out of the int64 range");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["metadata"]["labels"]["a"] = 1; }),
            "metadata.labels.a: must be a string");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["metadata"]["labels"]["modelplane.io/x"] = 1; }),
            R"(metadata.labels["modelplane.io/x"]: must be a string)");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["metadata"]["creationTimestamp"] = "yesterday"; }),
            "metadata.creationTimestamp: must be an RFC 3339 timestamp such as "
            "2024-05-01T12:00:00Z");
  EXPECT_EQ(ParseErrorAfter([](auto& d) {
              d["spec"]["sources"][1]["http"] = {{"url", "x"}};
            }),
            "spec.sources[1].http.baseURL: is required");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d = nlohmann::json::array(); }),
            "<root>: must be an object");
}

TEST(ModelRevisionTest, RequiresSpecAndItsRequiredFields) {
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d.erase("spec"); }), "spec: is required");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"].erase("engine"); }),
            "spec.engine: is required");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][4].erase("role"); }),
            "spec.files[4].role: is required");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"].erase("sources"); }),
            "spec.sources: is required");
}

TEST(ModelRevisionTest, RejectsWrongKindAndApiVersion) {
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["kind"] = "Pod"; }), "kind: must be ModelRevision");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["apiVersion"] = "modelplane.io/v2"; }),
            "apiVersion: must be modelplane.io/v1alpha1");
}

TEST(ModelRevisionTest, BoundsCollectionsAndStrings) {
  EXPECT_EQ(ParseErrorAfter([](auto& d) {
              d["spec"]["files"] = nlohmann::json::array();
              for (int i = 0; i < 4097; ++i)
                d["spec"]["files"].push_back(d["spec"]["files"].size());
            }),
            "spec.files: has more than 4096 items");
  EXPECT_EQ(ParseErrorAfter([](auto& d) { d["spec"]["files"][0]["path"] = std::string(513, 'a'); }),
            "spec.files[0].path: longer than 512 bytes");
  EXPECT_EQ(ParseErrorAfter([](auto& d) {
              for (int i = 0; i < 300; ++i) d["metadata"]["labels"]["k" + std::to_string(i)] = "v";
            }),
            "metadata.labels: has more than 256 entries");
}

TEST(ModelRevisionTest, RejectsMalformedJsonText) {
  auto parsed = ParseModelRevision(R"({"apiVersion": "modelplane.io/v1alpha1", "spec": )");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().message(), HasSubstr("invalid JSON"));
  parsed = ParseModelRevision(R"({"spec": {}, "spec": {}})");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().message(), HasSubstr("spec: duplicate key"));
}

}  // namespace
}  // namespace modelplane::core::api
