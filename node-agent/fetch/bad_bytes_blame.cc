#include "node-agent/fetch/bad_bytes_blame.h"

#include <iterator>

namespace modelplane::agent {

std::vector<std::size_t> ChooseBlamedSources(const std::set<std::size_t>& contributors,
                                             const std::function<bool(std::size_t)>& distrusted) {
  std::vector<std::size_t> blamed;
  for (std::size_t source : contributors) {
    if (distrusted(source)) blamed.push_back(source);
  }
  if (!blamed.empty()) return blamed;
  if (contributors.size() <= 1) return {contributors.begin(), contributors.end()};
  return {contributors.begin(), std::prev(contributors.end())};
}

}  // namespace modelplane::agent
