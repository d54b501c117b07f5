// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The urlguard: scheme: the browser's own warning pages, served from memory by a QWebEngineUrlSchemeHandler.
//
//   urlguard:warning?url=U   RequestGuard redirects a listed (or invalid) main frame here. The handler looks
//   U
//                            up again itself (the query names the URL, it never says what was found, so a
//                            page cannot forge a warning's content), asks the Verifier, and serves a page
//                            that names each matched list, layer and expression, with "Back to safety" and
//                            "Proceed anyway". U no longer listed (lists reloaded, or already proceeded):
//                            redirects to U. U not a valid address: a page saying so, without "Proceed
//                            anyway".
//   urlguard:proceed?token=T "Proceed anyway": T is the single-use random token of one warning page.
//   Redeeming it
//                            exempts U for the session (Protection) and redirects to U. An unknown or used
//                            token gets an explanation page, never the URL.
//
// Thread safety: UI thread (Qt 6 calls scheme handlers there).
#ifndef URLGUARD_DEMO_WARNING_PAGE_H_
#define URLGUARD_DEMO_WARNING_PAGE_H_

#include <QPointer>
#include <QWebEngineUrlSchemeHandler>

#include "protection.h"
#include "verifier.h"

class QWebEngineUrlRequestJob;

// Registers the urlguard: scheme with Qt WebEngine. Must run before the QApplication is created (Qt's rule
// for custom schemes); call it once.
void registerUrlGuardScheme();

class WarningPageHandler : public QWebEngineUrlSchemeHandler
{
    Q_OBJECT
public:
    // Caps on what a page URL may carry (anything can navigate to urlguard:).
    static constexpr int kMaxTokenChars = 64;
    static constexpr int kMaxShownUrlChars = 2048; // the URL is shown in full up to this, then elided

    // `protection` and `verifier` must outlive the handler.
    WarningPageHandler(Protection *protection, Verifier *verifier, QObject *parent = nullptr);

    void requestStarted(QWebEngineUrlRequestJob *job) override;

    // The page bodies (exposed for tests and for the demo's screenshots).
    static QString warningHtml(const QUrl &url, const urlguard::Verdict &verdict,
                               const VerificationResult &verification, const QString &proceedToken);
    static QString invalidHtml(const QUrl &url, const urlguard::Verdict &verdict);
    static QString messageHtml(const QString &title, const QString &message);

private:
    void serveWarning(QWebEngineUrlRequestJob *job);
    void serveProceed(QWebEngineUrlRequestJob *job);
    static void replyHtml(QWebEngineUrlRequestJob *job, const QString &html);

    QPointer<Protection> m_protection;
    QPointer<Verifier> m_verifier;
};

#endif // URLGUARD_DEMO_WARNING_PAGE_H_
