// DigestText: the text it was made from, whatever its length, inline or on the heap.
#include "scheduler-extender/digest_text.h"

#include <string>

#include <gtest/gtest.h>

namespace modelplane::extender {
namespace {

TEST(DigestTextTest, KeepsTextOfEveryLengthAndComparesWhole) {
  const std::string digest = "sha256:" + std::string(64, 'a');  // 71: the inline capacity
  for (const std::string& text :
       {std::string(), std::string("sha256:a"), digest, digest + "b", std::string(300, 'x')}) {
    const DigestText kept(text);
    EXPECT_EQ(kept.view(), text);
    EXPECT_TRUE(kept == text);
    EXPECT_FALSE(kept == text + "c");
    if (!text.empty()) {
      EXPECT_FALSE(kept == text.substr(0, text.size() - 1));
    }
    DigestText copied = kept;
    EXPECT_EQ(copied.view(), text) << "a copy keeps the text";
    copied = DigestText("other");
    EXPECT_EQ(kept.view(), text) << "and is a copy";
  }
  EXPECT_FALSE(DigestText(digest) == "sha256:" + std::string(64, 'b'));
  EXPECT_EQ(DigestText().view(), "");
}

}  // namespace
}  // namespace modelplane::extender
