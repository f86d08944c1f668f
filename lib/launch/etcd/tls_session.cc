// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/etcd/tls_session.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>

#include <utility>

#include <fmt/format.h>

#include "lib/common/dynamic_library.h"
#include "lib/common/error.h"
#include "lib/common/socket.h"

namespace accel::launch::etcd {

namespace {

// The part of libssl (and, through it, libcrypto) a session uses.
struct Ssl {
  DynamicLibrary library{"libssl.so.3"};
#define ACCEL_SSL(name) decltype(&::name) name = library.symbol<decltype(&::name)>(#name)
  ACCEL_SSL(TLS_client_method);
  ACCEL_SSL(SSL_CTX_new);
  ACCEL_SSL(SSL_CTX_free);
  ACCEL_SSL(SSL_CTX_set_verify);
  ACCEL_SSL(SSL_CTX_load_verify_locations);
  ACCEL_SSL(SSL_CTX_set_default_verify_paths);
  ACCEL_SSL(SSL_CTX_use_certificate_chain_file);
  ACCEL_SSL(SSL_CTX_use_PrivateKey_file);
  ACCEL_SSL(SSL_new);
  ACCEL_SSL(SSL_free);
  ACCEL_SSL(SSL_set_fd);
  ACCEL_SSL(SSL_ctrl);
  ACCEL_SSL(SSL_set1_host);
  ACCEL_SSL(SSL_get0_param);
  ACCEL_SSL(SSL_connect);
  ACCEL_SSL(SSL_read);
  ACCEL_SSL(SSL_write);
  ACCEL_SSL(SSL_get_error);
  ACCEL_SSL(SSL_get_verify_result);
  ACCEL_SSL(SSL_shutdown);
  ACCEL_SSL(X509_VERIFY_PARAM_set1_ip_asc);
  ACCEL_SSL(X509_verify_cert_error_string);
  ACCEL_SSL(ERR_get_error);
  ACCEL_SSL(ERR_error_string_n);
#undef ACCEL_SSL

