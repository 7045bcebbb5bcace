// `kubectl-modelplane` against the local control plane (scripts/test.sh starts it): the test
// writes a ModelRevision with the status the operator would write, ModelCaches with the status
// node agents would write (Ready on one node, staging on a second, refused on a third), a gated
// pod with the operator's Event, then runs the real binary and checks what each verb prints and
// that prestage and revoke changed the object on the server.
//
// No operator or agent runs here, so nothing rewrites what the test wrote.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/api/model_revision.h"
#include "core/api/revision_digest.h"
#include "core/kube/event_recorder.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/kubectl-plugin/test_objects.h"
#include "tests/support/child_process.h"
#include "tests/support/source_proof_status.h"

namespace modelplane::cli {
namespace {

using core::testing::WaitUntil;
using nlohmann::json;
using testing::FieldValue;
using testing::Lines;

constexpr auto kWait = std::chrono::seconds(60);
constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;
constexpr std::size_t kTerminalWidth = 100;

struct Output {
  int status = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text with line breaks made spaces, so checks need not know where a paragraph wraps.
std::string Joined(const std::string& text) {
  std::string joined;
  for (const std::string& line : Lines(text)) joined += (joined.empty() ? "" : " ") + line;
  return joined;
}

std::string RowOf(const std::string& text, const std::string& start) {
  for (const std::string& line : Lines(text)) {
    if (line.starts_with(start)) return line;
  }
  return "";
}

class PluginClusterTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    stderr_path_ = "/tmp/" + namespace_ + "-plugin.err";
  }

  void TearDown() override {
    if (client_) {
      for (const std::string& cache : caches_) {
        (void)client_->Delete(core::resources::ModelCaches(), "", cache);
      }
    }
    if (!stderr_path_.empty()) std::remove(stderr_path_.c_str());
    ClusterTest::TearDown();
  }

  // Runs the binary with `arguments` (shell words), KUBECONFIG pointing at the test cluster.
  Output Plugin(const std::string& arguments, bool kubeconfig_flag = true) {
    const std::string binary =
        std::string(MODELPLANE_BINARY_DIR) + "/kubectl-plugin/kubectl-modelplane";
    const std::string command =
        (kubeconfig_flag ? binary + " --kubeconfig " + kubeconfig_path_
                         : "env KUBECONFIG=" + kubeconfig_path_ + " " + binary) +
        " " + arguments + " 2>" + stderr_path_;
    Output output;
    output.status = core::testing::RunCommand(command, &output.out);
    output.err = ReadFile(stderr_path_);
    // Errors are one line whatever its length (it names objects and quotes the API server);
    // everything else fits the terminal.
    for (const std::string& line : Lines(output.out)) {
      EXPECT_LE(line.size(), kTerminalWidth) << "wider than the terminal: " << line;
    }
    return output;
  }

  // A valid revision; returns its digest as the operator computes it.
  std::string CreateRevision(const std::string& name) {
    const json object = {{"apiVersion", "modelplane.io/v1alpha1"},
                         {"kind", "ModelRevision"},
                         {"metadata", {{"name", name}, {"namespace", namespace_}}},
                         {"spec",
                          {{"modelName", "llama-3-70b"},
                           {"files", json::array({{{"path", "model-00001.safetensors"},
                                                   {"size", 100 * kGiB},
                                                   {"sha256", "sha256:" + std::string(64, 'a')},
                                                   {"role", "weights"}},
                                                  {{"path", "model-00002.safetensors"},
                                                   {"size", 40 * kGiB},
                                                   {"sha256", "sha256:" + std::string(64, 'b')},
                                                   {"role", "weights"}}})},
                           {"format", "safetensors"},
                           {"engine", {{"name", "vllm"}, {"version", "0.6.3"}}},
                           {"sources", json::array({{{"name", "s3"},
                                                     {"type", "objectStore"},
                                                     {"objectStore", {{"bucket", "models"}}}}})}}}};
    auto created = client_->Create(core::resources::ModelRevisions(), namespace_, object);
    EXPECT_TRUE(created) << created.error().ToString();
    if (!created) return "";
    auto parsed = core::api::ModelRevisionFromJson(*created);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
    if (!parsed) return "";
    auto digest = core::api::ComputeRevisionDigest(parsed->spec);
    EXPECT_TRUE(digest) << digest.error().ToString();
    return digest ? *digest : "";
  }

