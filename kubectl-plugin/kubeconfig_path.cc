#include "kubectl-plugin/kubeconfig_path.h"

#include <string_view>

namespace modelplane::cli {

core::Result<KubeconfigChoice> ChooseKubeconfig(const std::string& flag,
                                                const core::EnvironmentLookup& getenv,
                                                const FileExists& exists) {
  if (!flag.empty()) {
    if (!exists(flag)) {
      return core::MakeError(core::ErrorCode::kNotFound, "--kubeconfig " + flag + ": no such file");
    }
    return KubeconfigChoice{.path = flag, .source = "--kubeconfig"};
  }
  if (auto list = getenv("KUBECONFIG"); list && !list->empty()) {
    std::string_view rest = *list;
    while (true) {
      const std::size_t colon = rest.find(':');
      const std::string path(rest.substr(0, colon));
      if (!path.empty() && exists(path))
        return KubeconfigChoice{.path = path, .source = "KUBECONFIG"};
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    return core::MakeError(core::ErrorCode::kNotFound,
                           "KUBECONFIG=" + *list + " names no file that exists");
  }
  if (auto home = getenv("HOME"); home && !home->empty()) {
    const std::string path = *home + "/.kube/config";
    if (exists(path)) return KubeconfigChoice{.path = path, .source = "~/.kube/config"};
  }
  if (auto host = getenv("KUBERNETES_SERVICE_HOST"); host && !host->empty()) {
    return KubeconfigChoice{.path = "", .source = "in-cluster"};
  }
  return core::MakeError(core::ErrorCode::kNotFound,
                         "no kubeconfig: pass --kubeconfig, set KUBECONFIG or create "
                         "~/.kube/config");
}

}  // namespace modelplane::cli
