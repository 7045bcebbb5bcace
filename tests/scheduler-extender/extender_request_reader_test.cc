// The request reader: what kube-scheduler never sends is refused, every bound stops the read
// where it is exceeded, and the parts of the Pod the extender does not read cost nothing.
#include "scheduler-extender/extender_request_reader.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/scheduler-extender/test_files.h"

namespace modelplane::extender {
namespace {

using nlohmann::json;
using testing::ReadTestData;

const ExtenderRequestLimits kReaderLimits;

std::string NamesRequest(std::size_t nodes, std::size_t name_length = 8) {
  json names = json::array();
  for (std::size_t i = 0; i < nodes; ++i) {
    std::string name = "n" + std::to_string(i);
    name.resize(std::max(name.size(), name_length), 'x');
    names.push_back(name);
  }
  return json{{"Pod", {{"metadata", {{"name", "p"}}}}}, {"NodeNames", names}}.dump();
}

std::string ListRequest(std::size_t nodes) {
  json items = json::array();
  for (std::size_t i = 0; i < nodes; ++i) {
    items.push_back(
        {{"metadata", {{"name", "n" + std::to_string(i)}}}, {"status", json::object()}});
  }
  return json{{"Pod", {{"metadata", {{"name", "p"}}}}},
              {"Nodes", {{"metadata", json::object()}, {"items", items}}},
              {"NodeNames", nullptr}}
      .dump();
}

std::string ErrorOf(const core::Result<ExtenderArgs>& args) {
  return args ? std::string("(parsed)") : args.error().message();
}

TEST(ExtenderRequestReaderTest, RejectsWhatKubeSchedulerNeverSends) {
  const char* bad[] = {
      "",                    // not JSON
      "[]",                  // not an object
      R"("a bare string")",  // not an object (the fuzzer's find: no frame yet)
      "42",
      R"({"Nodes":null,"NodeNames":["a"]})",                                 // no Pod
      R"({"Pod":null,"Nodes":null,"NodeNames":["a"]})",                      // null Pod
      R"({"Pod":{"spec":{}},"NodeNames":["a"]})",                            // Pod without metadata
      R"({"Pod":{"metadata":{"namespace":"x"}},"NodeNames":["a"]})",         // Pod without a name
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":null})",  // no nodes at all
      R"({"Pod":{"metadata":{"name":"p"}}})",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[]},"NodeNames":["a"]})",  // both
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":"a"})",                         // not a list
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[1]})",                         // not names
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[""]})",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{}}]}})",  // nameless
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":{}}})",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":[]})",
      R"({"Pod":{"metadata":{"name":"p"}},"Pod":{"metadata":{"name":"q"}},"NodeNames":[]})",  // dup
  };
  for (const char* body : bad) {
    auto args = ParseExtenderArgs(body, kReaderLimits);
    EXPECT_FALSE(args) << body;
    if (!args) {
      EXPECT_EQ(args.error().code(), core::ErrorCode::kInvalidArgument) << body;
    }
  }
}

TEST(ExtenderRequestReaderTest, BoundsBodySizeAndNesting) {
  const std::string body = ReadTestData("filter_node_list.json");
  EXPECT_FALSE(ParseExtenderArgs(body, {.max_bytes = body.size() - 1}));
  EXPECT_FALSE(ParseExtenderArgs(body, {.max_bytes = body.size(), .max_depth = 4}));
  EXPECT_TRUE(ParseExtenderArgs(body, {.max_bytes = body.size()}));
}

TEST(ExtenderRequestReaderTest, AnnotationsThatAreNotStringsAreIgnoredNotFatal) {
  auto args = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p","annotations":{"a":1,"modelplane.io/revision":"r"}}},
          "NodeNames":[]})",
      kReaderLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->pod.annotations.size(), 1u);
  EXPECT_EQ(args->pod.annotations.at("modelplane.io/revision"), "r");
}

