// The admission webhook as it runs in a cluster (webhook_cluster_fixture.h): a pod with only
// the annotation is injected and others untouched, refusals reach the client with their reason,
// a pod admitted before its revision exists is let go once a node reports the revision Ready
// (the agent is played by writing the ModelCache status), and with the operator down annotated
// pods are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operator/webhook/cluster/webhook_cluster_fixture.h"

namespace modelplane::controller {
namespace {

using core::testing::WaitUntil;
using nlohmann::json;
using ::testing::HasSubstr;
using webhook_testing::kAroundAdmission;
using webhook_testing::kWait;
using webhook_testing::ReadFile;
using webhook_testing::Revision;
using webhook_testing::ServingPod;
using webhook_testing::WebhookClusterTest;

TEST_F(WebhookClusterTest, AnAnnotationIsEnoughAndOtherPodsAreUntouched) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-r1")));
  ASSERT_TRUE(WaitUntilTheWebhookSees("llama-r1")) << ReadFile(log_);
  auto created = CreatePod(ServingPod(namespace_, "llama-0", "llama-r1"));
  ASSERT_TRUE(created) << created.error().ToString() << "\n" << ReadFile(log_);
  const json pod = GetPod("llama-0");
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["schedulingGates"], json::parse(R"([{"name":"modelplane.io/weights"}])"));
  EXPECT_EQ(spec["readinessGates"],
            json::parse(R"([{"conditionType":"modelplane.io/weights-ready"}])"));
  EXPECT_EQ(spec["schedulerName"], "modelplane-scheduler");
  // The ServiceAccount admission plugin adds its token volume beside ours.
  const auto named = [](const json& list, const std::string& name) {
    for (const json& item : list) {
      if (item.value("name", "") == name) return item;
    }
    return json();
  };
  const json volume = named(spec["volumes"], "modelplane-weights");
  ASSERT_FALSE(volume.is_null()) << spec["volumes"].dump();
  EXPECT_EQ(volume["csi"]["driver"], "csi.modelplane.io");
  EXPECT_EQ(volume["csi"]["readOnly"], true);
  EXPECT_EQ(volume["csi"]["volumeAttributes"]["modelplane.io/revision"], "llama-r1");
  const json mount = named(spec["containers"][0]["volumeMounts"], "modelplane-weights");
  EXPECT_EQ(mount["mountPath"], "/models/llama-r1");
  EXPECT_EQ(mount["readOnly"], true);
  EXPECT_THAT(pod["metadata"]["annotations"]["modelplane.io/injected"].get<std::string>(),
              HasSubstr("sha256:"));
  EXPECT_THAT(pod["status"]["conditions"].dump(), HasSubstr("SchedulingGated"));

  ASSERT_TRUE(CreatePod(ServingPod(namespace_, "plain", "")));
  const json plain = GetPod("plain");
  EXPECT_FALSE(plain["spec"].contains("schedulingGates"));
  EXPECT_EQ(plain["spec"]["schedulerName"], "default-scheduler");
  EXPECT_FALSE(plain["spec"].contains("readinessGates"));
}

TEST_F(WebhookClusterTest, InvalidAndRevokedRevisionsAreRefusedWithTheReason) {
  json escaping = Revision(namespace_, "llama-escape");
  escaping["metadata"]["labels"] = {{kAroundAdmission, "true"}};
  escaping["spec"]["sources"] = json::array({{{"name", "nfs"},
                                              {"type", "sharedFilesystem"},
                                              {"sharedFilesystem", {{"path", "/models/../etc"}}}}});
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_, escaping));
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-revoked", true)));
  ASSERT_TRUE(WaitUntilTheWebhookSees("llama-escape")) << ReadFile(log_);
  ASSERT_TRUE(WaitUntilTheWebhookSees("llama-revoked")) << ReadFile(log_);
  auto invalid = CreatePod(ServingPod(namespace_, "a", "llama-escape"));
  ASSERT_FALSE(invalid);
  EXPECT_THAT(invalid.error().message(), HasSubstr("ModelRevision"));
  EXPECT_THAT(invalid.error().message(), HasSubstr("llama-escape is invalid"));
  auto revoked = CreatePod(ServingPod(namespace_, "b", "llama-revoked"));
  ASSERT_FALSE(revoked);
  EXPECT_THAT(revoked.error().message(), HasSubstr("llama-revoked is revoked"));
  auto foreign = CreatePod(ServingPod(namespace_, "c", "kube-system/llama-r1"));
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message(), HasSubstr("its own namespace"));
}

