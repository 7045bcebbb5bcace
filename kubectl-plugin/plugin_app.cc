#include "kubectl-plugin/plugin_app.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/api/object_key.h"
#include "core/json/json_lookup.h"
#include "core/kube/kube_client.h"
#include "core/kube/resource_type.h"
#include "core/runtime/kube_connection.h"
#include "kubectl-plugin/cache_report.h"
#include "kubectl-plugin/import_command.h"
#include "kubectl-plugin/pod_explanation.h"
#include "kubectl-plugin/quota_report.h"
#include "kubectl-plugin/revision_patches.h"
#include "kubectl-plugin/revision_report.h"
#include "kubectl-plugin/rollout_forecast.h"
#include "kubectl-plugin/rollout_forecast_report.h"
#include "kubectl-plugin/session.h"
#include "kubectl-plugin/terminal_text.h"
#include "simulation/rollout_simulation.h"

namespace modelplane::cli {

namespace api = core::api;
namespace resources = core::resources;
using nlohmann::json;

namespace {

constexpr int kFailed = 1;
constexpr double kMegabyte = 1e6;

struct Options {
  ClusterFlags cluster;
  std::string name;  // the verb's argument
  std::int32_t nodes = 0;
  // plan; origin and stream 0: not given (the rates then come from the SourceBudgets).
  std::int32_t replicas = 0;
  double nic_gigabits = kDefaultNicGigabits;
  double origin_gigabits = 0;
  double stream_megabytes = 0;
  ImportFlags import;
};

std::optional<Failure> RunQuota(Session& session, const Options& options, std::ostream& out);

// Without a revision: the namespace's view (RunQuota), which a tenant may read.
std::optional<Failure> RunStatus(Session& session, const Options& options, std::ostream& out) {
  if (options.name.empty()) return RunQuota(session, options, out);
  auto revision = session.GetRevision(options.name);
  if (!revision) return Failure{revision.error().message()};
  auto text = RenderRevisionStatus(*revision, session.ListCaches(), session.Now());
  if (!text) return Failure{text.error().message()};
  out << *text;
  return std::nullopt;
}

std::optional<Failure> RunWhy(Session& session, const Options& options, std::ostream& out) {
  const std::string pod_name = core::api::ObjectKey(session.namespace_name(), options.name);
  auto pod = session.client().Get(resources::Pods(), session.namespace_name(), options.name);
  if (!pod) return Failure{Session::ReadError(pod.error(), "Pod", pod_name).message()};
  PodFacts facts{.pod = std::move(*pod)};
  if (auto reference = PodRevision(facts.pod); reference && *reference) {
    auto revision = session.client().Get(resources::ModelRevisions(), (*reference)->namespace_name,
                                         (*reference)->name);
    if (revision) {
      facts.revision = std::move(*revision);
    } else if (revision.error().code() != core::ErrorCode::kNotFound) {
      facts.revision_unavailable = revision.error().message();
    }
    facts.caches = session.ListCaches();
  }
  facts.events = session.EventsAbout(facts.pod);
  auto text = ExplainPod(facts, session.Now());
  if (!text) return Failure{text.error().message()};
  out << *text;
  return std::nullopt;
}

// Reads only the namespace's own objects: a tenant may run it without any cluster-wide right.
std::optional<Failure> RunQuota(Session& session, const Options& /*options*/, std::ostream& out) {
  std::array<std::vector<json>, 2> lists;
  const std::array<core::ResourceType, 2> types = {resources::ModelQuotas(),
                                                   resources::ModelRevisions()};
  for (std::size_t i = 0; i < types.size(); ++i) {
    auto page = session.client().ListAll(types[i], session.namespace_name(), {});
    if (!page) {
      return Failure{page.error()
                         .Wrap(fmt::format("listing {}.{} in namespace {}", types[i].resource,
                                           types[i].group, session.namespace_name()))
                         .message()};
    }
    for (json& item : page->items) lists[i].push_back(std::move(item));
  }
  auto text = RenderNamespaceQuota(session.namespace_name(), lists[0], lists[1]);
  if (!text) return Failure{text.error().message()};
  out << *text;
  return std::nullopt;
}

std::optional<Failure> RunCache(Session& session, const Options& options, std::ostream& out) {
  auto cache = session.client().Get(resources::ModelCaches(), "", options.name);
  if (!cache) {
    if (cache.error().code() == core::ErrorCode::kNotFound) {
      return Failure{fmt::format("ModelCache {} not found (kubectl get modelcaches lists them)",
                                 options.name)};
    }
    return Failure{Session::ReadError(cache.error(), "ModelCache", options.name).message()};
  }
  auto text = RenderCache(*cache, session.Now());
  if (!text) return Failure{text.error().message()};
  out << *text;
  return std::nullopt;
}

std::optional<Failure> Patch(Session& session, const std::string& name, const json& patch,
                             json& after) {
  auto patched = session.client().Patch(resources::ModelRevisions(), session.namespace_name(), name,
                                        core::PatchType::kMerge, patch);
  if (!patched) {
    const std::string what = session.namespace_name() + "/" + name;
    if (patched.error().code() == core::ErrorCode::kInvalidArgument) {
      return Failure{fmt::format("the API server refused the change to ModelRevision {}: {}", what,
                                 patched.error().message())};
    }
    return Failure{Session::ReadError(patched.error(), "ModelRevision", what).message()};
  }
  after = std::move(*patched);
  return std::nullopt;
}

std::optional<Failure> RunPrestage(Session& session, const Options& options, std::ostream& out) {
  auto before = session.GetRevision(options.name);
  if (!before) return Failure{before.error().message()};
  if (core::BoolMember(*before, {"spec", "revoked"}) ||
      !core::StringMember(*before, {"status", "revokedBy", "name"}).empty()) {
    return Failure{fmt::format("ModelRevision {}/{} is revoked and is never staged again",
                               session.namespace_name(), options.name)};
  }
  json after;
  if (auto failed = Patch(session, options.name, PrestagePatch(options.nodes), after)) {
    return failed;
  }
  out << PrestageSummary(*before, after);
  return std::nullopt;
}

std::optional<Failure> RunRevoke(Session& session, const Options& options, std::ostream& out) {
  auto before = session.GetRevision(options.name);
  if (!before) return Failure{before.error().message()};
  if (core::BoolMember(*before, {"spec", "revoked"})) {
    out << RevokeSummary(*before, /*already=*/true);
    return std::nullopt;
  }
  json after;
  if (auto failed = Patch(session, options.name, RevokePatch(), after)) return failed;
  out << RevokeSummary(after, /*already=*/false);
  return std::nullopt;
}

// Reads only; the prediction runs here, on this thread (seconds for a large fleet).
std::optional<Failure> RunPlan(Session& session, const Options& options, std::ostream& out) {
  auto revision = session.GetRevision(options.name);
  if (!revision) return Failure{revision.error().message()};
  ForecastFlags flags{.replicas = options.replicas,
                      .nic_bytes_per_second = options.nic_gigabits * simulation::kGigabit};
  if (options.origin_gigabits > 0) {
    flags.origin_bytes_per_second = options.origin_gigabits * simulation::kGigabit;
  }
  if (options.stream_megabytes > 0) {
    flags.stream_bytes_per_second = options.stream_megabytes * kMegabyte;
  }
  auto plan = PlanRollout(*revision, session.ListCaches(), session.ListSourceBudgets(), flags);
  if (!plan) return Failure{plan.error().message()};
  const simulation::RolloutOutcome outcome =
      plan->staging.empty() ? simulation::RolloutOutcome{} : simulation::Simulate(plan->scenario);
  out << RenderRolloutForecast(*plan, outcome);
  return std::nullopt;
}

// Connects only for --apply: writing the YAML needs no cluster.
std::optional<Failure> RunImportVerb(Session& session, const Options& options, std::ostream& out) {
  return RunImport(session, options.import, out);
}

using Verb = std::optional<Failure> (*)(Session&, const Options&, std::ostream&);

// A finite rate above 0. CLI11's PositiveNumber would name the largest double in its message.
CLI::Validator PositiveRate() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 0) {
          return "must be a number above 0, not " + text;
        }
        return "";
      },
      "POSITIVE");
}

}  // namespace