TEST(ExtenderRequestReaderTest, BoundsTheNumberOfNodesInBothForms) {
  const ExtenderRequestLimits limits{.max_nodes = 3};
  EXPECT_TRUE(ParseExtenderArgs(NamesRequest(3), limits));
  EXPECT_TRUE(ParseExtenderArgs(ListRequest(3), limits));
  auto names = ParseExtenderArgs(NamesRequest(4), limits);
  ASSERT_FALSE(names);
  EXPECT_EQ(names.error().code(), core::ErrorCode::kInvalidArgument);
  EXPECT_NE(ErrorOf(names).find("NodeNames: more than 3 nodes"), std::string::npos)
      << ErrorOf(names);
  auto list = ParseExtenderArgs(ListRequest(4), limits);
  ASSERT_FALSE(list);
  EXPECT_NE(ErrorOf(list).find("Nodes.items: more than 3 nodes"), std::string::npos)
      << ErrorOf(list);
  // The default: Kubernetes' 5000 nodes.
  EXPECT_TRUE(ParseExtenderArgs(NamesRequest(5000), kReaderLimits));
  EXPECT_FALSE(ParseExtenderArgs(NamesRequest(5001), kReaderLimits));
}

TEST(ExtenderRequestReaderTest, BoundsNodeNamesAndAnnotations) {
  EXPECT_TRUE(ParseExtenderArgs(NamesRequest(2, 253), kReaderLimits));
  auto long_name = ParseExtenderArgs(NamesRequest(2, 254), kReaderLimits);
  ASSERT_FALSE(long_name);
  EXPECT_NE(ErrorOf(long_name).find("NodeNames[0]: node name longer than 253 bytes"),
            std::string::npos)
      << ErrorOf(long_name);

  json list = json::parse(ListRequest(2));
  list["Nodes"]["items"][1]["metadata"]["name"] = std::string(254, 'n');
  auto long_item = ParseExtenderArgs(list.dump(), kReaderLimits);
  ASSERT_FALSE(long_item);
  EXPECT_NE(ErrorOf(long_item).find("Nodes.items[1]: node name longer"), std::string::npos)
      << ErrorOf(long_item);

  auto with_annotations = [](std::size_t count) {
    json request = json::parse(NamesRequest(1));
    for (std::size_t i = 0; i < count; ++i) {
      request["Pod"]["metadata"]["annotations"]["a" + std::to_string(i)] = "v";
    }
    return request.dump();
  };
  const ExtenderRequestLimits limits{.max_annotations = 4};
  auto four = ParseExtenderArgs(with_annotations(4), limits);
  ASSERT_TRUE(four) << four.error().ToString();
  EXPECT_EQ(four->pod.annotations.size(), 4u);
  auto five = ParseExtenderArgs(with_annotations(5), limits);
  ASSERT_FALSE(five);
  EXPECT_NE(ErrorOf(five).find("Pod.metadata.annotations: more than 4 annotations"),
            std::string::npos)
      << ErrorOf(five);
}

TEST(ExtenderRequestReaderTest, ErrorsNameTheJsonPath) {
  auto nameless = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{}}]}})",
      kReaderLimits);
  EXPECT_NE(ErrorOf(nameless).find("Nodes.items[1]: has no metadata.name"), std::string::npos)
      << ErrorOf(nameless);
  auto not_a_name = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a","b",{}]})", kReaderLimits);
  EXPECT_NE(ErrorOf(not_a_name).find("NodeNames[2]: must be a non-empty string"), std::string::npos)
      << ErrorOf(not_a_name);
  auto duplicate = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p","name":"q"}},"NodeNames":["a"]})", kReaderLimits);
  EXPECT_NE(ErrorOf(duplicate).find("Pod.metadata.name: duplicate key"), std::string::npos)
      << ErrorOf(duplicate);
  auto duplicate_in_node = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"a"},"spec":{"x":1,"x":2}}]}})",
      kReaderLimits);
  EXPECT_NE(ErrorOf(duplicate_in_node).find("Nodes.items[0].spec.x: duplicate key"),
            std::string::npos)
      << ErrorOf(duplicate_in_node);
  auto nested = [](int levels, bool closed) {
    // The request object and Pod are two levels; spec's arrays the rest.
    std::string body = R"({"Pod":{"metadata":{"name":"p"},"spec":)";
    body += std::string(levels - 2, '[');
    if (closed) body += std::string(levels - 2, ']') + R"(},"NodeNames":["a"]})";
    return body;
  };
  EXPECT_TRUE(ParseExtenderArgs(nested(64, true), kReaderLimits));
  auto too_deep = ParseExtenderArgs(nested(65, true), kReaderLimits);
  EXPECT_NE(ErrorOf(too_deep).find("nesting deeper than 64 levels"), std::string::npos)
      << ErrorOf(too_deep);
  EXPECT_NE(ErrorOf(ParseExtenderArgs(nested(100, false), kReaderLimits)).find("invalid JSON"),
            std::string::npos);
  // A syntax error says where it is.
  auto trailing =
      ParseExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"]} x)", kReaderLimits);
  EXPECT_NE(ErrorOf(trailing).find("invalid JSON"), std::string::npos) << ErrorOf(trailing);
  EXPECT_NE(ErrorOf(trailing).find("column 53"), std::string::npos) << ErrorOf(trailing);
  EXPECT_NE(
      ErrorOf(ParseExtenderArgs(std::string("{\"Pod\"\0:1}", 10), kReaderLimits)).find("NUL byte"),
      std::string::npos);
}

