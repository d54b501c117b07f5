// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "warning_page.h"

#include <QBuffer>
#include <QUrlQuery>
#include <QWebEngineUrlRequestJob>
#include <QWebEngineUrlScheme>

namespace {

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString shownUrl(const QUrl &url)
{
    QString text = url.toString(QUrl::FullyEncoded);
    if (text.size() > WarningPageHandler::kMaxShownUrlChars)
        text = text.left(WarningPageHandler::kMaxShownUrlChars) + QChar(0x2026);
    return text.toHtmlEscaped();
}

// The wording follows the threat type: the confirmed one when verification named it, else what the list names
// say; other lists get the generic headline.
QString headline(const urlguard::Verdict &verdict, const VerificationResult &verification)
{
    if (verification.state == VerificationResult::State::Confirmed && !verification.threat.isEmpty()) {
        const QString threat = verification.threat.toLower();
        if (threat == QLatin1String("phishing") || threat == QLatin1String("social_engineering"))
            return QObject::tr("Deceptive site ahead");
        if (threat == QLatin1String("malware"))
            return QObject::tr("The site ahead may harm your computer");
        if (threat == QLatin1String("unwanted") || threat == QLatin1String("unwanted_software"))
            return QObject::tr("The site ahead offers unwanted software");
    }
    for (const urlguard::Match &m : verdict.matches) {
        if (m.list == "phishing")
            return QObject::tr("Deceptive site ahead");
    }
    for (const urlguard::Match &m : verdict.matches) {
        if (m.list == "malware")
            return QObject::tr("The site ahead may harm your computer");
        if (m.list == "unwanted")
            return QObject::tr("The site ahead offers unwanted software");
    }
    return QObject::tr("Dangerous site ahead");
}

const char kStyle[] = R"(
body { margin: 0; font-family: "DejaVu Sans", Arial, sans-serif; background: #a8201a; color: #fff; }
main { max-width: 760px; margin: 48px auto; padding: 0 28px; }
.icon { width: 56px; height: 56px; border-radius: 50%; background: #fff; color: #a8201a; font-size: 40px;
        font-weight: bold; text-align: center; line-height: 56px; }
h1 { font-size: 28px; margin: 20px 0 12px; }
p { line-height: 1.45; }
.url { font-family: "DejaVu Sans Mono", monospace; background: rgba(0,0,0,.22); padding: 8px 12px;
       border-radius: 4px; word-break: break-all; }
table { border-collapse: collapse; width: 100%; margin: 18px 0; background: rgba(0,0,0,.15); }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid rgba(255,255,255,.25); }
th { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; opacity: .85; }
td.expr { font-family: "DejaVu Sans Mono", monospace; }
.verification { font-size: 14px; background: rgba(255,255,255,.12); padding: 8px 12px; border-radius: 4px; }
.verification.confirmed { background: rgba(0,0,0,.25); border-left: 4px solid #fff; }
.buttons { margin-top: 26px; }
button { font-family: inherit; font-size: 15px; border-radius: 4px; padding: 10px 22px; cursor: pointer;
         margin-right: 14px; }
#back { background: #fff; color: #a8201a; border: 0; font-weight: bold; }
#proceed { background: transparent; color: #fff; border: 1px solid rgba(255,255,255,.7); }
button:focus-visible { outline: 2px solid #fff; outline-offset: 3px; }
.note { font-size: 13px; opacity: .85; }
)";

// Inline only: the page loads nothing.
const char kCsp[] = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

QString page(const QString &title, const QString &body, const QString &script)
{
    return QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                          "<meta http-equiv=\"Content-Security-Policy\" content=\"%1\">"
                          "<title>%2</title><style>%3</style></head>\n<body><main>%4</main>"
                          "<script>%5</script></body></html>\n")
            .arg(QLatin1String(kCsp), title.toHtmlEscaped(), QLatin1String(kStyle), body, script);
}

// "Back to safety": the previous page, or a blank page when the warning is the first entry.
const char kBackScript[] = R"(
document.getElementById('back').addEventListener('click', function () {
  if (history.length > 1) history.back(); else location.replace('about:blank');
});
)";

} // namespace

