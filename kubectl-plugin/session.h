// One run of a `kubectl modelplane` verb against the cluster: the connection chosen from the
// global flags (--kubeconfig, --context, -n) and the reads every verb shares. Connect is a
// separate step, so a verb that needs no cluster (import without --apply) never asks for one.
// Thread safety: one thread (the verb's).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/timestamp.h"
#include "core/error/error.h"
#include "core/kube/kube_client.h"
#include "core/kube/resource_type.h"
#include "core/runtime/kube_connection.h"
#include "kubectl-plugin/plugin_app.h"
#include "kubectl-plugin/revision_copies.h"

namespace modelplane::cli {

// The global flags that say which cluster and namespace.
struct ClusterFlags {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
};

// Ends the verb: one line on stderr.
struct Failure {
  std::string message;
};

class Session {
 public:
  Session(const PluginContext& context, const ClusterFlags& flags)
      : context_(context), flags_(flags) {}

  // Connects to the API server; the namespace is -n's, else the kubeconfig context's.
  [[nodiscard]] std::optional<Failure> Connect();

  [[nodiscard]] const PluginContext& context() const { return context_; }
  // -n as given (empty when not), for verbs that run without a cluster.
  [[nodiscard]] const std::string& namespace_flag() const { return flags_.namespace_name; }

  // After Connect only.
  [[nodiscard]] core::KubeClient& client() { return *connection_->client; }
  [[nodiscard]] const std::string& namespace_name() const { return namespace_; }
  [[nodiscard]] core::api::Timestamp Now() const;

  // The ModelRevision named by the verb's argument, or a Failure naming it.
  [[nodiscard]] core::Result<nlohmann::json> GetRevision(const std::string& name);

  // Every ModelCache, or why they could not be listed (tenants may not list cluster objects).
  [[nodiscard]] CacheListing ListCaches() {
    return ListClusterObjects(core::resources::ModelCaches());
  }
  [[nodiscard]] ObjectListing ListSourceBudgets() {
    return ListClusterObjects(core::resources::SourceBudgets());
  }

  [[nodiscard]] std::vector<nlohmann::json> EventsAbout(const nlohmann::json& pod);

  [[nodiscard]] ObjectListing ListClusterObjects(const core::ResourceType& type);

  // "<kind> <name> not found" for a 404, else the error wrapped with what was read.
  [[nodiscard]] static core::Error ReadError(const core::Error& error, std::string_view kind,
                                             const std::string& name);

 private:
  const PluginContext& context_;
  const ClusterFlags& flags_;
  std::optional<core::KubeConnection> connection_;
  std::string namespace_;
};

}  // namespace modelplane::cli
