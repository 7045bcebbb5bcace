#include "core/digest/sha256.h"

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "core/io/unique_fd.h"
#include "core/text/hex.h"

namespace modelplane::core {
namespace {

constexpr std::size_t kFileReadBlock = 4 << 20;

}  // namespace

void Sha256::ContextDeleter::operator()(EVP_MD_CTX* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256(std::unique_ptr<EVP_MD_CTX, ContextDeleter> context)
    : context_(std::move(context)) {}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

Result<Sha256> Sha256::Create() {
  std::unique_ptr<EVP_MD_CTX, ContextDeleter> context(EVP_MD_CTX_new());
  if (!context) return MakeError(ErrorCode::kInternal, "EVP_MD_CTX_new failed");
  if (EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return MakeError(ErrorCode::kInternal, "EVP_DigestInit_ex(sha256) failed");
  }
  return Sha256(std::move(context));
}

void Sha256::Update(std::span<const std::byte> data) {
  // EVP_DigestUpdate cannot fail for an initialised software digest.
  EVP_DigestUpdate(context_.get(), data.data(), data.size());
}

void Sha256::Update(std::string_view data) {
  EVP_DigestUpdate(context_.get(), data.data(), data.size());
}

Sha256Bytes Sha256::Finish() {
  Sha256Bytes digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_.get(), digest.data(), &length);
  EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
  return digest;
}

std::string ToHex(const Sha256Bytes& digest) {
  return EncodeHex(digest);
}

std::string FormatDigest(const Sha256Bytes& digest) {
  return "sha256:" + ToHex(digest);
}

Result<Sha256Bytes> ParseDigest(std::string_view text, bool allow_bare) {
  constexpr std::string_view kPrefix = "sha256:";
  std::string_view hex = text;
  if (hex.starts_with(kPrefix)) {
    hex.remove_prefix(kPrefix.size());
  } else if (!allow_bare) {
    return MakeError(ErrorCode::kInvalidArgument, "digest must start with 'sha256:'");
  }
  if (hex.size() != 64) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "sha256 digest must have 64 hex characters, got " + std::to_string(hex.size()));
  }
  Sha256Bytes digest{};
  if (!DecodeHex(hex, digest)) {
    return MakeError(ErrorCode::kInvalidArgument, "sha256 digest has a non-hex character");
  }
  return digest;
}

Sha256Bytes Sha256Of(std::string_view data) {
  Sha256Bytes digest{};
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string Sha256HexOf(std::string_view data) {
  return ToHex(Sha256Of(data));
}

Result<Sha256Bytes> Sha256OfFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return MakeError(ErrorCode::kIo, "open " + path + ": " + std::system_category().message(errno));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  auto hasher = Sha256::Create();
  if (!hasher) return std::unexpected(hasher.error());
  std::vector<std::byte> block(kFileReadBlock);
  while (true) {
    const ssize_t got = ::read(fd.get(), block.data(), block.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kIo,
                       "read " + path + ": " + std::system_category().message(errno));
    }
    if (got == 0) break;
    hasher->Update(std::span(block.data(), static_cast<std::size_t>(got)));
  }
  return hasher->Finish();
}

}  // namespace modelplane::core
