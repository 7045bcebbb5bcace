// The plugin end to end, as kubelet would use it, with nothing faked but the cluster: a real
// CacheStore holding a staged revision, the real gRPC server on a unix socket, a real gRPC
// client, and real bind mounts (SystemMounter), so it runs only as root. Revisions resolve
// against the store for "Ready here" (StoreResolver) and a table for name -> digest.
#include <fstream>
#include <random>
#include <sstream>

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/api/object_key.h"
#include "csi.grpc.pb.h"
#include "node-agent/csi/csi_plugin.h"
#include "node-agent/csi/system_mounter.h"
#include "node-agent/store/revision_view.h"
#include "pluginregistration/v1/api.grpc.pb.h"
#include "tests/node-agent/csi/staged_revision.h"

namespace modelplane::agent {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

// name -> (digest, revoked) from a table; Ready here only when the store holds the manifest.
class StoreResolver final : public RevisionResolver {
 public:
  explicit StoreResolver(const CacheStore& store) : store_(store) {}
  void Add(const std::string& name, const core::Sha256Bytes& digest, bool revoked = false) {
    table_[name] = {digest, revoked};
  }
  RevisionStatus ResolveRevision(std::string_view namespace_name,
                                 std::string_view name) const override {
    const auto found = table_.find(core::api::ObjectKey(namespace_name, name));
    if (found == table_.end()) return {.problem = "not found"};
    return {.known = true,
            .digest = found->second.first,
            .revoked = found->second.second,
            .ready_here = store_.FindRevision(found->second.first).has_value()};
  }
  bool RevisionsSynced() const override { return true; }

