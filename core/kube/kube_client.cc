#include "core/kube/kube_client.h"

#include <algorithm>

#include <boost/asio/ssl.hpp>
#include <cpprest/http_client.h>

#include "core/http/retry_policy.h"
#include "core/kube/api_json_limits.h"
#include "core/kube/api_status.h"
#include "core/kube/kube_tls.h"
#include "core/text/percent_encoding.h"
#include "core/workqueue/rate_limiter.h"

namespace modelplane::core {
namespace {

namespace rest = web::http;
using nlohmann::json;

std::string ContentTypeOf(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kApply: return "application/apply-patch+yaml";
  }
  return "application/json";
}

std::string NameOf(const json& object) {
  return object.contains("metadata") ? object["metadata"].value("name", "") : "";
}
std::string NamespaceOf(const json& object) {
  return object.contains("metadata") ? object["metadata"].value("namespace", "") : "";
}

class RestKubeClient final : public KubeClient {
 public:
  RestKubeClient(KubeConfig config, KubeClientOptions options, const Clock& clock,
                 const rest::client::http_client_config& client_config)
      : config_(std::move(config)),
        options_(std::move(options)),
        clock_(clock),
        stop_(options_.stop != nullptr ? *options_.stop : never_stopped_),
        limiter_(options_.qps, options_.burst, clock),
        client_(config_.server, client_config) {}

  Result<json> Get(const ResourceType& type, const std::string& ns,
                   const std::string& name) override {
    return Request("GET", type.Path(ns, name), nullptr, "");
  }

  Result<ListPage> List(const ResourceType& type, const std::string& ns,
                        const ListOptions& options) override {
    std::string query;
    auto add = [&query](const std::string& key, const std::string& value) {
      if (value.empty()) return;
      query += (query.empty() ? "?" : "&") + key + "=" + PercentEncode(value);
    };
    add("labelSelector", options.label_selector);
    add("fieldSelector", options.field_selector);
    add("resourceVersion", options.resource_version);
    add("continue", options.continue_token);
    if (options.limit > 0) add("limit", std::to_string(options.limit));
    auto list = Request("GET", type.Path(ns) + query, nullptr, "");
    if (!list) return std::unexpected(list.error());
    ListPage page;
    if (list->contains("items") && (*list)["items"].is_array()) {
      page.items = std::move((*list)["items"]);
    }
    const json& metadata = list->value("metadata", json::object());
    page.resource_version = metadata.value("resourceVersion", "");
    page.continue_token = metadata.value("continue", "");
    // Items in a list carry no kind/apiVersion; restore them so they look like single GETs.
    for (auto& item : page.items) {
      item["kind"] = type.kind;
      item["apiVersion"] = type.ApiVersion();
    }
    return page;
  }

  Result<ListPage> ListAll(const ResourceType& type, const std::string& ns,
                           ListOptions options) override {
    ListPage all;
    bool first = true;
    while (true) {
      auto page = List(type, ns, options);
      if (!page) return std::unexpected(page.error());
      if (first) all.resource_version = page->resource_version;
      first = false;
      for (auto& item : page->items) all.items.push_back(std::move(item));
      if (page->continue_token.empty()) break;
      options.continue_token = page->continue_token;
      // A continued list is served from the first page's snapshot; a resourceVersion would
      // conflict with the token.
      options.resource_version.clear();
    }
    return all;
  }

  Result<json> Create(const ResourceType& type, const std::string& ns,
                      const json& object) override {
    return Request("POST", type.Path(ns), object, "application/json");
  }

  Result<json> Update(const ResourceType& type, const json& object) override {
    return Request("PUT", type.Path(NamespaceOf(object), NameOf(object)), object,
                   "application/json");
  }

  Result<json> UpdateStatus(const ResourceType& type, const json& object) override {
    return Request("PUT", type.Path(NamespaceOf(object), NameOf(object), "status"), object,
                   "application/json");
  }

  Result<json> Patch(const ResourceType& type, const std::string& ns, const std::string& name,
                     PatchType patch_type, const json& patch,
                     const PatchOptions& options) override {
    std::string query;
    if (!options.field_manager.empty()) {
      query = "?fieldManager=" + PercentEncode(options.field_manager);
    } else if (patch_type == PatchType::kApply) {
      return MakeError(ErrorCode::kInvalidArgument, "server-side apply needs a field manager");
    }
    if (options.force && patch_type == PatchType::kApply) {
      query += (query.empty() ? "?" : "&") + std::string("force=true");
    }
    // JSON is valid YAML, so an apply body is sent as JSON text under the YAML content type.
    return Request("PATCH", type.Path(ns, name, options.subresource) + query, patch,
                   ContentTypeOf(patch_type));
  }

  Status Delete(const ResourceType& type, const std::string& ns, const std::string& name,
                const DeleteOptions& options) override {
    json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
    if (options.precondition_uid) body["preconditions"]["uid"] = *options.precondition_uid;
    if (options.precondition_resource_version) {
      body["preconditions"]["resourceVersion"] = *options.precondition_resource_version;
    }
    if (!options.propagation_policy.empty()) {
      body["propagationPolicy"] = options.propagation_policy;
    }
    if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
    auto result = Request("DELETE", type.Path(ns, name), body, "application/json");
    if (!result) return std::unexpected(result.error());
    return {};
  }

