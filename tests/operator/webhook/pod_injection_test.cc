#include "operator/webhook/pod_injection.h"

#include <map>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kDigest[] =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

json ServingPod(json annotations = {{"modelplane.io/revision", "llama-r1"}}) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"generateName", "llama-"}, {"annotations", annotations}}},
          {"spec",
           {{"schedulerName", "default-scheduler"},
            {"containers", json::array({{{"name", "server"}, {"image", "vllm"}},
                                        {{"name", "metrics"}, {"image", "exporter"}}})}}}};
}

RevisionLookupFunction Finds(RevisionLookup::State state) {
  return [state](const std::string& ns, const std::string& name) {
    EXPECT_EQ(ns, "models");
    EXPECT_EQ(name, "llama-r1");
    RevisionLookup found{.state = state};
    if (state == RevisionLookup::State::kValid) found.digest = kDigest;
    if (state == RevisionLookup::State::kInvalid) found.problem = "spec.files[0].sha256: bad";
    return found;
  };
}

InjectionResult Inject(const json& pod, RevisionLookup::State state = RevisionLookup::State::kValid,
                       const InjectionOptions& options = {}) {
  return InjectServingPod(pod, "models", Finds(state), options);
}

TEST(PodInjectionTest, InjectsGatesSchedulerVolumeMountsAndEnvironment) {
  const InjectionResult result = Inject(ServingPod());
  ASSERT_TRUE(result.allowed) << result.message;
  EXPECT_EQ(result.outcome, "injected");
  ASSERT_TRUE(result.pod);
  const json& spec = (*result.pod)["spec"];
  EXPECT_EQ(spec["schedulingGates"], json::parse(R"([{"name":"modelplane.io/weights"}])"));
  EXPECT_EQ(spec["readinessGates"],
            json::parse(R"([{"conditionType":"modelplane.io/weights-ready"}])"));
  EXPECT_EQ(spec["schedulerName"], "modelplane-scheduler");
  EXPECT_EQ(spec["volumes"], json::parse(R"([{"name":"modelplane-weights","csi":{
      "driver":"csi.modelplane.io","readOnly":true,
      "volumeAttributes":{"modelplane.io/revision":"llama-r1"}}}])"));
  for (const json& container : spec["containers"]) {
    EXPECT_EQ(container["volumeMounts"], json::parse(R"([{"name":"modelplane-weights",
        "mountPath":"/models/llama-r1","readOnly":true}])"));
    EXPECT_EQ(container["env"], json::parse(R"([{"name":"MODELPLANE_MODEL",
        "value":"/models/llama-r1"},{"name":"MODELPLANE_REVISION_DIGEST","valueFrom":{
        "fieldRef":{"fieldPath":"metadata.annotations['modelplane.io/revision-digest']"}}}])"));
  }
  EXPECT_EQ((*result.pod)["metadata"]["annotations"]["modelplane.io/injected"], kDigest);
  EXPECT_EQ((*result.pod)["metadata"]["annotations"]["modelplane.io/revision-digest"], kDigest);
}

TEST(PodInjectionTest, TheContainersOwnVariablesComeAfterOursSoTheyCanUseThem) {
  json pod = ServingPod();
  pod["spec"]["containers"][0]["env"] = json::parse(
      R"json([{"name":"VLLM_CACHE_ROOT","value":"/cache/$(MODELPLANE_REVISION_DIGEST)"}])json");
  const InjectionResult result = Inject(pod);
  ASSERT_TRUE(result.pod);
  const json& environment = (*result.pod)["spec"]["containers"][0]["env"];
  ASSERT_EQ(environment.size(), 3U) << environment.dump();
  EXPECT_EQ(environment[0]["name"], "MODELPLANE_MODEL");
  EXPECT_EQ(environment[1]["name"], "MODELPLANE_REVISION_DIGEST");
  EXPECT_EQ(environment[2]["name"], "VLLM_CACHE_ROOT");
}

