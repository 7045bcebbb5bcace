#include "scheduler-extender/digest_text.h"

#include <algorithm>

namespace modelplane::extender {

DigestText::DigestText(std::string_view text) {
  if (text.size() > kInline) {
    size_ = kOnHeap;
    heap_.assign(text);
    return;
  }
  std::ranges::copy(text, inline_.begin());
  size_ = static_cast<std::uint8_t>(text.size());
}

}  // namespace modelplane::extender
