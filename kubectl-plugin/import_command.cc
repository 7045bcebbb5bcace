#include "kubectl-plugin/import_command.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/api/hub_source.h"
#include "core/api/object_key.h"
#include "core/hub/hub_api.h"
#include "core/hub/hub_reference.h"
#include "core/io/bounded_file.h"
#include "core/json/json_lookup.h"
#include "core/kube/resource_type.h"
#include "core/manifest/execution_flags.h"
#include "core/manifest/manifest_yaml.h"
#include "kubectl-plugin/revision_import.h"
#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli {
namespace {

namespace api = core::api;

constexpr std::size_t kMaxTokenBytes = 4096;

std::string WithoutSurroundingSpace(std::string text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.back())) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && space(text[start])) ++start;
  return text.substr(start);
}

// Where each hub's own client looks for its endpoint and token, so a shell set up for
// huggingface_hub or modelscope imports as that client would download.
struct HubEnvironment {
  std::string_view source_type;
  std::string_view endpoint_variable;
  std::string_view token_variable;
};

constexpr std::array<HubEnvironment, 2> kHubEnvironments = {{
    {api::kSourceHuggingFace, "HF_ENDPOINT", "HF_TOKEN"},
    {api::kSourceModelScope, "MODELSCOPE_ENDPOINT", "MODELSCOPE_API_TOKEN"},
}};

const HubEnvironment& EnvironmentOf(const core::HubReference& reference) {
  for (const HubEnvironment& environment : kHubEnvironments) {
    if (environment.source_type == reference.source_type) return environment;
  }
  return kHubEnvironments.front();  // ParseHubReference makes only the types above
}

// The token from --token-file, else the hub's variable; nullopt for none (an empty one is none
// too, as both clients treat it).
core::Result<std::optional<std::string>> ReadToken(const ImportFlags& flags,
                                                   const HubEnvironment& environment,
                                                   const PluginContext& context) {
  std::string token;
  if (!flags.token_file.empty()) {
    auto content = core::ReadBoundedFile(flags.token_file, kMaxTokenBytes);
    if (!content) return std::unexpected(content.error().Wrap("reading --token-file"));
    token = WithoutSurroundingSpace(std::move(*content));
  } else if (auto from_environment = context.getenv(std::string(environment.token_variable))) {
    token = WithoutSurroundingSpace(std::move(*from_environment));
  }
  if (token.empty()) return std::nullopt;
  return token;
}

