// What an HTTP handler receives: one fully read, size-bounded request and who sent it.
//
// Thread safety: a plain value; the server hands each handler its own instance.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/verb.hpp>

namespace modelplane::core {

// The client certificate of a mutual-TLS connection, after it verified against the server's CA.
struct PeerCertificate {
  std::string subject;                 // RFC 2253 form, e.g. "CN=node-7,O=modelplane"
  std::string common_name;             // the subject's CN, empty when it has none
  std::vector<std::string> dns_names;  // its subjectAltName DNS entries
};

struct ServerRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target;  // as sent: path plus optional "?query"
  std::string path;    // target up to '?'
  std::string query;   // after '?', without it; not decoded
  boost::beast::http::fields headers;
  std::string body;                                 // at most ServerOptions::body_limit bytes
  std::string remote_endpoint;                      // "address:port" of the peer
  std::optional<PeerCertificate> peer_certificate;  // set only for verified mTLS peers
};

}  // namespace modelplane::core
