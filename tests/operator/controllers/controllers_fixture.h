// The operator's controllers in-process against the real API server and KWOK nodes of
// e2e/cluster.sh (CRDs applied: `kubectl apply -f crds/`): the fixture the controller cluster
// tests share. Each test watches ModelRevisions in its own namespace; ModelCaches, Nodes and
// Pods are cluster-wide, as in production.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/api/object_key.h"
#include "core/api/revision_digest.h"
#include "core/metrics/metrics_registry.h"
#include "core/pki/certificate_authority.h"
#include "operator/certificates/peer_ticket_issuer.h"
#include "operator/controllers/cache_entries.h"
#include "operator/controllers/controller_manager.h"
#include "tests/core/kube/cluster/cluster_fixture.h"
#include "tests/support/source_proof_status.h"

namespace modelplane::controller::cluster_testing {

using core::testing::WaitUntil;
using nlohmann::json;
using std::chrono::seconds;

inline constexpr auto kWait = std::chrono::seconds(30);
inline constexpr std::array<std::string_view, 4> kKwokNodes = {"gpu-node-0", "gpu-node-1",
                                                               "gpu-node-2", "gpu-node-3"};

inline json Revision(const std::string& ns, const std::string& name, int nodes) {
  return {
      {"apiVersion", "modelplane.io/v1alpha1"},
      {"kind", "ModelRevision"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"modelName", "tiny"},
        {"files", json::array({{{"path", "model.safetensors"},
                                {"size", 4096},
                                {"sha256", "sha256:" + std::string(64, '1')},
                                {"role", "weights"}},
                               {{"path", "config.json"},
                                {"size", 100},
                                {"sha256", "sha256:" + std::string(64, '2')},
                                {"role", "config"}}})},
        {"format", "safetensors"},
        {"engine", {{"name", "vllm"}, {"version", "0.6.0"}}},
        {"sources",
         json::array(
             {{{"name", "s3"}, {"type", "objectStore"}, {"objectStore", {{"bucket", "models"}}}}})},
        {"prestage", {{"nodeSelector", {{"type", "kwok"}}}, {"nodes", nodes}}}}}};
}

// A revision whose first file differs from the fixture's by its digest: a different cache key.
inline json RevisionWithContent(const std::string& ns, const std::string& name, char content,
                                int prestage) {
  json revision = Revision(ns, name, prestage);
  revision["spec"]["files"][0]["sha256"] = "sha256:" + std::string(64, content);
  return revision;
}

// A Node that KWOK takes for one of its own (the annotation) and keeps Ready. Without
// `resources` KWOK reports its default capacity; with them, they are the node's capacity and
// allocatable.
inline json KwokNode(const std::string& name, json labels, const json& resources = nullptr) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", name},
                 {"annotations", {{"kwok.x-k8s.io/node", "fake"}}},
                 {"labels", std::move(labels)}}}};
  if (!resources.is_null()) node["status"] = {{"allocatable", resources}, {"capacity", resources}};
  return node;
}

