#include "node-agent/csi/csi_requests.h"

#include <gtest/gtest.h>

#include "node-agent/csi/grpc_status.h"

namespace modelplane::agent {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

// What kubelet sends for an ephemeral inline volume with podInfoOnMount.
csi::v1::NodePublishVolumeRequest KubeletRequest() {
  csi::v1::NodePublishVolumeRequest request;
  request.set_volume_id("csi-0123abcd");
  request.set_target_path("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/weights/mount");
  request.mutable_volume_capability()->mutable_mount();
  request.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  auto& context = *request.mutable_volume_context();
  context["modelplane.io/revision"] = "llama-r2";
  context["csi.storage.k8s.io/pod.namespace"] = "serving";
  context["csi.storage.k8s.io/pod.name"] = "server-0";
  context["csi.storage.k8s.io/pod.uid"] = "u1";
  context["csi.storage.k8s.io/serviceAccount.name"] = "default";
  context["csi.storage.k8s.io/ephemeral"] = "true";
  return request;
}

void ExpectInvalid(const csi::v1::NodePublishVolumeRequest& request, std::string_view words) {
  auto parsed = ParsePublishRequest(request);
  ASSERT_FALSE(parsed) << words;
  EXPECT_EQ(parsed.error().code(), core::ErrorCode::kInvalidArgument);
  EXPECT_EQ(ToGrpcStatus(parsed.error()).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(parsed.error().message().find(words), std::string::npos) << parsed.error().message();
}

TEST(CsiRequestsTest, KubeletsEphemeralRequestParses) {
  auto parsed = ParsePublishRequest(KubeletRequest());
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->volume_id, "csi-0123abcd");
  EXPECT_EQ(parsed->target_path,
            "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/weights/mount");
  EXPECT_EQ(parsed->revision_name, "llama-r2");
  EXPECT_EQ(parsed->pod_namespace, "serving");
  EXPECT_EQ(parsed->pod_name, "server-0");
  EXPECT_EQ(parsed->pod_uid, "u1");
}

TEST(CsiRequestsTest, EveryDefinedAccessModeIsAcceptedTheMountIsReadOnlyAnyway) {
  for (const auto mode : {Mode::SINGLE_NODE_WRITER, Mode::SINGLE_NODE_READER_ONLY,
                          Mode::MULTI_NODE_READER_ONLY, Mode::SINGLE_NODE_SINGLE_WRITER,
                          Mode::SINGLE_NODE_MULTI_WRITER, Mode::MULTI_NODE_MULTI_WRITER}) {
    auto request = KubeletRequest();
    request.mutable_volume_capability()->mutable_access_mode()->set_mode(mode);
    request.set_readonly(false);
    EXPECT_TRUE(ParsePublishRequest(request)) << mode;
  }
}

TEST(CsiRequestsTest, MissingFieldsAreInvalidArguments) {
  auto request = KubeletRequest();
  request.clear_volume_id();
  ExpectInvalid(request, "volume_id is required");
  request = KubeletRequest();
  request.set_volume_id(std::string(300, 'v'));
  ExpectInvalid(request, "longer");
  request = KubeletRequest();
  request.clear_target_path();
  ExpectInvalid(request, "target_path is required");
  request = KubeletRequest();
  request.clear_volume_capability();
  ExpectInvalid(request, "volume_capability is required");
  request = KubeletRequest();
  request.mutable_volume_capability()->clear_access_mode();
  ExpectInvalid(request, "access mode");
  request = KubeletRequest();
  request.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::UNKNOWN);
  ExpectInvalid(request, "access mode");
  request = KubeletRequest();
  request.mutable_volume_capability()->clear_mount();
  ExpectInvalid(request, "mount access type");
}

TEST(CsiRequestsTest, BlockAccessIsRefused) {
  auto request = KubeletRequest();
  request.mutable_volume_capability()->mutable_block();
  ExpectInvalid(request, "block access is not supported");
}

TEST(CsiRequestsTest, OnlyEphemeralVolumesWithPodInfo) {
  auto request = KubeletRequest();
  (*request.mutable_volume_context())["csi.storage.k8s.io/ephemeral"] = "false";
  ExpectInvalid(request, "ephemeral inline volumes only");
  request = KubeletRequest();
  request.mutable_volume_context()->erase("csi.storage.k8s.io/ephemeral");
  ExpectInvalid(request, "ephemeral inline volumes only");
  request = KubeletRequest();
  request.mutable_volume_context()->erase("csi.storage.k8s.io/pod.namespace");
  ExpectInvalid(request, "pod info");
  request = KubeletRequest();
  request.mutable_volume_context()->erase("csi.storage.k8s.io/pod.name");
  ExpectInvalid(request, "pod info");
}

TEST(CsiRequestsTest, RevisionIsAlwaysInThePodsNamespace) {
  auto request = KubeletRequest();
  request.mutable_volume_context()->erase("modelplane.io/revision");
  ExpectInvalid(request, "modelplane.io/revision (the ModelRevision to mount) is required");
  request = KubeletRequest();
  (*request.mutable_volume_context())["modelplane.io/revision"] = "other-team/llama-r2";
  ExpectInvalid(request, "only a ModelRevision in its own namespace (serving)");
  request = KubeletRequest();
  (*request.mutable_volume_context())["modelplane.io/revision"] = "serving/llama-r2";
  auto same = ParsePublishRequest(request);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->revision_name, "llama-r2");
  EXPECT_EQ(same->pod_namespace, "serving");
  for (const char* bad : {"Llama", "llama_r2", "-llama", "llama.", "serving/"}) {
    request = KubeletRequest();
    (*request.mutable_volume_context())["modelplane.io/revision"] = bad;
    ExpectInvalid(request, "");
  }
}

TEST(CsiRequestsTest, UnpublishNeedsVolumeIdAndTargetPath) {
  csi::v1::NodeUnpublishVolumeRequest request;
  EXPECT_FALSE(ParseUnpublishRequest(request));
  request.set_volume_id("csi-1");
  auto no_target = ParseUnpublishRequest(request);
  ASSERT_FALSE(no_target);
  EXPECT_NE(no_target.error().message().find("target_path"), std::string::npos);
  request.set_target_path("/var/lib/kubelet/pods/u1/x");
  auto parsed = ParseUnpublishRequest(request);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->target_path, "/var/lib/kubelet/pods/u1/x");
}

TEST(GrpcStatusTest, ConflictIsFailedPrecondition) {
  EXPECT_EQ(ToGrpcStatus(core::Error(core::ErrorCode::kConflict, "not ready")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ToGrpcStatus(core::Error(core::ErrorCode::kAlreadyExists, "x")).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(ToGrpcStatus(core::Error(core::ErrorCode::kUnavailable, "x")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcStatus(core::Error(core::ErrorCode::kIo, "disk")).error_message(), "disk");
}

}  // namespace
}  // namespace modelplane::agent
