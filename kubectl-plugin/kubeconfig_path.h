// Which kubeconfig the plugin uses, in kubectl's order: --kubeconfig, else the KUBECONFIG
// environment variable, else ~/.kube/config, else (inside a pod) the service account.
//
// Unlike kubectl, a KUBECONFIG that lists several files is not merged: the first file that
// exists is used (core's loader reads one file).
// Thread safety: pure functions (the environment and the filesystem are passed in).
#pragma once

#include <functional>
#include <string>

#include "core/error/error.h"
#include "core/kube/kube_config.h"

namespace modelplane::cli {

struct KubeconfigChoice {
  std::string path;    // empty: the in-cluster service account
  std::string source;  // "--kubeconfig", "KUBECONFIG", "~/.kube/config" or "in-cluster"
};

using FileExists = std::function<bool(const std::string&)>;

// kNotFound, naming what was tried, when there is nothing to use.
[[nodiscard]] core::Result<KubeconfigChoice> ChooseKubeconfig(const std::string& flag,
                                                              const core::EnvironmentLookup& getenv,
                                                              const FileExists& exists);

}  // namespace modelplane::cli
