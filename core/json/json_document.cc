#include "core/json/json_document.h"

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/json/json_path.h"

namespace modelplane::core {
namespace {

// Thrown from the parser callback to stop parsing at once; caught below, never escapes.
struct StopParsing {
  std::string message;
};

// One open container while parsing: its path, and for objects the keys seen so far.
struct Frame {
  bool is_object = false;
  std::string path;
  std::size_t next_index = 0;  // arrays: index of the next element
  std::string current_key;     // objects: key of the value being parsed
  std::unordered_set<std::string> keys;
};

class BoundsChecker {
 public:
  explicit BoundsChecker(int max_depth) : max_depth_(max_depth) {}

  bool OnEvent(int depth, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        const std::string path = ChildPath();
        if (depth >= max_depth_) {
          throw StopParsing{fmt::format("{}: nesting deeper than {} levels",
                                        JsonPathForDisplay(path), max_depth_)};
        }
        Frame frame;
        frame.is_object = event == Event::object_start;
        frame.path = path;
        frames_.push_back(std::move(frame));
        break;
      }
      case Event::key: {
        Frame& frame = frames_.back();
        const auto& key = parsed.get_ref<const std::string&>();
        if (!frame.keys.insert(key).second) {
          throw StopParsing{fmt::format("{}: duplicate key", JsonPathChild(frame.path, key))};
        }
        frame.current_key = key;
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        ValueDone();
        break;
      case Event::value: ValueDone(); break;
    }
    return true;
  }

 private:
  std::string ChildPath() const {
    if (frames_.empty()) return "";
    const Frame& parent = frames_.back();
    return parent.is_object ? JsonPathChild(parent.path, parent.current_key)
                            : JsonPathIndex(parent.path, parent.next_index);
  }

  void ValueDone() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().next_index;
  }

  int max_depth_;
  std::vector<Frame> frames_;
};

}  // namespace

Result<nlohmann::json> ParseJsonDocument(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("JSON document of {} bytes exceeds the limit of {} bytes",
                                 text.size(), limits.max_bytes));
  }
  // nlohmann's lexer takes a NUL byte for the end of input, which would hide whatever follows;
  // valid JSON never holds a raw NUL (inside strings it must be escaped).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("invalid JSON: NUL byte at offset {}", nul));
  }
  BoundsChecker checker(limits.max_depth);
  try {
    return nlohmann::json::parse(
        text.begin(), text.end(),
        [&checker](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          return checker.OnEvent(depth, event, parsed);
        });
  } catch (const StopParsing& stop) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("invalid JSON: {}", stop.message));
  } catch (const nlohmann::json::exception& error) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("invalid JSON: {}", error.what()));
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kResourceExhausted, "out of memory parsing JSON");
  }
}

}  // namespace modelplane::core
