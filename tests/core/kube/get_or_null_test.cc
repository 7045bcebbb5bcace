#include <gtest/gtest.h>

#include "core/kube/kube_client.h"

namespace modelplane::core {
namespace {

// Answers Get from a fixed result; nothing else is called.
class FixedGetClient final : public KubeClient {
 public:
  explicit FixedGetClient(Result<nlohmann::json> answer) : answer_(std::move(answer)) {}
  Result<nlohmann::json> Get(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                             const std::string& /*name*/) override {
    return answer_;
  }
  Result<ListPage> List(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                        const ListOptions& /*options*/) override {
    return Unused();
  }
  Result<ListPage> ListAll(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                           ListOptions /*options*/) override {
    return Unused();
  }
  Result<nlohmann::json> Create(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                                const nlohmann::json& /*object*/) override {
    return Unused();
  }
  Result<nlohmann::json> Update(const ResourceType& /*type*/,
                                const nlohmann::json& /*object*/) override {
    return Unused();
  }
  Result<nlohmann::json> UpdateStatus(const ResourceType& /*type*/,
                                      const nlohmann::json& /*object*/) override {
    return Unused();
  }
  Result<nlohmann::json> Patch(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                               const std::string& /*name*/, PatchType /*patch_type*/,
                               const nlohmann::json& /*patch*/,
                               const PatchOptions& /*options*/) override {
    return Unused();
  }
  Status Delete(const ResourceType& /*type*/, const std::string& /*namespace_name*/,
                const std::string& /*name*/, const DeleteOptions& /*options*/) override {
    return Unused();
  }
  Result<nlohmann::json> Request(const std::string& /*method*/,
                                 const std::string& /*path_and_query*/,
                                 const nlohmann::json& /*body*/,
                                 const std::string& /*content_type*/) override {
    return Unused();
  }
  const KubeConfig& config() const override { return config_; }

 private:
  static std::unexpected<Error> Unused() {
    return MakeError(ErrorCode::kInternal, "not used by GetOrNull");
  }
  Result<nlohmann::json> answer_;
  KubeConfig config_;
};

ResourceType ConfigMaps() {
  return {"", "v1", "configmaps", "ConfigMap", true};
}

TEST(GetOrNullTest, AnObjectIsReturnedAsItIs) {
  FixedGetClient client(nlohmann::json{{"kind", "ConfigMap"}});
  auto object = GetOrNull(client, ConfigMaps(), "ns", "a");
  ASSERT_TRUE(object);
  EXPECT_EQ((*object)["kind"], "ConfigMap");
}

TEST(GetOrNullTest, NotFoundIsANullDocument) {
  FixedGetClient client(MakeError(ErrorCode::kNotFound, "configmaps \"a\" not found"));
  auto object = GetOrNull(client, ConfigMaps(), "ns", "a");
  ASSERT_TRUE(object);
  EXPECT_TRUE(object->is_null());
}

TEST(GetOrNullTest, OtherFailuresStayFailures) {
  FixedGetClient client(MakeError(ErrorCode::kUnavailable, "connection refused"));
  auto object = GetOrNull(client, ConfigMaps(), "ns", "a");
  ASSERT_FALSE(object);
  EXPECT_EQ(object.error().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace modelplane::core