  void WriteRevisionStatus(const std::string& name, const json& status) {
    auto patched =
        client_->Patch(core::resources::ModelRevisions(), namespace_, name, core::PatchType::kMerge,
                       {{"status", status}}, {.subresource = "status"});
    ASSERT_TRUE(patched) << patched.error().ToString();
  }

  // A ModelCache with one spec entry for `revision` (unless `reason` is empty) and the status
  // an agent would report.
  void CreateCache(const std::string& node, const std::string& revision, const std::string& digest,
                   const std::string& reason, const json& status_entries) {
    json spec_entries = json::array();
    if (!reason.empty()) {
      spec_entries.push_back({{"revision", {{"namespace", namespace_}, {"name", revision}}},
                              {"digest", digest},
                              {"pinned", false},
                              {"reason", reason}});
    }
    auto created = client_->Create(core::resources::ModelCaches(), "",
                                   {{"apiVersion", "modelplane.io/v1alpha1"},
                                    {"kind", "ModelCache"},
                                    {"metadata", {{"name", node}}},
                                    {"spec", {{"revisions", spec_entries}}}});
    ASSERT_TRUE(created) << created.error().ToString();
    caches_.push_back(node);
    const json status = {{"capacityBytes", 1024 * kGiB},
                         {"usedBytes", 400 * kGiB},
                         {"reservedBytes", 10 * kGiB},
                         {"highWatermarkBytes", 800 * kGiB},
                         {"lowWatermarkBytes", 700 * kGiB},
                         {"zone", "zone-a"},
                         {"revisions", ::modelplane::testing::WithOwnSourceProofs(
                                           *client_, namespace_, status_entries)}};
    auto patched = client_->Patch(core::resources::ModelCaches(), "", node, core::PatchType::kMerge,
                                  {{"status", status}}, {.subresource = "status"});
    ASSERT_TRUE(patched) << patched.error().ToString();
  }

  // Creates a pod, waiting for the namespace's default ServiceAccount if admission needs it.
  json CreatePod(json pod) {
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    pod["metadata"]["namespace"] = namespace_;
    pod["spec"]["automountServiceAccountToken"] = false;
    pod["spec"]["containers"] = {{{"name", "server"}, {"image", "example.com/vllm:1"}}};
    core::Result<json> created = std::unexpected(core::Error(core::ErrorCode::kInternal, ""));
    EXPECT_TRUE(WaitUntil(
        [&] {
          created = client_->Create(core::resources::Pods(), namespace_, pod);
          return created.has_value();
        },
        kWait))
        << created.error().ToString();
    return created ? *created : json::object();
  }

  json Get(const std::string& name) {
    auto object = client_->Get(core::resources::ModelRevisions(), namespace_, name);
    EXPECT_TRUE(object) << object.error().ToString();
    return object ? *object : json::object();
  }

