#include "core/kube/resource_type.h"

namespace modelplane::core {

std::string ResourceType::Path(const std::string& namespace_name, const std::string& name,
                               const std::string& subresource) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !namespace_name.empty()) path += "/namespaces/" + namespace_name;
  path += "/" + resource;
  if (!name.empty()) {
    path += "/" + name;
    if (!subresource.empty()) path += "/" + subresource;
  }
  return path;
}

namespace resources {
ResourceType Pods() {
  return {"", "v1", "pods", "Pod", true};
}
ResourceType Nodes() {
  return {"", "v1", "nodes", "Node", false};
}
ResourceType Leases() {
  return {"coordination.k8s.io", "v1", "leases", "Lease", true};
}
ResourceType Events() {
  return {"events.k8s.io", "v1", "events", "Event", true};
}
ResourceType ConfigMaps() {
  return {"", "v1", "configmaps", "ConfigMap", true};
}
ResourceType Namespaces() {
  return {"", "v1", "namespaces", "Namespace", false};
}
ResourceType ModelRevisions() {
  return {"modelplane.io", "v1alpha1", "modelrevisions", "ModelRevision", true};
}
ResourceType ModelCaches() {
  return {"modelplane.io", "v1alpha1", "modelcaches", "ModelCache", false};
}
ResourceType ModelRevocations() {
  return {"modelplane.io", "v1alpha1", "modelrevocations", "ModelRevocation", false};
}
ResourceType ModelQuotas() {
  return {"modelplane.io", "v1alpha1", "modelquotas", "ModelQuota", true};
}
ResourceType CertificateSigningRequests() {
  return {"certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest",
          false};
}
ResourceType SourceBudgets() {
  return {"modelplane.io", "v1alpha1", "sourcebudgets", "SourceBudget", false};
}
ResourceType Deployments() {
  return {"apps", "v1", "deployments", "Deployment", true};
}
ResourceType StatefulSets() {
  return {"apps", "v1", "statefulsets", "StatefulSet", true};
}
ResourceType ReplicaSets() {
  return {"apps", "v1", "replicasets", "ReplicaSet", true};
}
ResourceType ControllerRevisions() {
  return {"apps", "v1", "controllerrevisions", "ControllerRevision", true};
}
}  // namespace resources

}  // namespace modelplane::core
