// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "request_guard.h"

#include <QWebEngineProfile>

#include "protection.h"
#include "warning_page.h"

RequestGuard::RequestGuard(Protection *protection, QObject *parent)
    : QWebEngineUrlRequestInterceptor(parent), m_protection(protection)
{ }

void RequestGuard::interceptRequest(QWebEngineUrlRequestInfo &info)
{
    if (!m_protection)
        return;
    const bool mainFrame = info.resourceType() == QWebEngineUrlRequestInfo::ResourceTypeMainFrame;
    const QUrl url = info.requestUrl();

    // The warning pages are top-level only: a page that frames one could dress it up and trick a click on
    // "Proceed anyway".
    if (url.scheme() == QLatin1String(kUrlGuardScheme)) {
        if (!mainFrame)
            info.block(true);
        return;
    }

    const Protection::Decision decision = m_protection->decide(url, mainFrame, info.firstPartyUrl());
    switch (decision.action) {
    case Protection::Action::Allow:
        break;
    case Protection::Action::Block:
        info.block(true);
        break;
    case Protection::Action::ShowWarning:
        info.redirect(decision.redirectUrl);
        break;
    }
}

void installGuard(QWebEngineProfile *profile, Protection *protection, Verifier *verifier)
{
    profile->setUrlRequestInterceptor(new RequestGuard(protection, profile));
    profile->installUrlSchemeHandler(kUrlGuardScheme, new WarningPageHandler(protection, verifier, profile));
}
