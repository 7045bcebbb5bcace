// The wire format against request bodies written by hand from k8s.io/kube-scheduler/extender/v1
// (Go field names, no json tags; nil pointers encode as null), in both node forms.
#include "scheduler-extender/extender_protocol.h"

#include <set>

#include <gtest/gtest.h>

#include "scheduler-extender/extender_request_reader.h"
#include "tests/scheduler-extender/test_files.h"

namespace modelplane::extender {
namespace {

using nlohmann::json;
using testing::ReadTestData;

const ExtenderRequestLimits kLimits;

std::set<std::string> Keys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

std::set<std::string> FilterResultKeys() {
  return {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"};
}

TEST(ExtenderProtocolTest, ParsesFullNodeListForm) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_list.json"), kLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->form, NodeForm::kNodeList);
  EXPECT_EQ(args->pod.namespace_name, "serving");
  EXPECT_EQ(args->pod.name, "engine-0");
  EXPECT_EQ(args->pod.Key(), "serving/engine-0");
  EXPECT_EQ(args->pod.uid, "7c1a9a52-2f55-4d0c-9d1e-3f3c1c2b8e01");
  EXPECT_EQ(args->pod.annotations.at("modelplane.io/revision"), "llama-r1");
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"gpu-node-0", "gpu-node-1", "gpu-node-2"}));
}

TEST(ExtenderProtocolTest, ParsesNodeCacheCapableForm) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_names.json"), kLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->form, NodeForm::kNodeNames);
  EXPECT_EQ(args->pod.annotations.at("modelplane.io/revision"), "models/llama-r1");
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"gpu-node-0", "gpu-node-1", "gpu-node-2"}));
  EXPECT_TRUE(args->node_list.is_null());
}

TEST(ExtenderProtocolTest, ParsesAnEmptyNodeListWhoseItemsAreNull) {
  // Go encodes a NodeList whose Items slice was never appended to as "items": null.
  auto args = ParseExtenderArgs(ReadTestData("empty_node_list.json"), kLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->form, NodeForm::kNodeList);
  EXPECT_TRUE(args->node_names.empty());
  const json result = json::parse(FilterResultBody(*args, {}));
  EXPECT_EQ(result["Nodes"]["items"], json::array());
}

TEST(ExtenderProtocolTest, FilterResultInNodeNamesFormCarriesNamesOnly) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_names.json"), kLimits);
  ASSERT_TRUE(args);
  FilterResult result{.passed = {"gpu-node-0", "gpu-node-2"},
                      .failed = {{"gpu-node-1", "modelplane: no room"}}};
  const json out = json::parse(FilterResultBody(*args, result));
  EXPECT_EQ(Keys(out), FilterResultKeys());
  EXPECT_TRUE(out["Nodes"].is_null());
  EXPECT_EQ(out["NodeNames"], json::parse(R"(["gpu-node-0","gpu-node-2"])"));
  EXPECT_EQ(out["FailedNodes"], json::parse(R"({"gpu-node-1":"modelplane: no room"})"));
  EXPECT_EQ(out["FailedAndUnresolvableNodes"], json::object());
  EXPECT_EQ(out["Error"], "");
}

