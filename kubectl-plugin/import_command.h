// `kubectl modelplane import hf://org/name[@revision] --name NAME` (or modelscope://...): writes
// a ModelRevision for a Hugging Face Hub or ModelScope repository (revision_import.h) as YAML, to
// stdout or -o FILE, and with --apply creates it in the namespace. Without --apply it needs no
// cluster and no kubeconfig.
//
// The endpoint is --endpoint, else the hub client's variable ($HF_ENDPOINT,
// $MODELSCOPE_ENDPOINT), else the hub's own; the token is the content of --token-file, else
// $HF_TOKEN or $MODELSCOPE_API_TOKEN, else none. The token goes to the endpoint's origin
// only and is never printed. A refusal writes nothing (no YAML, no file, no object) and says
// why with a reason word (core/hub/hub_errors.h). Files left out for having no role, and any
// rate-limit wait, are reported on stderr, so stdout holds only the YAML.
// Thread safety: one thread.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/manifest/revision_builder.h"
#include "kubectl-plugin/session.h"

namespace modelplane::cli {

struct ImportFlags {
  std::string reference;  // hf://org/name[@revision] or modelscope://org/name[@revision]
  std::string name;
  std::string endpoint;
  std::string token_file;
  std::vector<std::string> includes;
  std::vector<std::string> excludes;
  std::string credentials_secret;
  std::string base;         // --base: the base revision's name (its digest read from the cluster)
  std::string base_digest;  // --base-digest: the base's digest, without a cluster
  bool apply = false;
  std::string output;
  core::ExecutionDefaults execution;
};

// Declares the verb's own flags on `command`; `flags` must outlive the parse.
void AddImportFlags(CLI::App& command, ImportFlags& flags);

// Runs the import; connects to the cluster (through `session`) only with --apply.
[[nodiscard]] std::optional<Failure> RunImport(Session& session, const ImportFlags& flags,
                                               std::ostream& out);

}  // namespace modelplane::cli