TEST(PodInjectionTest, OnlyModelplaneSaysWhichDigestThePodRuns) {
  json forged = ServingPod();
  forged["metadata"]["annotations"]["modelplane.io/revision-digest"] =
      "sha256:" + std::string(64, 'f');
  const InjectionResult known = Inject(forged);
  ASSERT_TRUE(known.pod);
  EXPECT_EQ((*known.pod)["metadata"]["annotations"]["modelplane.io/revision-digest"], kDigest);
  // Not known yet: dropped, for the operator to write as it lets the pod go.
  const InjectionResult pending = Inject(forged, RevisionLookup::State::kMissing);
  ASSERT_TRUE(pending.pod);
  EXPECT_FALSE((*pending.pod)["metadata"]["annotations"].contains("modelplane.io/revision-digest"));
}

// Found by admission_review_fuzzer: names, schedulers and gates of the wrong JSON type are
// read as absent, never thrown on (the API server validates pods after mutating webhooks).
TEST(PodInjectionTest, FieldsOfTheWrongTypeAreReadAsAbsent) {
  json pod = ServingPod();
  pod["spec"]["containers"][0]["name"] = json::object();
  pod["spec"]["schedulerName"] = json::array();
  pod["spec"]["schedulingGates"] = json::array({{{"name", 7}}});
  pod["spec"]["volumes"] = json::array({{{"name", json::object()}, {"csi", {{"driver", 1}}}}});
  InjectionResult result;
  ASSERT_NO_THROW(result = Inject(pod));
  // Read as absent: the pod is injected as one without them would be, and what it carried
  // stays for the API server to refuse.
  ASSERT_TRUE(result.allowed) << result.message;
  EXPECT_EQ(result.outcome, "injected");
  ASSERT_TRUE(result.pod);
  const json& spec = (*result.pod)["spec"];
  EXPECT_EQ(spec["schedulerName"], "modelplane-scheduler");
  EXPECT_EQ(spec["schedulingGates"],
            json::parse(R"([{"name":7},{"name":"modelplane.io/weights"}])"));
  ASSERT_EQ(spec["volumes"].size(), 2u);
  EXPECT_EQ(spec["volumes"][0], pod["spec"]["volumes"][0]) << "the odd volume is kept as is";
  EXPECT_EQ(spec["volumes"][1]["name"], "modelplane-weights");
}

TEST(PodInjectionTest, ASecondPassChangesNothing) {
  const InjectionResult first = Inject(ServingPod());
  ASSERT_TRUE(first.pod);
  const InjectionResult second = Inject(*first.pod);
  EXPECT_TRUE(second.allowed);
  EXPECT_EQ(second.outcome, "unchanged");
  EXPECT_FALSE(second.pod);
}

TEST(PodInjectionTest, KeepsANamedSchedulerAndOtherGates) {
  json pod = ServingPod();
  pod["spec"]["schedulerName"] = "volcano";
  pod["spec"]["schedulingGates"] = json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  const InjectionResult result = Inject(pod);
  ASSERT_TRUE(result.pod);
  EXPECT_EQ((*result.pod)["spec"]["schedulerName"], "volcano");
  EXPECT_EQ((*result.pod)["spec"]["schedulingGates"].size(), 2u);
  const InjectionResult untouched =
      Inject(ServingPod(), RevisionLookup::State::kValid, {.scheduler_name = ""});
  ASSERT_TRUE(untouched.pod);
  EXPECT_EQ((*untouched.pod)["spec"]["schedulerName"], "default-scheduler");
}

TEST(PodInjectionTest, MountPathAndContainersFromAnnotations) {
  json pod = ServingPod({{"modelplane.io/revision", "llama-r1"},
                         {"modelplane.io/mount-path", "/weights/llama"},
                         {"modelplane.io/containers", " server "}});
  const InjectionResult result = Inject(pod);
  ASSERT_TRUE(result.allowed) << result.message;
  const json& containers = (*result.pod)["spec"]["containers"];
  EXPECT_EQ(containers[0]["volumeMounts"][0]["mountPath"], "/weights/llama");
  EXPECT_FALSE(containers[1].contains("volumeMounts")) << "only the listed container";
}

TEST(PodInjectionTest, ARevisionThatDoesNotExistYetIsAdmittedGatedWithAWarning) {
  const InjectionResult result = Inject(ServingPod(), RevisionLookup::State::kMissing);
  ASSERT_TRUE(result.allowed);
  EXPECT_EQ(result.outcome, "waiting");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_THAT(result.warnings[0], HasSubstr("does not exist yet"));
  EXPECT_EQ((*result.pod)["metadata"]["annotations"]["modelplane.io/injected"], "pending");
  EXPECT_EQ((*result.pod)["spec"]["schedulingGates"][0]["name"], "modelplane.io/weights");
}

