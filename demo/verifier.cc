// Copyright urlguard authors.
#include "verifier.h"

#include <QTimer>

LocalOnlyVerifier::LocalOnlyVerifier(QObject *parent) : Verifier(parent) { }

QString LocalOnlyVerifier::description() const
{
    return tr("local only (no verification client): hits are unverified");
}

void LocalOnlyVerifier::verify(const QUrl &url, const urlguard::Verdict &verdict, Callback done)
{
    Q_UNUSED(url);
    Q_UNUSED(verdict);
    // Asynchronous like a real verifier, so the caller's code path is the one a network verifier will take.
    QTimer::singleShot(0, this, [done = std::move(done)] {
        done({VerificationResult::State::Unverified, tr("unverified: local verdict only")});
    });
}
