#include "core/http/tls_context.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace modelplane::core {
namespace {

namespace ssl = boost::asio::ssl;

std::unexpected<Error> TlsError(std::string_view what, const boost::system::error_code& error) {
  return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: {}", what, error.message()));
}

std::unique_ptr<ssl::context> NewContext(ssl::context::method method) {
  auto context = std::make_unique<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  return context;
}

Status LoadIdentity(ssl::context& context, const std::string& chain, const std::string& key) {
  boost::system::error_code error;
  context.use_certificate_chain_file(chain, error);
  if (error) return TlsError("loading certificate chain " + chain, error);
  context.use_private_key_file(key, ssl::context::pem, error);
  if (error) return TlsError("loading private key " + key, error);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return MakeError(ErrorCode::kInvalidArgument, "private key does not match the certificate");
  }
  return Ok();
}

}  // namespace

Result<std::unique_ptr<ssl::context>> MakeServerTlsContext(const TlsServerOptions& options) {
  auto context = NewContext(ssl::context::tls_server);
  if (auto status =
          LoadIdentity(*context, options.certificate_chain_file, options.private_key_file);
      !status) {
    return std::unexpected(status.error());
  }
  if (!options.client_ca_file.empty()) {
    boost::system::error_code error;
    context->load_verify_file(options.client_ca_file, error);
    if (error) return TlsError("loading client CA " + options.client_ca_file, error);
    if (options.require_client_certificate) {
      context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, error);
      if (error) return TlsError("setting verify mode", error);
    } else {
      // Request a certificate but finish the handshake whatever the verification says: the
      // result stays in SSL_get_verify_result, which GetPeerCertificate checks.
      SSL_CTX_set_verify(context->native_handle(), SSL_VERIFY_PEER,
                         [](int /*preverified*/, X509_STORE_CTX* /*store*/) { return 1; });
    }
  }
  return context;
}

Result<std::unique_ptr<ssl::context>> MakeClientTlsContext(const TlsClientOptions& options) {
  auto context = NewContext(ssl::context::tls_client);
  boost::system::error_code error;
  if (options.ca_file.empty() && options.ca_pem.empty()) {
    context->set_default_verify_paths(error);
    if (error) return TlsError("loading the system trust store", error);
  }
  if (!options.ca_file.empty()) {
    context->load_verify_file(options.ca_file, error);
    if (error) return TlsError("loading CA " + options.ca_file, error);
  }
  if (!options.ca_pem.empty()) {
    context->add_certificate_authority(boost::asio::buffer(options.ca_pem), error);
    if (error) return TlsError("loading CA from PEM text", error);
  }
  context->set_verify_mode(ssl::verify_peer, error);
  if (error) return TlsError("setting verify mode", error);
  if (options.certificate_chain_file.empty() != options.private_key_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "client certificate and private key must be given together");
  }
  if (!options.certificate_chain_file.empty()) {
    if (auto status =
            LoadIdentity(*context, options.certificate_chain_file, options.private_key_file);
        !status) {
      return std::unexpected(status.error());
    }
  }
  return context;
}

Status SetClientVerifyHost(SSL* ssl, const std::string& host) {
  boost::system::error_code parse_error;
  boost::asio::ip::make_address(host, parse_error);
  if (!parse_error) {
    // An IP literal: RFC 6066 forbids it in SNI; verify it against the IP SANs instead.
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) != 1) {
      return MakeError(ErrorCode::kInvalidArgument, "cannot verify IP " + host);
    }
    return Ok();
  }
  if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1 || SSL_set1_host(ssl, host.c_str()) != 1) {
    return MakeError(ErrorCode::kInvalidArgument, "cannot set TLS host name " + host);
  }
  return Ok();
}

std::optional<PeerCertificate> GetPeerCertificate(SSL* ssl) {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  const X509_NAME* name = X509_get_subject_name(certificate);
  PeerCertificate peer;
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    if (length > 0) peer.subject.assign(data, static_cast<std::size_t>(length));
    BIO_free(bio);
  }
  const int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index >= 0) {
    ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
    unsigned char* utf8 = nullptr;
    const int length = ASN1_STRING_to_UTF8(&utf8, value);
    if (length > 0) peer.common_name.assign(reinterpret_cast<char*>(utf8), length);
    OPENSSL_free(utf8);
  }
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  for (int position = 0; names != nullptr && position < sk_GENERAL_NAME_num(names); ++position) {
    const GENERAL_NAME* alternative = sk_GENERAL_NAME_value(names, position);
    if (alternative->type != GEN_DNS) continue;
    const ASN1_IA5STRING* dns = alternative->d.dNSName;
    peer.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                static_cast<std::size_t>(ASN1_STRING_length(dns)));
  }
  GENERAL_NAMES_free(names);
  return peer;
}

}  // namespace modelplane::core
