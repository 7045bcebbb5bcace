// Size bounds for the API types, shared by their readers, the validator and (by hand) the CRDs.
//
// Every list and string that arrives from the API server or a user is bounded so a hostile or
// broken object cannot make a component allocate without limit. The numbers match the maxItems
// and maxLength values in crds/*.yaml; a test checks the CRD against them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace modelplane::core::api {

inline constexpr std::size_t kMaxFiles = 4096;
inline constexpr std::size_t kMaxPathLength = 512;
inline constexpr std::size_t kMaxSources = 8;
inline constexpr std::size_t kMaxConditions = 16;
inline constexpr std::size_t kMaxStatusNodes = 5000;
inline constexpr std::size_t kMaxStatusWorkloads = 256;
inline constexpr std::size_t kMaxCacheRevisions = 1024;
// Admission: the sources one node holds grants for, and reports telemetry for (remote sources
// and peers); the tiers of a revision's bytes.
inline constexpr std::size_t kMaxCacheGrants = 64;
inline constexpr std::size_t kMaxCacheSources = 32;
// Peers named for one revision on one node: enough to spread a zone's reads, bounded so that a
// ModelCache's size does not grow with the fleet.
inline constexpr std::size_t kMaxRevisionPeers = 16;
// A peer ticket's text (core/pki/peer_ticket.h, kMaxPeerTicketBytes).
inline constexpr std::size_t kMaxPeerTicketLength = 2048;
// The files a peer is named for when it holds only some of a revision's (through another).
inline constexpr std::size_t kMaxPeerFiles = 256;
inline constexpr std::size_t kMaxTiers = 8;
// Revisions of one digest whose sources one node reports having checked (SourceProof).
inline constexpr std::size_t kMaxSourceProofs = 16;
// Model signatures (OpenSSF model-signing bundles) on one revision, and one bundle's JSON text:
// a statement lists every file (about 150 bytes each, base64 in the bundle), so 384 KiB holds
// about 1,800 files; kMaxSignatures of them stay well inside etcd's 1.5 MiB object limit.
inline constexpr std::size_t kMaxSignatures = 2;
inline constexpr std::size_t kMaxSignatureBundleLength = 384 * 1024;
inline constexpr std::size_t kMaxSourceIdentityLength = 640;
inline constexpr std::size_t kMaxMapEntries = 256;      // labels, annotations
inline constexpr std::size_t kMaxSmallMapEntries = 32;  // nodeSelector, quantization parameters
inline constexpr std::size_t kMaxListEntries = 64;      // finalizers, ownerReferences
inline constexpr std::size_t kMaxShortString = 256;
inline constexpr std::size_t kMaxMapKeyLength =
    320;  // label keys: 253-byte prefix, /, 63-byte name
inline constexpr std::size_t kMaxLongString = 32768;  // condition messages, annotation values
// Enumerated and digest fields are read with a loose bound so the validator, not the parser,
// explains a wrong value; the bound only stops absurd sizes.
inline constexpr std::size_t kMaxEnumLength = 64;     // states, roles, tiers, reasons
inline constexpr std::size_t kMaxDigestLength = 128;  // sha256 hex, with room for a prefix

// 1 PiB: larger than any model file, small enough that kMaxFiles of them sum without overflow.
inline constexpr std::int64_t kMaxFileSize = std::int64_t{1} << 50;
inline constexpr std::int32_t kMaxParallelDegree = 1024;
inline constexpr std::int32_t kMaxPrestageNodes = 10000;

}  // namespace modelplane::core::api
