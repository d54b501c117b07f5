// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Verifier: the seam between the browser and the verification of local hits.
//
// A local hit can be a filter false positive (about 0.1% of clean URLs at the default rate) until the
// verification API confirms it with full hashes (docs/architecture.md §6). The warning page asks a Verifier
// and waits for its asynchronous answer; the request interceptor never does (it stays a local lookup).
//
//   ClientVerifier     asks urlguard::Client::Check on the client's worker thread (CheckAsync): the result
//   cache,
//                      then the verification API, within the client's deadline. Used with --data-dir.
//   LocalOnlyVerifier  asks nobody and says so. Used with --snapshot (offline lists, no client).
#ifndef URLGUARD_DEMO_VERIFIER_H_
#define URLGUARD_DEMO_VERIFIER_H_

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <functional>
#include <memory>

#include "urlguard/checker.h"

class Protection;

struct VerificationResult
{
    enum class State {
        Unverified, // no answer from a verification service: the local verdict stands (the embedder's policy
                    // decides; the browser warns)
        Confirmed,  // the service returned a full hash equal to a matched key: the URL is listed
        FalsePositive, // the service returned no matching full hash: the local hit was a filter false
                       // positive (or the URL is no longer listed, or the allowlist lets it through)
    };
    State state = State::Unverified;
    QString detail; // one line for people, e.g. "unverified: local verdict only"
    QString list;   // Confirmed by a verification client: the list that confirmed it ("phishing")
    QString threat; // Confirmed by a verification client: its threat type ("social_engineering")
};

// Thread safety: a Verifier lives on the UI thread and is called from it. Implementations may do their work
// on other threads, but deliver the answer on the thread that owns the Verifier object.
class Verifier : public QObject
{
    Q_OBJECT
public:
    using Callback = std::function<void(const VerificationResult &)>;

    explicit Verifier(QObject *parent = nullptr) : QObject(parent) { }
    ~Verifier() override = default;

    // A short description of this verifier for the protection panel, e.g. "local only (no verification
    // client)".
    virtual QString description() const = 0;

    // Starts verifying the local hit `verdict` (kind kHit) for `url`. Never blocks and never calls `done`
    // from inside verify(): `done` runs at most once, later, from this object's event loop (exactly once
    // while the verifier lives). The caller must make sure whatever `done` touches is still alive (guard it
    // with a QPointer).
    virtual void verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done) = 0;
};

// Reports every hit as "unverified: local verdict only". It never claims a confirmation or a false positive,
// because it asks nobody.
class LocalOnlyVerifier : public Verifier
{
    Q_OBJECT
public:
    explicit LocalOnlyVerifier(QObject *parent = nullptr);

    QString description() const override;
    void verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done) override;
};

// Verifies with the urlguard::Client that `protection` holds (Protection::client(), looked up at each call,
// so a changed source is followed). The Client's worker thread runs Client::Check — the result cache, then
// the verification API within ClientOptions::verify_deadline_ms — and the answer is queued back to this
// object's thread (QMetaObject::invokeMethod, Qt::QueuedConnection), where `done` runs. Mapping:
//   kMalicious     -> Confirmed (list and threat from the verdict)
//   kSafeVerified  -> FalsePositive (the page may load)
//   kSafe          -> FalsePositive too: no longer listed (a new list version) or allowlisted
//   kUnverifiedHit -> Unverified: verification is unavailable (the reason from Verdict::error)
//   anything else, no client, or the client's queue full -> Unverified
// Destroying the verifier drops the answers still in flight (their `done` never runs); the Client's worker
// never touches a destroyed verifier. The pending callbacks are bounded by the Client's queue capacity
// (ClientOptions::async_queue_capacity: CheckAsync refuses beyond it) plus one in progress.
class ClientVerifier : public Verifier
{
    Q_OBJECT
public:
    // `protection` should outlive the verifier; once it is gone every hit is reported unverified.
    explicit ClientVerifier(Protection *protection, QObject *parent = nullptr);
    ~ClientVerifier() override;

    QString description() const override;
    void verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done) override;

    // The answer of urlguard::Client::Check for a local hit, as the warning page shows it. Pure.
    static VerificationResult resultFor(const urlguard::Verdict &checked);

private:
    // Shared with the callbacks queued on the Client's worker thread: they reach the verifier only through
    // it, under its mutex, so they never post to a verifier that is being destroyed.
    struct Relay;

    void deliver(quint64 id, const urlguard::Verdict &checked);
    void answerLater(const VerificationResult &result, Callback done);

    QPointer<Protection> m_protection;
    std::shared_ptr<Relay> m_relay;
    quint64 m_nextId = 1;
    QHash<quint64, Callback> m_pending; // id -> the caller's callback, until the Client answers
};

#endif // URLGUARD_DEMO_VERIFIER_H_
