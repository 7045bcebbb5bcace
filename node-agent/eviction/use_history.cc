#include "node-agent/eviction/use_history.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/io/bounded_file.h"
#include "core/json/json_document.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr std::size_t kFileLimit = 16 << 20;
constexpr int kVersion = 1;

std::int64_t ToMillis(UseHistory::WallTime time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

UseHistory::WallTime FromMillis(std::int64_t millis) {
  return UseHistory::WallTime(std::chrono::duration_cast<UseHistory::WallTime::duration>(
      std::chrono::milliseconds(millis)));
}

}  // namespace

double UseHistory::Aged(const Entry& entry, WallTime now) const {
  if (entry.in_use || now <= entry.since) return entry.score;
  const double elapsed = std::chrono::duration<double>(now - entry.since).count();
  const double half_life = std::chrono::duration<double>(options_.half_life).count();
  return entry.score * std::exp2(-elapsed / std::max(half_life, 1.0));
}

bool UseHistory::Observe(const core::Sha256Bytes& digest, const std::set<std::string>& users,
                         WallTime now) {
  auto [found, inserted] = entries_.try_emplace(digest);
  Entry& entry = found->second;
  if (inserted) entry.since = now;
  bool changed = inserted;
  entry.score = Aged(entry, now);
  entry.since = now;
  for (const std::string& user : users) {
    if (std::find(entry.users.begin(), entry.users.end(), user) != entry.users.end()) continue;
    entry.users.push_back(user);
    if (entry.users.size() > options_.max_users) entry.users.pop_front();
    entry.score += 1;
    changed = true;
  }
  const bool in_use = !users.empty();
  // Seen in use now, or seen no longer in use: it was used until about now.
  if (in_use || entry.in_use) entry.last_used = now;
  if (in_use != entry.in_use) changed = true;  // the use ended (or began): save when it did
  entry.in_use = in_use;
  if (inserted) Bound();
  return changed;
}

bool UseHistory::Known(const core::Sha256Bytes& digest, WallTime published) {
  if (entries_.contains(digest)) return false;
  entries_.emplace(digest, Entry{.score = 1, .since = published});
  Bound();
  return true;
}

double UseHistory::Score(const core::Sha256Bytes& digest, WallTime now) const {
  const auto found = entries_.find(digest);
  return found == entries_.end() ? 0 : Aged(found->second, now);
}

std::optional<UseHistory::WallTime> UseHistory::LastUsed(const core::Sha256Bytes& digest) const {
  const auto found = entries_.find(digest);
  if (found == entries_.end()) return std::nullopt;
  return found->second.last_used;
}

void UseHistory::Bound() {
  while (entries_.size() > options_.max_revisions) {
    // The entry touched longest ago goes; in use ones last.
    auto oldest =
        std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
          if (a.second.in_use != b.second.in_use) return !a.second.in_use;
          return a.second.since < b.second.since;
        });
    entries_.erase(oldest);
  }
}

std::string UseHistory::Serialize() const {
  nlohmann::json revisions = nlohmann::json::array();
  for (const auto& [digest, entry] : entries_) {
    nlohmann::json item = {{"digest", core::FormatDigest(digest)},
                           {"score", entry.score},
                           {"since", ToMillis(entry.since)},
                           {"inUse", entry.in_use},
                           {"users", entry.users}};
    if (entry.last_used) item["lastUsed"] = ToMillis(*entry.last_used);
    revisions.push_back(std::move(item));
  }
  return nlohmann::json{{"version", kVersion}, {"revisions", std::move(revisions)}}.dump();
}

core::Status UseHistory::Parse(std::string_view text) {
  auto invalid = [](const std::string& what) {
    return core::MakeError(core::ErrorCode::kDataLoss, "use history: " + what);
  };
  auto parsed = core::ParseJsonDocument(text);
  if (!parsed) return invalid(parsed.error().message());
  const nlohmann::json& document = *parsed;
  if (!document.is_object()) return invalid("not a JSON object");
  if (document.value("version", 0) != kVersion) return invalid("unknown version");
  const auto revisions = document.find("revisions");
  if (revisions == document.end() || !revisions->is_array()) return invalid("no revisions");
  std::map<core::Sha256Bytes, Entry> entries;
  for (const nlohmann::json& item : *revisions) {
    if (!item.is_object() || !item.contains("digest") || !item["digest"].is_string() ||
        !item.contains("score") || !item["score"].is_number() || !item.contains("since") ||
        !item["since"].is_number_integer()) {
      return invalid("malformed entry");
    }
    auto digest = core::ParseDigest(item["digest"].get<std::string>(), false);
    const double score = item["score"].get<double>();
    if (!digest || !std::isfinite(score) || score < 0) return invalid("malformed entry");
    Entry entry{.score = score, .since = FromMillis(item["since"].get<std::int64_t>())};
    if (auto last = item.find("lastUsed"); last != item.end() && last->is_number_integer()) {
      entry.last_used = FromMillis(last->get<std::int64_t>());
    }
    if (auto in_use = item.find("inUse"); in_use != item.end() && in_use->is_boolean()) {
      entry.in_use = in_use->get<bool>();
    }
    if (auto users = item.find("users"); users != item.end() && users->is_array()) {
      for (const nlohmann::json& user : *users) {
        if (user.is_string() && user.get_ref<const std::string&>().size() <= 512 &&
            entry.users.size() < options_.max_users) {
          entry.users.push_back(user.get<std::string>());
        }
      }
    }
    entries.insert_or_assign(*digest, std::move(entry));
  }
  entries_ = std::move(entries);
  Bound();
  return core::Ok();
}

core::Status UseHistory::Save(const std::filesystem::path& path) const {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("creating {}: {}", path.parent_path().string(), error.message()));
  }
  return WriteFileDurably(path, Serialize());
}

core::Status UseHistory::Load(const std::filesystem::path& path) {
  auto text = core::ReadBoundedFile(path.string(), kFileLimit);
  if (!text) {
    if (text.error().code() == core::ErrorCode::kNotFound) return core::Ok();
    return std::unexpected(text.error());
  }
  return Parse(*text);
}

}  // namespace modelplane::agent
