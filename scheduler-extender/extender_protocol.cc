#include "scheduler-extender/extender_protocol.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>

namespace modelplane::extender {
namespace {

using nlohmann::json;

// A key that is missing and a key that is null mean the same to Go's decoder.
const json* Member(const json& object, std::string_view key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return nullptr;
  return &*found;
}

// Node names are DNS-1123 subdomains, which JSON needs no escape for: copied as they are.
// Anything else a request carried goes through the JSON library's escaping, as the documents
// the extender writes elsewhere do.
void AppendJsonString(std::string& out, std::string_view text) {
  const bool plain = std::ranges::all_of(text, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

json FailedMap(const std::map<std::string, std::string>& failed) {
  json out = json::object();
  for (const auto& [node, reason] : failed) out[node] = reason;
  return out;
}

}  // namespace

json FilterResultToJson(const ExtenderArgs& args, const FilterResult& result) {
  json out = json::object();
  if (args.form == NodeForm::kNodeNames) {
    out["Nodes"] = nullptr;
    out["NodeNames"] = result.passed;
  } else {
    // The passed nodes' objects as sent, in the order sent; the rest of the list (apiVersion,
    // kind, metadata) is kept.
    const std::unordered_set<std::string> passed(result.passed.begin(), result.passed.end());
    json list = json::object();
    for (const auto& [key, value] : args.node_list.items()) {
      if (key != "items") list[key] = value;
    }
    json items = json::array();
    if (const json* sent = Member(args.node_list, "items")) {
      for (std::size_t i = 0; i < sent->size() && i < args.node_names.size(); ++i) {
        if (passed.contains(args.node_names[i])) items.push_back((*sent)[i]);
      }
    }
    list["items"] = std::move(items);
    out["Nodes"] = std::move(list);
    out["NodeNames"] = nullptr;
  }
  out["FailedNodes"] = FailedMap(result.failed);
  out["FailedAndUnresolvableNodes"] = FailedMap(result.unresolvable);
  out["Error"] = result.error;
  return out;
}

std::string HostPriorityListBody(const std::vector<HostPriority>& priorities) {
  std::string out = "[";
  out.reserve(priorities.size() * 40);
  for (const HostPriority& priority : priorities) {
    if (out.size() > 1) out += ',';
    out += R"({"Host":)";
    AppendJsonString(out, priority.host);
    out += R"(,"Score":)";
    out += std::to_string(std::clamp(priority.score, kMinExtenderPriority, kMaxExtenderPriority));
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace modelplane::extender