TEST(PodInjectionTest, RefusesInvalidRevokedAndForeignRevisions) {
  InjectionResult invalid = Inject(ServingPod(), RevisionLookup::State::kInvalid);
  EXPECT_FALSE(invalid.allowed);
  EXPECT_THAT(invalid.message, HasSubstr("ModelRevision models/llama-r1 is invalid"));
  EXPECT_THAT(invalid.message, HasSubstr("sha256: bad"));
  InjectionResult revoked = Inject(ServingPod(), RevisionLookup::State::kRevoked);
  EXPECT_FALSE(revoked.allowed);
  EXPECT_THAT(revoked.message, HasSubstr("is revoked"));
  InjectionResult foreign =
      InjectServingPod(ServingPod({{"modelplane.io/revision", "other/llama-r1"}}), "models",
                       [](const std::string&, const std::string&) -> RevisionLookup {
                         ADD_FAILURE() << "another namespace is never looked up";
                         return {};
                       },
                       {});
  EXPECT_FALSE(foreign.allowed);
  EXPECT_THAT(foreign.message, HasSubstr("only a ModelRevision in its own namespace"));
}

TEST(PodInjectionTest, RefusesWhatItCannotMount) {
  for (const char* path :
       {"models", "/", "/models/", "/models/../etc", "/a//b", "/a/./b", "/a:b"}) {
    json pod =
        ServingPod({{"modelplane.io/revision", "llama-r1"}, {"modelplane.io/mount-path", path}});
    const InjectionResult result = Inject(pod);
    EXPECT_FALSE(result.allowed) << path;
    EXPECT_THAT(result.message, HasSubstr("modelplane.io/mount-path")) << path;
  }
  json unknown = ServingPod(
      {{"modelplane.io/revision", "llama-r1"}, {"modelplane.io/containers", "server,sidecar"}});
  EXPECT_THAT(Inject(unknown).message, HasSubstr("container \"sidecar\""));
  json taken = ServingPod();
  taken["spec"]["containers"][0]["volumeMounts"] =
      json::array({{{"name", "cache"}, {"mountPath", "/models/llama-r1"}}});
  EXPECT_THAT(Inject(taken).message, HasSubstr("already mounts something at /models/llama-r1"));
  json clash = ServingPod();
  clash["spec"]["volumes"] =
      json::array({{{"name", "modelplane-weights"}, {"emptyDir", json::object()}}});
  EXPECT_THAT(Inject(clash).message, HasSubstr("not modelplane's"));
  EXPECT_FALSE(Inject(ServingPod({{"modelplane.io/revision", "Llama"}})).allowed);
}

TEST(PodInjectionTest, HostPathModeMountsTheNodeCachesView) {
  const InjectionOptions options{.volume_mode = WeightsVolumeMode::kHostPath,
                                 .host_cache_root = "/var/lib/modelplane/cache"};
  const InjectionResult result = Inject(ServingPod(), RevisionLookup::State::kValid, options);
  ASSERT_TRUE(result.pod);
  EXPECT_EQ(
      (*result.pod)["spec"]["volumes"][0]["hostPath"],
      json::parse(
          R"({"path":"/var/lib/modelplane/cache/models/1111111111111111111111111111111111111111111111111111111111111111","type":"Directory"})"));
  const InjectionResult missing = Inject(ServingPod(), RevisionLookup::State::kMissing, options);
  EXPECT_FALSE(missing.allowed);
  EXPECT_THAT(missing.message, HasSubstr("hostPath mode"));
}

TEST(PodInjectionTest, PodsOutsideTheNamespaceServedAreLeftAloneWithAWarning) {
  const InjectionResult result =
      Inject(ServingPod(), RevisionLookup::State::kValid, {.namespace_scope = "serving"});
  EXPECT_TRUE(result.allowed);
  EXPECT_FALSE(result.pod) << "no gate that no controller would remove";
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_THAT(result.warnings[0], HasSubstr("serves namespace serving only"));
}