 private:
  const CacheStore& store_;
  std::map<std::string, std::pair<core::Sha256Bytes, bool>> table_;
};

std::string RandomBytes(std::size_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class CsiPluginRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root: the test bind-mounts revision views with mount(2) "
                      "(run it as root, as scripts/test.sh does in CI)";
    }
    base_ = std::filesystem::temp_directory_path() /
            ("csi-plugin-root-test-" + std::to_string(::getpid()));
    RemoveTree(base_);
    std::filesystem::create_directories(base_ / "pods");
    auto store = CacheStore::Open({.root = base_ / "cache", .headroom_bytes = 0});
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    files_ = {{"config.json", R"({"architectures": ["LlamaForCausalLM"]})"},
              {"model-00001-of-00002.safetensors", RandomBytes(300'000, 1)},
              {"model-00002-of-00002.safetensors", RandomBytes(70'001, 2)},
              {"tokenizer/tokenizer.json", RandomBytes(5'000, 3)},
              {"deep/er/file with space.bin", RandomBytes(4'096, 4)}};
    ASSERT_TRUE(
        testing::StageRevision(*store_, files_, core::Sha256Of("llama-r1"), "serving/llama-r1"));
    resolver_ = std::make_unique<StoreResolver>(*store_);
    resolver_->Add("serving/llama-r1", core::Sha256Of("llama-r1"));
    resolver_->Add("serving/llama-r2", core::Sha256Of("llama-r2"));  // not in the store
    resolver_->Add("serving/pulled", core::Sha256Of("llama-r1"), /*revoked=*/true);
    auto logger = core::Logger::Create({.component = "test", .sink = core::LogSink::Stream(log_)});
    ASSERT_TRUE(logger);
    logger_ = std::make_unique<core::Logger>(*logger);
    StartPlugin();
  }

  void TearDown() override {
    plugin_.reset();
    if (base_.empty()) return;
    // Whatever a failed assertion left mounted goes before the folder does.
    if (auto mounts = ReadMountInfo()) {
      for (const MountEntry& mount : *mounts) {
        if (mount.mount_point.starts_with(base_.string())) {
          ::umount2(mount.mount_point.c_str(), MNT_DETACH);
        }
      }
    }
    store_.reset();
    RemoveTree(base_);
  }

  void StartPlugin() {
    auto plugin = CsiPlugin::Start({.layout = store_->layout(),
                                    .resolver = *resolver_,
                                    .mounter = mounter_,
                                    .logger = *logger_,
                                    .clock = clock_},
                                   {.node_id = "gpu-node-7",
                                    .version = "0.1.0-test",
                                    .socket_path = base_ / "plugin" / "csi.sock",
                                    .registration_socket_path = RegistrationSocket(),
                                    .target_root = base_ / "pods"});
    ASSERT_TRUE(plugin) << plugin.error().ToString();
    plugin_ = std::move(*plugin);
    auto channel = grpc::CreateChannel("unix://" + (base_ / "plugin" / "csi.sock").string(),
                                       grpc::InsecureChannelCredentials());
    identity_ = csi::v1::Identity::NewStub(channel);
    node_ = csi::v1::Node::NewStub(channel);
  }

  std::string Target(const std::string& pod) const {
    return (base_ / "pods" / pod / "volumes/kubernetes.io~csi/weights/mount").string();
  }

  std::filesystem::path RegistrationSocket() const {
    return base_ / "plugins_registry" / "csi.modelplane.io-reg.sock";
  }

  grpc::Status Publish(const std::string& volume, const std::string& pod,
                       const std::string& revision) {
    csi::v1::NodePublishVolumeRequest request;
    request.set_volume_id(volume);
    request.set_target_path(Target(pod));
    request.mutable_volume_capability()->mutable_mount();
    request.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
    auto& context = *request.mutable_volume_context();
    context["modelplane.io/revision"] = revision;
    context["csi.storage.k8s.io/pod.namespace"] = "serving";
    context["csi.storage.k8s.io/pod.name"] = pod;
    context["csi.storage.k8s.io/pod.uid"] = pod + "-uid";
    context["csi.storage.k8s.io/ephemeral"] = "true";
    csi::v1::NodePublishVolumeResponse response;
    grpc::ClientContext call;
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return node_->NodePublishVolume(&call, request, &response);
  }

  grpc::Status Unpublish(const std::string& volume, const std::string& pod) {
    csi::v1::NodeUnpublishVolumeRequest request;
    request.set_volume_id(volume);
    request.set_target_path(Target(pod));
    csi::v1::NodeUnpublishVolumeResponse response;
    grpc::ClientContext call;
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return node_->NodeUnpublishVolume(&call, request, &response);
  }

  const MountEntry* MountAt(const std::vector<MountEntry>& mounts, const std::string& target) {
    return FindMount(mounts, target);
  }

  std::filesystem::path base_;
  std::unique_ptr<CacheStore> store_;
  std::map<std::string, std::string> files_;
  std::unique_ptr<StoreResolver> resolver_;
  std::ostringstream log_;
  std::unique_ptr<core::Logger> logger_;
  SystemMounter mounter_;
  core::ManualClock clock_;
  std::unique_ptr<CsiPlugin> plugin_;
  std::unique_ptr<csi::v1::Identity::Stub> identity_;
  std::unique_ptr<csi::v1::Node::Stub> node_;
};

TEST_F(CsiPluginRootTest, IdentityAndNodeInfoOverTheSocket) {
  grpc::ClientContext info_call;
  csi::v1::GetPluginInfoResponse info;
  ASSERT_TRUE(identity_->GetPluginInfo(&info_call, {}, &info).ok());
  EXPECT_EQ(info.name(), "csi.modelplane.io");
  EXPECT_EQ(info.vendor_version(), "0.1.0-test");
  grpc::ClientContext probe_call;
  csi::v1::ProbeResponse probe;
  ASSERT_TRUE(identity_->Probe(&probe_call, {}, &probe).ok());
  EXPECT_TRUE(probe.ready().value());
  grpc::ClientContext node_call;
  csi::v1::NodeGetInfoResponse node;
  ASSERT_TRUE(node_->NodeGetInfo(&node_call, {}, &node).ok());
  EXPECT_EQ(node.node_id(), "gpu-node-7");
  struct stat socket {};
  ASSERT_EQ(::stat((base_ / "plugin" / "csi.sock").c_str(), &socket), 0);
  EXPECT_TRUE(S_ISSOCK(socket.st_mode));
  EXPECT_EQ(socket.st_mode & 0777, 0600u);
}

// What kubelet's plugin watcher does with a socket in plugins_registry: GetInfo, the CSI
// endpoint's NodeGetInfo, then NotifyRegistrationStatus. e2e/real-node.sh shows a real kubelet
// doing it.
TEST_F(CsiPluginRootTest, RegistersWithKubeletsPluginWatcherAndDeregistersOnStop) {
  auto registration = pluginregistration::Registration::NewStub(grpc::CreateChannel(
      "unix://" + RegistrationSocket().string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext info_call;
  pluginregistration::PluginInfo info;
  const grpc::Status got = registration->GetInfo(&info_call, {}, &info);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_EQ(info.type(), "CSIPlugin");
  EXPECT_EQ(info.name(), "csi.modelplane.io");
  EXPECT_EQ(info.endpoint(), (base_ / "plugin" / "csi.sock").string());
  ASSERT_EQ(info.supported_versions_size(), 1);
  EXPECT_EQ(info.supported_versions(0), "1.0.0");
  auto endpoint = csi::v1::Node::NewStub(
      grpc::CreateChannel("unix://" + info.endpoint(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext node_call;
  csi::v1::NodeGetInfoResponse node;
  ASSERT_TRUE(endpoint->NodeGetInfo(&node_call, {}, &node).ok());
  EXPECT_EQ(node.node_id(), "gpu-node-7");

  EXPECT_FALSE(plugin_->registered_with_kubelet());
  for (const bool registered : {false, true}) {
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(registered);
    if (!registered) status.set_error("CSINode update failed");
    grpc::ClientContext notify_call;
    pluginregistration::RegistrationStatusResponse response;
    const grpc::Status notified =
        registration->NotifyRegistrationStatus(&notify_call, status, &response);
    ASSERT_TRUE(notified.ok()) << notified.error_code() << " " << notified.error_message();
    EXPECT_EQ(plugin_->registered_with_kubelet(), registered);
  }
  EXPECT_NE(log_.str().find("csi_plugin_registration_refused_by_kubelet"), std::string::npos);
  EXPECT_NE(log_.str().find("CSINode update failed"), std::string::npos);
  EXPECT_NE(log_.str().find("csi_plugin_registered_with_kubelet"), std::string::npos);
  struct stat socket {};
  ASSERT_EQ(::stat(RegistrationSocket().c_str(), &socket), 0);
  EXPECT_TRUE(S_ISSOCK(socket.st_mode));

  // Stopping removes the registration socket (kubelet deregisters the driver); a restart makes
  // it anew, over a stale one a killed agent left behind.
  registration.reset();
  endpoint.reset();
  plugin_->Stop();
  EXPECT_FALSE(std::filesystem::exists(RegistrationSocket()));
  plugin_.reset();
  StartPlugin();
  ASSERT_EQ(::stat(RegistrationSocket().c_str(), &socket), 0);
  EXPECT_TRUE(S_ISSOCK(socket.st_mode));
}

TEST_F(CsiPluginRootTest, PublishedVolumeIsTheRevisionReadOnlyAndSurvivesARestart) {
  const grpc::Status published = Publish("csi-0001", "server-0", "llama-r1");
  ASSERT_TRUE(published.ok()) << published.error_message() << "\n" << log_.str();
  const std::string target = Target("server-0");

  // Every file, byte-exact, as a regular readable file at its manifest path.
  for (const auto& [path, content] : files_) {
    struct stat info {};
    ASSERT_EQ(::lstat((std::filesystem::path(target) / path).c_str(), &info), 0) << path;
    EXPECT_TRUE(S_ISREG(info.st_mode)) << path;
    EXPECT_EQ(info.st_mode & 0777, 0444u) << path;
    EXPECT_EQ(ReadWhole(std::filesystem::path(target) / path), content) << path;
  }
  auto mounts = ReadMountInfo();
  ASSERT_TRUE(mounts);
  const MountEntry* mount = MountAt(*mounts, target);
  ASSERT_NE(mount, nullptr);
  EXPECT_TRUE(mount->HasOption("ro")) << mount->options;
  EXPECT_TRUE(mount->HasOption("nosuid")) << mount->options;
  EXPECT_TRUE(mount->HasOption("nodev")) << mount->options;

  // Writes fail with EROFS, even for root, even on a file whose mode would allow it.
  errno = 0;
  EXPECT_EQ(::open((target + "/new-file").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), -1);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_EQ(::open((target + "/config.json").c_str(), O_WRONLY | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_EQ(::mkdir((target + "/tokenizer/x").c_str(), 0755), -1);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_EQ(::unlink((target + "/config.json").c_str()), -1);
  EXPECT_EQ(errno, EROFS);

  ASSERT_TRUE(Publish("csi-0001", "server-0", "llama-r1").ok());  // idempotent
  ASSERT_EQ(plugin_->Leases().size(), 1u);
  EXPECT_EQ(plugin_->InUseDigests(), std::set<core::Sha256Bytes>{core::Sha256Of("llama-r1")});

  // Restart: the lease comes back from its record, confirmed by the mount table.
  plugin_->Stop();
  plugin_.reset();
  StartPlugin();
  EXPECT_EQ(plugin_->recovery().kept, 1u);
  EXPECT_EQ(plugin_->recovery().dropped_not_mounted, 0u);
  ASSERT_EQ(plugin_->Leases().size(), 1u);
  EXPECT_EQ(plugin_->Leases()[0].volume_id, "csi-0001");
  EXPECT_EQ(plugin_->Leases()[0].pod_name, "server-0");
  EXPECT_EQ(plugin_->InUseDigests(), std::set<core::Sha256Bytes>{core::Sha256Of("llama-r1")});
  EXPECT_EQ(ReadWhole(std::filesystem::path(target) / "config.json"), files_["config.json"]);

  // Unpublish: unmounted, folder gone, lease and record gone; again is fine.
  const grpc::Status unpublished = Unpublish("csi-0001", "server-0");
  ASSERT_TRUE(unpublished.ok()) << unpublished.error_message();
  mounts = ReadMountInfo();
  ASSERT_TRUE(mounts);
  EXPECT_EQ(MountAt(*mounts, target), nullptr);
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_TRUE(plugin_->Leases().empty());
  EXPECT_TRUE(std::filesystem::is_empty(store_->layout().CsiVolumeDirectory()));
  EXPECT_TRUE(Unpublish("csi-0001", "server-0").ok());
  // The view itself is untouched.
  EXPECT_TRUE(ViewMatches(store_->layout(), *store_->FindRevision(core::Sha256Of("llama-r1"))));
}

TEST_F(CsiPluginRootTest, RevisionsNotInTheStoreOrRevokedAreFailedPreconditions) {
  const grpc::Status missing = Publish("csi-0002", "server-1", "llama-r2");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(missing.error_message().find("not Ready in this node's cache"), std::string::npos)
      << missing.error_message();
  const grpc::Status revoked = Publish("csi-0003", "server-2", "pulled");
  EXPECT_EQ(revoked.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(revoked.error_message().find("revoked"), std::string::npos) << revoked.error_message();
  const grpc::Status unknown = Publish("csi-0004", "server-3", "nonexistent");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(unknown.error_message().find("not found"), std::string::npos);
  auto mounts = ReadMountInfo();
  ASSERT_TRUE(mounts);
  for (const char* pod : {"server-1", "server-2", "server-3"}) {
    EXPECT_EQ(MountAt(*mounts, Target(pod)), nullptr) << pod;
    EXPECT_FALSE(std::filesystem::exists(Target(pod))) << pod;
  }
  EXPECT_TRUE(plugin_->Leases().empty());
}

// A record written before a mount that never happened (the agent died in between) is dropped
// at start; a volume mounted by the earlier run is kept.
TEST_F(CsiPluginRootTest, RestartDropsRecordsOfTargetsThatAreNotMounted) {
  ASSERT_TRUE(Publish("csi-0005", "server-5", "llama-r1").ok());
  plugin_.reset();
  {
    auto leases = VolumeLeases::Open(store_->layout().CsiVolumeDirectory());
    ASSERT_TRUE(leases);
    ASSERT_TRUE((*leases)->Put({.volume_id = "csi-ghost",
                                .target_path = Target("ghost"),
                                .revision_digest = core::Sha256Of("llama-r1")}));
  }
  StartPlugin();
  EXPECT_EQ(plugin_->recovery().kept, 1u);
  EXPECT_EQ(plugin_->recovery().dropped_not_mounted, 1u);
  ASSERT_EQ(plugin_->Leases().size(), 1u);
  EXPECT_EQ(plugin_->Leases()[0].volume_id, "csi-0005");
  ASSERT_TRUE(Unpublish("csi-0005", "server-5").ok());
}

}  // namespace
}  // namespace modelplane::agent
