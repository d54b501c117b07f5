// Copyright urlguard authors.
//
// Verifier: the seam between the browser and a remote verification service.
//
// A local hit can be a filter false positive (about 0.1% of clean URLs at the default rate) until the
// verification API confirms it with full hashes (docs: ARCHITECTURE.md section 6). The sync/verification
// client is not part of the public API yet, so the browser ships LocalOnlyVerifier, which says so honestly.
// A real verifier plugs in here and does its network round trip off the UI thread; the warning page already
// waits for the asynchronous answer, so nothing else in the browser has to change.
#ifndef URLGUARD_DEMO_VERIFIER_H_
#define URLGUARD_DEMO_VERIFIER_H_

#include <QObject>
#include <QString>
#include <QUrl>
#include <functional>

#include "urlguard/checker.h"

struct VerificationResult
{
    enum class State {
        Unverified, // no answer from a verification service: the local verdict stands (the embedder's policy
                    // decides; the browser warns)
        Confirmed,  // the service returned a full hash equal to a matched key: the URL is listed
        FalsePositive, // the service returned no matching full hash: the local hit was a filter false
                       // positive
    };
    State state = State::Unverified;
    QString detail; // one line for people, e.g. "unverified: local verdict only"
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
    // from inside verify(): `done` runs exactly once, later, from this object's event loop. The caller must
    // make sure whatever `done` touches is still alive (guard it with a QPointer).
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

#endif // URLGUARD_DEMO_VERIFIER_H_
