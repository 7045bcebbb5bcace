// The server and service options the binary serves the verbs with, from its config.
#include "scheduler-extender/verb_server_options.h"

#include <gtest/gtest.h>

namespace modelplane::extender {
namespace {

core::Logger TestLogger() {
  auto logger = core::Logger::Create({.component = "scheduler-extender"});
  EXPECT_TRUE(logger);
  return std::move(*logger);
}

TEST(VerbServerOptionsTest, CarryTheBoundsAddressAndTls) {
  ExtenderServerConfig config;
  config.body_limit.bytes = 2u << 20;
  config.max_nodes = 100;
  config.max_concurrent_bodies = 3;
  config.tls = {.certificate_file = "/tls/tls.crt",
                .private_key_file = "/tls/tls.key",
                .client_ca_file = "/tls/ca.crt",
                .client_names = {"modelplane-scheduler"}};
  auto options = VerbServerOptions(config, "10.0.0.7", TestLogger());
  ASSERT_TRUE(options) << options.error().ToString();
  EXPECT_EQ(options->address, "10.0.0.7");
  EXPECT_EQ(options->body_limit, 2u << 20);
  EXPECT_EQ(options->max_concurrent_bodies, 3u);
  ASSERT_TRUE(options->tls);
  EXPECT_EQ(options->tls->certificate_chain_file, "/tls/tls.crt");
  EXPECT_EQ(options->tls->private_key_file, "/tls/tls.key");
  EXPECT_EQ(options->tls->client_ca_file, "/tls/ca.crt");
  EXPECT_TRUE(options->tls->require_client_certificate);
  EXPECT_TRUE(options->log);

  const ExtenderService::Options service = VerbServiceOptions(config);
  EXPECT_EQ(service.limits.max_bytes, 2u << 20);  // the reader and the server agree
  EXPECT_EQ(service.limits.max_nodes, 100u);
  EXPECT_EQ(service.client_names, std::vector<std::string>{"modelplane-scheduler"});
}

TEST(VerbServerOptionsTest, RefusesNoAddressAndHalfTls) {
  ExtenderServerConfig config;
  EXPECT_FALSE(VerbServerOptions(config, std::nullopt, TestLogger()));
  config.address = "127.0.0.1";
  auto plain = VerbServerOptions(config, std::nullopt, TestLogger());
  ASSERT_TRUE(plain) << plain.error().ToString();
  EXPECT_FALSE(plain->tls);
  config.tls.certificate_file = "/tls/tls.crt";
  EXPECT_FALSE(VerbServerOptions(config, std::nullopt, TestLogger()));
}

}  // namespace
}  // namespace modelplane::extender