TEST_F(WebhookClusterTest, RevisionsTheSourcePolicyRefusesAreRefusedAtAdmissionNamingTheRule) {
  json secrets = Revision(namespace_, "llama-secrets");
  secrets["spec"]["sources"] = json::array(
      {{{"name", "nfs"},
        {"type", "sharedFilesystem"},
        {"sharedFilesystem", {{"path", "/var/run/secrets/kubernetes.io/serviceaccount"}}}}});
  auto refused = CreateRevision(secrets);
  ASSERT_FALSE(refused) << "the API server stored a revision that reads the node's secrets";
  EXPECT_THAT(refused.error().message(), HasSubstr("source \"nfs\""));
  EXPECT_THAT(refused.error().message(), HasSubstr("below no sharedFilesystems root"));

  json foreign_secret = Revision(namespace_, "llama-foreign-secret");
  foreign_secret["spec"]["sources"][0]["credentialsSecretRef"] = {{"name", "team-b-keys"},
                                                                  {"namespace", "team-b"}};
  auto foreign = CreateRevision(foreign_secret);
  ASSERT_FALSE(foreign);
  EXPECT_THAT(foreign.error().message(),
              HasSubstr("credentialsSecretRef \"team-b/team-b-keys\" is another namespace's"));

  json internal = Revision(namespace_, "llama-internal");
  internal["spec"]["sources"] =
      json::array({{{"name", "origin"},
                    {"type", "http"},
                    {"http", {{"baseURL", "http://169.254.169.254/latest/meta-data"}}}}});
  auto metadata = CreateRevision(internal);
  ASSERT_FALSE(metadata);
  EXPECT_THAT(metadata.error().message(), HasSubstr("no httpOrigins rule"));

  auto allowed = CreateRevision(Revision(namespace_, "llama-r1"));
  EXPECT_TRUE(allowed) << allowed.error().ToString();
}

TEST_F(WebhookClusterTest, APrestageAskTheNamespacesQuotaCouldNeverGrantIsRefusedAtAdmission) {
  if (!CrdInstalled("modelquotas.modelplane.io"))
    GTEST_SKIP() << core::testing::kModelQuotaCrdMissing;
  // The fixture's revisions are 64 bytes: room for two prestaged copies.
  ASSERT_TRUE(client_->Create(core::resources::ModelQuotas(), namespace_,
                              {{"apiVersion", "modelplane.io/v1alpha1"},
                               {"kind", "ModelQuota"},
                               {"metadata", {{"name", "limits"}, {"namespace", namespace_}}},
                               {"spec", {{"prestagedBytes", 128}}}}));
  json greedy = Revision(namespace_, "llama-greedy");
  greedy["spec"]["prestage"] = {{"nodes", 3}};
  auto refused = CreateRevision(greedy);
  ASSERT_FALSE(refused) << "the API server stored a prestage ask beyond the namespace's quota";
  EXPECT_THAT(refused.error().message(), HasSubstr("QuotaExceeded: spec.prestage.nodes 3"));
  EXPECT_THAT(refused.error().message(), HasSubstr("ModelQuota " + namespace_ + "/limits"));
  greedy["spec"]["prestage"]["nodes"] = 2;
  auto allowed = CreateRevision(greedy);
  EXPECT_TRUE(allowed) << allowed.error().ToString();
}

TEST_F(WebhookClusterTest, ARevisionAroundAdmissionIsDeniedByTheOperatorAndItsPodsRefused) {
  json secrets = Revision(namespace_, "llama-around");
  secrets["metadata"]["labels"] = {{kAroundAdmission, "true"}};
  secrets["spec"]["prestage"] = {{"nodes", 1}};
  secrets["spec"]["sources"] = json::array({{{"name", "nfs"},
                                             {"type", "sharedFilesystem"},
                                             {"sharedFilesystem", {{"path", "/etc/modelplane"}}}}});
  ASSERT_TRUE(CreateRevision(secrets));
  json valid;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto object = client_->Get(core::resources::ModelRevisions(), namespace_, "llama-around");
        if (!object) return false;
        for (const json& condition :
             object->value("status", json::object()).value("conditions", json::array())) {
          if (condition.value("type", "") == "Valid") valid = condition;
        }
        return !valid.is_null();
      },
      kWait))
      << ReadFile(log_);
  EXPECT_EQ(valid["status"], "False");
  EXPECT_EQ(valid["reason"], "SourcePolicyDenied");
  EXPECT_THAT(valid["message"].get<std::string>(), HasSubstr("sharedFilesystems"));
  ExpectNoNodeAskedToStage("llama-around");
  auto pod = CreatePod(ServingPod(namespace_, "around-0", "llama-around"));
  ASSERT_FALSE(pod);
  EXPECT_THAT(pod.error().message(), HasSubstr("source policy"));
}