void registerUrlGuardScheme()
{
    QWebEngineUrlScheme scheme(kUrlGuardScheme);
    scheme.setSyntax(QWebEngineUrlScheme::Syntax::Path);
    // Secure: the pages count as a secure context. Not LocalScheme: Chromium refuses to redirect a web
    // navigation to a local scheme, and the warning page is reached by exactly such a redirect.
    scheme.setFlags(QWebEngineUrlScheme::SecureScheme);
    QWebEngineUrlScheme::registerScheme(scheme);
}

WarningPageHandler::WarningPageHandler(Protection *protection, Verifier *verifier, QObject *parent)
    : QWebEngineUrlSchemeHandler(parent), m_protection(protection), m_verifier(verifier)
{ }

void WarningPageHandler::requestStarted(QWebEngineUrlRequestJob *job)
{
    if (!m_protection || job->requestMethod() != "GET") {
        job->fail(QWebEngineUrlRequestJob::RequestDenied);
        return;
    }
    const QString path = job->requestUrl().path();
    if (path == QLatin1String("warning"))
        serveWarning(job);
    else if (path == QLatin1String("proceed"))
        serveProceed(job);
    else
        job->fail(QWebEngineUrlRequestJob::UrlNotFound);
}

void WarningPageHandler::serveWarning(QWebEngineUrlRequestJob *job)
{
    const QString encoded =
            QUrlQuery(job->requestUrl()).queryItemValue(QStringLiteral("url"), QUrl::FullyDecoded);
    const QUrl url = QUrl::fromEncoded(encoded.toLatin1(), QUrl::StrictMode);
    if (encoded.isEmpty() || !url.isValid()) {
        replyHtml(job,
                  messageHtml(tr("Nothing to show"), tr("This warning page was opened without an address.")));
        return;
    }

    const urlguard::Verdict verdict = m_protection->lookup(url);
    if (verdict.kind == urlguard::VerdictKind::kInvalid) {
        replyHtml(job, invalidHtml(url, verdict));
        return;
    }
    if (verdict.kind == urlguard::VerdictKind::kSafe || m_protection->exemptionCovers(url, verdict)) {
        // Not listed any more (lists reloaded) or already exempted for this session.
        job->redirect(url);
        return;
    }
    if (!m_verifier) {
        replyHtml(job,
                  warningHtml(url, verdict,
                              {VerificationResult::State::Unverified, tr("no verifier"), {}, {}},
                              m_protection->issueProceedToken(url, verdict)));
        return;
    }

    QPointer<QWebEngineUrlRequestJob> guardedJob(job);
    QPointer<Protection> protection(m_protection);
    m_verifier->verify(
            url, verdict, [guardedJob, protection, url, verdict](const VerificationResult &result) {
                if (!guardedJob || !protection)
                    return; // the navigation was cancelled while the verifier worked
                if (result.state == VerificationResult::State::FalsePositive) {
                    protection->exemptVerifiedFalsePositive(url, verdict);
                    guardedJob->redirect(url);
                    return;
                }
                replyHtml(guardedJob,
                          warningHtml(url, verdict, result, protection->issueProceedToken(url, verdict)));
            });
}

void WarningPageHandler::serveProceed(QWebEngineUrlRequestJob *job)
{
    const QString token = QUrlQuery(job->requestUrl()).queryItemValue(QStringLiteral("token"));
    const QUrl url = token.size() <= kMaxTokenChars ? m_protection->redeemProceedToken(token) : QUrl();
    if (url.isEmpty()) {
        replyHtml(job,
                  messageHtml(tr("This warning has expired"),
                              tr("Open the address again to see the warning and decide.")));
        return;
    }
    job->redirect(url);
}

void WarningPageHandler::replyHtml(QWebEngineUrlRequestJob *job, const QString &html)
{
    auto *buffer = new QBuffer(job);
    buffer->setData(html.toUtf8());
    job->reply("text/html", buffer);
}

