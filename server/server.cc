// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Server (include/urlguard/server.h): the wiring of ServerApp (routing, server/server_app.h) onto
// the http/ layer (http/http_server.h), plus reading and checking the TLS files.
#include "urlguard/server.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <chrono>
#include <thread>

#include "core/thread_annotations.h"
#include "http/http_server.h"
#include "http/listen_address.h"
#include "server/server_app.h"

namespace urlguard {

namespace {

// A PEM certificate chain or key file is read up to this size.
constexpr size_t kMaxTlsFileBytes = size_t{1} << 20;

Result<std::string> ReadTlsFile(Env* env, const std::string& path, const char* what) {
  auto data = env->ReadFile(path, kMaxTlsFileBytes);
  if (!data.ok()) return Status::IoError(std::string("TLS: cannot read ") + what + " " + path);
  return data;
}

// Checks that `cert_pem` starts with a certificate and `key_pem` holds its private key (GnuTLS inside MHD
// would refuse a mismatch too, but without saying why).
Status CheckTlsPair(const std::string& cert_pem, const std::string& key_pem) {
  BIO* cert_bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* cert = cert_bio == nullptr ? nullptr : PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  if (cert == nullptr) return Status::IoError("TLS: cannot parse the certificate");
  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = key_bio == nullptr ? nullptr : PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  if (key == nullptr) {
    X509_free(cert);
    return Status::IoError("TLS: cannot parse the private key");
  }
  const bool match = X509_check_private_key(cert, key) == 1;
  EVP_PKEY_free(key);
  X509_free(cert);
  if (!match) return Status::InvalidArgument("TLS: the private key does not match the certificate");
  return Status::Ok();
}

}  // namespace

class Server::Impl {
 public:
  Impl(std::unique_ptr<ServerApp> app, ListenAddress listen) : app_(std::move(app)), listen_(std::move(listen)) {}

  Status Start(const ServerOptions& options, std::string cert_pem, std::string key_pem) {
    HttpServerOptions h = ServerHttpOptions(options, listen_);
    h.tls_cert_pem = std::move(cert_pem);
    h.tls_key_pem = std::move(key_pem);
    ServerApp* app = app_.get();
    auto http = HttpServer::Start(
        h, [app](const HttpRequest& req) { return app->Handle(req); },
        [app](const HttpRequest& head) { return app->HandleHead(head); });
    if (!http.ok()) return http.status().WithContext("server");
    http_ = std::move(http).value();
    HttpServer* server = http_.get();
    app_->set_deadline_cuts([server] { return server->deadline_cuts(); });
    refresher_ = std::thread([this, interval = std::chrono::milliseconds(options.hash_refresh_millis)] {
      MutexLock lock(&mutex_);
      for (;;) {
        // Waits out the interval unless stopped (a spurious wake-up waits on, as wait_for with a predicate).
        const auto due = std::chrono::steady_clock::now() + interval;
        while (!stopped_ && stopped_cv_.WaitUntil(&mutex_, due)) {}
        if (stopped_) break;
        mutex_.Unlock();
        (void)app_->RefreshHashes();  // a bad file is skipped; the loaded versions keep answering
        mutex_.Lock();
      }
    });
    return Status::Ok();
  }

  void Stop() EXCLUDES(mutex_) {
    http_->Stop();
    {
      MutexLock lock(&mutex_);
      stopped_ = true;
      stopped_cv_.SignalAll();
    }
    if (refresher_.joinable()) refresher_.join();
  }

  void Wait() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    while (!stopped_) stopped_cv_.Wait(&mutex_);
  }

  int port() const { return http_->port(); }
  bool tls() const { return http_->tls(); }
  std::string base_url() const { return (tls() ? "https://" : "http://") + listen_.ToString(port()); }

 private:
  std::unique_ptr<ServerApp> app_;  // outlives http_ (declared first, destroyed last)
  const ListenAddress listen_;
  std::unique_ptr<HttpServer> http_;
  Mutex mutex_;
  CondVar stopped_cv_;  // signalled when stopped_ is set
  bool stopped_ GUARDED_BY(mutex_) = false;
  std::thread refresher_;  // calls app_->RefreshHashes() every hash_refresh_millis until stopped_
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }
int Server::port() const { return impl_->port(); }
bool Server::tls() const { return impl_->tls(); }
std::string Server::base_url() const { return impl_->base_url(); }
void Server::Stop() { impl_->Stop(); }
void Server::Wait() { impl_->Wait(); }

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  auto listen = ParseLoopbackListenAddress(options.listen);
  if (!listen.ok()) return listen.status().WithContext("server");
  Env* env = Env::Default();
  auto app = ServerApp::Create(options, env);
  if (!app.ok()) return app.status();
  std::string cert_pem, key_pem;
  if (!options.tls_cert_file.empty()) {
    auto cert = ReadTlsFile(env, options.tls_cert_file, "certificate");
    if (!cert.ok()) return cert.status().WithContext("server");
    auto key = ReadTlsFile(env, options.tls_key_file, "private key");
    if (!key.ok()) return key.status().WithContext("server");
    URLGUARD_RETURN_IF_ERROR(CheckTlsPair(*cert, *key).WithContext("server"));
    cert_pem = std::move(cert).value();
    key_pem = std::move(key).value();
  }
  auto impl = std::make_unique<Impl>(std::move(app).value(), std::move(listen).value());
  URLGUARD_RETURN_IF_ERROR(impl->Start(options, std::move(cert_pem), std::move(key_pem)));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace urlguard
