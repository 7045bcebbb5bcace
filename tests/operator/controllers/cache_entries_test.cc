// The pure parts of operator/controllers/cache_entries.h: entry replacement and the change
// detection that decides which revisions a ModelCache update wakes.
#include "operator/controllers/cache_entries.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace modelplane::controller {
namespace {

using nlohmann::json;

// Digests as functions: a static std::string could throw before main.
std::string Digest(char fill) {
  return "sha256:" + std::string(64, fill);
}

api::DesiredRevision Entry(std::string ns, std::string name, std::string digest) {
  return {.revision = {.namespace_name = std::move(ns), .name = std::move(name)},
          .digest = std::move(digest),
          .reason = "prestage"};
}

json Cache(const std::vector<api::DesiredRevision>& entries, const json& status_entries) {
  return {{"metadata", {{"name", "n1"}, {"resourceVersion", "1"}}},
          {"spec", api::ToJson(api::ModelCacheSpec{.revisions = entries})},
          {"status", {{"revisions", status_entries}}}};
}

TEST(CacheEntriesTest, ReplaceKeepsOtherEntriesInOrder) {
  const std::vector<api::DesiredRevision> entries = {
      Entry("a", "x", Digest('a')), Entry("b", "y", Digest('b')), Entry("c", "z", Digest('a'))};
  const api::RevisionReference y{.namespace_name = "b", .name = "y"};
  // Removing.
  EXPECT_EQ(ReplaceEntry(entries, y, nullptr),
            (std::vector<api::DesiredRevision>{entries[0], entries[2]}));
  // Replacing in place (a changed digest), not moving it to the end.
  const api::DesiredRevision changed = Entry("b", "y", Digest('a'));
  EXPECT_EQ(ReplaceEntry(entries, y, &changed),
            (std::vector<api::DesiredRevision>{entries[0], changed, entries[2]}));
  // Adding.
  const api::DesiredRevision added = Entry("d", "w", Digest('b'));
  EXPECT_EQ(ReplaceEntry(entries, added.revision, &added).back(), added);
  // Duplicates of one revision collapse to one.
  std::vector<api::DesiredRevision> doubled = {entries[1], entries[1]};
  EXPECT_EQ(ReplaceEntry(doubled, y, &entries[1]).size(), 1u);
}

TEST(CacheEntriesTest, KeysAndDigestsReadFromJson) {
  const json cache = Cache({Entry("b", "y", Digest('b')), Entry("a", "x", Digest('a'))},
                           json::array({{{"digest", Digest('a')}, {"state", "Ready"}}}));
  EXPECT_EQ(SpecRevisionKeys(cache), (std::vector<std::string>{"a/x", "b/y"}));
  EXPECT_EQ(StatusDigests(cache), (std::vector<std::string>{Digest('a')}));
  EXPECT_TRUE(SpecRevisionKeys(json::object()).empty());
  EXPECT_TRUE(StatusDigests(json{{"status", "garbage"}}).empty());
}

TEST(CacheEntriesTest, UpdatesWakeOnlyWhatChanged) {
  const json before = Cache({Entry("a", "x", Digest('a')), Entry("b", "y", Digest('b'))},
                            json::array({{{"digest", Digest('a')}, {"state", "Staging"}},
                                         {{"digest", Digest('b')}, {"state", "Ready"}}}));
  // Nothing changed: nothing to wake.
  EXPECT_TRUE(ChangedSpecRevisionKeys(before, before).empty());
  EXPECT_TRUE(ChangedStatusDigests(before, before).empty());

  // One entry removed, one added, one status entry changed, one unchanged.
  const json after = Cache({Entry("b", "y", Digest('b')), Entry("c", "z", Digest('a'))},
                           json::array({{{"digest", Digest('a')}, {"state", "Ready"}},
                                        {{"digest", Digest('b')}, {"state", "Ready"}}}));
  auto keys = ChangedSpecRevisionKeys(before, after);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "c/z"}));
  EXPECT_EQ(ChangedStatusDigests(before, after), (std::vector<std::string>{Digest('a')}));

  // A changed field inside an entry counts too.
  json pinned = before;
  pinned["spec"]["revisions"][1]["pinned"] = true;
  EXPECT_EQ(ChangedSpecRevisionKeys(before, pinned), (std::vector<std::string>{"b/y"}));
}

}  // namespace
}  // namespace modelplane::controller
