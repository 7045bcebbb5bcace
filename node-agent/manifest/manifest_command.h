// `modelplane-node-agent manifest`: writes a ModelRevision for a model folder or S3 prefix.
//
//   manifest --from DIR|s3://bucket/prefix --name NAME [--namespace NS] [--endpoint URL]
//            [--region R] [--threads N] [--engine vllm] [--engine-version V] [-o FILE] ...
//
// A folder becomes a sharedFilesystem source at its absolute path (or an http source with
// --base-url); an S3 prefix becomes an objectStore source, read with credentials from
// --credentials-dir (a Secret-style directory) or the AWS_* environment variables.
// Thread safety: the returned Subcommand is used by one thread.
#pragma once

#include <CLI/CLI.hpp>

#include "node-agent/cli/subcommand.h"

namespace modelplane::agent {

[[nodiscard]] Subcommand AddManifestCommand(CLI::App& parent);

}  // namespace modelplane::agent
