#include "core/digest/file_set_tree.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include <openssl/sha.h>

#include "core/text/base64.h"

namespace modelplane::core {
namespace {

constexpr std::uint8_t kLeafPrefix = 0x00;
constexpr std::uint8_t kInteriorPrefix = 0x01;

Sha256Bytes LeafHash(const Sha256Bytes& digest) {
  std::array<std::uint8_t, 1 + 32> input{};
  input[0] = kLeafPrefix;
  std::memcpy(input.data() + 1, digest.data(), digest.size());
  Sha256Bytes out{};
  ::SHA256(input.data(), input.size(), out.data());
  return out;
}

Sha256Bytes InteriorHash(const Sha256Bytes& left, const Sha256Bytes& right) {
  std::array<std::uint8_t, 1 + 32 + 32> input{};
  input[0] = kInteriorPrefix;
  std::memcpy(input.data() + 1, left.data(), left.size());
  std::memcpy(input.data() + 1 + 32, right.data(), right.size());
  Sha256Bytes out{};
  ::SHA256(input.data(), input.size(), out.data());
  return out;
}

std::optional<std::uint64_t> ParseNumber(std::string_view text) {
  std::uint64_t value = 0;
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

FileSetTree::FileSetTree(std::vector<Sha256Bytes> leaves,
                         std::vector<std::vector<Sha256Bytes>> levels)
    : leaves_(std::move(leaves)), levels_(std::move(levels)) {
  root_ = levels_.empty() ? Sha256Of("") : levels_.back().front();
}

FileSetTree FileSetTree::Of(std::span<const Sha256Bytes> digests) {
  std::vector<Sha256Bytes> leaves(digests.begin(), digests.end());
  std::ranges::sort(leaves);
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  std::vector<std::vector<Sha256Bytes>> levels;
  if (!leaves.empty()) {
    std::vector<Sha256Bytes> level;
    level.reserve(leaves.size());
    for (const Sha256Bytes& leaf : leaves) level.push_back(LeafHash(leaf));
    levels.push_back(std::move(level));
    while (levels.back().size() > 1) {
      const std::vector<Sha256Bytes>& below = levels.back();
      std::vector<Sha256Bytes> above;
      above.reserve((below.size() + 1) / 2);
      for (std::size_t index = 0; index < below.size(); index += 2) {
        above.push_back(index + 1 < below.size() ? InteriorHash(below[index], below[index + 1])
                                                 : below[index]);
      }
      levels.push_back(std::move(above));
    }
  }
  return FileSetTree(std::move(leaves), std::move(levels));
}

std::optional<FileSetProof> FileSetTree::ProofOf(const Sha256Bytes& digest) const {
  const auto found = std::ranges::lower_bound(leaves_, digest);
  if (found == leaves_.end() || *found != digest) return std::nullopt;
  FileSetProof proof{.index = static_cast<std::uint64_t>(found - leaves_.begin()),
                     .count = leaves_.size()};
  std::uint64_t position = proof.index;
  for (std::size_t level = 0; level + 1 < levels_.size(); ++level) {
    const std::uint64_t sibling = position ^ 1U;
    if (sibling < levels_[level].size()) proof.path.push_back(levels_[level][sibling]);
    position >>= 1U;
  }
  return proof;
}

bool VerifyFileSetProof(const Sha256Bytes& root, const Sha256Bytes& digest,
                        const FileSetProof& proof) {
  // RFC 9162, section 2.1.3.2.
  if (proof.index >= proof.count || proof.path.size() > kMaxFileSetProofHashes) return false;
  std::uint64_t node = proof.index;
  std::uint64_t last = proof.count - 1;
  Sha256Bytes hash = LeafHash(digest);
  for (const Sha256Bytes& sibling : proof.path) {
    if (last == 0) return false;
    if ((node & 1U) != 0 || node == last) {
      hash = InteriorHash(sibling, hash);
      while ((node & 1U) == 0 && node != 0) {
        node >>= 1U;
        last >>= 1U;
      }
    } else {
      hash = InteriorHash(hash, sibling);
    }
    node >>= 1U;
    last >>= 1U;
  }
  return last == 0 && hash == root;
}

std::string FormatFileSetProof(const FileSetProof& proof) {
  std::string hashes;
  hashes.reserve(proof.path.size() * 32);
  for (const Sha256Bytes& hash : proof.path) {
    hashes.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  }
  return std::to_string(proof.index) + "." + std::to_string(proof.count) + "." +
         EncodeBase64(hashes);
}

Result<FileSetProof> ParseFileSetProof(std::string_view text) {
  const auto invalid = [](std::string_view why) -> Result<FileSetProof> {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("file-set proof: ") + std::string(why));
  };
  // The longest well-formed proof: two 20-digit numbers, two dots and 32 hashes in base64.
  constexpr std::size_t kMaxText = 2 * 20 + 2 + (kMaxFileSetProofHashes * 32 + 2) / 3 * 4;
  if (text.size() > kMaxText) return invalid("too long");
  const std::size_t first = text.find('.');
  const std::size_t second = first == std::string_view::npos ? first : text.find('.', first + 1);
  if (second == std::string_view::npos) return invalid("expected <index>.<count>.<hashes>");
  const auto index = ParseNumber(text.substr(0, first));
  const auto count = ParseNumber(text.substr(first + 1, second - first - 1));
  if (!index || !count) return invalid("index and count must be decimal numbers");
  if (*index >= *count) return invalid("the index must be below the count");
  auto hashes = DecodeBase64(text.substr(second + 1), "file-set proof");
  if (!hashes) return std::unexpected(hashes.error());
  if (hashes->size() % 32 != 0) return invalid("the path is not a whole number of hashes");
  if (hashes->size() / 32 > kMaxFileSetProofHashes) return invalid("the path is too long");
  FileSetProof proof{.index = *index, .count = *count};
  for (std::size_t offset = 0; offset < hashes->size(); offset += 32) {
    Sha256Bytes hash{};
    std::memcpy(hash.data(), hashes->data() + offset, hash.size());
    proof.path.push_back(hash);
  }
  return proof;
}

}  // namespace modelplane::core