TEST_F(WebhookClusterTest, APodAdmittedBeforeItsRevisionStartsOnceItIsStaged) {
  auto created = CreatePod(ServingPod(namespace_, "early-0", "later-r1"));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ(GetPod("early-0")["metadata"]["annotations"]["modelplane.io/injected"], "pending");
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "later-r1")));
  // The operator asks a node to stage it; that node's agent reports it Ready.
  std::string node;
  std::string digest;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto caches = client_->ListAll(core::resources::ModelCaches(), "", {});
        if (!caches) return false;
        for (const json& cache : caches->items) {
          for (const json& entry : cache["spec"].value("revisions", json::array())) {
            if (entry["revision"].value("namespace", "") == namespace_) {
              node = cache["metadata"]["name"];
              digest = entry.value("digest", "");
            }
          }
        }
        return !node.empty() && !digest.empty();
      },
      kWait))
      << ReadFile(log_);
  ASSERT_TRUE(ReportReady(node, {digest}));
  ASSERT_TRUE(
      WaitUntil([&] { return GetPod("early-0")["spec"].value("nodeName", "") != ""; }, kWait))
      << GetPod("early-0").dump() << "\n"
      << ReadFile(log_);
  EXPECT_EQ(GetPod("early-0")["spec"]["nodeName"], node)
      << "bound by kube-scheduler's modelplane-scheduler profile, on the node that holds it";
  // Admitted while the digest was unknown, it learns it as it is let go: what its containers
  // read as MODELPLANE_REVISION_DIGEST when they start.
  const json early = GetPod("early-0");
  EXPECT_EQ(early["metadata"]["annotations"].value("modelplane.io/revision-digest", ""), digest)
      << early["metadata"].dump();
  EXPECT_NE(early["spec"]["containers"][0].dump().find("MODELPLANE_REVISION_DIGEST"),
            std::string::npos)
      << early["spec"]["containers"][0].dump();
}

TEST_F(WebhookClusterTest, WithTheWebhookDownAnnotatedPodsAreRefusedAndOthersAdmitted) {
  ASSERT_TRUE(client_->Create(core::resources::ModelRevisions(), namespace_,
                              Revision(namespace_, "llama-r1")));
  ASSERT_TRUE(CreatePod(ServingPod(namespace_, "served", "llama-r1")));
  StopOperator();
  auto refused = CreatePod(ServingPod(namespace_, "llama-1", "llama-r1"), false);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("pods.modelplane.io"));
  auto admitted = CreatePod(ServingPod(namespace_, "plain", ""), false);
  EXPECT_TRUE(admitted) << admitted.error().ToString();
}

// The same operator with a source policy that requires the test namespace's revisions to be
// signed (tests/core/signing/fixtures: bundles made by the real model_signing tool).
class SignedRevisionsClusterTest : public WebhookClusterTest {
 protected:
  void SetUp() override {
    require_signatures_ = true;
    WebhookClusterTest::SetUp();
  }

  json SignedRevision(const std::string& name, const std::string& bundle_fixture) {
    json revision = Revision(namespace_, name);
    revision["spec"]["files"] = modelplane::testing::SignedModelFiles();
    if (!bundle_fixture.empty()) {
      revision["spec"]["signatures"] =
          json::array({{{"bundle", modelplane::testing::SigningFixture(bundle_fixture)}}});
    }
    return revision;
  }

  // The revision's status once the operator has written its Valid condition.
  json StatusOnceValidated(const std::string& name) {
    json status;
    WaitUntil(
        [&] {
          auto object = client_->Get(core::resources::ModelRevisions(), namespace_, name);
          if (!object) return false;
          status = object->value("status", json::object());
          for (const json& condition : status.value("conditions", json::array())) {
            if (condition.value("type", "") == "Valid") return true;
          }
          return false;
        },
        kWait);
    return status;
  }

  static json Condition(const json& status, const std::string& type) {
    for (const json& condition : status.value("conditions", json::array())) {
      if (condition.value("type", "") == type) return condition;
    }
    return json::object();
  }
};