class ControllersTest : public core::testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!ModelplaneCrdsInstalled()) GTEST_SKIP() << core::testing::kModelplaneCrdsMissing;
    auto metrics = ControllerMetrics::Register(registry_);
    ASSERT_TRUE(metrics) << metrics.error().ToString();
    metrics_.emplace(std::move(*metrics));
    auto logger = core::Logger::Create({.component = "operator-test"});
    ASSERT_TRUE(logger);
    logger_.emplace(std::move(*logger));
    auto peer_ca = core::CertificateAuthority::Generate(
        "operator-test peer CA", std::chrono::system_clock::now() + std::chrono::hours(24));
    ASSERT_TRUE(peer_ca) << peer_ca.error().ToString();
    peer_ca_certificate_ = peer_ca->certificate_pem();
    auto issuer = PeerTicketIssuer::Create(std::move(*peer_ca));
    ASSERT_TRUE(issuer) << issuer.error().ToString();
    peer_tickets_ = std::move(*issuer);
    StartManager();
  }

  // The operator's controllers as a leader runs them; a second call is a new leader.
  void StartManager() {
    if (manager_) manager_->Stop();
    revision_passes_before_ = RevisionPassesReturned();  // the counter outlives a leader
    manager_ = std::make_unique<ControllerManager>(
        *client_, *watcher_,
        ControllerOptions{
            .namespace_scope = namespace_,
            .resync_period = seconds(0),
            .reporting_instance = "operator-test",
            .source_policy = core::SourcePolicy{.object_stores = {{.buckets = allowed_buckets_,
                                                                   .node_credentials = true}}},
            .admission = admission_options_,
            .peer_tickets = peer_tickets_},
        *metrics_, *logger_, clock_);
    core::CancellationToken never;
    ASSERT_TRUE(manager_->Start(never));
  }

  void TearDown() override {
    if (manager_) {
      // Revisions go while the controllers still run, so their finalizers are released and no
      // entry is left in the shared ModelCaches.
      EXPECT_TRUE(DeleteAllInNamespace(core::resources::ModelRevisions(), kWait));
      manager_->Stop();
    }
    // ModelCaches are cluster-wide: what this test reported must not be seen by the next one
    // (tests share revision specs, hence digests).
    for (const std::string& cache : reported_caches_) {
      (void)client_->Patch(core::resources::ModelCaches(), "", cache, core::PatchType::kMerge,
                           {{"status", {{"revisions", json::array()}}}}, {.subresource = "status"});
    }
    ClusterTest::TearDown();
  }

  json GetRevision(const std::string& name) {
    auto revision = client_->Get(core::resources::ModelRevisions(), namespace_, name);
    return revision ? *revision : json();
  }

  // The revision's status, or an empty object while the revision or its status does not exist
  // yet, so that polls can call value() on it from the first try.
  json RevisionStatus(const std::string& name) {
    const json revision = GetRevision(name);
    return revision.is_object() ? revision.value("status", json::object()) : json::object();
  }

  // Names of the ModelCaches whose spec lists namespace_/name.
  std::set<std::string> CachesListing(const std::string& name) {
    std::set<std::string> names;
    auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
    if (!caches) return names;
    for (const json& cache : caches->items) {
      for (const std::string& key : SpecRevisionKeys(cache)) {
        if (key == core::api::ObjectKey(namespace_, name)) names.insert(cache["metadata"]["name"]);
      }
    }
    return names;
  }

  std::string ZoneOf(const std::string& node) {
    auto object = client_->Get(core::resources::Nodes(), "", node);
    if (!object) return "";
    return (*object)["metadata"]["labels"].value(std::string(kZoneLabel), "");
  }

  // Passes of the revision controller that have returned, whatever they answered: the sum of
  // its modelplane_operator_reconcile_total series, since the registry was made.
  std::uint64_t RevisionPassesReturned() const {
    static constexpr std::string_view kSeries =
        "modelplane_operator_reconcile_total{controller=\"modelrevision\",";
    std::uint64_t total = 0;
    std::istringstream lines(registry_.ExposeText());
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with(kSeries)) {
        total += static_cast<std::uint64_t>(std::stod(line.substr(line.rfind(' ') + 1)));
      }
    }
    return total;
  }

  // Waits until every pass of the revision controller begun before the call has returned, so
  // that what it decided from what it had seen by then is written. A "nothing happened" check
  // after it reads the controller's answer instead of racing it. True once an instant comes
  // with no pass in flight: all the passes begun by then (counted when they begin) have
  // returned (counted when they return, read first).
  [[nodiscard]] bool WaitForRevisionPasses() {
    return WaitUntil(
        [&] {
          const std::uint64_t returned = RevisionPassesReturned() - revision_passes_before_;
          return returned == manager_->revision_stats().reconciles.load();
        },
        kWait);
  }

  // Writes a ModelCache's status as a node agent would (the status subresource).
  void WriteCacheStatus(const std::string& cache, const json& revisions) {
    auto written = client_->Patch(
        core::resources::ModelCaches(), "", cache, core::PatchType::kMerge,
        {{"status",
          {{"capacityBytes", 1LL << 40},
           {"usedBytes", 0},
           {"reservedBytes", 0},
           {"revisions",
            ::modelplane::testing::WithOwnSourceProofs(*client_, namespace_, revisions)}}}},
        {.subresource = "status"});
    ASSERT_TRUE(written) << written.error().ToString();
    reported_caches_.insert(cache);
  }

  // Set by a derived fixture's constructor, before SetUp starts the controllers.
  std::vector<std::string> allowed_buckets_ = {"models"};
  AdmissionOptions admission_options_;
  std::shared_ptr<const PeerTicketIssuer> peer_tickets_;  // a throwaway peer CA's
  std::string peer_ca_certificate_;
  core::MetricsRegistry registry_;
  std::optional<ControllerMetrics> metrics_;
  std::optional<core::Logger> logger_;
  std::unique_ptr<ControllerManager> manager_;
  std::set<std::string> reported_caches_;
  std::uint64_t revision_passes_before_ = 0;  // RevisionPassesReturned when manager_ started
};

}  // namespace modelplane::controller::cluster_testing
