// `kubectl modelplane`: the verbs (status, quota, why, cache, prestage, revoke, plan, import),
// their flags, and the calls each makes to the API server (through session.h). Formatting,
// explanations and the rollout plan are pure functions in the *_report, pod_explanation,
// revision_patches and rollout_forecast files; import_command.h writes revisions from a hub and
// talks to the cluster only with --apply; this file reads and writes objects.
//
// Exit status: 0 done, 1 the verb failed (one "error: ..." line on stderr), CLI11's usage codes
// (non-zero, one line) when the arguments are wrong.
// Thread safety: RunPlugin runs one command on the calling thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/clock/clock.h"
#include "core/kube/kube_config.h"
#include "kubectl-plugin/kubeconfig_path.h"

namespace modelplane::cli {

struct PluginContext {
  core::EnvironmentLookup getenv;
  FileExists file_exists;
  const core::Clock& clock;
  std::ostream& out;
  std::ostream& err;
};

// `arguments` without the program name, as kubectl passes them to the plugin.
[[nodiscard]] int RunPlugin(const std::vector<std::string>& arguments,
                            const PluginContext& context);

}  // namespace modelplane::cli
