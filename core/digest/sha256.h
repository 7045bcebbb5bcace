// Streaming SHA-256 over OpenSSL's EVP interface, and the "sha256:<hex>" digest form.
//
// Every byte modelplane accepts is checked against a SHA-256 named in a ModelRevision, so the
// hasher is fed incrementally as data arrives (network ranges, file reads) and never needs the
// whole input in memory. EVP picks the fastest implementation the CPU offers (SHA-NI, AVX2).
//
// Thread safety: a Sha256 is used by one thread at a time; distinct objects are independent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <openssl/types.h>

#include "core/error/error.h"

namespace modelplane::core {

using Sha256Bytes = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  // Fails only if OpenSSL cannot provide SHA-256 (a broken installation).
  [[nodiscard]] static Result<Sha256> Create();

  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();

  void Update(std::span<const std::byte> data);
  void Update(std::string_view data);

  // Returns the digest and resets the hasher so it can be reused for a new input.
  [[nodiscard]] Sha256Bytes Finish();

 private:
  struct ContextDeleter {
    void operator()(EVP_MD_CTX* context) const;
  };
  explicit Sha256(std::unique_ptr<EVP_MD_CTX, ContextDeleter> context);
  std::unique_ptr<EVP_MD_CTX, ContextDeleter> context_;
};

// Lower-case hexadecimal, 64 characters.
[[nodiscard]] std::string ToHex(const Sha256Bytes& digest);

// "sha256:" followed by the lower-case hex.
[[nodiscard]] std::string FormatDigest(const Sha256Bytes& digest);

// Accepts "sha256:<64 hex>" (or bare 64 hex when allow_bare is true), any hex case.
[[nodiscard]] Result<Sha256Bytes> ParseDigest(std::string_view text, bool allow_bare = false);

// One-shot helpers for small inputs.
[[nodiscard]] Sha256Bytes Sha256Of(std::string_view data);
[[nodiscard]] std::string Sha256HexOf(std::string_view data);

// Hashes a whole file with large sequential reads.
[[nodiscard]] Result<Sha256Bytes> Sha256OfFile(const std::string& path);

}  // namespace modelplane::core
