// Typed access over KubeClient: the same requests, with objects converted to and from C++
// types. ResourceTraits<T> says where a type lives and how it converts; it is specialised here
// for ModelRevision, ModelCache, Pod, Node, Lease and Event. Anything else stays untyped JSON.
//
//   TypedClient<api::ModelRevision> revisions(client);
//   auto revision = revisions.Get("models", "llama-r1");
//
// A document the server returns that does not convert is an error naming the field, never a
// half-filled object. Thread safety: as KubeClient.
#pragma once

#include <string>
#include <vector>

#include "core/api/model_cache.h"
#include "core/api/model_revision.h"
#include "core/kube/builtin_types.h"
#include "core/kube/kube_client.h"

namespace modelplane::core {

template <typename T>
struct ResourceTraits;

template <>
struct ResourceTraits<api::ModelRevision> {
  static ResourceType Type() { return resources::ModelRevisions(); }
  static Result<api::ModelRevision> FromJson(const nlohmann::json& v) {
    return api::ModelRevisionFromJson(v);
  }
  static nlohmann::json ToJson(const api::ModelRevision& v) { return api::ToJson(v); }
};

template <>
struct ResourceTraits<api::ModelCache> {
  static ResourceType Type() { return resources::ModelCaches(); }
  static Result<api::ModelCache> FromJson(const nlohmann::json& v) {
    return api::ModelCacheFromJson(v);
  }
  static nlohmann::json ToJson(const api::ModelCache& v) { return api::ToJson(v); }
};

template <>
struct ResourceTraits<Pod> {
  static ResourceType Type() { return resources::Pods(); }
  static Result<Pod> FromJson(const nlohmann::json& v) { return PodFromJson(v); }
  static nlohmann::json ToJson(const Pod& v) { return core::ToJson(v); }
};

template <>
struct ResourceTraits<Node> {
  static ResourceType Type() { return resources::Nodes(); }
  static Result<Node> FromJson(const nlohmann::json& v) { return NodeFromJson(v); }
  static nlohmann::json ToJson(const Node& v) { return core::ToJson(v); }
};

template <>
struct ResourceTraits<Lease> {
  static ResourceType Type() { return resources::Leases(); }
  static Result<Lease> FromJson(const nlohmann::json& v) { return LeaseFromJson(v); }
  static nlohmann::json ToJson(const Lease& v) { return core::ToJson(v); }
};

template <>
struct ResourceTraits<Event> {
  static ResourceType Type() { return resources::Events(); }
  static Result<Event> FromJson(const nlohmann::json& v) { return EventFromJson(v); }
  static nlohmann::json ToJson(const Event& v) { return core::ToJson(v); }
};

template <typename T>
class TypedClient {
 public:
  using Traits = ResourceTraits<T>;

  explicit TypedClient(KubeClient& client) : client_(client) {}

  [[nodiscard]] Result<T> Get(const std::string& namespace_name, const std::string& name) {
    return Convert(client_.Get(Traits::Type(), namespace_name, name));
  }

  [[nodiscard]] Result<std::vector<T>> List(const std::string& namespace_name,
                                            const ListOptions& options = {}) {
    auto page = client_.ListAll(Traits::Type(), namespace_name, options);
    if (!page) return std::unexpected(page.error());
    std::vector<T> items;
    items.reserve(page->items.size());
    for (const auto& item : page->items) {
      auto typed = Traits::FromJson(item);
      if (!typed) return std::unexpected(typed.error());
      items.push_back(std::move(*typed));
    }
    return items;
  }

  [[nodiscard]] Result<T> Create(const T& object) {
    const nlohmann::json document = Traits::ToJson(object);
    return Convert(client_.Create(Traits::Type(), NamespaceOf(document), document));
  }

  [[nodiscard]] Result<T> Update(const T& object) {
    return Convert(client_.Update(Traits::Type(), Traits::ToJson(object)));
  }

  [[nodiscard]] Result<T> UpdateStatus(const T& object) {
    return Convert(client_.UpdateStatus(Traits::Type(), Traits::ToJson(object)));
  }

  // Server-side apply of the whole object as this field manager's intent.
  [[nodiscard]] Result<T> Apply(const T& object, const PatchOptions& options) {
    nlohmann::json document = Traits::ToJson(object);
    // An apply must not carry a resourceVersion unless it means it as a precondition.
    if (document.contains("metadata")) document["metadata"].erase("resourceVersion");
    const std::string name = document["metadata"].value("name", "");
    return Convert(client_.Patch(Traits::Type(), NamespaceOf(document), name, PatchType::kApply,
                                 document, options));
  }

  [[nodiscard]] Status Delete(const std::string& namespace_name, const std::string& name,
                              const DeleteOptions& options = {}) {
    return client_.Delete(Traits::Type(), namespace_name, name, options);
  }

 private:
  static std::string NamespaceOf(const nlohmann::json& document) {
    if (!document.contains("metadata") || !document["metadata"].is_object()) return "";
    return document["metadata"].value("namespace", "");
  }
  static Result<T> Convert(Result<nlohmann::json> document) {
    if (!document) return std::unexpected(document.error());
    return Traits::FromJson(*document);
  }

  KubeClient& client_;
};

}  // namespace modelplane::core
