// A digest's text held inside the object up to the length of "sha256:" and 64 hex digits, and
// on the heap only beyond that. A request compares its revision's digest with a node's entry
// on thousands of candidate nodes; with a std::string the text lay in an allocation of its
// own, one more cache miss per node, while here it shares the entry's cache lines.
// Thread safety: a value type; const methods may run on many threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace modelplane::extender {

class DigestText {
 public:
  DigestText() = default;
  // Implicit, as a std::string is from its text: entries are written with a digest's string.
  DigestText(std::string_view text);   // NOLINT(google-explicit-constructor)
  DigestText(const std::string& text)  // NOLINT(google-explicit-constructor)
      : DigestText(std::string_view(text)) {}
  DigestText(const char* text)  // NOLINT(google-explicit-constructor)
      : DigestText(std::string_view(text)) {}

  [[nodiscard]] std::string_view view() const {
    return size_ == kOnHeap ? std::string_view(heap_) : std::string_view(inline_.data(), size_);
  }
  [[nodiscard]] bool operator==(std::string_view other) const { return view() == other; }

 private:
  static constexpr std::size_t kInline = 71;  // "sha256:" and 64 hex digits
  static constexpr std::uint8_t kOnHeap = UINT8_MAX;
  std::array<char, kInline> inline_{};
  std::uint8_t size_ = 0;  // of the inline text, or kOnHeap
  std::string heap_;       // the text when it is longer than kInline
};

}  // namespace modelplane::extender
