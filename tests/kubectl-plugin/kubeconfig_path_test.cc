#include "kubectl-plugin/kubeconfig_path.h"

#include <map>

#include <gtest/gtest.h>

namespace modelplane::cli {
namespace {

struct World {
  std::map<std::string, std::string> environment;
  std::vector<std::string> files;

  core::EnvironmentLookup Getenv() const {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto found = environment.find(name);
      if (found == environment.end()) return std::nullopt;
      return found->second;
    };
  }
  FileExists Exists() const {
    return [this](const std::string& path) {
      return std::find(files.begin(), files.end(), path) != files.end();
    };
  }
  core::Result<KubeconfigChoice> Choose(const std::string& flag = "") const {
    return ChooseKubeconfig(flag, Getenv(), Exists());
  }
};

TEST(KubeconfigPathTest, TheFlagWinsAndMustExist) {
  World world{.environment = {{"KUBECONFIG", "/env"}, {"HOME", "/home/u"}},
              .files = {"/flag", "/env", "/home/u/.kube/config"}};
  auto choice = world.Choose("/flag");
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->path, "/flag");
  EXPECT_EQ(choice->source, "--kubeconfig");
  auto missing = world.Choose("/nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "--kubeconfig /nope: no such file");
}

TEST(KubeconfigPathTest, KubeconfigTakesTheFirstFileThatExists) {
  World world{.environment = {{"KUBECONFIG", "/gone::/second:/third"}, {"HOME", "/home/u"}},
              .files = {"/second", "/third", "/home/u/.kube/config"}};
  auto choice = world.Choose();
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->path, "/second");
  EXPECT_EQ(choice->source, "KUBECONFIG");
  world.files = {"/home/u/.kube/config"};
  EXPECT_FALSE(world.Choose()) << "a KUBECONFIG naming nothing is an error, as in kubectl";
}

TEST(KubeconfigPathTest, ThenTheHomeFileThenTheServiceAccount) {
  World world{.environment = {{"HOME", "/home/u"}}, .files = {"/home/u/.kube/config"}};
  ASSERT_TRUE(world.Choose());
  EXPECT_EQ(world.Choose()->path, "/home/u/.kube/config");
  world.files.clear();
  auto none = world.Choose();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), core::ErrorCode::kNotFound);
  world.environment["KUBERNETES_SERVICE_HOST"] = "10.0.0.1";
  ASSERT_TRUE(world.Choose());
  EXPECT_EQ(world.Choose()->path, "");
  EXPECT_EQ(world.Choose()->source, "in-cluster");
}

}  // namespace
}  // namespace modelplane::cli
