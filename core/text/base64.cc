#include "core/text/base64.h"

#include <algorithm>
#include <cctype>

#include <boost/beast/core/detail/base64.hpp>

namespace modelplane::core {

namespace base64 = boost::beast::detail::base64;

std::string EncodeBase64(std::string_view bytes) {
  std::string out(base64::encoded_size(bytes.size()), '\0');
  out.resize(base64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

Result<std::string> DecodeBase64(std::string_view text, std::string_view field) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) clean.push_back(c);
  }
  const auto invalid = [&] {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field) + " is not valid base64");
  };
  if (clean.size() % 4 != 0) return invalid();
  std::string out(base64::decoded_size(clean.size()), '\0');
  const auto [written, read] = base64::decode(out.data(), clean.data(), clean.size());
  // Beast stops at the first byte outside the alphabet; '=' may only pad the last quantum.
  const std::size_t padding = static_cast<std::size_t>(
      std::find_if(clean.rbegin(), clean.rend(), [](char c) { return c != '='; }) - clean.rbegin());
  if (padding > 2 || read + padding != clean.size()) return invalid();
  out.resize(written);
  return out;
}

}  // namespace modelplane::core
