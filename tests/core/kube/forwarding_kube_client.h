// A KubeClient that hands every call to another (the real one). Tests derive from it and
// override only the calls they count or act on, so that what they observe is the real API
// server's answer.
#pragma once

#include <string>
#include <utility>

#include "core/kube/kube_client.h"

namespace modelplane::core::testing {

class ForwardingKubeClient : public KubeClient {
 public:
  explicit ForwardingKubeClient(KubeClient& real) : real_(real) {}

  Result<nlohmann::json> Get(const ResourceType& type, const std::string& namespace_name,
                             const std::string& name) override {
    return real_.Get(type, namespace_name, name);
  }
  Result<ListPage> List(const ResourceType& type, const std::string& namespace_name,
                        const ListOptions& options) override {
    return real_.List(type, namespace_name, options);
  }
  Result<ListPage> ListAll(const ResourceType& type, const std::string& namespace_name,
                           ListOptions options) override {
    return real_.ListAll(type, namespace_name, std::move(options));
  }
  Result<nlohmann::json> Create(const ResourceType& type, const std::string& namespace_name,
                                const nlohmann::json& object) override {
    return real_.Create(type, namespace_name, object);
  }
  Result<nlohmann::json> Update(const ResourceType& type, const nlohmann::json& object) override {
    return real_.Update(type, object);
  }
  Result<nlohmann::json> UpdateStatus(const ResourceType& type,
                                      const nlohmann::json& object) override {
    return real_.UpdateStatus(type, object);
  }
  Result<nlohmann::json> Patch(const ResourceType& type, const std::string& namespace_name,
                               const std::string& name, PatchType patch_type,
                               const nlohmann::json& patch, const PatchOptions& options) override {
    return real_.Patch(type, namespace_name, name, patch_type, patch, options);
  }
  Status Delete(const ResourceType& type, const std::string& namespace_name,
                const std::string& name, const DeleteOptions& options) override {
    return real_.Delete(type, namespace_name, name, options);
  }
  Result<nlohmann::json> Request(const std::string& method, const std::string& path_and_query,
                                 const nlohmann::json& body,
                                 const std::string& content_type) override {
    return real_.Request(method, path_and_query, body, content_type);
  }
  const KubeConfig& config() const override { return real_.config(); }

 private:
  KubeClient& real_;
};

}  // namespace modelplane::core::testing
