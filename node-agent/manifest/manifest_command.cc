#include "node-agent/manifest/manifest_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/api/limits.h"
#include "core/io/bounded_file.h"
#include "core/manifest/execution_flags.h"
#include "core/manifest/manifest_yaml.h"
#include "core/manifest/revision_builder.h"
#include "node-agent/manifest/manifest_builder.h"
#include "node-agent/sources/revision_sources.h"

namespace modelplane::agent {
namespace {

struct ManifestFlags {
  std::string from;
  std::string name;
  std::string namespace_name = "default";
  std::string endpoint;
  std::string region;
  std::string credentials_dir;
  std::string secret;
  std::string base_url;
  std::string source_name;
  core::ExecutionDefaults execution;
  std::size_t threads = 4;
  bool virtual_hosted = false;
  std::vector<std::string> signatures;
  std::string output;
};

int Fail(const core::Error& error, int code = 1) {
  std::cerr << "manifest: " << error.ToString() << "\n";
  return code;
}

int Run(const ManifestFlags& flags) {
  core::api::ModelRevisionSpec defaults = core::SpecFromDefaults(flags.execution);
  const HashOptions hash{.threads = std::max<std::size_t>(1, flags.threads)};

  core::Result<FileListing> listing = core::MakeError(core::ErrorCode::kInternal, "unset");
  core::api::ModelSource source;
  if (flags.from.starts_with("s3://")) {
    const std::string rest = flags.from.substr(5);
    const std::size_t slash = rest.find('/');
    const std::string bucket = rest.substr(0, slash);
    std::string prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (bucket.empty()) {
      return Fail(core::Error(core::ErrorCode::kInvalidArgument, "s3:// URL without a bucket"), 2);
    }
    source.name = flags.source_name.empty() ? "s3" : flags.source_name;
    source.type = std::string(core::api::kSourceObjectStore);
    source.object_store = core::api::ObjectStoreLocation{
        .endpoint = flags.endpoint, .bucket = bucket, .prefix = prefix, .region = flags.region};
    if (!flags.secret.empty()) source.credentials_secret_ref = {flags.secret};
    SourceEnvironment environment;
    environment.s3_addressing =
        flags.virtual_hosted ? S3AddressingStyle::kVirtualHosted : S3AddressingStyle::kPath;
    core::api::ModelSource reading = source;
    if (!flags.credentials_dir.empty()) {
      // The directory holds the keys themselves, not one folder per Secret.
      const std::filesystem::path dir(flags.credentials_dir);
      environment.secrets = std::make_shared<DirectorySecrets>(dir.parent_path().string());
      reading.credentials_secret_ref = {dir.filename().string()};
    } else {
      reading.credentials_secret_ref.reset();
    }
    auto client = CreateS3ClientForSource(reading, {.node_credentials = true}, environment);
    if (!client) return Fail(client.error(), 2);
    if (source.object_store->region.empty()) source.object_store->region = (*client)->region();
    if (source.object_store->endpoint.empty()) {
      source.object_store->endpoint = (*client)->endpoint();
    }
    listing = ListS3Files(**client, bucket, prefix, hash);
  } else {
    std::error_code error;
    const auto folder = std::filesystem::absolute(flags.from, error).lexically_normal();
    if (!flags.base_url.empty()) {
      source.name = flags.source_name.empty() ? "origin" : flags.source_name;
      source.type = std::string(core::api::kSourceHttp);
      source.http = core::api::HttpLocation{flags.base_url};
    } else {
      source.name = flags.source_name.empty() ? "shared" : flags.source_name;
      source.type = std::string(core::api::kSourceSharedFilesystem);
      std::string path = folder.string();
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      source.shared_filesystem = core::api::SharedFilesystemLocation{path};
    }
    listing = ListFolderFiles(folder.string(), hash);
  }
  if (!listing) return Fail(listing.error());
  for (const std::string& skipped : listing->skipped) {
    std::cerr << "manifest: skipped " << skipped << " (no role)\n";
  }
  for (const std::string& path : flags.signatures) {
    auto bundle = core::ReadBoundedFile(path, core::api::kMaxSignatureBundleLength);
    if (!bundle) return Fail(bundle.error().Wrap("reading the signature"));
    defaults.signatures.push_back({.bundle = std::move(*bundle)});
  }
  auto revision = core::BuildRevision(flags.name, flags.namespace_name, std::move(defaults),
                                      std::move(listing->files), std::move(source));
  if (!revision) return Fail(revision.error());
  const std::string yaml = core::RevisionToYaml(*revision);
  if (flags.output.empty() || flags.output == "-") {
    std::cout << yaml;
    return 0;
  }
  std::ofstream out(flags.output, std::ios::binary | std::ios::trunc);
  out << yaml;
  out.close();
  if (!out) {
    return Fail(core::Error(core::ErrorCode::kIo, fmt::format("writing {}", flags.output)));
  }
  return 0;
}

}  // namespace

Subcommand AddManifestCommand(CLI::App& parent) {
  auto flags = std::make_shared<ManifestFlags>();
  CLI::App* app = parent.add_subcommand(
      "manifest", "Write a ModelRevision (YAML) for a model folder or an S3 prefix");
  app->add_option("--from", flags->from, "A folder, or s3://bucket/prefix")->required();
  app->add_option("--name", flags->name, "metadata.name of the revision")->required();
  app->add_option("--namespace", flags->namespace_name, "metadata.namespace");
  app->add_option("--endpoint", flags->endpoint,
                  "S3 endpoint URL (default: AWS's regional endpoint)");
  app->add_option("--region", flags->region, "S3 region (default: AWS_REGION or us-east-1)");
  app->add_option("--credentials-dir", flags->credentials_dir,
                  "Directory with accessKeyId and secretAccessKey files (default: AWS_* env)");
  app->add_option("--secret", flags->secret,
                  "credentialsSecretRef to write into the objectStore source");
  app->add_flag("--virtual-hosted", flags->virtual_hosted,
                "Use virtual-hosted-style S3 URLs (bucket.endpoint)");
  app->add_option("--base-url", flags->base_url,
                  "For a folder: describe it as an http source at this URL");
  app->add_option("--source-name", flags->source_name, "Name of the source in spec.sources");
  core::AddExecutionFlags(*app, flags->execution);
  app->add_option("--threads", flags->threads, "Files hashed at once")->check(CLI::Range(1, 256));
  app->add_option("--signature", flags->signatures,
                  "An OpenSSF model-signing bundle for the folder (model_signing sign ... "
                  "--signature FILE), put into spec.signatures; repeat for a second")
      ->expected(1, static_cast<int>(core::api::kMaxSignatures))
      ->check(CLI::ExistingFile);
  app->add_option("-o,--output", flags->output, "Output file (default: stdout)");
  return Subcommand{.app = app, .run = [flags] { return Run(*flags); }};
}

}  // namespace modelplane::agent