TEST(ExtenderProtocolTest, FilterResultInNodeListFormEchoesTheNodeObjectsAsSent) {
  const std::string body = ReadTestData("filter_node_list.json");
  auto args = ParseExtenderArgs(body, kLimits);
  ASSERT_TRUE(args);
  FilterResult result{.passed = {"gpu-node-2", "gpu-node-0"},  // order follows the request
                      .failed = {{"gpu-node-1", "modelplane: no room"}}};
  const json out = json::parse(FilterResultBody(*args, result));
  EXPECT_EQ(Keys(out), FilterResultKeys());
  EXPECT_TRUE(out["NodeNames"].is_null());
  const json sent = json::parse(body)["Nodes"];
  ASSERT_EQ(out["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(out["Nodes"]["items"][0], sent["items"][0]);  // byte-for-byte the same object
  EXPECT_EQ(out["Nodes"]["items"][1], sent["items"][2]);
  EXPECT_EQ(out["Nodes"]["metadata"], json::object());
  EXPECT_EQ(out["FailedNodes"].size(), 1u);
}

TEST(ExtenderProtocolTest, FilterResultCarriesAnError) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_names.json"), kLimits);
  ASSERT_TRUE(args);
  const json out = json::parse(FilterResultBody(*args, {.error = "inventory unavailable"}));
  EXPECT_EQ(out["Error"], "inventory unavailable");
  EXPECT_EQ(out["NodeNames"], json::array());
}

TEST(ExtenderProtocolTest, HostPriorityListUsesGoFieldNamesAndClampsScores) {
  const json out =
      json::parse(HostPriorityListBody(std::vector<HostPriority>{{.host = "a", .score = 10},
                                                                 {.host = "b", .score = 0},
                                                                 {.host = "c", .score = 42},
                                                                 {.host = "d", .score = -3}}));
  EXPECT_EQ(out, json::parse(R"([{"Host":"a","Score":10},{"Host":"b","Score":0},
                                 {"Host":"c","Score":10},{"Host":"d","Score":0}])"));
  for (const json& entry : out) EXPECT_EQ(Keys(entry), (std::set<std::string>{"Host", "Score"}));
  EXPECT_EQ(json::parse(HostPriorityListBody({})), json::array());
}

// Names are answered back as sent; one that is not a DNS name must still come out as valid
// JSON that reads back the same.
std::vector<std::string> NamesThatNeedEscaping() {
  return {"gpu-node-0.zone-a", "quote\"d", "back\\slash", "new\nline", "tab\there",
          "ctl\x01",           "del\x7f",  "ünïcødé",     "",          "spaces and: colons"};
}

TEST(ExtenderProtocolTest, HostPriorityListEscapesNamesThatNeedIt) {
  const std::vector<std::string> names = NamesThatNeedEscaping();
  std::vector<HostPriority> priorities;
  priorities.reserve(names.size());
  for (const std::string& name : names) {
    priorities.push_back({.host = name, .score = 5});
  }
  const json out = json::parse(HostPriorityListBody(priorities));
  ASSERT_EQ(out.size(), names.size());
  for (std::size_t index = 0; index < names.size(); ++index) {
    EXPECT_EQ(out[index]["Host"], names[index]);
    EXPECT_EQ(out[index]["Score"], 5);
  }
}

TEST(ExtenderProtocolTest, FilterResultEscapesNamesReasonsAndTheError) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_names.json"), kLimits);
  ASSERT_TRUE(args);
  // The result views its names and reasons: these hold them, reserved so that they stay put.
  const std::vector<std::string> names = NamesThatNeedEscaping();
  std::vector<std::string> reasons;
  std::vector<std::string> unresolvable_names;
  reasons.reserve(names.size());
  unresolvable_names.reserve(names.size());
  FilterResult result{.error = "bad \"pod\"\n"};
  json failed = json::object();
  json unresolvable = json::object();
  for (const std::string& name : names) {
    reasons.push_back("why: " + name);
    unresolvable_names.push_back(name + "!");
    result.passed.emplace_back(name);
    result.failed.push_back({.node = name, .reason = reasons.back()});
    result.unresolvable.push_back({.node = unresolvable_names.back(), .reason = name});
    failed[name] = reasons.back();
    unresolvable[unresolvable_names.back()] = name;
  }
  const json out = json::parse(FilterResultBody(*args, result));
  EXPECT_EQ(out["NodeNames"], json(names));
  EXPECT_EQ(out["FailedNodes"], failed);
  EXPECT_EQ(out["FailedAndUnresolvableNodes"], unresolvable);
  EXPECT_EQ(out["Error"], result.error);
}

TEST(ExtenderProtocolTest, HostPriorityListWritesEveryScoreAsGoDoes) {
  std::vector<std::string> hosts;
  std::vector<HostPriority> priorities;
  std::string expected = "[";
  hosts.reserve(kMaxExtenderPriority + 1);
  for (std::int64_t score = kMinExtenderPriority; score <= kMaxExtenderPriority; ++score) {
    hosts.push_back("node-" + std::to_string(score));
    priorities.push_back({.host = hosts.back(), .score = score});
    if (score > 0) expected += ',';
    expected += R"({"Host":")" + hosts.back() + R"(","Score":)" + std::to_string(score) + "}";
  }
  EXPECT_EQ(HostPriorityListBody(priorities), expected + "]");
}

// Bytes that are not UTF-8 cannot be answered back as they came; they still make a document
// kube-scheduler can read, with U+FFFD in their place.
TEST(ExtenderProtocolTest, FilterResultReplacesBytesThatAreNotUtf8) {
  auto args = ParseExtenderArgs(ReadTestData("filter_node_names.json"), kLimits);
  ASSERT_TRUE(args);
  const FilterResult result{.passed = {"bad\xff"}, .failed = {{"node\xc3", "reason\xfe"}}};
  const json out = json::parse(FilterResultBody(*args, result));
  EXPECT_EQ(out["NodeNames"][0], "bad\xef\xbf\xbd");
  EXPECT_EQ(out["FailedNodes"]["node\xef\xbf\xbd"], "reason\xef\xbf\xbd");
}

}  // namespace
}  // namespace modelplane::extender