  std::string stderr_path_;
  std::vector<std::string> caches_;
};

TEST_F(PluginClusterTest, EveryVerbReadsAndWritesTheRealObjects) {
  const std::string digest = CreateRevision("llama-r2");
  ASSERT_FALSE(digest.empty());
  // ModelCaches are cluster-wide: names unique to this run, short enough for the NODE column.
  const std::string prefix = "mp-plugin-" + namespace_.substr(namespace_.rfind('-') + 1);
  const std::string ready_node = prefix + "-a";
  const std::string staging_node = prefix + "-b";
  const std::string refused_node = prefix + "-c";
  WriteRevisionStatus(
      "llama-r2",
      {{"observedGeneration", 1},
       {"digest", digest},
       {"totalBytes", 140 * kGiB},
       {"phase", "Staging"},
       {"desiredNodes", 3},
       {"stagingNodes", 1},
       {"readyNodes", 1},
       {"failedNodes", 1},
       {"bytesToReadySeconds", {{"p50", 42.5}, {"p95", 42.5}, {"p99", 42.5}}},
       {"fetchedBytes",
        {{"byTier", {{"objectStore", 35 * kGiB}, {"peer", 140 * kGiB}}},
         {"originBytes", 35 * kGiB},
         {"originBytesPerReplica", 35 * kGiB}}},
       {"nodes",
        json::array({{{"node", ready_node}, {"tier", "peer"}, {"bytesToReadySeconds", 42.5}},
                     {{"node", staging_node}, {"tier", "objectStore"}},
                     {{"node", refused_node}}})},
       {"conditions", json::array({{{"type", "Valid"},
                                    {"status", "True"},
                                    {"reason", "Valid"},
                                    {"message", "spec is valid"},
                                    {"lastTransitionTime", "2026-01-01T11:55:01Z"}}})}});
  CreateCache(
      ready_node, "llama-r2", digest, "prestage",
      json::array(
          {{{"digest", digest},
            {"state", "Ready"},
            {"bytesDone", 140 * kGiB},
            {"bytesTotal", 140 * kGiB},
            {"sourceTier", "peer"},
            {"uniqueBytes", 140 * kGiB},
            {"protection", {"wanted"}},
            {"timestamps",
             {{"queued", "2026-01-01T11:56:00Z"}, {"published", "2026-01-01T11:56:42.5Z"}}}}}));
  CreateCache(staging_node, "llama-r2", digest, "in-use",
              json::array({{{"digest", digest},
                            {"state", "Staging"},
                            {"bytesDone", 35 * kGiB},
                            {"bytesTotal", 140 * kGiB},
                            {"sourceTier", "objectStore"},
                            {"protection", {"reserved", "wanted"}}}}));
  CreateCache(refused_node, "llama-r2", digest, "prestage",
              json::array({{{"digest", digest},
                            {"state", "Failed"},
                            {"bytesTotal", 140 * kGiB},
                            {"reason", "InsufficientCapacity"},
                            {"message", "needs 140.0 GiB; 20.0 GiB can be freed"}}}));
  ASSERT_FALSE(HasFatalFailure());
  const json pod =
      CreatePod({{"metadata",
                  {{"name", "llama-0"}, {"annotations", {{"modelplane.io/revision", "llama-r2"}}}}},
                 {"spec",
                  {{"schedulingGates", {{{"name", "modelplane.io/weights"}}}},
                   {"readinessGates", {{{"conditionType", "modelplane.io/weights-ready"}}}}}}});
  ASSERT_FALSE(pod.empty());
  core::EventRecorder events(*client_,
                             {.reporting_controller = "modelplane.io/operator",
                              .reporting_instance = "plugin-cluster-test"},
                             clock_);
  auto recorded = events.Record(pod, "Normal", "WaitingForWeights", "Gate",
                                "waiting for " + staging_node + " to stage the revision");
  ASSERT_TRUE(recorded) << recorded.error().ToString();

  // status
  const Output status = Plugin("status llama-r2 -n " + namespace_);
  ASSERT_EQ(status.status, 0) << status.err;
  EXPECT_EQ(status.err, "");
  EXPECT_NE(status.out.find("Phase:          Staging\n"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("Digest:         " + digest + "\n"), std::string::npos) << status.out;
  const std::string ready_row = RowOf(status.out, ready_node + " ");
  EXPECT_NE(ready_row.find("Ready"), std::string::npos) << status.out;
  EXPECT_NE(ready_row.find("peer"), std::string::npos) << ready_row;
  EXPECT_NE(ready_row.find("42.5s"), std::string::npos) << ready_row;
  const std::string staging_row = RowOf(status.out, staging_node + " ");
  EXPECT_NE(staging_row.find("Staging"), std::string::npos) << status.out;
  EXPECT_NE(staging_row.find("35.0 GiB (25%)"), std::string::npos) << staging_row;
  EXPECT_NE(RowOf(status.out, refused_node + " ").find("Failed"), std::string::npos);
  EXPECT_NE(status.out.find(refused_node + ": InsufficientCapacity: needs 140.0 GiB"),
            std::string::npos)
      << status.out;
  // status.fetchedBytes as the API server stored it (the CRD's schema kept every field).
  EXPECT_EQ(FieldValue(status.out, "Fetched"),
            "objectStore 35.0 GiB, peer 140.0 GiB; from origins 35.0 GiB, 35.0 GiB per Ready node")
      << status.out;

  // why: the gated pod, with what the fleet holds and the operator's event.
  const Output why = Plugin("-n " + namespace_ + " why llama-0");
  ASSERT_EQ(why.status, 0) << why.err;
  const std::string paragraph = Joined(why.out);
  EXPECT_NE(paragraph.find("Pod " + namespace_ + "/llama-0 is gated"), std::string::npos)
      << why.out;
  EXPECT_NE(paragraph.find("is Ready on 1 node (" + ready_node + ")"), std::string::npos)
      << why.out;
  EXPECT_NE(paragraph.find("staging on " + staging_node + " (25% of 140.0 GiB)"), std::string::npos)
      << why.out;
  EXPECT_NE(paragraph.find("refused on " + refused_node + " (InsufficientCapacity"),
            std::string::npos)
      << why.out;
  EXPECT_NE(paragraph.find("(Normal WaitingForWeights, "), std::string::npos) << why.out;
  EXPECT_NE(paragraph.find("waiting for " + staging_node + " to stage the revision"),
            std::string::npos)
      << why.out;

  // cache, with the kubeconfig from KUBECONFIG rather than the flag.
  const Output cache = Plugin("cache " + ready_node, /*kubeconfig_flag=*/false);
  ASSERT_EQ(cache.status, 0) << cache.err;
  EXPECT_NE(cache.out.find("ModelCache:     " + ready_node + " (zone zone-a)"), std::string::npos)
      << cache.out;
  EXPECT_NE(cache.out.find("Capacity:       1.0 TiB; used 400.0 GiB (39%), reserved 10.0 GiB"),
            std::string::npos)
      << cache.out;
  const std::string revision_row = RowOf(cache.out, namespace_.substr(0, 10));
  EXPECT_NE(revision_row.find("Ready"), std::string::npos) << cache.out;
  EXPECT_NE(revision_row.find("prestage"), std::string::npos) << revision_row;
  EXPECT_NE(revision_row.find("wanted"), std::string::npos) << revision_row;

  // prestage changes spec.prestage.nodes on the server.
  const Output prestage = Plugin("prestage llama-r2 --nodes 3 -n " + namespace_);
  ASSERT_EQ(prestage.status, 0) << prestage.err;
  EXPECT_NE(Joined(prestage.out).find("spec.prestage.nodes 0 -> 3"), std::string::npos)
      << prestage.out;
  EXPECT_EQ(Get("llama-r2")["spec"]["prestage"]["nodes"], 3);

  // revoke sets spec.revoked and says how to watch the purge; a second revoke writes nothing.
  const Output revoke = Plugin("revoke llama-r2 -n " + namespace_);
  ASSERT_EQ(revoke.status, 0) << revoke.err;
  EXPECT_NE(revoke.out.find("status.purge"), std::string::npos) << revoke.out;
  const json revoked = Get("llama-r2");
  EXPECT_EQ(revoked["spec"]["revoked"], true);
  const Output again = Plugin("revoke llama-r2 -n " + namespace_);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(Joined(again.out).find("was already revoked"), std::string::npos) << again.out;
  EXPECT_EQ(Get("llama-r2")["metadata"]["resourceVersion"], revoked["metadata"]["resourceVersion"]);

  // Prestaging a revoked revision is refused before anything is written.
  const Output refused = Plugin("prestage llama-r2 --nodes 1 -n " + namespace_);
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(Lines(refused.err).size(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("is revoked"), std::string::npos) << refused.err;
  EXPECT_EQ(Get("llama-r2")["spec"]["prestage"]["nodes"], 3);
}

// A tenant who may read the namespace's ModelRevisions and ModelQuotas and nothing else (what
// the chart's tenant roles give Kubernetes' view role) reads its usage against its quota.
TEST_F(PluginClusterTest, ATenantReadsItsQuotaWithoutAnyClusterWideRight) {
  ASSERT_TRUE(CrdInstalled("modelquotas.modelplane.io")) << core::testing::kModelQuotaCrdMissing;
  ASSERT_FALSE(CreateRevision("llama-r2").empty());
  WriteRevisionStatus(
      "llama-r2",
      {{"phase", "Pending"},
       {"desiredNodes", 0},
       {"readyNodes", 0},
       {"conditions",
        json::array({{{"type", "WithinQuota"},
                      {"status", "False"},
                      {"reason", "QuotaExceeded"},
                      {"message", "prestaged on 0 of 2 nodes asked: ModelQuota " + namespace_ +
                                      "/limits allows 100.0 GiB of prestaged copies"},
                      {"lastTransitionTime", "2026-01-01T11:55:01Z"}}})}});
  const json quota = {{"apiVersion", "modelplane.io/v1alpha1"},
                      {"kind", "ModelQuota"},
                      {"metadata", {{"name", "limits"}, {"namespace", namespace_}}},
                      {"spec", {{"prestagedBytes", "100Gi"}, {"pinTtlAfterLastUse", "24h"}}}};
  ASSERT_TRUE(client_->Create(core::resources::ModelQuotas(), namespace_, quota));
  auto reported =
      client_->Patch(core::resources::ModelQuotas(), namespace_, "limits", core::PatchType::kMerge,
                     {{"status",
                       {{"used", {{"prestagedBytes", 0}, {"pinnedBytes", 0}}},
                        {"limitedRevisions", {"llama-r2"}},
                        {"limitedCount", 1}}}},
                     {.subresource = "status"});
  ASSERT_TRUE(reported) << reported.error().ToString();

  // The tenant: a ServiceAccount with a Role that reads the two kinds, and a token for it.
  for (const auto& [path, object] : std::vector<std::pair<std::string, json>>{
           {"/api/v1/namespaces/" + namespace_ + "/serviceaccounts",
            {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "tenant"}}}}},
           {"/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace_ + "/roles",
            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
             {"kind", "Role"},
             {"metadata", {{"name", "tenant"}}},
             {"rules", json::array({{{"apiGroups", {"modelplane.io"}},
                                     {"resources", {"modelrevisions", "modelquotas"}},
                                     {"verbs", {"get", "list"}}}})}}},
           {"/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace_ + "/rolebindings",
            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
             {"kind", "RoleBinding"},
             {"metadata", {{"name", "tenant"}}},
             {"roleRef",
              {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "tenant"}}},
             {"subjects", json::array({{{"kind", "ServiceAccount"},
                                        {"name", "tenant"},
                                        {"namespace", namespace_}}})}}}}) {
    auto created = client_->Request("POST", path, object, "application/json");
    ASSERT_TRUE(created) << path << ": " << created.error().ToString();
  }
  auto token =
      client_->Request("POST", "/api/v1/namespaces/" + namespace_ + "/serviceaccounts/tenant/token",
                       {{"apiVersion", "authentication.k8s.io/v1"},
                        {"kind", "TokenRequest"},
                        {"spec", {{"expirationSeconds", 600}}}},
                       "application/json");
  ASSERT_TRUE(token) << token.error().ToString();
  const std::string ca_path = "/tmp/" + namespace_ + "-ca.crt";
  const std::string tenant_kubeconfig = "/tmp/" + namespace_ + "-tenant.kubeconfig";
  {
    std::ofstream(ca_path) << config_.certificate_authority_pem;
    std::ofstream(tenant_kubeconfig)
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
        << config_.server << "\n    certificate-authority: " << ca_path
        << "\nusers:\n- name: tenant\n  user:\n    token: "
        << (*token)["status"]["token"].get<std::string>()
        << "\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: tenant\n    "
           "namespace: "
        << namespace_ << "\ncurrent-context: c\n";
  }
  const std::string saved = kubeconfig_path_;
  kubeconfig_path_ = tenant_kubeconfig;
  const Output output = Plugin("quota");
  const Output status = Plugin("status");
  const Output caches = Plugin("cache gpu-node-0");
  kubeconfig_path_ = saved;
  std::remove(ca_path.c_str());
  std::remove(tenant_kubeconfig.c_str());

  EXPECT_EQ(output.status, 0) << output.err;
  EXPECT_EQ(FieldValue(output.out, "Namespace"), namespace_) << output.out;
  EXPECT_EQ(FieldValue(output.out, "Prestaged"),
            "0 B of 100.0 GiB (0%; ModelQuota " + namespace_ + "/limits)")
      << output.out;
  EXPECT_EQ(FieldValue(output.out, "Limited"), "1 revision: llama-r2") << output.out;
  EXPECT_NE(Joined(output.out).find("llama-r2: QuotaExceeded: prestaged on 0 of 2 nodes asked"),
            std::string::npos)
      << output.out;
  EXPECT_EQ(output.out.find("gpu-node"), std::string::npos) << "names no node";
  EXPECT_EQ(status.out, output.out) << "status without a revision is the same view";
  EXPECT_EQ(caches.status, 1) << "the tenant may not read a node's cache: " << caches.out;
}

