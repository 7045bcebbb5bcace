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

// Node names (DNS-1123 subdomains) and the extender's own reasons are printable ASCII, which
// JSON takes as it is unless it is a quote or a backslash: copied. Anything else a request
// carried goes through the JSON library's escaping, as the documents the extender writes
// elsewhere do.
void AppendJsonString(std::string& out, std::string_view text) {
  const bool plain = std::ranges::all_of(
      text, [](char c) { return c >= ' ' && c <= '~' && c != '"' && c != '\\'; });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendNameArray(std::string& out, const std::vector<std::string>& names) {
  out += '[';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, names[i]);
  }
  out += ']';
}

void AppendFailedMap(std::string& out, const std::map<std::string, std::string>& failed) {
  out += '{';
  bool first = true;
  for (const auto& [node, reason] : failed) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, node);
    out += ':';
    AppendJsonString(out, reason);
  }
  out += '}';
}

// kNodeList: the NodeList as sent, with only the passed nodes' objects in its items, in the
// order sent; the rest of the list (apiVersion, kind, metadata) is kept.
json PassedNodeList(const ExtenderArgs& args, const std::vector<std::string>& passed_names) {
  const std::unordered_set<std::string> passed(passed_names.begin(), passed_names.end());
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
  return list;
}

}  // namespace

std::string FilterResultBody(const ExtenderArgs& args, const FilterResult& result) {
  std::string out;
  out.reserve(128 + (result.passed.size() + result.failed.size()) * 48);
  out += R"({"Nodes":)";
  if (args.form == NodeForm::kNodeNames) {
    out += R"(null,"NodeNames":)";
    AppendNameArray(out, result.passed);
  } else {
    out += PassedNodeList(args, result.passed).dump(-1, ' ', false, json::error_handler_t::replace);
    out += R"(,"NodeNames":null)";
  }
  out += R"(,"FailedNodes":)";
  AppendFailedMap(out, result.failed);
  out += R"(,"FailedAndUnresolvableNodes":)";
  AppendFailedMap(out, result.unresolvable);
  out += R"(,"Error":)";
  AppendJsonString(out, result.error);
  out += '}';
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
