// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "verifier.h"

#include <QTimer>
#include <mutex>
#include <string>
#include <utility>

#include "protection.h"
#include "urlguard/client.h"

namespace {

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

LocalOnlyVerifier::LocalOnlyVerifier(QObject *parent) : Verifier(parent) { }

QString LocalOnlyVerifier::description() const
{
    return tr("local only (offline snapshot lists, no verification client): hits are unverified");
}

void LocalOnlyVerifier::verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done)
{
    Q_UNUSED(url);
    Q_UNUSED(verdict);
    // Asynchronous like a real verifier, so the caller's code path is the one a network verifier takes.
    QTimer::singleShot(0, this, [done = std::move(done)] {
        done({VerificationResult::State::Unverified, tr("unverified: local verdict only"), {}, {}});
    });
}

struct ClientVerifier::Relay
{
    std::mutex mutex;                 // guards target
    ClientVerifier *target = nullptr; // null once the verifier is being destroyed
};

ClientVerifier::ClientVerifier(Protection *protection, QObject *parent)
    : Verifier(parent), m_protection(protection), m_relay(std::make_shared<Relay>())
{
    m_relay->target = this;
}

ClientVerifier::~ClientVerifier()
{
    // After this, a callback on the Client's worker posts nothing; what it posted before is discarded by
    // ~QObject (it removes the events posted to this object).
    std::lock_guard<std::mutex> lock(m_relay->mutex);
    m_relay->target = nullptr;
}

QString ClientVerifier::description() const
{
    if (!m_protection || !m_protection->client())
        return tr("no verification client (the lists are not a data directory): hits are unverified");
    const urlguard::ClientOptions &options = m_protection->source().client;
    if (options.server_url.empty() || !options.verify)
        return tr("urlguard::Client without a verification server: hits are unverified unless cached");
    return tr("urlguard::Client via %1 (deadline %2 ms)")
            .arg(fromStd(options.server_url))
            .arg(options.verify_deadline_ms);
}

VerificationResult ClientVerifier::resultFor(const urlguard::Verdict &checked)
{
    VerificationResult r;
    const QString cached = checked.from_cache ? tr(" (cached answer)") : QString();
    switch (checked.kind) {
    case urlguard::VerdictKind::kMalicious:
        r.state = VerificationResult::State::Confirmed;
        r.list = fromStd(checked.list);
        r.threat = fromStd(checked.threat);
        r.detail = checked.emergency ? tr("confirmed by the list's signed emergency policy")
                                     : tr("confirmed by the verification service%1").arg(cached);
        break;
    case urlguard::VerdictKind::kSafeVerified:
        r.state = VerificationResult::State::FalsePositive;
        r.detail = tr("a filter false positive: the verification service has no matching full hash%1")
                           .arg(cached);
        break;
    case urlguard::VerdictKind::kSafe:
        r.state = VerificationResult::State::FalsePositive;
        r.detail = checked.allowlisted ? tr("allowed by the local allowlist")
                                       : tr("no longer listed in the installed list versions");
        break;
    case urlguard::VerdictKind::kUnverifiedHit:
    case urlguard::VerdictKind::kHit:
    case urlguard::VerdictKind::kInvalid:
        r.state = VerificationResult::State::Unverified;
        r.detail = checked.error.empty()
                ? tr("unverified: verification is unavailable")
                : tr("unverified: verification is unavailable (%1)").arg(fromStd(checked.error));
        break;
    }
    return r;
}

void ClientVerifier::verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done)
{
    Q_UNUSED(verdict); // the Client looks the URL up again in its current generation
    const std::shared_ptr<urlguard::Client> client = m_protection ? m_protection->client() : nullptr;
    if (!client) {
        answerLater({VerificationResult::State::Unverified,
                     tr("unverified: verification is unavailable (no verification client)"),
                     {},
                     {}},
                    std::move(done));
        return;
    }

    const quint64 id = m_nextId++;
    m_pending.insert(id, std::move(done));
    const QByteArray spelled = url.toEncoded();
    // Runs on the Client's worker thread. It holds no reference to the Client (the last one must not be
    // dropped on the Client's own worker, whose destructor joins it), only the relay.
    const std::shared_ptr<Relay> relay = m_relay;
    const bool queued = client->CheckAsync(
            std::string(spelled.constData(), static_cast<size_t>(spelled.size())),
            [relay, id](urlguard::Verdict checked) {
                std::lock_guard<std::mutex> lock(relay->mutex);
                ClientVerifier *target = relay->target;
                if (!target)
                    return;
                QMetaObject::invokeMethod(
                        target, [target, id, checked = std::move(checked)] { target->deliver(id, checked); },
                        Qt::QueuedConnection);
            });
    if (!queued) {
        answerLater({VerificationResult::State::Unverified,
                     tr("unverified: verification is unavailable (too many verifications in progress)"),
                     {},
                     {}},
                    m_pending.take(id));
    }
}

void ClientVerifier::deliver(quint64 id, const urlguard::Verdict &checked)
{
    const Callback done = m_pending.take(id);
    if (done)
        done(resultFor(checked));
}

void ClientVerifier::answerLater(const VerificationResult &result, Callback done)
{
    QTimer::singleShot(0, this, [result, done = std::move(done)] { done(result); });
}
