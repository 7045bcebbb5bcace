#include "node-agent/possession/possession_ledger.h"

#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/io/bounded_file.h"
#include "core/json/json_document.h"
#include "node-agent/store/durable_file.h"

namespace modelplane::agent {
namespace {

constexpr int kVersion = 1;
// "namespace/name": 63 + 1 + 253 characters; anything longer was not written by this code.
constexpr std::size_t kMaxKeyLength = 320;

std::size_t CountRecords(
    const std::map<core::Sha256Bytes, std::set<std::string>, std::less<>>& records) {
  std::size_t count = 0;
  for (const auto& [digest, keys] : records) count += keys.size();
  return count;
}

core::Result<std::map<core::Sha256Bytes, std::set<std::string>, std::less<>>> Parse(
    std::string_view text) {
  const auto invalid = [](std::string_view what) {
    return core::MakeError(core::ErrorCode::kDataLoss, fmt::format("possession ledger: {}", what));
  };
  auto parsed =
      core::ParseJsonDocument(text, {.max_bytes = kMaxPossessionLedgerBytes, .max_depth = 4});
  if (!parsed) return std::unexpected(parsed.error());
  const nlohmann::json& document = *parsed;
  if (!document.is_object()) return invalid("not a JSON object");
  const auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() ||
      version->get<std::int64_t>() != kVersion) {
    return invalid("unknown version");
  }
  const auto proofs = document.find("proofs");
  if (proofs == document.end() || !proofs->is_array()) return invalid("no proofs");
  std::map<core::Sha256Bytes, std::set<std::string>, std::less<>> records;
  std::size_t count = 0;
  for (const nlohmann::json& item : *proofs) {
    if (!item.is_object()) return invalid("malformed proof");
    const auto digest_text = item.find("digest");
    const auto keys = item.find("keys");
    if (digest_text == item.end() || !digest_text->is_string() || keys == item.end() ||
        !keys->is_array()) {
      return invalid("malformed proof");
    }
    auto digest = core::ParseDigest(digest_text->get_ref<const std::string&>());
    if (!digest) return invalid("malformed digest");
    for (const nlohmann::json& key : *keys) {
      if (!key.is_string() || key.get_ref<const std::string&>().empty() ||
          key.get_ref<const std::string&>().size() > kMaxKeyLength) {
        return invalid("malformed key");
      }
      if (records[*digest].insert(key.get<std::string>()).second) ++count;
      if (count > kMaxPossessionRecords) return invalid("too many records");
    }
  }
  return records;
}

std::string Serialize(
    const std::map<core::Sha256Bytes, std::set<std::string>, std::less<>>& records) {
  nlohmann::json proofs = nlohmann::json::array();
  for (const auto& [digest, keys] : records) {
    if (keys.empty()) continue;
    proofs.push_back({{"digest", core::FormatDigest(digest)}, {"keys", keys}});
  }
  return nlohmann::json{{"version", kVersion}, {"proofs", std::move(proofs)}}.dump();
}

}  // namespace

core::Result<std::unique_ptr<PossessionLedger>> PossessionLedger::Open(std::filesystem::path file,
                                                                       const core::Logger* logger) {
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  if (error) {
    return core::MakeError(
        core::ErrorCode::kIo,
        fmt::format("creating {}: {}", file.parent_path().string(), error.message()));
  }
  Records records;
  auto text = core::ReadBoundedFile(file.string(), kMaxPossessionLedgerBytes);
  core::Status loaded = core::Ok();
  if (!text) {
    if (text.error().code() != core::ErrorCode::kNotFound) loaded = std::unexpected(text.error());
  } else if (auto parsed = Parse(*text); parsed) {
    records = std::move(*parsed);
  } else {
    loaded = std::unexpected(parsed.error());
  }
  if (!loaded && logger != nullptr) {
    // The proofs are redone; reusing bytes on a record this node cannot read would not be.
    logger->Warn("possession_ledger_discarded",
                 {{"file", file.string()}, {"error", loaded.error().ToString()}});
  }
  return std::unique_ptr<PossessionLedger>(
      new PossessionLedger(std::move(file), std::move(records)));
}

PossessionLedger::PossessionLedger(std::filesystem::path file, Records records)
    : file_(std::move(file)), records_(std::move(records)), count_(CountRecords(records_)) {}

bool PossessionLedger::Contains(const core::Sha256Bytes& revision_digest,
                                std::string_view revision_key) const {
  std::lock_guard lock(mutex_);
  const auto found = records_.find(revision_digest);
  return found != records_.end() && found->second.contains(std::string(revision_key));
}

std::set<std::string> PossessionLedger::KeysFor(const core::Sha256Bytes& revision_digest) const {
  std::lock_guard lock(mutex_);
  const auto found = records_.find(revision_digest);
  return found == records_.end() ? std::set<std::string>{} : found->second;
}

core::Status PossessionLedger::Record(const core::Sha256Bytes& revision_digest,
                                      std::string_view revision_key) {
  std::lock_guard write_lock(write_mutex_);
  Records next;
  {
    std::lock_guard lock(mutex_);
    const auto found = records_.find(revision_digest);
    if (found != records_.end() && found->second.contains(std::string(revision_key)))
      return core::Ok();
    if (count_ >= kMaxPossessionRecords) {
      return core::MakeError(core::ErrorCode::kResourceExhausted,
                             fmt::format("the possession ledger holds its limit of {} records",
                                         kMaxPossessionRecords));
    }
    next = records_;
  }
  next[revision_digest].emplace(revision_key);
  const std::string text = Serialize(next);
  if (text.size() > kMaxPossessionLedgerBytes) {
    // Open would discard a bigger file, and every proof with it.
    return core::MakeError(core::ErrorCode::kResourceExhausted,
                           fmt::format("the possession ledger would outgrow its limit of {} bytes",
                                       kMaxPossessionLedgerBytes));
  }
  // Only this thread changes records_ (write_mutex_), so `next` is still the whole truth once
  // the write is done; readers see the record only once it is durable.
  if (auto written = WriteFileDurably(file_, text); !written) return written;
  std::lock_guard lock(mutex_);
  records_ = std::move(next);
  ++count_;
  return core::Ok();
}

core::Status PossessionLedger::Retain(const std::set<core::Sha256Bytes>& kept) {
  std::lock_guard write_lock(write_mutex_);
  Records next;
  {
    std::lock_guard lock(mutex_);
    bool changed = false;
    for (auto entry = records_.begin(); entry != records_.end();) {
      if (kept.contains(entry->first)) {
        ++entry;
        continue;
      }
      count_ -= entry->second.size();
      entry = records_.erase(entry);
      changed = true;
    }
    if (!changed) return core::Ok();
    next = records_;
  }
  return WriteFileDurably(file_, Serialize(next));
}

}  // namespace modelplane::agent
