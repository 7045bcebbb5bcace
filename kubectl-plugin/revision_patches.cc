#include "kubectl-plugin/revision_patches.h"

#include <fmt/format.h>

#include "core/json/json_lookup.h"
#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli {

namespace api = core::api;
using nlohmann::json;

namespace {

std::string Name(const json& revision) {
  return core::StringMember(revision, {"metadata", "namespace"}) + "/" +
         core::StringMember(revision, {"metadata", "name"});
}

std::string SelectorText(const json& revision) {
  const json* selector = core::FindMember(revision, {"spec", "prestage", "nodeSelector"});
  if (selector == nullptr || !selector->is_object() || selector->empty()) return "any node";
  std::string text;
  for (const auto& [key, value] : selector->items()) {
    text += (text.empty() ? "" : ",") + key + "=" +
            (value.is_string() ? value.get<std::string>() : "?");
  }
  return "nodes matching " + text;
}

}  // namespace

json PrestagePatch(std::int32_t nodes) {
  return {{"spec", {{"prestage", {{"nodes", nodes}}}}}};
}

json RevokePatch() {
  return {{"spec", {{"revoked", true}}}};
}

std::string PrestageSummary(const json& before, const json& after) {
  const std::int64_t was = core::IntegerMember(before, {"spec", "prestage", "nodes"});
  const std::int64_t now = core::IntegerMember(after, {"spec", "prestage", "nodes"});
  const std::string name = Name(after);
  std::string text =
      was == now ? fmt::format("ModelRevision {}: spec.prestage.nodes was already {}.", name, now)
                 : fmt::format("ModelRevision {}: spec.prestage.nodes {} -> {}.", name, was, now);
  if (now > 0) {
    text += fmt::format(
        " The operator chooses {} among {} and writes a prestage entry into each "
        "one's ModelCache; their node agents stage it.",
        now == 1 ? "one node" : fmt::format("{} nodes", now), SelectorText(after));
  } else {
    text +=
        " The operator no longer asks nodes to prestage it and takes its prestage entries "
        "out of their ModelCaches; copies stay until eviction takes them, and pods still get "
        "it staged where they run.";
  }
  const std::string short_name = core::StringMember(after, {"metadata", "name"});
  const std::string ns = core::StringMember(after, {"metadata", "namespace"});
  return WrapParagraph(Printable(text)) + "\n" +
         fmt::format("Follow it: kubectl modelplane status {} -n {}\n", short_name, ns);
}

std::string RevokeSummary(const json& after, bool already) {
  const std::string name = Name(after);
  const std::string text =
      already ? fmt::format("ModelRevision {} was already revoked; nothing was written.", name)
              : fmt::format(
                    "ModelRevision {} is revoked. Node agents stop serving it to peers, "
                    "refuse new mounts, mark its pods not ready and purge its bytes "
                    "once nothing mounts it; no pod is scheduled to it again. This "
                    "cannot be undone: spec.revoked cannot be cleared.",
                    name);
  const std::string short_name = core::StringMember(after, {"metadata", "name"});
  const std::string ns = core::StringMember(after, {"metadata", "namespace"});
  return WrapParagraph(Printable(text)) + "\n" +
         "Watch the purge (status.purge; column Holding: nodes that still hold its bytes):\n" +
         fmt::format("  kubectl get mr {} -n {} -o wide -w\n", short_name, ns) +
         fmt::format("  kubectl modelplane status {} -n {}\n", short_name, ns);
}

}  // namespace modelplane::cli
