// Objects in the shape the API server returns them, for the plugin's formatting tests: a
// ModelRevision with status as the operator writes it, ModelCaches with spec entries and agent
// status, Pods and Events.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "core/api/timestamp.h"
#include "kubectl-plugin/terminal_text.h"

namespace modelplane::cli::testing {

using nlohmann::json;

inline constexpr char kDigest[] =
    "sha256:1dbee88ca406ace29af1f497a5f026d97fb7a62cb1cd71db366b6054b0741fbb";
inline constexpr char kOtherDigest[] =
    "sha256:9999999999999999999999999999999999999999999999999999999999999999";
inline constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

// 2026-01-01T12:00:00Z: "now" in every test.
inline core::api::Timestamp Now() {
  return *core::api::ParseTimestamp("2026-01-01T12:00:00Z");
}

inline json Revision(const std::string& name = "llama-r2", const std::string& ns = "team-a") {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelRevision"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"generation", 1},
            {"uid", "rev-uid"},
            {"creationTimestamp", "2026-01-01T11:55:00Z"}}},
          {"spec",
           {{"modelName", "llama-3-70b"},
            {"files", json::array({{{"path", "model-00001.safetensors"},
                                    {"size", 100 * kGiB},
                                    {"sha256", std::string("sha256:") + std::string(64, 'a')},
                                    {"role", "weights"}},
                                   {{"path", "model-00002.safetensors"},
                                    {"size", 40 * kGiB},
                                    {"sha256", std::string("sha256:") + std::string(64, 'b')},
                                    {"role", "weights"}}})},
            {"format", "safetensors"},
            {"engine", {{"name", "vllm"}, {"version", "0.6.3"}}},
            {"sources", json::array({{{"name", "s3"},
                                      {"type", "objectStore"},
                                      {"objectStore", {{"bucket", "models"}}}}})}}}};
}

inline json ReadyStatus() {
  return {
      {"observedGeneration", 1},
      {"digest", kDigest},
      {"totalBytes", 140 * kGiB},
      {"phase", "Staging"},
      {"desiredNodes", 3},
      {"stagingNodes", 1},
      {"readyNodes", 1},
      {"failedNodes", 1},
      {"bytesToReadySeconds", {{"p50", 42.5}, {"p95", 42.5}, {"p99", 42.5}}},
      {"nodes", json::array({{{"node", "gpu-a"}, {"tier", "peer"}, {"bytesToReadySeconds", 42.5}},
                             {{"node", "gpu-b"}, {"tier", "objectStore"}},
                             {{"node", "gpu-c"}}})},
      {"conditions", json::array({{{"type", "Valid"},
                                   {"status", "True"},
                                   {"reason", "Valid"},
                                   {"message", "spec is valid"},
                                   {"lastTransitionTime", "2026-01-01T11:55:01Z"}}})}};
}

inline json SpecEntry(const std::string& name, const std::string& digest, const std::string& reason,
                      bool pinned = false, const std::string& ns = "team-a") {
  return {{"revision", {{"namespace", ns}, {"name", name}}},
          {"digest", digest},
          {"pinned", pinned},
          {"reason", reason}};
}

// A Ready entry says, as the agent does, that team-a/llama-r2's own sources served its bytes
// (core/api/source_proofs.h).
inline json CachedEntry(const std::string& digest, const std::string& state, std::int64_t done,
                        std::int64_t total) {
  json entry = {{"digest", digest}, {"state", state}, {"bytesDone", done}, {"bytesTotal", total}};
  if (state == "Ready") {
    entry["sourceProofs"] = json::array(
        {{{"revision", {{"namespace", "team-a"}, {"name", "llama-r2"}}}, {"state", "Proven"}}});
  }
  return entry;
}

inline json Cache(const std::string& node, json spec_entries, json status_entries) {
  return {{"apiVersion", "modelplane.io/v1alpha1"},
          {"kind", "ModelCache"},
          {"metadata", {{"name", node}, {"generation", 1}}},
          {"spec", {{"revisions", std::move(spec_entries)}}},
          {"status",
           {{"observedGeneration", 1},
            {"capacityBytes", 1024 * kGiB},
            {"usedBytes", 400 * kGiB},
            {"reservedBytes", 10 * kGiB},
            {"revisions", std::move(status_entries)}}}};
}