// LoRA adapters: revisions of their own (spec.base set), each found by the lookup.
constexpr char kSqlDigest[] =
    "sha256:0123456789abcdef000000000000000000000000000000000000000000000000";
constexpr char kChatDigest[] =
    "sha256:fedcba9876543210000000000000000000000000000000000000000000000000";
constexpr char kOtherBase[] =
    "sha256:2222222222222222222222222222222222222222222222222222222222222222";

json PodWithAdapters(const std::string& adapters = "sql-lora,chat-lora") {
  return ServingPod({{"modelplane.io/revision", "llama-r1"}, {"modelplane.io/adapters", adapters}});
}

// The base llama-r1 and the adapters in `found` (missing when absent).
RevisionLookupFunction Revisions(std::map<std::string, RevisionLookup> found) {
  found.emplace("llama-r1",
                RevisionLookup{.state = RevisionLookup::State::kValid, .digest = kDigest});
  return [found = std::move(found)](const std::string& ns, const std::string& name) {
    EXPECT_EQ(ns, "models");
    const auto revision = found.find(name);
    return revision == found.end() ? RevisionLookup{} : revision->second;
  };
}

RevisionLookup Adapter(const char* digest, const char* base = kDigest) {
  return {.state = RevisionLookup::State::kValid, .digest = digest, .base_digest = base};
}

InjectionResult InjectAdapters(const json& pod, std::map<std::string, RevisionLookup> found,
                               const InjectionOptions& options = {}) {
  return InjectServingPod(pod, "models", Revisions(std::move(found)), options);
}

TEST(PodInjectionTest, EachAdapterGetsAReadOnlyVolumeMountedBesideTheBase) {
  const InjectionResult result = InjectAdapters(
      PodWithAdapters(), {{"sql-lora", Adapter(kSqlDigest)}, {"chat-lora", Adapter(kChatDigest)}});
  ASSERT_TRUE(result.allowed) << result.message;
  EXPECT_EQ(result.outcome, "injected");
  ASSERT_TRUE(result.pod);
  const json& spec = (*result.pod)["spec"];
  EXPECT_EQ(spec["volumes"], json::parse(R"([
      {"name":"modelplane-weights","csi":{"driver":"csi.modelplane.io","readOnly":true,
       "volumeAttributes":{"modelplane.io/revision":"llama-r1"}}},
      {"name":"modelplane-adapter-0","csi":{"driver":"csi.modelplane.io","readOnly":true,
       "volumeAttributes":{"modelplane.io/revision":"sql-lora"}}},
      {"name":"modelplane-adapter-1","csi":{"driver":"csi.modelplane.io","readOnly":true,
       "volumeAttributes":{"modelplane.io/revision":"chat-lora"}}}])"));
  for (const json& container : spec["containers"]) {
    EXPECT_EQ(container["volumeMounts"], json::parse(R"([
        {"name":"modelplane-weights","mountPath":"/models/llama-r1","readOnly":true},
        {"name":"modelplane-adapter-0","mountPath":"/models/adapters/sql-lora","readOnly":true},
        {"name":"modelplane-adapter-1","mountPath":"/models/adapters/chat-lora",
         "readOnly":true}])"));
    ASSERT_EQ(container["env"].size(), 3U);
    EXPECT_EQ(container["env"][2], json::parse(R"({"name":"MODELPLANE_LORA_MODULES","valueFrom":{
        "fieldRef":{"fieldPath":"metadata.annotations['modelplane.io/lora-modules']"}}})"));
  }
  // The names the engine serves them under come from their digests.
  EXPECT_EQ((*result.pod)["metadata"]["annotations"]["modelplane.io/lora-modules"],
            "sql-lora-0123456789ab=/models/adapters/sql-lora "
            "chat-lora-fedcba987654=/models/adapters/chat-lora");
  const InjectionResult second = InjectAdapters(
      *result.pod, {{"sql-lora", Adapter(kSqlDigest)}, {"chat-lora", Adapter(kChatDigest)}});
  EXPECT_EQ(second.outcome, "unchanged");
}

