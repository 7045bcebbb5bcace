#include "kubectl-plugin/session.h"

#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/json/json_lookup.h"
#include "kubectl-plugin/kubeconfig_path.h"

namespace modelplane::cli {

namespace resources = core::resources;
using nlohmann::json;

namespace {

constexpr int kEventsRead = 200;  // events about one pod; the newest one is what is shown

}  // namespace

std::optional<Failure> Session::Connect() {
  auto choice = ChooseKubeconfig(flags_.kubeconfig, context_.getenv, context_.file_exists);
  if (!choice) return Failure{choice.error().message()};
  core::KubernetesConfig settings{.kubeconfig = choice->path, .context = flags_.context};
  auto connection = core::ConnectToKubernetes(settings, context_.clock, /*stop=*/nullptr);
  if (!connection) {
    return Failure{fmt::format("cannot talk to the API server (kubeconfig from {}): {}",
                               choice->source, connection.error().message())};
  }
  connection_ = std::move(*connection);
  namespace_ = !flags_.namespace_name.empty() ? flags_.namespace_name
                                              : connection_->config.default_namespace;
  return std::nullopt;
}

core::api::Timestamp Session::Now() const {
  return std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.WallNow());
}

core::Result<json> Session::GetRevision(const std::string& name) {
  auto revision = client().Get(resources::ModelRevisions(), namespace_, name);
  if (!revision) {
    return std::unexpected(
        ReadError(revision.error(), "ModelRevision", core::api::ObjectKey(namespace_, name)));
  }
  return std::move(*revision);
}

std::vector<json> Session::EventsAbout(const json& pod) {
  core::ListOptions options;
  options.field_selector =
      "regarding.kind=Pod,regarding.name=" + core::StringMember(pod, {"metadata", "name"});
  options.limit = kEventsRead;
  auto page = client().List(resources::Events(), namespace_, options);
  if (!page) return {};  // events explain, they are not needed to answer
  std::vector<json> events;
  for (json& item : page->items) events.push_back(std::move(item));
  return events;
}

ObjectListing Session::ListClusterObjects(const core::ResourceType& type) {
  ObjectListing listing;
  auto page = client().ListAll(type, "", {});
  if (!page) {
    listing.unavailable = page.error().code() == core::ErrorCode::kPermissionDenied
                              ? fmt::format("not allowed to list {}.{}", type.resource, type.group)
                              : page.error().message();
    return listing;
  }
  for (json& item : page->items) listing.items.push_back(std::move(item));
  return listing;
}

core::Error Session::ReadError(const core::Error& error, std::string_view kind,
                               const std::string& name) {
  if (error.code() == core::ErrorCode::kNotFound) {
    return core::Error(error.code(), fmt::format("{} {} not found", kind, name));
  }
  return error.Wrap(fmt::format("reading {} {}", kind, name));
}

}  // namespace modelplane::cli