TEST_F(SignedRevisionsClusterTest, OnlyRevisionsTheTrustedSignersVouchForAreAdmitted) {
  // Refused at admission, each with its fixed reason first.
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"", "SignatureRequired"},
      {"bundle-key-untrusted.json", "SignatureUntrusted"},
      {"bundle-certificate-other-ca.json", "SignatureUntrusted"},
      {"bundle-certificate-expired.json", "SignatureCertificateExpired"},
  };
  for (const auto& [fixture, reason] : refusals) {
    auto refused = CreateRevision(SignedRevision("refused", fixture));
    ASSERT_FALSE(refused) << fixture << " was admitted";
    EXPECT_THAT(refused.error().message(), HasSubstr(reason)) << fixture;
  }
  // A statement edited after signing (one digest changed), and a good signature over files the
  // revision does not name.
  json tampered = SignedRevision("tampered", "");
  tampered["spec"]["signatures"] = json::array(
      {{{"bundle", modelplane::testing::TamperedSigningFixture("bundle-key-p256.json")}}});
  auto invalid = CreateRevision(tampered);
  ASSERT_FALSE(invalid);
  EXPECT_THAT(invalid.error().message(), HasSubstr("SignatureInvalid"));
  json other_files = SignedRevision("other-files", "bundle-key-p256.json");
  other_files["spec"]["files"][0]["sha256"] = "sha256:" + std::string(64, 'e');
  auto mismatch = CreateRevision(other_files);
  ASSERT_FALSE(mismatch);
  EXPECT_THAT(mismatch.error().message(), HasSubstr("SignatureFilesMismatch"));

  // Admitted, and the operator records who vouches for each.
  ASSERT_TRUE(CreateRevision(SignedRevision("by-key", "bundle-key-p256.json")));
  ASSERT_TRUE(CreateRevision(SignedRevision("by-certificate", "bundle-certificate.json")));
  const json by_key = StatusOnceValidated("by-key");
  EXPECT_EQ(Condition(by_key, "Valid").value("status", ""), "True") << by_key.dump();
  ASSERT_EQ(by_key.value("signedBy", json::array()).size(), 1U) << by_key.dump();
  EXPECT_EQ(by_key["signedBy"][0]["signer"], modelplane::testing::kFixtureKeySigner);
  const std::string key = modelplane::testing::FixtureKeyFingerprint("key-p256");
  EXPECT_EQ(by_key["signedBy"][0]["publicKey"], key);
  const json by_certificate = StatusOnceValidated("by-certificate");
  ASSERT_EQ(by_certificate.value("signedBy", json::array()).size(), 1U) << by_certificate.dump();
  EXPECT_EQ(by_certificate["signedBy"][0]["signer"],
            modelplane::testing::kFixtureCertificateSigner);
  EXPECT_EQ(by_certificate["signedBy"][0]["identity"], modelplane::testing::kFixtureIdentity);
}

TEST_F(SignedRevisionsClusterTest, AroundAdmissionTheOperatorRefusesAndAKeyRevocationRevokes) {
  json untrusted = SignedRevision("untrusted", "bundle-key-untrusted.json");
  untrusted["metadata"]["labels"] = {{kAroundAdmission, "true"}};
  untrusted["spec"]["prestage"] = {{"nodes", 1}};
  ASSERT_TRUE(CreateRevision(untrusted));
  const json refused = StatusOnceValidated("untrusted");
  EXPECT_EQ(Condition(refused, "Valid").value("status", ""), "False") << refused.dump();
  EXPECT_EQ(Condition(refused, "Valid").value("reason", ""), "SignatureUntrusted");
  ExpectNoNodeAskedToStage("untrusted");
  auto pod = CreatePod(ServingPod(namespace_, "untrusted-0", "untrusted"));
  ASSERT_FALSE(pod);
  EXPECT_THAT(pod.error().message(), HasSubstr("SignatureUntrusted"));

  // Revoking the release key revokes what only it signed, not what the PKI signed.
  ASSERT_TRUE(CreateRevision(SignedRevision("by-key", "bundle-key-p256.json")));
  ASSERT_TRUE(CreateRevision(SignedRevision("by-certificate", "bundle-certificate.json")));
  ASSERT_FALSE(StatusOnceValidated("by-key").empty());
  const std::string revocation_name = namespace_ + "-release-key";
  const json revocation = {{"apiVersion", "modelplane.io/v1alpha1"},
                           {"kind", "ModelRevocation"},
                           {"metadata", {{"name", revocation_name}}},
                           {"spec",
                            {{"signingKey", modelplane::testing::FixtureKeyFingerprint("key-p256")},
                             {"reason", "release key leaked"}}}};
  ASSERT_TRUE(client_->Create(core::resources::ModelRevocations(), "", revocation));
  json revoked;
  const bool covered = WaitUntil(
      [&] {
        auto object = client_->Get(core::resources::ModelRevisions(), namespace_, "by-key");
        if (!object) return false;
        revoked = object->value("status", json::object());
        return revoked.value("phase", "") == "Revoked";
      },
      kWait);
  const json still = StatusOnceValidated("by-certificate");
  (void)client_->Delete(core::resources::ModelRevocations(), "", revocation_name);
  ASSERT_TRUE(covered) << revoked.dump() << ReadFile(log_);
  EXPECT_EQ(revoked["revokedBy"]["name"], revocation_name);
  EXPECT_NE(still.value("phase", ""), "Revoked") << still.dump();
  EXPECT_FALSE(still.contains("revokedBy")) << still.dump();
}

}  // namespace
}  // namespace modelplane::controller