// --endpoint, else the hub's variable, else the hub's own endpoint.
std::string Endpoint(const ImportFlags& flags, const HubEnvironment& environment,
                     const PluginContext& context) {
  std::string endpoint = flags.endpoint;
  if (endpoint.empty()) {
    endpoint = context.getenv(std::string(environment.endpoint_variable)).value_or("");
  }
  if (endpoint.empty()) {
    api::ModelSource default_hub;
    default_hub.type = std::string(environment.source_type);
    endpoint = api::HubEndpoint(default_hub);
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

// Writes `text` to `path` whole or not at all: a temporary file beside it, renamed over it.
std::optional<Failure> WriteWhole(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".import-tmp";
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  std::error_code error;
  if (out) std::filesystem::rename(temporary, path, error);
  if (!out || error) {
    std::filesystem::remove(temporary, error);
    return Failure{fmt::format("could not write {}", path)};
  }
  return std::nullopt;
}

Failure NameTaken(const std::string& what) {
  return Failure{
      fmt::format("ModelRevision {} already exists; import under another --name "
                  "(a revision's files never change)",
                  what)};
}

// With --apply, a name that is taken ends the import before anything is downloaded.
std::optional<Failure> RequireFreeName(Session& session, const std::string& name) {
  const std::string what = api::ObjectKey(session.namespace_name(), name);
  auto existing =
      session.client().Get(core::resources::ModelRevisions(), session.namespace_name(), name);
  if (existing) return NameTaken(what);
  if (existing.error().code() == core::ErrorCode::kNotFound) return std::nullopt;
  return Failure{Session::ReadError(existing.error(), "ModelRevision", what).message()};
}

// Creates, never replaces: someone may have taken the name since RequireFreeName.
std::optional<Failure> Create(Session& session, const api::ModelRevision& revision) {
  const std::string what = api::ObjectKey(session.namespace_name(), revision.metadata.name);
  auto created = session.client().Create(core::resources::ModelRevisions(),
                                         session.namespace_name(), api::ToJson(revision));
  if (created) return std::nullopt;
  if (created.error().code() == core::ErrorCode::kAlreadyExists) return NameTaken(what);
  return Failure{created.error().Wrap(fmt::format("creating ModelRevision {}", what)).message()};
}

std::int64_t TotalBytes(const api::ModelRevision& revision) {
  std::int64_t total = 0;
  for (const api::ModelFile& file : revision.spec.files) total += file.size;
  return total;
}

}  // namespace

void AddImportFlags(CLI::App& command, ImportFlags& flags) {
  command
      .add_option("REFERENCE", flags.reference,
                  "hf://org/name[@rev] (default main) or modelscope://org/name[@rev] (master)")
      ->required();
  command.add_option("--name", flags.name, "metadata.name of the ModelRevision")->required();
  command.add_option("--endpoint", flags.endpoint,
                     "hub or mirror (default: $HF_ENDPOINT/$MODELSCOPE_ENDPOINT, else the hub)");
  command.add_option("--token-file", flags.token_file,
                     "a file with the token (default: $HF_TOKEN or $MODELSCOPE_API_TOKEN)");
  // One pattern per flag, so a pattern never swallows the REFERENCE after it.
  command.add_option("--include", flags.includes, "import only files matching a glob (repeat)")
      ->allow_extra_args(false);
  command.add_option("--exclude", flags.excludes, "leave out files matching a glob (repeat)")
      ->allow_extra_args(false);
  command.add_option("--credentials-secret", flags.credentials_secret,
                     "Secret with the agents' token (the source's credentialsSecretRef)");
  command.add_option("--base", flags.base,
                     "a LoRA adapter of this ModelRevision of the namespace (its digest is read)");
  command
      .add_option("--base-digest", flags.base_digest,
                  "a LoRA adapter of the revision with this digest (sha256:...)")
      ->excludes("--base");
  core::AddExecutionFlags(command, flags.execution);
  command.add_flag("--apply", flags.apply, "create the ModelRevision in the namespace");
  command.add_option("-o,--output", flags.output, "write the YAML to this file (default: stdout)");
}

// spec.base for an adapter: the digest given, or the named revision's, read from the cluster
// (which must have computed it: a revision still invalid or just created has none yet). With
// --base the session is connected already.
core::Result<std::optional<api::BaseRevision>> BaseOf(Session& session, const ImportFlags& flags) {
  if (!flags.base_digest.empty()) return api::BaseRevision{.digest = flags.base_digest};
  if (flags.base.empty()) return std::nullopt;
  auto base =
      session.client().Get(core::resources::ModelRevisions(), session.namespace_name(), flags.base);
  if (!base) {
    return std::unexpected(base.error().Wrap(
        fmt::format("--base {}", api::ObjectKey(session.namespace_name(), flags.base))));
  }
  const std::string digest = core::StringMember(*base, {"status", "digest"});
  if (digest.empty()) {
    return core::MakeError(core::ErrorCode::kInvalidArgument,
                           fmt::format("--base {} has no digest yet (is it valid?); try again "
                                       "once kubectl get modelrevision shows one",
                                       api::ObjectKey(session.namespace_name(), flags.base)));
  }
  return api::BaseRevision{.digest = digest, .name = flags.base};
}

std::optional<Failure> RunImport(Session& session, const ImportFlags& flags, std::ostream& out) {
  const PluginContext& context = session.context();
  auto reference = core::ParseHubReference(flags.reference);
  if (!reference) return Failure{reference.error().message()};
  const HubEnvironment& environment = EnvironmentOf(*reference);
  auto token = ReadToken(flags, environment, context);
  if (!token) return Failure{token.error().message()};
  if (flags.apply || !flags.base.empty()) {
    if (auto failed = session.Connect()) return failed;
  }
  if (flags.apply) {
    if (auto taken = RequireFreeName(session, flags.name)) return taken;
  }
  auto base = BaseOf(session, flags);
  if (!base) return Failure{base.error().message()};

  core::HubClientOptions options{.endpoint = Endpoint(flags, environment, context),
                                 .token = *token};
  options.note = [&context](std::string_view note) {
    context.err << "import: " << Printable(note) << "\n";
  };
  auto hub = core::CreateHubApi(reference->source_type, options, context.clock);
  if (!hub) return Failure{hub.error().message()};
  ImportRequest request{
      .reference = *reference,
      .endpoint = options.endpoint,
      .name = flags.name,
      .namespace_name = flags.apply ? session.namespace_name() : session.namespace_flag(),
      .selection = core::FileSelection(flags.includes, flags.excludes),
      .execution = flags.execution,
      .credentials_secret = flags.credentials_secret,
      .base = *base};
  auto imported = ImportRevision(**hub, request);
  if (!imported) return Failure{imported.error().message()};

  const api::ModelRevision& revision = imported->revision;
  for (const std::string& skipped : imported->skipped) {
    context.err << "import: left out " << Printable(skipped) << " (no role)\n";
  }
  const std::string yaml = core::RevisionToYaml(revision);
  if (flags.apply) {
    if (auto failed = Create(session, revision)) return failed;
  }
  if (!flags.output.empty() && flags.output != "-") {
    if (auto failed = WriteWhole(flags.output, yaml)) return failed;
  }
  context.err << fmt::format(
      "import: {}@{} is commit {}: {} files, {} bytes ({} small files hashed here)\n",
      reference->repository, Printable(reference->revision),
      api::HubLocationOf(revision.spec.sources.front())->commit, revision.spec.files.size(),
      TotalBytes(revision), imported->downloaded);
  if (flags.apply) {
    out << fmt::format("modelrevision.modelplane.io/{} created\n", revision.metadata.name);
  } else if (flags.output.empty() || flags.output == "-") {
    out << yaml;
  }
  return std::nullopt;
}

}  // namespace modelplane::cli
