#include "core/api/peer_identity.h"

#include <gtest/gtest.h>

namespace modelplane::core::api {
namespace {

TEST(PeerIdentityTest, NamesANodeAndReadsItBack) {
  EXPECT_EQ(PeerIdentityName("gpu-7"), "gpu-7.peer.modelplane.invalid");
  EXPECT_EQ(NodeOfPeerIdentity("gpu-7.peer.modelplane.invalid"), "gpu-7");
  EXPECT_EQ(NodeOfPeerIdentity(".peer.modelplane.invalid"), "");
  EXPECT_EQ(NodeOfPeerIdentity("gpu-7.example.com"), "");
}

TEST(PeerIdentityTest, RequestNamesAreOnePerKeyAndStayObjectNames) {
  const std::string a = PeerCertificateRequestName("gpu-7", "sha256:0123456789abcdef0123");
  EXPECT_EQ(a, "modelplane-peer-gpu-7-0123456789abcdef");
  EXPECT_NE(a, PeerCertificateRequestName("gpu-7", "sha256:fedcba9876543210"));
  const std::string long_node(253, 'n');
  const std::string shortened = PeerCertificateRequestName(long_node, "sha256:0123456789abcdef");
  EXPECT_LE(shortened.size(), 253U);
  EXPECT_NE(shortened,
            PeerCertificateRequestName(std::string(252, 'n') + "m", "sha256:0123456789abcdef"));
}

}  // namespace
}  // namespace modelplane::core::api
