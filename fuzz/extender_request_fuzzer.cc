// libFuzzer target: arbitrary bytes as the body kube-scheduler POSTs to the extender's verbs.
//
// Reads the ExtenderArgs with tight bounds and with the defaults, and checks what the extender
// relies on: every bound holds for what was accepted; what was kept equals what a plain DOM
// parse of the same bytes says (the Pod's metadata, the candidates' names in order, the NodeList
// as sent), so skipping the rest of the Pod never changes the answer; and the filter and
// prioritize answers are valid JSON that carry only the candidates, the passed Node objects
// unchanged.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler-extender/extender_protocol.h"
#include "scheduler-extender/extender_request_reader.h"

namespace {

using modelplane::extender::ExtenderArgs;
using modelplane::extender::ExtenderRequestLimits;
using modelplane::extender::NodeForm;
using nlohmann::json;

void Require(bool condition) {
  if (!condition) std::abort();
}

std::string MetadataString(const json& pod, const char* key) {
  const auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return "";
  const auto value = metadata->find(key);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

void CheckAgainstDocument(const ExtenderArgs& args, const json& document) {
  Require(document.is_object() && document.contains("Pod"));
  const json& pod = document.at("Pod");
  Require(MetadataString(pod, "name") == args.pod.name);
  Require(MetadataString(pod, "namespace") == args.pod.namespace_name);
  Require(MetadataString(pod, "uid") == args.pod.uid);
  std::map<std::string, std::string> annotations;
  const json& metadata = pod.at("metadata");
  if (const auto found = metadata.find("annotations");
      found != metadata.end() && found->is_object()) {
    for (const auto& [key, value] : found->items()) {
      if (value.is_string()) annotations.emplace(key, value.get<std::string>());
    }
  }
  Require(annotations == args.pod.annotations);
  if (args.form == NodeForm::kNodeNames) {
    const json& names = document.at("NodeNames");
    Require(names.is_array() && names.size() == args.node_names.size());
    for (std::size_t i = 0; i < names.size(); ++i) Require(names[i] == args.node_names[i]);
  } else {
    Require(document.at("Nodes") == args.node_list);
    const json* items = args.node_list.contains("items") ? &args.node_list.at("items") : nullptr;
    const std::size_t count = items != nullptr && items->is_array() ? items->size() : 0;
    Require(count == args.node_names.size());
    for (std::size_t i = 0; i < count; ++i) {
      Require(items->at(i).at("metadata").at("name") == args.node_names[i]);
    }
  }
}

void CheckAnswers(const ExtenderArgs& args) {
  modelplane::extender::FilterResult result;
  std::vector<modelplane::extender::HostPriority> priorities;
  for (std::size_t i = 0; i < args.node_names.size(); ++i) {
    if (i % 2 == 0) {
      result.passed.push_back(args.node_names[i]);
    } else {
      result.failed.push_back({.node = args.node_names[i], .reason = "no"});
    }
    priorities.push_back({.host = args.node_names[i], .score = static_cast<std::int64_t>(i)});
  }
  const json filter = json::parse(modelplane::extender::FilterResultBody(args, result));
  if (args.form == NodeForm::kNodeNames) {
    // Names read back exactly as the request carried them, however they had to be escaped.
    Require(filter.at("Nodes").is_null() && filter.at("NodeNames").size() == result.passed.size());
    for (std::size_t i = 0; i < result.passed.size(); ++i) {
      Require(filter.at("NodeNames").at(i).get<std::string>() == result.passed[i]);
    }
  } else {
    // The objects of the nodes whose names passed, in the order sent (a name sent twice
    // passes twice).
    const std::set<std::string_view> passed(result.passed.begin(), result.passed.end());
    json expected = json::array();
    for (std::size_t i = 0; i < args.node_names.size(); ++i) {
      if (passed.contains(args.node_names[i])) {
        expected.push_back(args.node_list.at("items").at(i));
      }
    }
    Require(filter.at("NodeNames").is_null() && filter.at("Nodes").at("items") == expected);
  }
  for (const auto& failed : result.failed) {
    Require(filter.at("FailedNodes").at(std::string(failed.node)) == "no");
  }
  const json scores = json::parse(modelplane::extender::HostPriorityListBody(priorities));
  Require(scores.size() == args.node_names.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    Require(scores[i].at("Host").get<std::string>() == args.node_names[i]);
    Require(scores[i].at("Score") == std::min<std::int64_t>(static_cast<std::int64_t>(i), 10));
  }
}

void Check(std::string_view body, const ExtenderRequestLimits& limits) {
  auto args = modelplane::extender::ParseExtenderArgs(body, limits);
  if (!args) return;
  Require(body.size() <= limits.max_bytes);
  Require(!args->pod.name.empty());
  Require(args->node_names.size() <= limits.max_nodes);
  Require(args->pod.annotations.size() <= limits.max_annotations);
  for (const std::string& name : args->node_names) {
    Require(!name.empty() && name.size() <= limits.max_node_name_bytes);
  }
  // Whatever the reader accepted is JSON to nlohmann's own DOM parser too.
  const json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  Require(!document.is_discarded());
  CheckAgainstDocument(*args, document);
  CheckAnswers(*args);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  Check(body, {.max_bytes = 16 * 1024,
               .max_depth = 8,
               .max_nodes = 4,
               .max_node_name_bytes = 16,
               .max_annotations = 4});
  Check(body, {});
  return 0;
}
