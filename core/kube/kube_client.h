// A Kubernetes REST client with the semantics client-go users rely on: typed errors,
// optimistic concurrency through resourceVersion, paged lists, every patch type a controller
// needs, server-side apply, client-side rate limiting, and Retry-After on throttling. Every wait
// (rate limit, Retry-After) runs on the injected clock and ends when the component stops.
//
// Requests go through cpprestsdk (which pools keep-alive connections); watches use Watcher
// (watch.h), which reads the chunked stream line by line with its own deadlines.
// Documents are untyped nlohmann::json; typed_client.h adds conversions for our own types.
// Thread safety: one KubeClient is shared by all threads of a process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cancel/cancellation_token.h"
#include "core/clock/clock.h"
#include "core/error/error.h"
#include "core/kube/kube_config.h"
#include "core/kube/resource_type.h"

namespace modelplane::core {

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902), supports "test" operations
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml: server-side apply
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // "" = most recent (quorum read)
  std::string continue_token;
  int limit = 500;  // page size; 0 = no paging
};

struct ListPage {
  nlohmann::json items = nlohmann::json::array();
  std::string resource_version;  // of the list, for starting a watch
  std::string continue_token;    // empty on the last page
};

struct PatchOptions {
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply: take ownership of conflicting fields
  std::string subresource;    // "status" to patch status
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or ""
  std::optional<int> grace_period_seconds;
};

struct KubeClientOptions {
  double qps = 50;  // client-side limit, as client-go's rest.Config
  int burst = 100;
  std::chrono::seconds request_timeout{30};
  int max_throttle_retries = 3;  // 429s retried after Retry-After before giving up
  // The longest Retry-After honoured; a longer one is cut to this, so that an absurd value
  // cannot park a controller for hours.
  std::chrono::seconds max_retry_after{60};
  std::string user_agent = "modelplane";
  // The component's shutdown. When it fires, requests in flight and waits before a throttled
  // retry end at once with kCancelled, and a wait for the rate limiter ends; requests sent
  // after it go at once and are not retried, so a component's last writes still work. May be
  // null (nothing ends early).
  CancellationToken* stop = nullptr;
};

class KubeClient {
 public:
  [[nodiscard]] static Result<std::unique_ptr<KubeClient>> Create(KubeConfig config,
                                                                  KubeClientOptions options,
                                                                  const Clock& clock);
  virtual ~KubeClient() = default;

  [[nodiscard]] virtual Result<nlohmann::json> Get(const ResourceType& type,
                                                   const std::string& namespace_name,
                                                   const std::string& name) = 0;
  // One page; follow continue_token for the next.
  [[nodiscard]] virtual Result<ListPage> List(const ResourceType& type,
                                              const std::string& namespace_name,
                                              const ListOptions& options) = 0;
  // All pages, concatenated; resource_version is that of the first page's snapshot.
  [[nodiscard]] virtual Result<ListPage> ListAll(const ResourceType& type,
                                                 const std::string& namespace_name,
                                                 ListOptions options) = 0;
  [[nodiscard]] virtual Result<nlohmann::json> Create(const ResourceType& type,
                                                      const std::string& namespace_name,
                                                      const nlohmann::json& object) = 0;
  // Fails with kConflict when object.metadata.resourceVersion is stale.
  [[nodiscard]] virtual Result<nlohmann::json> Update(const ResourceType& type,
                                                      const nlohmann::json& object) = 0;
  [[nodiscard]] virtual Result<nlohmann::json> UpdateStatus(const ResourceType& type,
                                                            const nlohmann::json& object) = 0;
  [[nodiscard]] virtual Result<nlohmann::json> Patch(const ResourceType& type,
                                                     const std::string& namespace_name,
                                                     const std::string& name, PatchType patch_type,
                                                     const nlohmann::json& patch,
                                                     const PatchOptions& options = {}) = 0;
  [[nodiscard]] virtual Status Delete(const ResourceType& type, const std::string& namespace_name,
                                      const std::string& name,
                                      const DeleteOptions& options = {}) = 0;

  // Anything else: method, path with query, JSON body (null for none), content type.
  [[nodiscard]] virtual Result<nlohmann::json> Request(const std::string& method,
                                                       const std::string& path_and_query,
                                                       const nlohmann::json& body,
                                                       const std::string& content_type) = 0;

  [[nodiscard]] virtual const KubeConfig& config() const = 0;
};

// The object, or a null document when the server answers that it does not exist (404); any
// other failure as it came. For readers to whom "absent" is an answer, not an error.
[[nodiscard]] inline Result<nlohmann::json> GetOrNull(KubeClient& client, const ResourceType& type,
                                                      const std::string& namespace_name,
                                                      const std::string& name) {
  auto object = client.Get(type, namespace_name, name);
  if (object) return std::move(*object);
  if (object.error().code() == ErrorCode::kNotFound) return nlohmann::json();
  return std::unexpected(object.error());
}

}  // namespace modelplane::core