  bool complete() const {
    return TLS_client_method && SSL_CTX_new && SSL_CTX_free && SSL_CTX_set_verify && SSL_CTX_load_verify_locations &&
           SSL_CTX_set_default_verify_paths && SSL_CTX_use_certificate_chain_file && SSL_CTX_use_PrivateKey_file &&
           SSL_new && SSL_free && SSL_set_fd && SSL_ctrl && SSL_set1_host && SSL_get0_param && SSL_connect &&
           SSL_read && SSL_write && SSL_get_error && SSL_get_verify_result && SSL_shutdown &&
           X509_VERIFY_PARAM_set1_ip_asc && X509_verify_cert_error_string && ERR_get_error && ERR_error_string_n;
  }
};

const Ssl& ssl() {
  static const Ssl loaded;
  if (!loaded.library) {
    throw Error(fmt::format("https needs OpenSSL's libssl.so.3, which did not load: {}", loaded.library.error()),
                "install libssl3 (apt-get install libssl3), or reach etcd over http");
  }
  if (!loaded.complete()) throw Error("libssl.so.3 lacks functions of OpenSSL 3", "install Debian's libssl3");
  return loaded;
}

// OpenSSL's queued reasons, oldest first ("" when none).
std::string reasons() {
  std::string text;
  while (unsigned long e = ssl().ERR_get_error()) {
    char buffer[256];
    ssl().ERR_error_string_n(e, buffer, sizeof buffer);
    text += (text.empty() ? "" : "; ") + std::string(buffer);
  }
  return text;
}

SSL* asSsl(void* p) { return static_cast<SSL*>(p); }

}  // namespace

TlsSession::TlsSession(int fd, const std::string& host, const TlsFiles& files, Clock::time_point deadline)
    : fd_(fd), host_(host) {
  try {
    handshake(files, deadline);
  } catch (...) {  // no destructor runs for a constructor that throws
    release();
    throw;
  }
}

void TlsSession::handshake(const TlsFiles& files, Clock::time_point deadline) {
  const std::string& host = host_;
  const Ssl& s = ssl();
  SSL_CTX* ctx = s.SSL_CTX_new(s.TLS_client_method());
  if (!ctx) throw Error("cannot make a TLS context: " + reasons());
  ctx_ = ctx;
  s.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const bool authorities = files.ca_cert.empty()
                               ? s.SSL_CTX_set_default_verify_paths(ctx) == 1
                               : s.SSL_CTX_load_verify_locations(ctx, files.ca_cert.c_str(), nullptr) == 1;
  if (!authorities) {
    throw UsageError(fmt::format("cannot read the CA certificate {}: {}", files.ca_cert, reasons()),
                     "give --rdzv_conf ca_cert=FILE, a PEM file of the authority that signed etcd's certificate");
  }
  if (!files.cert.empty() && s.SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
    throw UsageError(fmt::format("cannot read the client certificate {}: {}", files.cert, reasons()),
                     "give --rdzv_conf ssl_cert=FILE, a PEM certificate");
  }
  if (!files.key.empty() && s.SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw UsageError(fmt::format("cannot read the client key {}: {}", files.key, reasons()),
                     "give --rdzv_conf ssl_cert_key=FILE, the PEM key of ssl_cert");
  }
  SSL* session = s.SSL_new(ctx);
  if (!session) throw Error("cannot make a TLS session: " + reasons());
  ssl_ = session;
  s.SSL_set_fd(session, fd_);
  in6_addr ip6;
  in_addr ip4;
  const bool ip = ::inet_pton(AF_INET, host.c_str(), &ip4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &ip6) == 1;
  if (ip) {
    s.X509_VERIFY_PARAM_set1_ip_asc(s.SSL_get0_param(session), host.c_str());
  } else {
    s.SSL_ctrl(session, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host.c_str()));
    s.SSL_set1_host(session, host.c_str());
  }
  if (drive([&] { return s.SSL_connect(session); }, "the TLS handshake", deadline) == 1) return;
  const long verified = s.SSL_get_verify_result(session);
  if (verified != X509_V_OK) {
    throw UsageError(fmt::format("the server's certificate did not verify for {}: {}", host,
                                 s.X509_verify_cert_error_string(verified)),
                     "give the authority that signed it with --rdzv_conf ca_cert=FILE, and reach the server by a "
                     "name or address its certificate carries");
  }
  throw Error("the TLS handshake failed: " + reasons());
}

TlsSession::~TlsSession() { release(); }

void TlsSession::release() {
  if (ssl_) ssl().SSL_free(asSsl(std::exchange(ssl_, nullptr)));
  if (ctx_) ssl().SSL_CTX_free(static_cast<SSL_CTX*>(std::exchange(ctx_, nullptr)));
}

template <class Step> int TlsSession::drive(Step step, const char* what, Clock::time_point deadline) {
  for (;;) {
    const int rc = step();
    if (rc > 0) return rc;
    const int e = ssl().SSL_get_error(asSsl(ssl_), rc);
    if (e == SSL_ERROR_ZERO_RETURN) return 0;
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return rc < 0 ? -1 : 0;
    pollfd p{fd_, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
    if (::poll(&p, 1, net::remainingMs(deadline)) == 0) throw Error(fmt::format("{} timed out", what));
  }
}

void TlsSession::write(const std::string& data, Clock::time_point deadline) {
  const Ssl& s = ssl();
  for (size_t done = 0; done < data.size();) {
    const int n =
        drive([&] { return s.SSL_write(asSsl(ssl_), data.data() + done, static_cast<int>(data.size() - done)); },
              "sending over TLS", deadline);
    if (n <= 0) throw Error("sending over TLS failed: " + reasons());
    done += static_cast<size_t>(n);
  }
}

size_t TlsSession::read(char* buffer, size_t size, Clock::time_point deadline) {
  const int n =
      drive([&] { return ssl().SSL_read(asSsl(ssl_), buffer, static_cast<int>(size)); }, "reading over TLS", deadline);
  if (n < 0) throw Error("reading over TLS failed: " + reasons());
  return static_cast<size_t>(n);
}

}  // namespace accel::launch::etcd
