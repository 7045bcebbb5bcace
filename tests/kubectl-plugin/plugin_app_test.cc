// The command line without a server: help texts, usage errors and a missing kubeconfig. The
// verbs against a real API server are in cluster/.
#include "kubectl-plugin/plugin_app.h"

#include <sstream>

#include <gtest/gtest.h>

#include "tests/kubectl-plugin/test_objects.h"

namespace modelplane::cli {
namespace {

struct PluginRun {
  int status = 0;
  std::string out;
  std::string err;
};

PluginRun Plugin(const std::vector<std::string>& arguments) {
  core::ManualClock clock;
  std::ostringstream out;
  std::ostringstream err;
  const int status = RunPlugin(
      arguments, {.getenv = [](const std::string&) { return std::optional<std::string>(); },
                  .file_exists = [](const std::string&) { return false; },
                  .clock = clock,
                  .out = out,
                  .err = err});
  return {status, out.str(), err.str()};
}

TEST(PluginAppTest, EveryVerbHasHelpThatFitsTheTerminal) {
  const PluginRun top = Plugin({"--help"});
  EXPECT_EQ(top.status, 0);
  for (const char* verb :
       {"status", "quota", "why", "cache", "prestage", "revoke", "plan", "import"}) {
    EXPECT_NE(top.out.find(verb), std::string::npos) << top.out;
    const PluginRun help = Plugin({verb, "--help"});
    EXPECT_EQ(help.status, 0) << verb;
    EXPECT_NE(help.out.find("kubectl modelplane " + std::string(verb)), std::string::npos)
        << help.out;
    EXPECT_TRUE(testing::FitsTerminal(help.out)) << help.out;
    EXPECT_NE(help.out.find("--namespace"), std::string::npos) << help.out;
  }
  EXPECT_TRUE(testing::FitsTerminal(top.out)) << top.out;
  EXPECT_NE(Plugin({"prestage", "--help"}).out.find("--nodes"), std::string::npos);
  EXPECT_NE(Plugin({"revoke", "--help"}).out.find("cannot be undone"), std::string::npos);
  const std::string plan = Plugin({"plan", "--help"}).out;
  for (const char* flag : {"--replicas", "--nic-gbps", "--origin-gbps", "--stream-mbps"}) {
    EXPECT_NE(plan.find(flag), std::string::npos) << plan;
  }
  EXPECT_NE(plan.find("=25"), std::string::npos) << plan;  // the NIC's default, shown
  const std::string import = Plugin({"import", "--help"}).out;
  for (const char* flag :
       {"hf://org/name[@rev]", "modelscope://org/name[@rev]", "--name", "--endpoint",
        "--token-file", "--include", "--exclude", "--credentials-secret", "--engine-name",
        "--engine-version", "--apply", "--output"}) {
    EXPECT_NE(import.find(flag), std::string::npos) << flag << "\n" << import;
  }
}

// One line on stderr, nothing on stdout, a non-zero status.
void ExpectOneLineError(const PluginRun& run, const std::string& fragment) {
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_TRUE(run.err.starts_with("error: ")) << run.err;
  EXPECT_NE(run.err.find(fragment), std::string::npos) << run.err;
}

TEST(PluginAppTest, UsageErrorsAreOneLine) {
  ExpectOneLineError(Plugin({}), "subcommand");
  ExpectOneLineError(
      Plugin({"bogus"}),
      "unknown verb \"bogus\" (verbs: status, quota, why, cache, prestage, revoke, plan, import)");
  ExpectOneLineError(Plugin({"why"}), "POD is required (see kubectl modelplane why");
  ExpectOneLineError(Plugin({"quota", "extra"}), "extra");
  ExpectOneLineError(Plugin({"prestage", "llama-r2"}), "--nodes");
  ExpectOneLineError(Plugin({"prestage", "llama-r2", "--nodes", "10001"}), "10001");
  ExpectOneLineError(Plugin({"prestage", "llama-r2", "--nodes", "-1"}), "-1");
  ExpectOneLineError(Plugin({"plan", "llama-r2"}), "--replicas is required");
  ExpectOneLineError(Plugin({"plan", "llama-r2", "--replicas", "0"}), "--replicas");
  ExpectOneLineError(Plugin({"plan", "llama-r2", "--replicas", "3", "--nic-gbps", "0"}),
                     "--nic-gbps: must be a number above 0, not 0");
  ExpectOneLineError(Plugin({"plan", "llama-r2", "--replicas", "3", "--stream-mbps", "-5"}),
                     "--stream-mbps");
  ExpectOneLineError(Plugin({"import", "hf://acme/tiny"}), "--name is required");
  ExpectOneLineError(Plugin({"import", "--name", "m"}), "REFERENCE is required");
}

// Writing the YAML needs no cluster: the import reaches its own checks without a kubeconfig
// (the test's environment has none), and only --apply asks for one, before the hub is asked.
TEST(PluginAppTest, ImportNeedsAClusterOnlyToApply) {
  ExpectOneLineError(Plugin({"import", "acme/tiny", "--name", "m"}),
                     "\"acme/tiny\" is not a hub reference (expected hf://org/name[@revision] or "
                     "modelscope://org/name[@revision])");
  ExpectOneLineError(
      Plugin({"import", "hf://acme/tiny", "--name", "m", "--token-file", "/missing/token"}),
      "reading --token-file");
  ExpectOneLineError(Plugin({"import", "hf://acme/tiny", "--name", "m", "--endpoint",
                             "https://hub.example/some/path"}),
                     "the hub endpoint must be an http(s) URL without a path");
  ExpectOneLineError(Plugin({"import", "hf://acme/tiny", "--name", "m", "--apply"}),
                     "no kubeconfig: pass --kubeconfig, set KUBECONFIG or create ~/.kube/config");
}

TEST(PluginAppTest, NoKubeconfigIsOneClearLine) {
  ExpectOneLineError(Plugin({"status", "llama-r2"}),
                     "no kubeconfig: pass --kubeconfig, set KUBECONFIG or create ~/.kube/config");
  ExpectOneLineError(Plugin({"plan", "llama-r2", "--replicas", "3", "--kubeconfig", "/missing"}),
                     "--kubeconfig /missing: no such file");
  ExpectOneLineError(Plugin({"cache", "gpu-a", "--kubeconfig", "/missing"}),
                     "--kubeconfig /missing: no such file");
  // Global flags go before or after the verb, as with kubectl.
  ExpectOneLineError(Plugin({"--kubeconfig", "/missing", "why", "llama-0", "-n", "team-a"}),
                     "--kubeconfig /missing: no such file");
}

}  // namespace
}  // namespace modelplane::cli
