// Names a kind of Kubernetes object the way the REST API addresses it, and builds its paths.
//
// Thread safety: values.
#pragma once

#include <string>

namespace modelplane::core {

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "pods"
  std::string kind;      // "Pod"
  bool namespaced = true;

  [[nodiscard]] std::string ApiVersion() const {
    return group.empty() ? version : group + "/" + version;
  }
  // /api/v1[/namespaces/NS]/pods[/NAME[/SUBRESOURCE]]; empty namespace lists across all.
  [[nodiscard]] std::string Path(const std::string& namespace_name, const std::string& name = "",
                                 const std::string& subresource = "") const;
};

// The types modelplane's components touch; anything else can be described ad hoc.
namespace resources {
ResourceType Pods();
ResourceType Nodes();
ResourceType Leases();
ResourceType Events();
ResourceType ConfigMaps();
ResourceType Namespaces();
ResourceType ModelRevisions();
ResourceType ModelCaches();
ResourceType ModelRevocations();
ResourceType ModelQuotas();
ResourceType SourceBudgets();
ResourceType CertificateSigningRequests();
ResourceType Deployments();
ResourceType StatefulSets();
ResourceType ReplicaSets();
ResourceType ControllerRevisions();
}  // namespace resources

}  // namespace modelplane::core