// Input nlohmann's parser would take but simdjson does not is refused with simdjson's reason;
// kube-scheduler's Go encoder writes neither.
TEST(ExtenderRequestReaderTest, RefusesAByteOrderMarkAndIntegersPast64Bits) {
  const std::string request = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"]})";
  ASSERT_TRUE(ParseExtenderArgs(request, kReaderLimits));
  auto marked = ParseExtenderArgs("\xef\xbb\xbf" + request, kReaderLimits);
  EXPECT_NE(ErrorOf(marked).find("invalid JSON"), std::string::npos) << ErrorOf(marked);
  auto big = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p"},"spec":{"n":18446744073709551616}},"NodeNames":["a"]})",
      kReaderLimits);
  EXPECT_NE(ErrorOf(big).find("invalid JSON: Problem while parsing a number"), std::string::npos)
      << ErrorOf(big);
}

// Escapes are decoded in what is kept: names, metadata, annotations.
TEST(ExtenderRequestReaderTest, DecodesEscapesInWhatItKeeps) {
  auto args = ParseExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p\u00e9","annotations":{"k\"":"v\n\ud83d\ude00"}}},
          "NodeNames":["n\u002d1","\u0000x"]})",
      kReaderLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->pod.name, "p\xc3\xa9");
  EXPECT_EQ(args->pod.annotations.at("k\""), "v\n\xf0\x9f\x98\x80");
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"n-1", std::string("\0x", 2)}));
}

// The Pod beyond its metadata is never read: fields of any type and size there are neither
// kept nor checked for duplicates (Go ignores them the same way), and the answer is the same.
TEST(ExtenderRequestReaderTest, ReadsOnlyWhatItUsesOfThePod) {
  auto args = ParseExtenderArgs(
      R"({"Pod":{"apiVersion":"v1","spec":{"a":1,"a":[true,null,1.5,{"b":"c"}]},
          "metadata":{"name":"p","namespace":"ns","uid":"u","labels":{"x":"y"},
                      "annotations":{"modelplane.io/revision":"r","n":{"nested":1}},
                      "generation":3},
          "status":{"phase":"Pending"}},
          "Extra":{"ignored":true},"NodeNames":["a","b"]})",
      kReaderLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->pod.Key(), "ns/p");
  EXPECT_EQ(args->pod.uid, "u");
  EXPECT_EQ(args->pod.annotations,
            (std::map<std::string, std::string>{{"modelplane.io/revision", "r"}}));
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(args->form, NodeForm::kNodeNames);
}

// The node-list form keeps the Nodes object as sent (apart from nothing), every type of value
// in a Node included, so the filter answer can return the objects unchanged.
TEST(ExtenderRequestReaderTest, KeepsTheNodeListAsSent) {
  const std::string body = ReadTestData("filter_node_list.json");
  auto args = ParseExtenderArgs(body, kReaderLimits);
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->node_list, json::parse(body)["Nodes"]);
  const char* typed =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"kind":"NodeList","items":[{"metadata":{"name":"a"},
          "v":[1,-2,3.25,true,false,null,"s",{},[]],"u":18446744073709551615}]}})";
  auto typed_args = ParseExtenderArgs(typed, kReaderLimits);
  ASSERT_TRUE(typed_args) << typed_args.error().ToString();
  EXPECT_EQ(typed_args->node_list, json::parse(typed)["Nodes"]);
}

}  // namespace
}  // namespace modelplane::extender