TEST_F(PluginClusterTest, MissingObjectsAreOneLineErrors) {
  for (const std::string& arguments :
       {"status missing -n " + namespace_, "why missing -n " + namespace_,
        "cache " + namespace_ + "-none", "revoke missing -n " + namespace_}) {
    const Output output = Plugin(arguments);
    EXPECT_EQ(output.status, 1) << arguments;
    EXPECT_EQ(output.out, "") << arguments;
    EXPECT_EQ(Lines(output.err).size(), 1u) << output.err;
    EXPECT_TRUE(output.err.starts_with("error: ")) << output.err;
    EXPECT_NE(output.err.find("not found"), std::string::npos) << output.err;
  }
}

TEST_F(PluginClusterTest, WhyExplainsAPendingPodAndARunningOne) {
  // No node has this label: kube-scheduler reports the pod Unschedulable.
  CreatePod({{"metadata", {{"name", "nowhere"}}},
             {"spec", {{"nodeSelector", {{"modelplane.io/test", "no-such-node"}}}}}});
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto pod = client_->Get(core::resources::Pods(), namespace_, "nowhere");
        return pod && pod->dump().find("Unschedulable") != std::string::npos;
      },
      kWait));
  const Output pending = Plugin("why nowhere -n " + namespace_);
  ASSERT_EQ(pending.status, 0) << pending.err;
  EXPECT_NE(
      Joined(pending.out).find("is pending: the scheduler cannot place it (Unschedulable: 0/"),
      std::string::npos)
      << pending.out;

  // KWOK runs pods bound to its nodes and reports them ready.
  auto nodes = client_->List(core::resources::Nodes(), "", {.label_selector = "type=kwok"});
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_FALSE(nodes->items.empty()) << "the test cluster has no KWOK node";
  const std::string node = nodes->items[0]["metadata"]["name"];
  CreatePod({{"metadata", {{"name", "running"}}}, {"spec", {{"nodeName", node}}}});
  Output running;
  EXPECT_TRUE(WaitUntil(
      [&] {
        running = Plugin("why running -n " + namespace_);
        return running.out.find("running and ready") != std::string::npos;
      },
      kWait))
      << running.out << running.err;
  EXPECT_EQ(Joined(running.out),
            "Pod " + namespace_ + "/running is running and ready on node " + node + ".");
}

