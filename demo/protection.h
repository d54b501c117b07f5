// Copyright urlguard authors.
//
// Protection: the browser's urlguard state and policy, in one object the interceptor, the urlguard: scheme
// handler and the side panel share.
//
// It owns the urlguard::Checker (opened from a data directory or from snapshot files, re-opened on "Reload
// lists"), decides what happens to each request (allow, block, or redirect a main frame to the warning page),
// counts what it did, and remembers for the session which URLs the user chose to open despite a warning.
//
// The decision is a local lookup only (Checker::Check, about a microsecond): no I/O, no lock, no waiting, so
// it can run inside QWebEngineUrlRequestInterceptor::interceptRequest on the UI thread. Verification, which
// needs the network, happens later on the warning page (see Verifier).
//
// Thread safety: UI thread only (Qt 6 calls request interceptors and scheme handlers there). The checker is
// held by a shared_ptr so that future off-thread users (a verifier) can keep a list generation alive across a
// reload.
#ifndef URLGUARD_DEMO_PROTECTION_H_
#define URLGUARD_DEMO_PROTECTION_H_

#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <memory>
#include <vector>

#include "urlguard/checker.h"

// The scheme of the browser's own protection pages (urlguard:warning, urlguard:proceed).
inline constexpr char kUrlGuardScheme[] = "urlguard";

// Where the lists come from.
struct ListSource
{
    enum class Kind { None, Directory, Files };
    Kind kind = Kind::None;
    QString directory;     // Kind::Directory: every *.ugs in it (Checker::OpenDirectory)
    QStringList snapshots; // Kind::Files: these snapshot files (Checker::Open)

    QString describe() const; // "directory /x", "2 snapshot files", "none"
};

// Counters since the Protection was created (they survive a list reload).
struct ProtectionCounters
{
    quint64 lookups = 0;                // Checker::Check calls
    quint64 hits = 0;                   // lookups that matched a list (main frames and subresources)
    quint64 warnings = 0;               // main-frame navigations redirected to the warning page
    quint64 blockedSubresources = 0;    // images, scripts, frames, XHRs... that hit a list and were blocked
    quint64 blockedInvalid = 0;         // requests blocked because the URL has no canonical form
    quint64 proceeds = 0;               // "Proceed anyway" clicks honoured
    quint64 allowedAfterProceed = 0;    // hits let through because the user had proceeded
    quint64 verifiedFalsePositives = 0; // hits a verifier reported as filter false positives
};

class Protection : public QObject
{
    Q_OBJECT
public:
    // Bounds on the session memory (the warning page can be loaded by anything that navigates, so the number
    // of outstanding tokens must not grow without limit).
    static constexpr int kMaxPendingTokens = 64;
    static constexpr int kMaxExemptUrls = 4096;

    enum class Action {
        Allow,       // let the request go
        Block,       // info.block(true)
        ShowWarning, // main frame: redirect to redirectUrl (a urlguard: page)
    };
    struct Decision
    {
        Action action = Action::Allow;
        QUrl redirectUrl;                                             // Action::ShowWarning
        urlguard::VerdictKind verdict = urlguard::VerdictKind::kSafe; // kSafe also when not checked
        bool checked = false; // false: internal scheme or no lists loaded
        QString summary;      // one line for the status bar (main frames)
    };

    explicit Protection(QObject *parent = nullptr);
    ~Protection() override;

    // Opens the lists of `source` and makes them current. On failure the previous lists stay in use and the
    // error (naming the file) is returned in `error`. Kind::None drops all lists (browsing is unprotected).
    bool setSource(const ListSource &source, QString *error);
    // Re-opens the current source from disk (picks up a list another tool replaced). Same failure behaviour.
    bool reload(QString *error);

    const ListSource &source() const { return m_source; }
    bool isProtecting() const { return m_checker != nullptr; }
    // The open lists (empty when not protecting), as of the last successful open.
    const std::vector<urlguard::ListInfo> &lists() const { return m_lists; }
    const ProtectionCounters &counters() const { return m_counters; }

    // Schemes that never reach the network and are the browser's own (data:, blob:, urlguard:, about:,
    // chrome:, qrc:, file:, ...): never looked up, never blocked by the lists.
    static bool isInternalScheme(const QString &scheme);

    // The policy for one request. `mainFrame`: a top-level navigation. `firstPartyUrl`: the top-level page a
    // subresource belongs to (used to honour a "Proceed anyway" for that page's own listed resources).
    Decision decide(const QUrl &url, bool mainFrame, const QUrl &firstPartyUrl);

    // Looks `url` up without counting or deciding (for the urlguard: pages). Not protecting: kSafe.
    urlguard::Verdict lookup(const QUrl &url) const;

    // The warning page for `url` (urlguard:warning?url=...). The page re-checks the URL itself; the query
    // only says which URL to explain, never what was found.
    static QUrl warningUrl(const QUrl &url);

    // "Proceed anyway": the warning page gets a single-use random token for the URL and the matches it shows;
    // redeeming it exempts that URL (and its page's resources that match the same expressions) for the
    // session.
    QString issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict);
    // Returns the URL the token was issued for and exempts it, or an empty QUrl for an unknown or used token.
    QUrl redeemProceedToken(const QString &token);

    // A verifier reported the local hit as a filter false positive: exempt `url` for the session (its
    // matches).
    void exemptVerifiedFalsePositive(const QUrl &url, const urlguard::Verdict &verdict);

    // True when `url` was exempted by a proceed or a verified false positive.
    bool isExempt(const QUrl &url) const;
    // True when the exemption of page `pageUrl` covers every match of `verdict` (what the user saw and
    // accepted; a new list or expression warns again).
    bool exemptionCovers(const QUrl &pageUrl, const urlguard::Verdict &verdict) const;

    // Key of a URL in the session memory: the URL without its fragment, fully encoded.
    static QString urlKey(const QUrl &url);

signals:
    void listsChanged();
    // A main-frame decision, for the status bar.
    void mainFrameChecked(const QUrl &url, const QString &summary);

private:
    struct PendingProceed
    {
        QUrl url;
        QSet<QString> matches; // "list\nexpression"
    };

    static QSet<QString> matchKeys(const urlguard::Verdict &verdict);
    void exempt(const QUrl &url, const QSet<QString> &matches);
    bool exemptCovers(const QString &pageKey, const urlguard::Verdict &verdict) const;
    QString summarize(const urlguard::Verdict &verdict) const;

    ListSource m_source;
    std::shared_ptr<const urlguard::Checker> m_checker;
    std::vector<urlguard::ListInfo> m_lists;
    ProtectionCounters m_counters;
    QHash<QString, PendingProceed> m_pendingTokens; // token -> what it unlocks
    QStringList m_tokenOrder;                       // oldest first, for eviction
    QHash<QString, QSet<QString>> m_exempt;         // urlKey -> accepted "list\nexpression" matches
    QStringList m_exemptOrder;                      // keys of m_exempt, oldest first, for eviction
};

#endif // URLGUARD_DEMO_PROTECTION_H_
