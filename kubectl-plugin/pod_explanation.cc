#include "kubectl-plugin/pod_explanation.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/api/model_revocation.h"
#include "core/api/object_key.h"
#include "core/api/serving_pod.h"
#include "core/json/json_lookup.h"
#include "core/kube/builtin_types.h"
#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli {

namespace api = core::api;
using nlohmann::json;

namespace {

constexpr std::size_t kNodesNamed = 5;  // a paragraph names this many nodes, then counts

std::string NodeList(const std::vector<std::string>& nodes) {
  std::string text;
  const std::size_t named = std::min(nodes.size(), kNodesNamed);
  for (std::size_t index = 0; index < named; ++index) {
    if (index > 0) text += index + 1 == named && nodes.size() == named ? " and " : ", ";
    text += nodes[index];
  }
  if (nodes.size() > named) text += fmt::format(" and {} more", nodes.size() - named);
  return text;
}

std::string Plural(std::size_t count, std::string_view word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

// When an event last happened: a series' last observation, else when it happened (eventTime,
// or deprecatedLastTimestamp for events written through core/v1), else when it was stored.
std::optional<api::Timestamp> EventTime(const json& event) {
  for (const auto& path : {std::initializer_list<std::string_view>{"series", "lastObservedTime"},
                           {"eventTime"},
                           {"deprecatedLastTimestamp"},
                           {"metadata", "creationTimestamp"}}) {
    const std::string text = core::StringMember(event, path);
    if (text.empty()) continue;
    if (auto parsed = api::ParseTimestamp(text)) return *parsed;
  }
  return std::nullopt;
}

// "The latest event (Warning FailedScheduling, 2m ago): <note>.", or "" when there is none or
// `said` already contains its note (the scheduler's event repeats its condition's message).
std::string LatestEvent(const std::vector<json>& events, const api::ObjectMeta& pod,
                        api::Timestamp now, const std::string& said) {
  const json* latest = nullptr;
  std::optional<api::Timestamp> latest_time;
  for (const json& event : events) {
    const std::string uid = core::StringMember(event, {"regarding", "uid"});
    if (!uid.empty() && !pod.uid.empty() && uid != pod.uid) continue;  // an earlier namesake
    const auto time = EventTime(event);
    if (latest == nullptr || (time && (!latest_time || *time >= *latest_time))) {
      latest = &event;
      latest_time = time;
    }
  }
  if (latest == nullptr) return "";
  auto event = core::EventFromJson(*latest);
  if (!event) return "";
  std::string note = event->note;
  // Events written through core/v1 (kube-scheduler's FailedScheduling) read here with their
  // message as `note`: the API server serves both versions from one store.
  while (!note.empty() && (note.back() == '.' || note.back() == ' ')) note.pop_back();
  if (!note.empty() && said.find(note) != std::string::npos) return "";
  std::string head = fmt::format("The latest event ({} {}", event->type, event->reason);
  if (latest_time) head += ", " + FormatAge(*latest_time, now) + " ago";
  if (event->series_count > 1) head += fmt::format(", {} times", event->series_count);
  return head + ")" + (note.empty() ? "." : ": " + note + ".");
}

// "37% of 140.0 GiB", or "" before the agent knows the size.
std::string CopyPercent(const RevisionCopy& copy) {
  if (!copy.cached || copy.cached->bytes_total <= 0) return "";
  return FormatPercent(copy.cached->bytes_done, copy.cached->bytes_total) + " of " +
         FormatBytes(copy.cached->bytes_total);
}

std::string CopyProgress(const RevisionCopy& copy) {
  const std::string percent = CopyPercent(copy);
  return percent.empty() ? copy.node : copy.node + " (" + percent + ")";
}

std::string CopyFailure(const RevisionCopy& copy) {
  std::string why;
  if (copy.cached) {
    why = copy.cached->reason;
    if (!copy.cached->message.empty()) {
      why += (why.empty() ? "" : ": ") + copy.cached->message;
    }
  }
  while (!why.empty() && why.back() == '.') why.pop_back();
  return why.empty() ? copy.node : copy.node + " (" + why + ")";
}

const api::Condition* FindRevisionCondition(const api::ModelRevision& revision,
                                            std::string_view type) {
  if (!revision.status) return nullptr;
  for (const api::Condition& condition : revision.status->conditions) {
    if (condition.type == type) return &condition;
  }
  return nullptr;
}

// What the fleet holds of the revision, for a pod that waits for it.
void DescribeRevision(std::vector<std::string>& sentences, const std::string& revision_name,
                      const api::ModelRevision& revision, const CacheListing& caches, bool gated) {
  if (api::IsRevoked(revision)) {
    sentences.push_back(fmt::format(
        "ModelRevision {} is revoked: it is purged from every node and never staged again, so "
        "the pod {}; point the pod at a new ModelRevision.",
        revision_name, gated ? "stays gated" : "cannot become ready"));
    return;
  }
  const api::Condition* valid = FindRevisionCondition(revision, "Valid");
  if ((revision.status && revision.status->phase == api::kPhaseInvalid) ||
      (valid != nullptr && valid->status == api::kConditionFalse)) {
    sentences.push_back(fmt::format(
        "ModelRevision {} is invalid{}, so nothing stages it; fix it or create a new one.",
        revision_name,
        valid != nullptr && !valid->message.empty()
            ? " (" + (valid->reason.empty() ? "" : valid->reason + ": ") + valid->message + ")"
            : ""));
    return;
  }
  const std::string digest = revision.status ? revision.status->digest : "";
  const RevisionCopies copies = FindRevisionCopies(
      {.namespace_name = revision.metadata.namespace_name, .name = revision.metadata.name}, digest,
      caches.items);
  if (caches.unavailable) {
    const int ready = revision.status ? revision.status->ready_nodes : 0;
    const int staging = revision.status ? revision.status->staging_nodes : 0;
    const int failed = revision.status ? revision.status->failed_nodes : 0;
    sentences.push_back(fmt::format(
        "Its status says ModelRevision {} is {} and Ready on {}, staging on {}, failed on {} "
        "(the ModelCaches could not be listed: {}).",
        revision_name,
        revision.status && !revision.status->phase.empty() ? revision.status->phase
                                                           : "of unknown phase",
        Plural(ready, "node"), Plural(staging, "node"), Plural(failed, "node"),
        *caches.unavailable));
    return;
  }
  std::vector<std::string> ready = copies.NodesInState(api::kCacheStateReady);
  std::vector<std::string> staging;
  std::vector<std::string> requested;
  std::vector<std::string> refused;
  std::vector<std::string> evicting;
  for (const RevisionCopy& copy : copies.copies) {
    const std::string state = CopyState(copy);
    if (state == api::kCacheStateStaging || state == api::kCacheStatePending) {
      staging.push_back(CopyProgress(copy));
    } else if (state == "Requested") {
      requested.push_back(copy.node);
    } else if (state == api::kCacheStateFailed) {
      refused.push_back(CopyFailure(copy));
    } else if (state == api::kCacheStateEvicting) {
      evicting.push_back(copy.node);
    }
  }
  std::string sentence = ready.empty()
                             ? fmt::format("ModelRevision {} is Ready on no node", revision_name)
                             : fmt::format("ModelRevision {} is Ready on {} ({})", revision_name,
                                           Plural(ready.size(), "node"), NodeList(ready));
  std::vector<std::string> parts;
  if (!staging.empty()) parts.push_back("staging on " + NodeList(staging));
  if (!requested.empty()) {
    parts.push_back("asked for on " + NodeList(requested) +
                    " (the node agent has not reported it yet)");
  }
  if (!refused.empty()) parts.push_back("refused on " + NodeList(refused));
  if (!evicting.empty()) parts.push_back("being evicted on " + NodeList(evicting));
  for (std::size_t index = 0; index < parts.size(); ++index) {
    sentence += index == 0 ? "; " : ", ";
    if (index > 0 && index + 1 == parts.size()) sentence += "and ";
    sentence += parts[index];
  }
  sentence += ".";
  sentences.push_back(sentence);
  if (copies.copies.empty()) {
    sentences.push_back(
        "No node holds it or is asked to: the operator asks a node for a copy on its next pass "
        "over the revision; if this stays so, check that the operator runs.");
  } else if (gated && !ready.empty()) {
    sentences.push_back(
        "The operator removes the gate once one of the Ready nodes can take the pod (resources, "
        "node selector, affinity, taints).");
  }
}

bool HasGate(const core::Pod& pod, std::string_view gate) {
  return std::find(pod.scheduling_gates.begin(), pod.scheduling_gates.end(), gate) !=
         pod.scheduling_gates.end();
}

}  // namespace

core::Result<std::optional<api::RevisionReference>> PodRevision(const json& pod) {
  const std::string value =
      core::StringMember(pod, {"metadata", "annotations", api::kRevisionAnnotation});
  if (value.empty()) return std::optional<api::RevisionReference>();
  auto reference =
      api::ParseRevisionAnnotation(value, core::StringMember(pod, {"metadata", "namespace"}));
  if (!reference) return std::unexpected(reference.error());
  return std::optional<api::RevisionReference>(*reference);
}

core::Result<std::string> ExplainPod(const PodFacts& facts, api::Timestamp now) {
  auto parsed = core::PodFromJson(facts.pod);
  if (!parsed) return std::unexpected(parsed.error().Wrap("reading the Pod"));
  const core::Pod& pod = *parsed;
  const std::string pod_name = core::api::ObjectKey(pod.metadata.namespace_name, pod.metadata.name);
  auto reference = PodRevision(facts.pod);
  std::string revision_name;
  std::optional<api::ModelRevision> revision;
  if (reference && *reference) {
    revision_name = api::ObjectKey((*reference)->namespace_name, (*reference)->name);
    if (facts.revision) {
      auto read = api::ModelRevisionFromJson(*facts.revision);
      if (!read)
        return std::unexpected(read.error().Wrap("reading ModelRevision " + revision_name));
      revision = std::move(*read);
    }
  }
  std::vector<std::string> sentences;
  auto describe_revision = [&](bool gated) {
    if (!reference) {
      sentences.push_back(reference.error().message() + ".");
    } else if (!*reference) {
      sentences.push_back(
          fmt::format("It names no ModelRevision (no {} annotation).", api::kRevisionAnnotation));
    } else if (facts.revision_unavailable) {
      sentences.push_back(fmt::format("ModelRevision {} could not be read: {}.", revision_name,
                                      *facts.revision_unavailable));
    } else if (!revision) {
      sentences.push_back(
          fmt::format("ModelRevision {} does not exist; the pod {} until it is created and staged.",
                      revision_name, gated ? "stays gated" : "cannot get its weights"));
    } else {
      DescribeRevision(sentences, revision_name, *revision, facts.caches, gated);
    }
  };
  auto finish = [&](bool with_event) {
    std::string paragraph;
    for (const std::string& sentence : sentences) {
      paragraph += (paragraph.empty() ? "" : " ") + sentence;
    }
    if (with_event) {
      if (std::string event = LatestEvent(facts.events, pod.metadata, now, paragraph);
          !event.empty()) {
        paragraph += " " + event;
      }
    }
    return WrapParagraph(Printable(paragraph)) + "\n";
  };

  if (pod.metadata.deletion_timestamp) {
    sentences.push_back(fmt::format("Pod {} is being deleted (for {}).", pod_name,
                                    FormatAge(*pod.metadata.deletion_timestamp, now)));
    return finish(false);
  }
  if (pod.phase == "Succeeded" || pod.phase == "Failed") {
    sentences.push_back(fmt::format("Pod {} has finished (phase {}){}: it will not run again.",
                                    pod_name, pod.phase,
                                    pod.node_name.empty() ? "" : " on node " + pod.node_name));
    return finish(true);
  }

  std::vector<std::string> other_gates;
  for (const std::string& gate : pod.scheduling_gates) {
    if (gate != api::kWeightsSchedulingGate) other_gates.push_back(gate);
  }
  if (HasGate(pod, api::kWeightsSchedulingGate)) {
    sentences.push_back(fmt::format(
        "Pod {} is gated: it keeps the scheduling gate {} until its model weights are verified "
        "on nodes it may run on.",
        pod_name, api::kWeightsSchedulingGate));
    describe_revision(true);
    if (!other_gates.empty()) {
      sentences.push_back(
          fmt::format("It also has scheduling gates modelplane does not manage: {}.",
                      fmt::join(other_gates, ", ")));
    }
    return finish(true);
  }
  if (!other_gates.empty()) {
    sentences.push_back(fmt::format(
        "Pod {} is gated by {} {}, which modelplane does not manage; whoever added {} removes "
        "{}.",
        pod_name, other_gates.size() == 1 ? "scheduling gate" : "scheduling gates",
        fmt::join(other_gates, ", "), other_gates.size() == 1 ? "it" : "them",
        other_gates.size() == 1 ? "it" : "them"));
    return finish(true);
  }

  if (pod.node_name.empty()) {
    const core::PodCondition* scheduled = pod.FindCondition("PodScheduled");
    if (scheduled != nullptr && scheduled->status == "False") {
      std::string message = scheduled->message;
      while (!message.empty() && (message.back() == '.' || message.back() == ' ')) {
        message.pop_back();
      }
      sentences.push_back(
          fmt::format("Pod {} is pending: {}the scheduler cannot place it ({}{}).", pod_name,
                      reference && *reference ? "its gate is gone but " : "",
                      scheduled->reason.empty() ? "not scheduled" : scheduled->reason,
                      message.empty() ? "" : ": " + message));
    } else {
      sentences.push_back(fmt::format(
          "Pod {} is pending: no node is bound yet and the scheduler has not reported on it.",
          pod_name));
    }
    if (reference && *reference) {
      sentences.push_back(fmt::format(
          "While it was gated the operator narrowed its node affinity to the nodes holding "
          "ModelRevision {}, so it can only go there.",
          revision_name));
    }
    return finish(true);
  }

  const bool has_weights_gate = std::find(pod.readiness_gates.begin(), pod.readiness_gates.end(),
                                          api::kWeightsReadyCondition) != pod.readiness_gates.end();
  const core::PodCondition* weights = pod.FindCondition(std::string(api::kWeightsReadyCondition));
  const core::PodCondition* ready = pod.FindCondition("Ready");
  if (has_weights_gate && (weights == nullptr || weights->status != "True")) {
    std::string state = weights == nullptr ? "not set yet" : weights->status;
    if (weights != nullptr && !weights->reason.empty()) state += " (" + weights->reason;
    if (weights != nullptr && !weights->message.empty()) {
      state += (weights->reason.empty() ? " (" : ": ") + weights->message;
    }
    if (weights != nullptr && (!weights->reason.empty() || !weights->message.empty())) {
      state += ")";
    }
    sentences.push_back(fmt::format(
        "Pod {} runs on node {} but is not ready: its readiness gate {} is {}; the node agent "
        "sets it True while the weights are verified there.",
        pod_name, pod.node_name, api::kWeightsReadyCondition, state));
    if (revision && !facts.caches.unavailable) {
      const RevisionCopies copies = FindRevisionCopies(
          {.namespace_name = revision->metadata.namespace_name, .name = revision->metadata.name},
          revision->status ? revision->status->digest : "", facts.caches.items);
      const auto here =
          std::find_if(copies.copies.begin(), copies.copies.end(),
                       [&](const RevisionCopy& c) { return c.node == pod.node_name; });
      if (here == copies.copies.end()) {
        sentences.push_back(
            fmt::format("Node {} does not hold ModelRevision {}.", pod.node_name, revision_name));
      } else {
        const std::string copy_state = CopyState(*here);
        sentences.push_back(fmt::format(
            "On node {}, ModelRevision {} is {}.", pod.node_name, revision_name,
            copy_state == api::kCacheStateFailed ? "Failed: " + CopyFailure(*here)
            : copy_state == api::kCacheStateStaging || copy_state == api::kCacheStatePending
                ? copy_state + (CopyPercent(*here).empty() ? "" : ", " + CopyPercent(*here))
                : copy_state));
      }
    } else if (!revision) {
      describe_revision(false);
    }
    return finish(true);
  }
  if (ready == nullptr || ready->status != "True") {
    std::string state = ready == nullptr ? "not reported yet" : ready->status;
    if (ready != nullptr && !ready->reason.empty()) state += " (" + ready->reason + ")";
    const core::PodCondition* containers = pod.FindCondition("ContainersReady");
    std::string detail;
    if (containers != nullptr && containers->status != "True" && !containers->message.empty()) {
      detail = ": " + containers->message;
    } else if (ready != nullptr && !ready->message.empty()) {
      detail = ": " + ready->message;
    }
    sentences.push_back(fmt::format(
        "Pod {} runs on node {} (phase {}) but is not ready: its Ready "
        "condition is {}{}.",
        pod_name, pod.node_name, pod.phase.empty() ? "unknown" : pod.phase, state, detail));
    if (has_weights_gate) {
      sentences.push_back(fmt::format(
          "Its weights are verified there ({} is True), so the cause lies in its containers.",
          api::kWeightsReadyCondition));
    }
    return finish(true);
  }
  std::string served;
  if (revision && revision->status) {
    for (const api::NodeServing& serving : revision->status->nodes) {
      if (serving.node == pod.node_name && !serving.tier.empty()) {
        served = ", first staged there from the " + serving.tier + " tier";
      }
    }
  }
  sentences.push_back(fmt::format(
      "Pod {} is running and ready on node {}{}.", pod_name, pod.node_name,
      reference && *reference ? fmt::format(" with ModelRevision {}{}", revision_name, served)
                              : ""));
  return finish(false);
}

}  // namespace modelplane::cli