// `import --apply` against the test Hub (e2e/hub/hub_server.py as its own process): the revision
// the YAML describes is created in the namespace, and a second import under the same name is
// refused with the name before the hub is asked again.
TEST_F(PluginClusterTest, ImportAppliesARevisionAndRefusesATakenName) {
  const std::string source = MODELPLANE_SOURCE_DIR;
  const std::string root = "/tmp/" + namespace_ + "-hub";
  const std::string model = root + "/model";
  std::filesystem::create_directories(model);
  std::ofstream(model + "/config.json") << R"({"layers": 2})";
  std::ofstream(model + "/model.safetensors") << std::string(8192, 'w');
  std::string commit;
  ASSERT_EQ(core::testing::RunCommand("python3 " + source + "/e2e/hub/seed_repo.py --root " + root +
                                          "/repos --repo acme/tiny --from " + model,
                                      &commit),
            0);
  commit = commit.substr(0, commit.find('\n'));
  auto hub = ::modelplane::testing::ChildProcess::Start(
      {"python3", source + "/e2e/hub/hub_server.py", "--root", root + "/repos", "--port", "0",
       "--lfs-threshold", "4096"},
      {.log_path = root + "/hub.log", .log_stdout_only = true, .die_with_parent = true});
  ASSERT_TRUE(hub) << hub.error().ToString();
  std::string hub_url;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const json urls = json::parse(hub->Log(), nullptr, /*allow_exceptions=*/false);
        if (urls.is_object()) hub_url = urls.value("hub", "");
        return !hub_url.empty();
      },
      kWait));
  const std::string import = "import hf://acme/tiny --name tiny-hub --engine-version 0.6.3 -n " +
                             namespace_ + " --endpoint " + hub_url + " --apply";

  const Output applied = Plugin(import);
  EXPECT_EQ(applied.status, 0) << applied.err;
  EXPECT_EQ(applied.out, "modelrevision.modelplane.io/tiny-hub created\n");
  const json revision = Get("tiny-hub");
  EXPECT_EQ(revision.value(json::json_pointer("/spec/sources/0/huggingFace/commit"), ""), commit);
  EXPECT_EQ(revision.value(json::json_pointer("/spec/repositoryRevision"), ""), "main");
  EXPECT_EQ(revision["spec"]["files"].size(), 2U) << revision.dump();

  const Output again = Plugin(import);
  EXPECT_NE(again.status, 0);
  EXPECT_EQ(again.out, "");
  EXPECT_NE(again.err.find("ModelRevision " + namespace_ + "/tiny-hub already exists"),
            std::string::npos)
      << again.err;
  std::string revision_lookups;
  ASSERT_EQ(core::testing::RunCommand(
                "python3 -c 'import json, sys, urllib.request; print(json.load(urllib.request."
                "urlopen(sys.argv[1]))[\"hub\"][\"revision\"])' " +
                    hub_url + "/_test/stats",
                &revision_lookups),
            0);
  EXPECT_EQ(revision_lookups, "1\n");  // the refused import never asked the hub
  hub->Stop();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace modelplane::cli