QString WarningPageHandler::warningHtml(const QUrl &url, const urlguard::Verdict &verdict,
                                        const VerificationResult &verification, const QString &proceedToken)
{
    QStringList lists;
    QString rows;
    for (const urlguard::Match &m : verdict.matches) {
        const QString list = fromStd(m.list);
        if (!lists.contains(list))
            lists.append(list);
        rows += QStringLiteral(
                        "<tr><td class=\"list\">%1</td><td>%2</td><td class=\"expr\">%3</td><td>%4</td></tr>")
                        .arg(list.toHtmlEscaped(), QLatin1String(urlguard::LayerName(m.layer)),
                             fromStd(m.expression).toHtmlEscaped(), QString::number(m.list_version));
    }
    QStringList boldLists;
    for (const QString &list : lists)
        boldLists.append(QStringLiteral("<b>%1</b>").arg(list.toHtmlEscaped()));

    QString verificationText;
    QString verificationClass = QStringLiteral("verification");
    if (verification.state == VerificationResult::State::Confirmed && !verification.list.isEmpty()) {
        verificationClass += QStringLiteral(" confirmed");
        verificationText =
                tr("Verification: <b>%1</b>: the address is on the list <b>%2</b> as a <b>%3</b> "
                   "threat.")
                        .arg(verification.detail.toHtmlEscaped(), verification.list.toHtmlEscaped(),
                             verification.threat.toHtmlEscaped());
    } else {
        verificationText = tr("Verification: %1.").arg(verification.detail.toHtmlEscaped());
    }
    if (verification.state == VerificationResult::State::Unverified) {
        verificationText += QLatin1Char(' ')
                + tr("A local match can be a filter false positive (about 1 in 1000 clean addresses at the "
                     "default rate) until a verification service confirms it.");
    }

    const QString body =
            QStringLiteral(
                    "<div class=\"icon\">!</div><h1 id=\"headline\">%1</h1>"
                    "<p>%2</p><div class=\"url\" id=\"url\">%3</div>"
                    "<table id=\"matches\"><tr><th>%4</th><th>%5</th><th>%6</th><th>%7</th></tr>%8</table>"
                    "<p class=\"%13\" id=\"verification\">%9</p>"
                    "<div class=\"buttons\"><button id=\"back\">%10</button>"
                    "<button id=\"proceed\">%11</button></div><p class=\"note\">%12</p>")
                    .arg(headline(verdict, verification),
                         (lists.size() == 1
                                  ? tr("urlguard stopped this page before it was requested: the address "
                                       "is on the threat list %1.")
                                  : tr("urlguard stopped this page before it was requested: the address "
                                       "is on the threat lists %1."))
                                 .arg(boldLists.join(QStringLiteral(", "))),
                         shownUrl(url), tr("List"), tr("Layer"), tr("Matched expression"), tr("List version"),
                         rows, verificationText, tr("Back to safety"), tr("Proceed anyway"),
                         tr("If you proceed, this address is allowed for the rest of this session."),
                         verificationClass);
    // The token is hex, so it is safe inside the script literal.
    const QString script = QLatin1String(kBackScript)
            + QStringLiteral("document.getElementById('proceed').addEventListener('click', function () {\n"
                             "  location.href = 'urlguard:proceed?token=%1';\n});\n")
                      .arg(proceedToken);
    return page(tr("Warning: %1 - urlguard").arg(lists.join(QStringLiteral(", "))), body, script);
}

QString WarningPageHandler::invalidHtml(const QUrl &url, const urlguard::Verdict &verdict)
{
    const QString body =
            QStringLiteral("<div class=\"icon\">!</div><h1 id=\"headline\">%1</h1><p>%2</p>"
                           "<div class=\"url\" id=\"url\">%3</div>"
                           "<div class=\"buttons\"><button id=\"back\">%4</button></div>")
                    .arg(tr("Not a valid address"),
                         tr("urlguard cannot check this address because it has no canonical form "
                            "(%1), so the browser did not request it.")
                                 .arg(fromStd(verdict.error).toHtmlEscaped()),
                         shownUrl(url), tr("Back to safety"));
    return page(tr("Not a valid address - urlguard"), body, QLatin1String(kBackScript));
}

QString WarningPageHandler::messageHtml(const QString &title, const QString &message)
{
    const QString body = QStringLiteral("<h1 id=\"headline\">%1</h1><p>%2</p>"
                                        "<div class=\"buttons\"><button id=\"back\">%3</button></div>")
                                 .arg(title.toHtmlEscaped(), message.toHtmlEscaped(), tr("Back"));
    return page(title + QStringLiteral(" - urlguard"), body, QLatin1String(kBackScript));
}