TEST(PodInjectionTest, AnAdapterThatDoesNotExistYetIsAdmittedGatedWithoutModules) {
  const InjectionResult result =
      InjectAdapters(PodWithAdapters(), {{"sql-lora", Adapter(kSqlDigest)}});
  ASSERT_TRUE(result.allowed) << result.message;
  EXPECT_EQ(result.outcome, "waiting");
  ASSERT_EQ(result.warnings.size(), 1U);
  EXPECT_THAT(result.warnings[0],
              HasSubstr("adapter ModelRevision models/chat-lora does not exist yet"));
  ASSERT_TRUE(result.pod);
  EXPECT_EQ((*result.pod)["spec"]["volumes"].size(), 3U);
  EXPECT_EQ((*result.pod)["metadata"]["annotations"]["modelplane.io/revision-digest"], kDigest);
  EXPECT_FALSE((*result.pod)["metadata"]["annotations"].contains("modelplane.io/lora-modules"))
      << "the operator writes it once the adapter's digest is known";
}

TEST(PodInjectionTest, OnlyModelplaneSaysWhichAdaptersThePodRuns) {
  json forged = PodWithAdapters("sql-lora");
  forged["metadata"]["annotations"]["modelplane.io/lora-modules"] = "sql-lora=/etc";
  const InjectionResult known = InjectAdapters(forged, {{"sql-lora", Adapter(kSqlDigest)}});
  ASSERT_TRUE(known.pod);
  EXPECT_EQ((*known.pod)["metadata"]["annotations"]["modelplane.io/lora-modules"],
            "sql-lora-0123456789ab=/models/adapters/sql-lora");
  const InjectionResult unknown = InjectAdapters(forged, {});
  ASSERT_TRUE(unknown.pod);
  EXPECT_FALSE((*unknown.pod)["metadata"]["annotations"].contains("modelplane.io/lora-modules"));
  json no_adapters = ServingPod();
  no_adapters["metadata"]["annotations"]["modelplane.io/lora-modules"] = "sql-lora=/etc";
  const InjectionResult plain = InjectAdapters(no_adapters, {});
  ASSERT_TRUE(plain.pod);
  EXPECT_FALSE((*plain.pod)["metadata"]["annotations"].contains("modelplane.io/lora-modules"));
  EXPECT_EQ((*plain.pod)["spec"]["containers"][0]["env"].size(), 2U)
      << "no MODELPLANE_LORA_MODULES without adapters";
}

TEST(PodInjectionTest, RefusesAdaptersThatCannotServeTheBase) {
  const InjectionResult not_adapter = InjectAdapters(
      PodWithAdapters("sql-lora"),
      {{"sql-lora", {.state = RevisionLookup::State::kValid, .digest = kSqlDigest}}});
  EXPECT_FALSE(not_adapter.allowed);
  EXPECT_THAT(not_adapter.message,
              HasSubstr("ModelRevision models/sql-lora is not an adapter (it has no spec.base)"));
  const InjectionResult other_base =
      InjectAdapters(PodWithAdapters("sql-lora"), {{"sql-lora", Adapter(kSqlDigest, kOtherBase)}});
  EXPECT_FALSE(other_base.allowed);
  EXPECT_EQ(other_base.message, fmt::format("adapter models/sql-lora applies to base {}, not to "
                                            "revision models/llama-r1's {}",
                                            kOtherBase, kDigest));
  const InjectionResult invalid = InjectAdapters(
      PodWithAdapters("sql-lora"),
      {{"sql-lora", {.state = RevisionLookup::State::kInvalid, .problem = "spec.base: bad"}}});
  EXPECT_FALSE(invalid.allowed);
  EXPECT_THAT(invalid.message, HasSubstr("adapter ModelRevision models/sql-lora is invalid: "
                                         "spec.base: bad"));
  const InjectionResult revoked = InjectAdapters(
      PodWithAdapters("sql-lora"), {{"sql-lora", {.state = RevisionLookup::State::kRevoked}}});
  EXPECT_THAT(revoked.message, HasSubstr("adapter ModelRevision models/sql-lora is revoked"));
  const InjectionResult foreign = InjectAdapters(PodWithAdapters("other/sql-lora"), {});
  EXPECT_FALSE(foreign.allowed);
  EXPECT_THAT(foreign.message, HasSubstr("only a ModelRevision in its own namespace"));
  EXPECT_THAT(InjectAdapters(PodWithAdapters("llama-r1"), {}).message,
              HasSubstr("the pod's own revision"));
}

