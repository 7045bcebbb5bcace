// One file of a hub repository at a commit, as the hub's listing describes it.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>

namespace modelplane::core {

struct HubFile {
  std::string path;
  std::int64_t size = 0;
  // 64 lower-case hex digits when the listing gives the content's sha256 (the Hugging Face Hub
  // for LFS files only, ModelScope for every file); empty: it must be downloaded and hashed.
  std::string sha256;
  // Stored in LFS: served through a redirect to the hub's CDN, which the download may follow.
  bool lfs = false;

  friend bool operator==(const HubFile&, const HubFile&) = default;
};

}  // namespace modelplane::core
