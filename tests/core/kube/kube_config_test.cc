#include "core/kube/kube_config.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/kube/kube_tls.h"

namespace modelplane::core {
namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/modelplane-kubeconfig-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  [[nodiscard]] const std::string& path() const { return path_; }
  void Write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ + "/" + name) << content;
  }

 private:
  std::string path_;
};

constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: local
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
- name: c2
  cluster:
    server: https://[::1]:7443
    certificate-authority-data: Q0EtREFUQQ==
contexts:
- name: local
  context: {cluster: c1, user: admin, namespace: team-a}
- name: other
  context: {cluster: c2, user: robot}
users:
- name: admin
  user:
    client-certificate: pki/admin.crt
    client-key: pki/admin.key
- name: robot
  user:
    token: abc.def
)";

TEST(KubeConfigTest, ReadsCurrentContextWithRelativeFiles) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() + "/pki");
  dir.Write("pki/ca.crt", "CA-PEM");
  dir.Write("pki/admin.crt", "CERT-PEM");
  dir.Write("pki/admin.key", "KEY-PEM");
  dir.Write("config", kKubeconfig);
  auto config = LoadKubeconfigFile(dir.path() + "/config");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->certificate_authority_pem, "CA-PEM");
  EXPECT_EQ(config->client_certificate_pem, "CERT-PEM");
  EXPECT_EQ(config->client_key_pem, "KEY-PEM");
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_TRUE(config->token.empty());
}

TEST(KubeConfigTest, ReadsNamedContextWithInlineDataAndToken) {
  auto config = LoadKubeconfigString(kKubeconfig, "/nonexistent", "other");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://[::1]:7443");
  EXPECT_EQ(config->certificate_authority_pem, "CA-DATA");
  EXPECT_EQ(config->token.Token().value(), "abc.def");
  EXPECT_EQ(config->default_namespace, "default");
  auto address = ParseServerAddress(config->server);
  ASSERT_TRUE(address.has_value());
  EXPECT_EQ(address->host, "::1");
  EXPECT_EQ(address->port, "7443");
}

TEST(KubeConfigTest, RejectsBrokenFilesClearly) {
  auto missing_context = LoadKubeconfigString(kKubeconfig, "/", "nope");
  ASSERT_FALSE(missing_context.has_value());
  EXPECT_NE(missing_context.error().message().find("context named 'nope'"), std::string::npos);
  EXPECT_FALSE(LoadKubeconfigString("{{{", "/").has_value());
  EXPECT_FALSE(LoadKubeconfigString("- a\n- b\n", "/").has_value());
  auto missing_file = LoadKubeconfigString(kKubeconfig, "/nonexistent");
  ASSERT_FALSE(missing_file.has_value()) << "the CA file does not exist there";
  EXPECT_EQ(missing_file.error().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(LoadKubeconfigFile("/nonexistent/kubeconfig").has_value());
}

TEST(KubeConfigTest, InClusterConfigRereadsRotatedToken) {
  TempDir dir;
  dir.Write("ca.crt", "CLUSTER-CA");
  dir.Write("token", "first\n");
  dir.Write("namespace", "modelplane-system");
  ManualClock clock;
  auto environment = [](const std::string& name) -> std::optional<std::string> {
    if (name == "KUBERNETES_SERVICE_HOST") return "10.0.0.1";
    if (name == "KUBERNETES_SERVICE_PORT") return "443";
    return std::nullopt;
  };
  auto config = LoadInClusterConfig(environment, clock, dir.path());
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->server, "https://10.0.0.1:443");
  EXPECT_EQ(config->certificate_authority_pem, "CLUSTER-CA");
  EXPECT_EQ(config->default_namespace, "modelplane-system");
  EXPECT_EQ(config->token.Token().value(), "first");
  dir.Write("token", "second\n");
  EXPECT_EQ(config->token.Token().value(), "first") << "re-read at most once a minute";
  clock.Advance(std::chrono::seconds(61));
  EXPECT_EQ(config->token.Token().value(), "second");
  std::filesystem::remove(dir.path() + "/token");
  clock.Advance(std::chrono::seconds(61));
  EXPECT_EQ(config->token.Token().value(), "second") << "a rotation in progress keeps the old";

  auto outside =
      LoadInClusterConfig([](const std::string&) { return std::nullopt; }, clock, dir.path());
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace modelplane::core