// Until the base exists, nothing says which base an adapter must have: the operator keeps
// the pod gated if they do not match.
TEST(PodInjectionTest, AnAdapterOfABaseNotYetCreatedIsAdmitted) {
  const InjectionResult result = InjectServingPod(
      PodWithAdapters("sql-lora"), "models",
      [](const std::string&, const std::string& name) {
        return name == "sql-lora" ? Adapter(kSqlDigest, kOtherBase) : RevisionLookup{};
      },
      {});
  EXPECT_TRUE(result.allowed) << result.message;
  EXPECT_EQ(result.outcome, "waiting");
}

TEST(PodInjectionTest, AdapterMountsFollowTheBasesAndCollideWithNothing) {
  json custom = PodWithAdapters("sql-lora");
  custom["metadata"]["annotations"]["modelplane.io/mount-path"] = "/weights/llama";
  custom["metadata"]["annotations"]["modelplane.io/containers"] = "server";
  const InjectionResult moved = InjectAdapters(custom, {{"sql-lora", Adapter(kSqlDigest)}});
  ASSERT_TRUE(moved.pod) << moved.message;
  const json& containers = (*moved.pod)["spec"]["containers"];
  EXPECT_EQ(containers[0]["volumeMounts"][1]["mountPath"], "/weights/adapters/sql-lora");
  EXPECT_FALSE(containers[1].contains("volumeMounts")) << "only the listed container";

  for (const char* path : {"/my weights/llama", "/a=b/llama", "/a,b/llama"}) {
    json listed = PodWithAdapters("sql-lora");
    listed["metadata"]["annotations"]["modelplane.io/mount-path"] = path;
    EXPECT_THAT(InjectAdapters(listed, {}).message,
                HasSubstr("must not contain blanks, '=' or ','"))
        << path;
  }
  json inside =
      ServingPod({{"modelplane.io/revision", "adapters"}, {"modelplane.io/adapters", "sql-lora"}});
  EXPECT_THAT(
      InjectServingPod(inside, "models",
                       [](const std::string&, const std::string&) { return RevisionLookup{}; }, {})
          .message,
      HasSubstr("inside the read-only mount of models/adapters at /models/adapters"));
  json taken = PodWithAdapters("sql-lora");
  taken["spec"]["containers"][0]["volumeMounts"] =
      json::array({{{"name", "cache"}, {"mountPath", "/models/adapters/sql-lora"}}});
  EXPECT_THAT(InjectAdapters(taken, {}).message,
              HasSubstr("already mounts something at /models/adapters/sql-lora"));
  json clash = PodWithAdapters("sql-lora");
  clash["spec"]["volumes"] =
      json::array({{{"name", "modelplane-adapter-0"}, {"emptyDir", json::object()}}});
  EXPECT_THAT(InjectAdapters(clash, {}).message,
              HasSubstr("a volume named modelplane-adapter-0 that is not modelplane's"));
}

TEST(PodInjectionTest, HostPathModeMountsEachAdaptersFolder) {
  const InjectionOptions options{.volume_mode = WeightsVolumeMode::kHostPath,
                                 .host_cache_root = "/var/lib/modelplane/cache"};
  const InjectionResult result =
      InjectAdapters(PodWithAdapters("sql-lora"), {{"sql-lora", Adapter(kSqlDigest)}}, options);
  ASSERT_TRUE(result.pod) << result.message;
  EXPECT_EQ((*result.pod)["spec"]["volumes"][1]["hostPath"]["path"],
            "/var/lib/modelplane/cache/models/" + std::string(kSqlDigest).substr(7));
  const InjectionResult missing = InjectAdapters(PodWithAdapters("sql-lora"), {}, options);
  EXPECT_FALSE(missing.allowed);
  EXPECT_THAT(missing.message, HasSubstr("adapter ModelRevision models/sql-lora does not exist; "
                                         "in hostPath mode"));
}

TEST(PodInjectionTest, PodsWithoutTheAnnotationAreLeftAlone) {
  json plain = ServingPod(json::object());
  const InjectionResult result = Inject(plain);
  EXPECT_TRUE(result.allowed);
  EXPECT_EQ(result.outcome, "unmanaged");
  EXPECT_FALSE(result.pod);
}

}  // namespace
}  // namespace modelplane::controller