// gpu-a Ready (peer), gpu-b staging 25%, gpu-c refused for capacity.
inline std::vector<json> ThreeCaches() {
  json ready = CachedEntry(kDigest, "Ready", 140 * kGiB, 140 * kGiB);
  ready["sourceTier"] = "peer";
  ready["timestamps"] = {{"queued", "2026-01-01T11:56:00Z"},
                         {"published", "2026-01-01T11:56:42.500Z"}};
  json staging = CachedEntry(kDigest, "Staging", 35 * kGiB, 140 * kGiB);
  staging["sourceTier"] = "objectStore";
  json failed = CachedEntry(kDigest, "Failed", 0, 140 * kGiB);
  failed["reason"] = "InsufficientCapacity";
  failed["message"] =
      "needs 140.0 GiB, only 20.0 GiB can be freed without touching protected revisions";
  return {Cache("gpu-a", json::array({SpecEntry("llama-r2", kDigest, "prestage")}),
                json::array({ready})),
          Cache("gpu-b", json::array({SpecEntry("llama-r2", kDigest, "in-use")}),
                json::array({staging})),
          Cache("gpu-c", json::array({SpecEntry("llama-r2", kDigest, "prestage")}),
                json::array({failed})),
          Cache("gpu-d", json::array(), json::array())};
}

inline json Pod(const std::string& name = "llama-0", const std::string& revision = "llama-r2") {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", "team-a"}, {"uid", "pod-uid"}}},
      {"spec",
       {{"containers", json::array({{{"name", "server"}, {"image", "vllm"}}})},
        {"readinessGates", json::array({{{"conditionType", "modelplane.io/weights-ready"}}})}}},
      {"status", {{"phase", "Pending"}}}};
  if (!revision.empty()) pod["metadata"]["annotations"] = {{"modelplane.io/revision", revision}};
  return pod;
}

inline json GatedPod() {
  json pod = Pod();
  pod["spec"]["schedulingGates"] = json::array({{{"name", "modelplane.io/weights"}}});
  return pod;
}

inline json PodEvent(const std::string& reason, const std::string& note, const std::string& time,
                     const std::string& uid = "pod-uid") {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          // Stored just now: when it happened is eventTime, which orders events.
          {"metadata",
           {{"name", "e-" + reason},
            {"namespace", "team-a"},
            {"creationTimestamp", "2026-01-01T11:59:59Z"}}},
          {"type", "Normal"},
          {"reason", reason},
          {"note", note},
          {"eventTime", time},
          {"regarding", {{"kind", "Pod"}, {"name", "llama-0"}, {"uid", uid}}}};
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The value of the field line "Label:   value", its continuation lines (a WrappedFieldLine's,
// indented under the value) joined with single spaces, so a check need not know where it wraps;
// "" when no line starts with "Label:".
inline std::string FieldValue(const std::string& text, const std::string& label) {
  std::string value;
  bool found = false;
  for (const std::string& line : Lines(text)) {
    const std::size_t start = line.find_first_not_of(' ');
    if (found) {
      if (start == 0 || start == std::string::npos) break;
      value += " " + line.substr(start);
    } else if (line.starts_with(label + ":")) {
      found = true;
      const std::size_t value_start = line.find_first_not_of(' ', label.size() + 1);
      if (value_start != std::string::npos) value = line.substr(value_start);
    }
  }
  return value;
}

// Every line fits the terminal (kTerminalWidth columns).
inline ::testing::AssertionResult FitsTerminal(const std::string& text) {
  for (const std::string& line : Lines(text)) {
    if (DisplayWidth(line) > kTerminalWidth) {
      return ::testing::AssertionFailure() << DisplayWidth(line) << " columns: \"" << line << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace modelplane::cli::testing