  Result<json> Request(const std::string& method, const std::string& path_and_query,
                       const json& body, const std::string& content_type) override {
    const std::string what = method + " " + path_and_query;
    for (int attempt = 0;; ++attempt) {
      // After a stop a request goes at once: a component's last writes (a lease released, a
      // final status) are not held up by the rate limit.
      (void)stop_.SleepFor(clock_, limiter_.When(""));
      int status = 0;
      std::string text;
      std::optional<std::chrono::milliseconds> retry_after;
      if (auto sent =
              SendOnce(method, path_and_query, body, content_type, status, text, retry_after);
          !sent) {
        return std::unexpected(sent.error().Wrap(what));
      }
      if (status >= 200 && status < 300) {
        if (text.empty()) return json::object();
        auto document = ParseJsonDocument(text, kApiResponseJsonLimits);
        if (!document) {
          return MakeError(ErrorCode::kInternal,
                           what + ": response is not JSON: " + document.error().message());
        }
        return std::move(*document);
      }
      Error error = ErrorFromApiResponse(status, text, what);
      if (status == 429 && attempt < options_.max_throttle_retries) {
        const auto wait = std::min<std::chrono::milliseconds>(
            retry_after.value_or(std::chrono::seconds(1)), options_.max_retry_after);
        if (!stop_.SleepFor(clock_, wait)) {
          return std::unexpected(Stopped(what, "while the API server throttled it (429)"));
        }
        continue;
      }
      return std::unexpected(std::move(error));
    }
  }

  const KubeConfig& config() const override { return config_; }

 private:
  static Error Stopped(const std::string& what, const std::string& when) {
    return Error(ErrorCode::kCancelled, what + ": stopped " + when);
  }

  Status SendOnce(const std::string& method, const std::string& path_and_query, const json& body,
                  const std::string& content_type, int& status, std::string& text,
                  std::optional<std::chrono::milliseconds>& retry_after) {
    rest::http_request request(method);
    request.set_request_uri(path_and_query);
    request.headers().add("Accept", "application/json");
    request.headers().add("User-Agent", options_.user_agent);
    auto token = config_.token.Token();
    if (!token) return std::unexpected(token.error());
    if (!token->empty()) request.headers().add("Authorization", "Bearer " + *token);
    if (!body.is_null()) request.set_body(body.dump(), content_type);
    // A stop cancels the requests in flight at that moment (cpprestsdk closes their
    // connections) instead of waiting out the request timeout; requests sent after it run.
    pplx::cancellation_token_source cancel_request;
    std::optional<ScopedCancellationCallback> on_stop;
    if (!stop_.cancelled()) on_stop.emplace(stop_, [&cancel_request] { cancel_request.cancel(); });
    try {
      rest::http_response response = client_.request(request, cancel_request.get_token()).get();
      status = response.status_code();
      text = response.extract_string(/*ignore_content_type=*/true).get();
      if (auto header = response.headers().find("Retry-After");
          header != response.headers().end()) {
        retry_after = ParseRetryAfter(header->second);
      }
    } catch (const std::exception& exception) {
      // A cancel surfaces as task_canceled or as an http_exception ("Operation canceled"),
      // depending on where the request was.
      if (cancel_request.get_token().is_canceled()) {
        return MakeError(ErrorCode::kCancelled, "stopped in flight");
      }
      return MakeError(ErrorCode::kUnavailable,
                       std::string("request to the API server failed: ") + exception.what());
    }
    return {};
  }

  const KubeConfig config_;
  const KubeClientOptions options_;
  const Clock& clock_;
  CancellationToken never_stopped_;
  CancellationToken& stop_;
  TokenBucketRateLimiter limiter_;
  rest::client::http_client client_;
};

}  // namespace

Result<std::unique_ptr<KubeClient>> KubeClient::Create(KubeConfig config, KubeClientOptions options,
                                                       const Clock& clock) {
  // Prove the TLS material loads now, so a bad PEM is a start-up error and not a failure
  // inside every later request.
  try {
    boost::asio::ssl::context probe(boost::asio::ssl::context::tls_client);
    ConfigureKubeTls(config, probe);
  } catch (const std::exception& exception) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("kubeconfig TLS material is unusable: ") + exception.what());
  }
  rest::client::http_client_config client_config;
  client_config.set_timeout(options.request_timeout);
  client_config.set_validate_certificates(!config.insecure_skip_tls_verify);
  client_config.set_ssl_context_callback(
      [config](boost::asio::ssl::context& context) { ConfigureKubeTls(config, context); });
  try {
    return std::unique_ptr<KubeClient>(
        new RestKubeClient(std::move(config), std::move(options), clock, client_config));
  } catch (const std::exception& exception) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("cannot create API client: ") + exception.what());
  }
}

}  // namespace modelplane::core
