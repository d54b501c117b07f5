// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SessionExemptions: what the user accepted in this browser session despite a warning. The warning page hands
// out a single-use random token for the URL and the matches it shows ("Proceed anyway"); redeeming the token
// exempts that URL. A verifier that shows a local hit to be a filter false positive exempts it too. An
// exemption covers the matches that were accepted, no more: a new list or expression for the same page warns
// again.
//
// Memory is bounded: the warning page can be loaded by anything that navigates, so outstanding tokens and
// exempted URLs are capped and the oldest go first. Nothing is stored on disk; a new session starts empty.
//
// Thread safety: none; Protection uses it on the UI thread.
#ifndef URLGUARD_DEMO_SESSION_EXEMPTIONS_H_
#define URLGUARD_DEMO_SESSION_EXEMPTIONS_H_

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <optional>

#include "urlguard/checker.h"

class SessionExemptions
{
public:
    // Bounds on the session memory.
    static constexpr int kMaxPendingTokens = 64;
    static constexpr int kMaxExemptUrls = 4096;

    struct Exemption
    {
        QSet<QString> matches;  // accepted "list\nexpression" matches
        bool proceeded = false; // the user chose to proceed (else only verification exempted it)
    };

    // A new single-use token for `url` and the matches of `verdict` (32 hex digits from the system's random
    // generator). The oldest outstanding token is dropped beyond kMaxPendingTokens.
    QString issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict);
    // Exempts the URL the token was issued for (proceeded) and returns it; nullopt for an unknown or used
    // token.
    std::optional<QUrl> redeemProceedToken(const QString &token);
    // Exempts `url` for the matches of `verdict` without a proceed (a verified filter false positive).
    void exemptVerified(const QUrl &url, const urlguard::Verdict &verdict);

    // True when `url` was exempted (by a proceed or a verification).
    bool isExempt(const QUrl &url) const;
    // The exemption of the page `pageKey` (urlKey()) when it covers every match of `verdict`, else null. The
    // pointer is valid until the next change.
    const Exemption *covering(const QString &pageKey, const urlguard::Verdict &verdict) const;

    // Key of a URL in the session memory: the URL without its fragment, fully encoded.
    static QString urlKey(const QUrl &url);

private:
    struct PendingProceed
    {
        QUrl url;
        QSet<QString> matches; // "list\nexpression"
    };

    static QSet<QString> matchKeys(const urlguard::Verdict &verdict);
    void exempt(const QUrl &url, const QSet<QString> &matches, bool proceeded);

    QHash<QString, PendingProceed> m_pendingTokens; // token -> what it unlocks
    QStringList m_tokenOrder;                       // oldest first, for eviction
    QHash<QString, Exemption> m_exempt;             // urlKey -> what was accepted, and how
    QStringList m_exemptOrder;                      // keys of m_exempt, oldest first, for eviction
};

#endif // URLGUARD_DEMO_SESSION_EXEMPTIONS_H_