int RunPlugin(const std::vector<std::string>& arguments, const PluginContext& context) {
  CLI::App app{
      "Shows where model weights are and why pods wait for them; prestages, revokes, imports "
      "revisions.",
      "kubectl modelplane"};
  app.get_formatter()->column_width(26);
  app.require_subcommand(1);
  app.fallthrough();
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    std::string command = "kubectl modelplane";
    if (failed != nullptr && !failed->get_subcommands().empty()) {
      command += " " + failed->get_subcommands().front()->get_name();
    }
    return fmt::format("error: {} (see {} --help)\n", Printable(error.what()), command);
  });
  Options options;
  app.add_option("--kubeconfig", options.cluster.kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
  app.add_option("--context", options.cluster.context,
                 "kubeconfig context (default: its current one)");
  app.add_option("-n,--namespace", options.cluster.namespace_name,
                 "namespace (default: the context's, else default)");

  Verb verb = nullptr;
  bool verb_connects = true;
  auto add_verb = [&](const std::string& name, const std::string& description,
                      const std::string& argument, const std::string& argument_help, Verb run,
                      bool argument_required = true, bool connects = true) {
    CLI::App* command = app.add_subcommand(name, description);
    if (!argument.empty()) {
      command->add_option(argument, options.name, argument_help)->required(argument_required);
    }
    command->footer(
        "Global flags: --kubeconfig FILE, --context NAME, -n/--namespace NS (before or after the "
        "verb).");
    command->callback([&verb, &verb_connects, run, connects] {
      verb = run;
      verb_connects = connects;
    });
    return command;
  };
  add_verb("status", "A revision's state per node; with none, the namespace's quota view",
           "REVISION", "ModelRevision name (none: every revision of the namespace and its quotas)",
           RunStatus, /*argument_required=*/false);
  add_verb("quota", "The namespace's prestaged and pinned bytes against its ModelQuotas", "", "",
           RunQuota);
  add_verb("why", "Why a pod is gated, pending or not ready, in one paragraph", "POD", "Pod name",
           RunWhy);
  add_verb("cache", "What a node's ModelCache holds: pins, protection, what is evictable", "NODE",
           "node name (its ModelCache has the same name)", RunCache);
  CLI::App* prestage =
      add_verb("prestage", "Set spec.prestage.nodes: stage the revision on N nodes before pods ask",
               "REVISION", "ModelRevision name", RunPrestage);
  prestage->add_option("--nodes", options.nodes, "how many nodes (0 stops prestaging)")
      ->required()
      ->check(CLI::Range(0, kMaxPrestageNodes));
  add_verb("revoke", "Set spec.revoked=true: purge the revision everywhere (cannot be undone)",
           "REVISION", "ModelRevision name", RunRevoke);
  CLI::App* plan =
      add_verb("plan", "Predict time-to-ready of a rollout to N replicas from live telemetry",
               "REVISION", "ModelRevision name", RunPlan);
  plan->add_option("--replicas", options.replicas, "nodes that should hold it Ready")
      ->required()
      ->check(CLI::Range(1, kMaxPrestageNodes));
  plan->add_option("--nic-gbps", options.nic_gigabits,
                   "every node's NIC, Gbit/s each way (the API does not report it)")
      ->capture_default_str()
      ->check(PositiveRate());
  plan->add_option("--origin-gbps", options.origin_gigabits,
                   "each source's total rate, Gbit/s (default: what the fleet measured)")
      ->check(PositiveRate());
  plan->add_option("--stream-mbps", options.stream_megabytes,
                   "one request stream's rate, MB/s (default: what the fleet measured)")
      ->check(PositiveRate());

  CLI::App* import =
      add_verb("import", "Write a ModelRevision for a Hugging Face Hub or ModelScope repository",
               "", "", RunImportVerb, /*argument_required=*/false, /*connects=*/false);
  AddImportFlags(*import, options.import);

  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    // "A subcommand is required" would hide that the first word was a misspelt verb.
    if (app.get_subcommands().empty() && !app.remaining().empty() &&
        error.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success)) {
      context.err << fmt::format(
          "error: unknown verb \"{}\" (verbs: status, quota, why, cache, prestage, revoke, plan, "
          "import)\n",
          Printable(app.remaining().front()));
      return error.get_exit_code();
    }
    return app.exit(error, context.out, context.err);
  }
  if (verb == nullptr) return kFailed;  // require_subcommand makes this unreachable
  Session session(context, options.cluster);
  std::optional<Failure> failure;
  if (verb_connects) failure = session.Connect();
  if (!failure) failure = verb(session, options, context.out);
  if (failure) {
    context.err << "error: " << Printable(failure->message) << "\n";
    return kFailed;
  }
  return 0;
}

}  // namespace modelplane::cli
