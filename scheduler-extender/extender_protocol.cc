#include "scheduler-extender/extender_protocol.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace modelplane::extender {
namespace {

using nlohmann::json;
using std::string_view_literals::operator""sv;

// A key that is missing and a key that is null mean the same to Go's decoder.
const json* Member(const json& object, std::string_view key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return nullptr;
  return &*found;
}

// Bytes JSON cannot take between quotes as they are: control characters, the quote and the
// backslash; DEL and every byte past ASCII too, so that the JSON library decides what bytes that
// are not UTF-8 become (U+FFFD), as it does in the documents the extender writes elsewhere.
constexpr std::array<bool, 256> kNeedsEscaping = [] {
  std::array<bool, 256> table{};
  for (std::size_t byte = 0; byte < table.size(); ++byte) {
    table[byte] = byte < ' ' || byte > '~' || byte == '"' || byte == '\\';
  }
  return table;
}();

// Node names (DNS-1123 subdomains) and the extender's own reasons are plain: copied between
// quotes. The check reads every byte without stopping, which is what lets it run fast.
bool IsPlain(std::string_view text) {
  bool escape = false;
  for (const char c : text) escape |= kNeedsEscaping[static_cast<unsigned char>(c)];
  return !escape;
}

// The scores as text: a clamped score is one of these.
static_assert(kMinExtenderPriority == 0);
constexpr std::array<std::string_view, kMaxExtenderPriority + 1> kScoreText = {
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};

std::string Escaped(std::string_view text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The answers are written in two passes over one description of the document (a function of
// its output): the first counts the bytes, the second copies them into a string of that size
// with no check for room. Appended piece by piece, a 5,000-candidate answer spent most of its
// ~32 ns a candidate in those checks (perf, 2026-12-05).
class ByteCounter {
 public:
  void Raw(std::string_view text) { size_ += text.size(); }
  void String(std::string_view text) {
    if (IsPlain(text)) {
      size_ += text.size() + 2;
      return;
    }
    all_plain_ = false;
    size_ += Escaped(text).size();
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool all_plain() const { return all_plain_; }

 private:
  std::size_t size_ = 0;
  bool all_plain_ = true;
};

// Writes into a buffer of exactly what ByteCounter counted for the same description; where it
// found every string plain, they are copied without being checked again.
class BufferWriter {
 public:
  BufferWriter(char* data, bool all_plain) : data_(data), at_(data), all_plain_(all_plain) {}
  void Raw(std::string_view text) {
    std::memcpy(at_, text.data(), text.size());
    at_ += text.size();
  }
  void String(std::string_view text) {
    if (!all_plain_ && !IsPlain(text)) {
      Raw(Escaped(text));
      return;
    }
    *at_++ = '"';
    Raw(text);
    *at_++ = '"';
  }
  [[nodiscard]] std::size_t written() const { return static_cast<std::size_t>(at_ - data_); }

 private:
  char* data_;
  char* at_;
  bool all_plain_;
};

template <class Describe>
std::string WriteDocument(const Describe& describe) {
  ByteCounter counter;
  describe(counter);
  std::string out;
  out.resize_and_overwrite(counter.size(), [&](char* data, std::size_t) {
    BufferWriter writer(data, counter.all_plain());
    describe(writer);
    return writer.written();
  });
  return out;
}

template <class Out>
void NameArray(Out& out, std::span<const std::string_view> names) {
  out.Raw("[");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.Raw(",");
    out.String(names[i]);
  }
  out.Raw("]");
}

template <class Out>
void FailedMap(Out& out, std::span<const FailedNode> failed) {
  out.Raw("{");
  for (std::size_t i = 0; i < failed.size(); ++i) {
    if (i > 0) out.Raw(",");
    out.String(failed[i].node);
    out.Raw(":");
    out.String(failed[i].reason);
  }
  out.Raw("}");
}

// kNodeList: the NodeList as sent, with only the passed nodes' objects in its items, in the
// order sent; the rest of the list (apiVersion, kind, metadata) is kept.
json PassedNodeList(const ExtenderArgs& args, std::span<const std::string_view> passed_names) {
  const std::unordered_set<std::string_view> passed(passed_names.begin(), passed_names.end());
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
  const std::string node_list =
      args.form == NodeForm::kNodeList
          ? PassedNodeList(args, result.passed).dump(-1, ' ', false, json::error_handler_t::replace)
          : std::string();
  return WriteDocument([&](auto& out) {
    out.Raw(R"({"Nodes":)");
    if (args.form == NodeForm::kNodeNames) {
      out.Raw(R"(null,"NodeNames":)");
      NameArray(out, result.passed);
    } else {
      out.Raw(node_list);
      out.Raw(R"(,"NodeNames":null)");
    }
    out.Raw(R"(,"FailedNodes":)");
    FailedMap(out, result.failed);
    out.Raw(R"(,"FailedAndUnresolvableNodes":)");
    FailedMap(out, result.unresolvable);
    out.Raw(R"(,"Error":)");
    out.String(result.error);
    out.Raw("}");
  });
}

std::string HostPriorityListBody(std::span<const HostPriority> priorities) {
  return WriteDocument([&](auto& out) {
    out.Raw("[");
    for (std::size_t i = 0; i < priorities.size(); ++i) {
      out.Raw(i > 0 ? R"(,{"Host":)"sv : R"({"Host":)"sv);
      out.String(priorities[i].host);
      out.Raw(R"(,"Score":)");
      const std::int64_t score =
          std::clamp(priorities[i].score, kMinExtenderPriority, kMaxExtenderPriority);
      out.Raw(kScoreText[static_cast<std::size_t>(score)]);
      out.Raw("}");
    }
    out.Raw("]");
  });
}

}  // namespace modelplane::extender
